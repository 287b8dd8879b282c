"""Importing the core (and the bench registry) must not import Optuna, Ray or SMAC."""

from __future__ import annotations

import subprocess
import sys

CODE = r"""
import importlib, pkgutil, sys
import uvp_plugins
for mod in pkgutil.walk_packages(uvp_plugins.__path__, "uvp_plugins."):
    if ".bench" in mod.name:
        continue
    importlib.import_module(mod.name)
import uvp_plugins.bench.registry as r
r.load_all()
leaked = sorted(m for m in ("optuna", "ray", "smac", "ConfigSpace", "torch") if m in sys.modules)
print(",".join(leaked))
"""


def test_core_and_bench_registry_import_no_framework() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"frameworks imported by the core: {out.stdout.strip()}"

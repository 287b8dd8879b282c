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


LAYERS = r"""
import importlib, pkgutil, sys

def walk(name):  # every module of a package, without importing uvp_plugins.bench to list it
    yield name
    module = importlib.import_module(name)
    for info in pkgutil.iter_modules(getattr(module, "__path__", []), name + "."):
        if not info.name.startswith("uvp_plugins.bench"):
            yield from walk(info.name)

core = list(walk("uvp_plugins"))
adapters = ("optuna_ext", "raytune_ext", "smac_ext")
print("core:", ",".join(sorted(m for m in sys.modules
                                if m.startswith(("uvp_plugins.bench", *adapters)))))
for package in adapters:
    list(walk(package))
print("adapters:", ",".join(sorted(m for m in sys.modules if m.startswith("uvp_plugins.bench"))))
"""


def test_layers_core_and_adapters_import_no_harness() -> None:
    """The core imports no adapter and no harness module; the adapters import no harness
    module (every module of each, imported; issue 33's architecture test)."""
    out = subprocess.run([sys.executable, "-c", LAYERS], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["core: ", "adapters: "], out.stdout

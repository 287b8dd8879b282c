"""The distribution a package index would accept: ``python -m build`` makes a wheel and an sdist
without a warning, ``twine check --strict`` passes, and the metadata carries the SPDX licence,
its file and the classifiers (issue 33, item 6).

One isolated build (pip fetches setuptools into a fresh environment, as a user's build would):
about 20 s.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("uvp_plugins", "optuna_ext", "raytune_ext", "smac_ext")


def test_build_makes_a_clean_wheel_and_sdist_that_twine_accepts(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # (with PYTHONDONTWRITEBYTECODE set, setuptools says "byte-compiling is disabled": not ours)
    build = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(tmp_path), str(REPO)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    log = build.stdout + build.stderr
    assert build.returncode == 0, log[-3000:]
    warnings = [line for line in log.splitlines() if re.search(r"warn|deprecat", line, re.I)]
    assert warnings == [], "\n".join(warnings)

    wheels = sorted(tmp_path.glob("*.whl"))
    sdists = sorted(tmp_path.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1

    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheels[0]), str(sdists[0])],
        capture_output=True, text=True, timeout=120,
    )
    assert twine.returncode == 0, twine.stdout + twine.stderr

    with zipfile.ZipFile(wheels[0]) as whl:
        names = whl.namelist()
        metadata = whl.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata
    assert "License-File: LICENSE" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "Classifier: Typing :: Typed" in metadata
    assert "Requires-Python: >=3.10" in metadata
    for package in PACKAGES:  # every package with its py.typed marker, and no test module
        assert f"{package}/__init__.py" in names
        assert f"{package}/py.typed" in names
    assert not [n for n in names if n.startswith("tests/")]

    with tarfile.open(sdists[0]) as sdist:
        members = sdist.getnames()
    root = sdists[0].name.removesuffix(".tar.gz")
    assert f"{root}/LICENSE" in members and f"{root}/pyproject.toml" in members

"""Shared test fixtures: where the YAHPO data lives (CI has ../shared/yahpo_data beside the repo)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# helpers shared by the test folders (tests/helpers/shared_helpers.py); --import-mode=importlib
# puts no test folder on sys.path, and tests/ itself must not be on it (tests/optuna_ext would
# shadow the optuna_ext package)
sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))


def yahpo_data_path() -> Path:
    env = os.environ.get("UVP_YAHPO_DATA")
    return Path(env) if env else REPO.parent / "shared" / "yahpo_data"


@pytest.fixture(scope="session")
def yahpo_data() -> Path:
    path = yahpo_data_path()
    assert (path / "lcbench" / "model.onnx").is_file(), (
        f"YAHPO data expected at {path} (set UVP_YAHPO_DATA to point elsewhere)"
    )
    return path


def yahpo_data_v0_path() -> Path:
    """The first-generation rbv2 data: $UVP_YAHPO_DATA_V0, else yahpo_data_v0 beside the
    directory of yahpo_data_path() (CI: ../shared/yahpo_data_v0), as the harness looks for it."""
    env = os.environ.get("UVP_YAHPO_DATA_V0")
    return Path(env) if env else yahpo_data_path().parent / "yahpo_data_v0"


@pytest.fixture(scope="session")
def yahpo_data_v0() -> Path:
    path = yahpo_data_v0_path()
    assert (path / "rbv2_svm" / "model.onnx").is_file(), (
        f"first-generation YAHPO data expected at {path} (set UVP_YAHPO_DATA_V0 to point elsewhere)"
    )
    return path


# Hypothesis profiles: the default one is what CI runs; `HYPOTHESIS_PROFILE=thorough pytest
# tests/core tests/bench/test_ledger.py` searches 20x more examples before a release.
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("thorough", max_examples=2000, deadline=None)
    _hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
except ImportError:  # pragma: no cover - hypothesis is a dev dependency
    pass

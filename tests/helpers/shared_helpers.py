"""Helpers shared by tests in several folders (``tests/conftest.py`` puts ``tests/helpers`` on
``sys.path``): a tiny CASH problem, the wait for worker processes and the filters for SMAC's
own warnings."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from uvp_plugins.bench.problems.cash import CashProblem
from uvp_plugins.space import FloatParam

# SMAC's local search logs np.mean([]) of its timings when it stops at once (SMAC's, not ours)
SMAC_LOCAL_SEARCH_WARNINGS = [
    pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered in scalar divide:RuntimeWarning"),
]


class TinyCash(CashProblem):
    """Three arms by default; 'bad' raises for x > 0.5 (a failing fit); 'nb' has no
    hyperparameters. ``arms`` replaces the arms (name -> parameters)."""

    name = "tiny-cash"

    def __init__(self, arms: dict[str, list[Any]] | None = None) -> None:
        self.task = "t"
        self._set_arms(arms if arms is not None else {
            "good": [FloatParam("x", 0.0, 1.0)],
            "bad": [FloatParam("x", 0.0, 1.0)],
            "nb": [],
        })
        self.calls: list[dict[str, Any]] = []

    def _loss(self, arm: str, params: dict[str, Any]) -> float:
        self.calls.append({"algorithm": arm, **params})
        if arm == "bad" and params["x"] > 0.5:
            raise RuntimeError("fit failed")
        if arm == "nb":
            return 0.4
        return 0.1 + abs(params["x"] - 0.3) + (0.2 if arm == "bad" else 0.0)


def wait_for_workers(procs: list[subprocess.Popen], timeout: float = 180) -> None:
    """Wait for every worker process; each must exit 0 (its stderr is the failure message).
    Workers still running when one fails or times out are killed."""
    try:
        for p in procs:
            _, err = p.communicate(timeout=timeout)
            assert p.returncode == 0, err.decode()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()

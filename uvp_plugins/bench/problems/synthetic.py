"""Synthetic multi-fidelity problems with known optimum, for fast tests and sanity checks.

* ``mf-branin`` (minimise): Branin on ``[-5, 10] x [0, 15]`` plus a fidelity bias that vanishes at
  ``T``: ``f(x, b) = branin(x) + 10 (1 - b/T)^2 (1 + 0.1 x1)``. The curve is non-increasing in
  ``b`` for every ``x`` (so the learning curve is "monotone"), and ``f(x, T) = branin(x)``,
  whose minimum is 0.397887.
* ``mf-hartmann3`` / ``mf-hartmann6`` (minimise): Hartmann functions on the unit cube with the
  same kind of vanishing bias ``(1 - b/T)^2`` (minima -3.86278 and -3.32237).
* ``lc-synthetic`` (maximise, accuracy-like, values in (0, 100)): a Lipschitz landscape
  ``v(x) = 95 - 40 ||x - x*||`` on ``[0, 1]^3`` with saturating concave learning curves
  ``A(x, b) = v(x) (1 - 0.6 exp(-b / tau(x)))`` and ``tau(x) = 4 + 8 x_2`` — the setting of the
  AdaCent paper (Assumptions 1.1, 1.2 and concave curves, 3.10). Maximum ``A(x*, T)``.

Each family has tasks ``"0"`` (and for ``lc-synthetic`` also ``"1"``, ``"2"`` with other optima).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import ProblemSpec, register_problem
from uvp_plugins.space import FloatParam, SearchSpace

__all__ = ["MFBranin", "MFHartmann", "LCSynthetic"]

_H3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_H3_P = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
)
_H6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)
_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def branin(x1: float, x2: float) -> float:
    a, b, c = 1.0, 5.1 / (4 * np.pi**2), 5 / np.pi
    r, s, t = 6.0, 10.0, 1 / (8 * np.pi)
    return float(a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * np.cos(x1) + s)


def hartmann(x: np.ndarray) -> float:
    A, P = (_H3_A, _H3_P) if len(x) == 3 else (_H6_A, _H6_P)
    inner = np.sum(A * (x[None, :] - P) ** 2, axis=1)
    return float(-np.sum(_H_ALPHA * np.exp(-inner)))


class MFBranin(Problem):
    name = "mf-branin"
    partial_results_usable = False
    direction = "min"
    metric = "loss"
    fidelity = "level"
    optimum = 0.397887

    def __init__(self, task: str = "0", max_budget: int = 27) -> None:
        self.task = task
        self.max_budget = int(max_budget)
        self.space = SearchSpace([FloatParam("x1", -5.0, 10.0), FloatParam("x2", 0.0, 15.0)])

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        b = self.check_budget(budget)
        x1, x2 = float(config["x1"]), float(config["x2"])
        bias = 10.0 * (1.0 - b / self.max_budget) ** 2 * (1.0 + 0.1 * (x1 + 5.0))
        return branin(x1, x2) + bias


class MFHartmann(Problem):
    partial_results_usable = False
    direction = "min"
    metric = "loss"
    fidelity = "level"

    def __init__(self, dim: int = 3, task: str = "0", max_budget: int = 27) -> None:
        if dim not in (3, 6):
            raise ValueError(f"dim must be 3 or 6, got {dim!r}")
        self.dim = dim
        self.name = f"mf-hartmann{dim}"
        self.optimum = -3.86278 if dim == 3 else -3.32237
        self.task = task
        self.max_budget = int(max_budget)
        self.space = SearchSpace([FloatParam(f"x{i}", 0.0, 1.0) for i in range(dim)])

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        b = self.check_budget(budget)
        x = np.array([float(config[f"x{i}"]) for i in range(self.dim)])
        return hartmann(x) + 2.0 * (1.0 - b / self.max_budget) ** 2


class LCSynthetic(Problem):
    name = "lc-synthetic"
    direction = "max"
    metric = "accuracy"
    fidelity = "epoch"

    _OPTIMA = {"0": (0.7, 0.2, 0.6), "1": (0.1, 0.9, 0.3), "2": (0.45, 0.55, 0.95)}

    def __init__(self, task: str = "0", max_budget: int = 52) -> None:
        if task not in self._OPTIMA:
            raise ValueError(f"unknown task {task!r} for lc-synthetic; valid tasks: {list(self._OPTIMA)}")
        self.task = task
        self.max_budget = int(max_budget)
        self.x_star = np.array(self._OPTIMA[task])
        self.space = SearchSpace([FloatParam(f"x{i}", 0.0, 1.0) for i in range(3)])
        self.optimum = self._value(self.x_star, self.max_budget)

    def _value(self, x: np.ndarray, b: int) -> float:
        v = 95.0 - 40.0 * float(np.linalg.norm(x - self.x_star))
        tau = 4.0 + 8.0 * x[2]
        return float(v * (1.0 - 0.6 * np.exp(-b / tau)))

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        b = self.check_budget(budget)
        return self._value(np.array([float(config[f"x{i}"]) for i in range(3)]), b)


def _make_branin(task: str | None = None, **_: Any) -> Problem:
    return MFBranin(task or "0")


def _make_h3(task: str | None = None, **_: Any) -> Problem:
    return MFHartmann(3, task or "0")


def _make_h6(task: str | None = None, **_: Any) -> Problem:
    return MFHartmann(6, task or "0")


def _make_lc(task: str | None = None, **_: Any) -> Problem:
    return LCSynthetic(task or "0")


register_problem(ProblemSpec("mf-branin", _make_branin, lambda **_: ["0"], "multi-fidelity Branin (min), T=27"))
register_problem(ProblemSpec("mf-hartmann3", _make_h3, lambda **_: ["0"], "multi-fidelity Hartmann3 (min), T=27"))
register_problem(ProblemSpec("mf-hartmann6", _make_h6, lambda **_: ["0"], "multi-fidelity Hartmann6 (min), T=27"))
register_problem(
    ProblemSpec(
        "lc-synthetic",
        _make_lc,
        lambda **_: list(LCSynthetic._OPTIMA),
        "concave saturating learning curves on a Lipschitz landscape (max), T=52",
    )
)

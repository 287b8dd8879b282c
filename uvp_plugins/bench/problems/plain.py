"""Plain objectives without a fidelity, as a new Optuna user first tries a sampler on.

``plain`` (minimise, ``T = 1``: the budget is the number of trials; Optuna methods run them as
plain objectives, without ``trial.report``). Each task is a shifted quadratic
``f(x) = sum_i (x_i - c_i)^2`` on ``[0, 1]^d`` whose minimum is 0:

* ``quad5``: ``d = 5``, ``c`` drawn once in ``[0.2, 0.8]^5`` - does a long study keep improving
  (issue 29: 100, 200, 400 trials);
* ``bound2``: ``d = 2``, ``c = (0.1, 0.1)`` - an optimum near a bound (candidates must reach
  it without piling up on the bound);
* ``quad30`` and ``quad100``: ``d = 30`` and ``100``, ``c`` drawn once in ``[0.2, 0.8]^d`` - high
  dimensions, where a sampler must never be worse than random search.

Example:
    >>> p = make_plain("bound2")
    >>> p.evaluate({"x0": 0.1, "x1": 0.1}, 1), p.max_budget, p.direction
    (0.0, 1, 'min')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import ProblemSpec, register_problem
from uvp_plugins.space import FloatParam, SearchSpace

__all__ = ["PLAIN_TASKS", "Quadratic", "make_plain"]

#: task -> dimension (and whether the optimum is the fixed near-bound point)
PLAIN_TASKS = {"quad5": 5, "bound2": 2, "quad30": 30, "quad100": 100}


class Quadratic(Problem):
    """``sum_i (x_i - c_i)^2`` on ``[0, 1]^d`` (module doc)."""

    name = "plain"
    direction = "min"
    metric = "f"
    fidelity = "none"
    max_budget = 1
    optimum = 0.0

    def __init__(self, task: str) -> None:
        if task not in PLAIN_TASKS:
            raise ValueError(f"unknown task {task!r} for plain; valid tasks: {', '.join(PLAIN_TASKS)}")
        d = PLAIN_TASKS[task]
        self.task = task
        if task == "bound2":
            self.center = np.array([0.1, 0.1])
        else:
            self.center = np.random.default_rng(d).uniform(0.2, 0.8, size=d)
        self.space = SearchSpace([FloatParam(f"x{i}", 0.0, 1.0) for i in range(d)])

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        self.check_budget(budget)
        x = np.array([float(config[n]) for n in self.space.names])
        return float(np.sum((x - self.center) ** 2))


def make_plain(task: str | None = None, **_: Any) -> Quadratic:
    """A ``plain`` task (default ``quad5``)."""
    return Quadratic(task or "quad5")


register_problem(
    ProblemSpec(
        "plain",
        make_plain,
        lambda **_: list(PLAIN_TASKS),
        "plain quadratics without a fidelity (min): 5-d, near a bound, 30-d, 100-d; B = trials",
    )
)

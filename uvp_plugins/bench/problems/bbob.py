"""The BBOB suite (COCO, package ``coco-experiment``): plain objectives without a fidelity.

The 24 noiseless BBOB functions (Hansen et al., "Real-parameter black-box optimization
benchmarking 2009: noiseless functions definitions") in 2 to 40 dimensions, through COCO's own
implementation (``cocoex``, extra ``bench``): tasks ``f<k>-d<n>`` (function ``k`` in 1..24,
dimension ``n`` in :data:`DIMENSIONS`), COCO instance 1, search space ``[-5, 5]^n``, minimised.
There is no fidelity (``T = 1``), so the total budget ``B`` is the number of evaluations:
``uvp-bench run --problem bbob --budget-factor 500`` gives each run 500 trials, and the report's
fraction 0.2 is the score after 100. Optuna methods then run a plain objective (no
``trial.report``; :func:`uvp_plugins.bench.methods.optuna_native.run_optuna_study`), as a user
without a pruner would.

Example:
    >>> p = make_bbob("f1-d2")
    >>> p.max_budget, len(p.space), p.direction
    (1, 2, 'min')
    >>> p.evaluate({"x0": 0.0, "x1": 0.0}, 1) == p.evaluate({"x0": 0.0, "x1": 0.0}, 1)
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import ProblemSpec, register_problem
from uvp_plugins.space import FloatParam, SearchSpace

__all__ = ["DIMENSIONS", "FUNCTIONS", "BBOB", "make_bbob"]

#: BBOB's dimensions offered as tasks (COCO's 2, 3, 5, 10, 20, 40)
DIMENSIONS = (2, 3, 5, 10, 20, 40)
#: the 24 noiseless functions
FUNCTIONS = tuple(range(1, 25))
#: the COCO instance every task uses
INSTANCE = 1


class BBOB(Problem):
    """One BBOB function in one dimension (module doc)."""

    name = "bbob"
    direction = "min"
    metric = "f"
    fidelity = "none"
    max_budget = 1

    def __init__(self, function: int, dim: int) -> None:
        import cocoex

        if function not in FUNCTIONS:
            raise ValueError(f"function must be in 1..24, got {function!r}")
        if dim not in DIMENSIONS:
            raise ValueError(f"dim must be one of {DIMENSIONS}, got {dim!r}")
        self.function = function
        self.dim = dim
        self.task = f"f{function}-d{dim}"
        suite = cocoex.Suite(
            "bbob",
            "",
            f"dimensions:{dim} function_indices:{function} instance_indices:{INSTANCE}",
        )
        self._suite = suite  # keeps the problem's C object alive
        self._f = suite.get_problem(0)
        lo, hi = self._f.lower_bounds, self._f.upper_bounds
        self.space = SearchSpace([FloatParam(f"x{i}", float(lo[i]), float(hi[i])) for i in range(dim)])

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        self.check_budget(budget)
        x = np.array([float(config[f"x{i}"]) for i in range(self.dim)])
        return float(self._f(x))


def make_bbob(task: str | None = None, **_: Any) -> BBOB:
    """A BBOB task ``f<k>-d<n>`` (default ``f1-d2``)."""
    task = task or "f1-d2"
    m = re.fullmatch(r"f(\d+)-d(\d+)", task)
    if m is None:
        raise ValueError(f"task must look like f<function>-d<dimension>, e.g. f1-d2, got {task!r}")
    return BBOB(int(m.group(1)), int(m.group(2)))


register_problem(
    ProblemSpec(
        "bbob",
        make_bbob,
        lambda **_: [f"f{k}-d{n}" for n in DIMENSIONS for k in FUNCTIONS],
        "BBOB's 24 noiseless functions (COCO), dimensions 2-40, no fidelity (min); B = evaluations",
        requires=("cocoex",),
    )
)

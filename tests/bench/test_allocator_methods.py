"""The uvp-bench rows of the offline allocators (``core-*``): they spend the run budget through
the harness's context and score values with the one rule of value_scale (moved from
tests/core/test_allocators.py: core tests do not import the harness)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from uvp_plugins.adacent.value_scale import positive_scores
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.methods.uvp_core import StreamingScores
from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import get_method
from uvp_plugins.space import FloatParam, SearchSpace


class _Concave(Problem):
    """A 2-D accuracy-like problem (max) or its loss (min) with concave saturating curves."""

    name = "test-concave"
    task = "0"
    max_budget = 8

    def __init__(self, direction: str) -> None:
        self.direction = direction
        self.space = SearchSpace([FloatParam("a", 0.0, 1.0), FloatParam("b", 0.0, 1.0)])

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        x = np.array([config["a"], config["b"]])
        acc = (90 - 30 * np.linalg.norm(x - 0.3)) * (1 - 0.5 * np.exp(-budget / 2))
        return float(acc) if self.direction == "max" else float(100 - acc)


@pytest.mark.parametrize("direction", ["max", "min"])
@pytest.mark.parametrize(
    "method", ["core-fullcent", "core-enhanced-fullcent", "core-adacent", "core-enhanced-adacent"]
)
def test_bench_methods_spend_the_run_budget_through_the_context(direction: str, method: str) -> None:
    problem = _Concave(direction)
    ctx = RunContext(problem, total_budget=10 * problem.max_budget, seed=1)
    get_method(method).run(ctx)
    assert ctx.ledger.spent == ctx.total_budget
    assert ctx.ledger.n_evaluations == ctx.total_budget  # one unit per call (continuation)
    worst = problem.evaluate({"a": 1.0, "b": 1.0}, problem.max_budget)
    assert problem.better(ctx.ledger.best, worst)


def test_core_rows_score_values_with_the_one_rule_of_value_scale() -> None:
    # the core-* benchmark rows use value_scale.positive_scores (the adapters' rule), applied to
    # the values paid so far: accuracies unchanged, positive losses reciprocal
    acc = StreamingScores(maximize=True)
    assert [acc(v) for v in (0.62, 0.91, 93.5)] == [0.62, 0.91, 93.5]  # rule 1, also below 1
    loss = StreamingScores(maximize=False)
    assert [loss(v) for v in (0.5, 0.25)] == [2.0, 4.0]  # rule 2
    values = [-3.0, -1.0, -2.0]  # rule 3 (non-positive): affine, relative to the values so far
    neg = StreamingScores(maximize=True)
    assert [neg(v) for v in values][-1] == positive_scores(values)[-1]

"""The bench methods optuna-eadacent-pred / optuna-adacent-pred on a synthetic learning-curve problem."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import get_method
from uvp_plugins.space import FloatParam, SearchSpace

pytestmark = pytest.mark.optuna


class ConeCurves(Problem):
    """Assumptions 1.1, 1.2 and 3.10 of the paper: a Lipschitz cone of final values around x*, and
    concave saturating curves of the same speed everywhere (early values are informative)."""

    name = "cone-curves"
    direction = "max"
    max_budget = 20

    def __init__(self, seed: int) -> None:
        self.x_star = np.random.default_rng(100 + seed).random(3)
        self.space = SearchSpace([FloatParam(f"x{i}", 0.0, 1.0) for i in range(3)])
        self.optimum = 95.0 * (1 - 0.6 * np.exp(-self.max_budget / 5))

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        x = np.array([config[f"x{i}"] for i in range(3)])
        v = 95.0 - 60.0 * float(np.linalg.norm(x - self.x_star))
        return v * (1 - 0.6 * np.exp(-budget / 5))


def _regret(method: str, seed: int) -> tuple[float, RunContext]:
    problem = ConeCurves(seed)
    ctx = RunContext(problem, seed=seed)
    get_method(method).run(ctx)
    assert problem.optimum is not None
    return problem.optimum - ctx.ledger.best, ctx


def test_methods_are_registered_as_ours() -> None:
    for name in ("optuna-eadacent-pred", "optuna-adacent-pred"):
        spec = get_method(name)
        assert spec.kind == "ours" and spec.requires == ("optuna",)


@pytest.mark.parametrize("method", ["optuna-eadacent-pred", "optuna-adacent-pred"])
def test_method_spends_exactly_the_budget(method: str) -> None:
    _, ctx = _regret(method, seed=0)
    assert ctx.exhausted
    assert ctx.ledger.spent == pytest.approx(ctx.total_budget)
    # pruning lets it look at more configurations than B / T = 20 full trainings
    assert len(ctx.ledger.paid) > 20


def test_enhanced_adacent_beats_random_search() -> None:
    ours = [_regret("optuna-eadacent-pred", s)[0] for s in range(4)]
    rand = [_regret("random", s)[0] for s in range(4)]
    assert np.mean(ours) < 0.6 * np.mean(rand), (ours, rand)

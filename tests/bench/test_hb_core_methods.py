"""Bench methods core-hb / core-idhb-* / core-ih-hb and the ID-HB vs IH-HB comparison."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pytest

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.idhb_compare import idhb_budget_comparison, idhb_protocol
from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import get_method
from uvp_plugins.hyperband import HyperbandSchedule
from uvp_plugins.space import FloatParam, SearchSpace


class _Curves(Problem):
    """Accuracy-like (max) or loss-like (min) crossing learning curves on [0, 1]^2."""

    name = "tiny-curves"
    task = "0"
    metric = "acc"

    def __init__(self, max_budget: int = 16, direction: str = "max") -> None:
        self.space = SearchSpace([FloatParam("x", 0.0, 1.0), FloatParam("y", 0.0, 1.0)])
        self.max_budget = max_budget
        self.direction = direction

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        x, y = float(config["x"]), float(config["y"])
        acc = (1.0 - (x - 0.7) ** 2) * (1.0 - 0.8 * math.exp(-budget / (2.0 + 20.0 * y)))
        acc += 0.05 * math.sin(37.0 * x * budget + 11.0 * y)
        return acc if self.direction == "max" else 1.0 - acc


def _spent(method: str, problem: Problem, total: float, seed: int = 0) -> float:
    ctx = RunContext(problem, total_budget=total, seed=seed)
    get_method(method).run(ctx)
    return ctx.ledger.spent


@pytest.mark.parametrize("direction", ["max", "min"])
@pytest.mark.parametrize(("suffix", "eta", "T"), [("", 2, 16), ("-eta3", 3, 27), ("", 2, 13)])
def test_methods_spend_exactly_their_schedule(
    direction: str, suffix: str, eta: int, T: int
) -> None:
    problem = _Curves(T, direction)
    r0, r1 = idhb_protocol(T, eta)
    assert r0 == T // eta and r1 == eta * (T // eta)
    hb_t = HyperbandSchedule(T, eta).total_budget
    hb_r0, hb_r1 = HyperbandSchedule(r0, eta).total_budget, HyperbandSchedule(r1, eta).total_budget
    big = 10.0 * (hb_r0 + hb_r1 + hb_t)
    assert _spent(f"core-hb{suffix}", problem, big) == hb_t
    assert _spent(f"core-idhb-efficient{suffix}", problem, big) == hb_r1
    assert _spent(f"core-ih-hb{suffix}", problem, big) == hb_r0 + hb_r1
    for variant in ("preserving", "discarding"):
        assert hb_r1 <= _spent(f"core-idhb-{variant}{suffix}", problem, big) < hb_r0 + hb_r1


@pytest.mark.parametrize(
    "method", ["core-hb", "core-idhb-efficient", "core-idhb-preserving", "core-ih-hb-eta3"]
)
def test_methods_stop_at_the_run_budget(method: str) -> None:
    problem = _Curves(16)
    assert _spent(method, problem, 3.0 * 16) == 3.0 * 16  # far below one schedule: stops exactly


def test_comparison_reports_quality_and_budget_like_figure_3() -> None:
    problem = _Curves(16)
    cmp = idhb_budget_comparison(problem, seed=3, eta=2)
    assert (cmp.initial_max_budget, cmp.final_max_budget) == (8, 16)
    assert set(cmp.outcomes) == {"hb", "ih-hb", "eid-hb", "pid-hb", "did-hb"}
    hb8, hb16 = HyperbandSchedule(8, 2), HyperbandSchedule(16, 2)
    assert cmp.outcomes["hb"].full_charge == hb8.total_budget
    assert cmp.outcomes["ih-hb"].full_charge == hb8.total_budget + hb16.total_budget
    assert cmp.outcomes["ih-hb"].continuation == hb8.continuation_budget + hb16.continuation_budget
    assert cmp.outcomes["eid-hb"].full_charge == hb16.total_budget
    assert cmp.budget_ratio("eid-hb") == hb16.total_budget / (hb8.total_budget + hb16.total_budget)
    for label in ("pid-hb", "did-hb"):
        assert cmp.budget_ratio("eid-hb") <= cmp.budget_ratio(label) < 1.0
    # same sampler seed: the fresh run sees the same configurations, so dID reproduces it
    assert cmp.outcomes["did-hb"].incumbent == cmp.outcomes["ih-hb"].incumbent
    assert cmp.value_gap("did-hb") == 0.0
    for o in cmp.outcomes.values():
        assert o.final_value == problem.evaluate(o.incumbent, o.max_budget)
    assert cmp.outcomes["hb"].max_budget == 8 and cmp.outcomes["pid-hb"].max_budget == 16
    assert (
        json.loads(json.dumps(cmp.to_dict()))["outcomes"]["eid-hb"]["full_charge"]
        == hb16.total_budget
    )


def test_comparison_with_explicit_r0_and_min_direction() -> None:
    problem = _Curves(27, "min")
    cmp = idhb_budget_comparison(
        problem, seed=0, eta=3, initial_max_budget=9, variants=("efficient",)
    )
    assert set(cmp.outcomes) == {"hb", "ih-hb", "eid-hb"}
    assert cmp.outcomes["eid-hb"].full_charge == HyperbandSchedule(27, 3).total_budget
    # value_gap is positive when the method is better: lower values for "min"
    ih, eid = cmp.outcomes["ih-hb"].final_value, cmp.outcomes["eid-hb"].final_value
    assert cmp.value_gap("eid-hb") == pytest.approx(ih - eid)


def test_bad_protocol_input() -> None:
    with pytest.raises(ValueError, match="too small"):
        idhb_protocol(3, 2)
    with pytest.raises(ValueError, match="exceeds"):
        idhb_budget_comparison(_Curves(16), eta=2, initial_max_budget=9)
    with pytest.raises(ValueError, match="variants"):
        idhb_budget_comparison(_Curves(16), eta=2, variants=("greedy",))

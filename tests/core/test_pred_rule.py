"""The Pred stopping rule (Bateni et al., Alg. 6-8) as one decision for every adapter."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.adacent.curves import pred_last_slope, tail_fit_bound
from uvp_plugins.adacent.pred import PredStoppingRule, optimistic_prediction


def test_never_stops_during_exploration_or_at_the_full_budget() -> None:
    rule = PredStoppingRule(max_resource=10, delta=0.3)
    flat = {1: 0.1, 2: 0.1}
    assert rule.exploration_steps == 3
    assert not rule.should_stop(flat, best_other=0.9)          # step 2 < 3
    assert rule.should_stop({**flat, 3: 0.1}, best_other=0.9)  # step 3: flat, far below
    assert not rule.should_stop({s: 0.1 for s in range(1, 11)}, best_other=0.9)  # step 10 = T


def test_stops_a_diverged_trial_and_never_without_a_rival() -> None:
    rule = PredStoppingRule(max_resource=10, delta=0.1)
    assert rule.should_stop({1: math.nan, 2: math.inf}, best_other=0.5)
    assert not rule.should_stop({1: 0.1, 2: 0.1}, best_other=math.nan)
    assert not rule.should_stop({}, best_other=0.5)


@pytest.mark.parametrize("predictor", ["tail", "last_slope"])
def test_decision_is_the_prediction_against_the_best(predictor: str) -> None:
    rule = PredStoppingRule(max_resource=20, delta=0.1, predictor=predictor)
    curve = {1: 0.30, 2: 0.40, 3: 0.45, 4: 0.48}
    h = [curve[s] for s in sorted(curve)]
    pred = pred_last_slope(h, 20) if predictor == "last_slope" else tail_fit_bound(h, 20)
    assert rule.should_stop(curve, best_other=pred + 1e-9)
    assert not rule.should_stop(curve, best_other=pred - 1e-9)


def test_minimisation_mirrors_the_bound() -> None:
    rule = PredStoppingRule(max_resource=10, delta=0.1, mode="min")
    losses = {1: 1.0, 2: 0.9, 3: 0.88}
    assert rule.should_stop(losses, best_other=0.1)
    assert not rule.should_stop(losses, best_other=0.9)
    # the direction can also be given per call (Optuna: per study)
    assert rule.should_stop({1: 0.1, 2: 0.1, 3: 0.1}, best_other=0.9, maximize=True)


def test_optimistic_prediction_names_bad_predictors() -> None:
    with pytest.raises(ValueError, match="predictor must be one of 'tail', 'last_slope'"):
        optimistic_prediction([0.1, 0.2], 10, predictor="median")


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"max_resource": 1}, ValueError, r"max_resource must be an int >= 2, got 1"),
        ({"max_resource": 10, "delta": 1.0}, ValueError, r"delta must be a float in \(0, 1\)"),
        ({"max_resource": 10, "fraction": 0.0}, ValueError, r"fraction must be a float in \(0, 1\]"),
        ({"max_resource": 10, "mode": "maximize"}, ValueError, "mode must be one of 'max', 'min'"),
        ({"max_resource": "10"}, TypeError, "max_resource must be an int"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        PredStoppingRule(**kwargs)


@settings(max_examples=60, deadline=None)
@given(
    reports=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d"]),
            st.integers(1, 12),
            st.one_of(st.floats(0.0, 1.0), st.just(math.nan)),
        ),
        min_size=1,
        max_size=40,
    ),
    maximize=st.booleans(),
)
def test_stateful_decisions_equal_the_stateless_rule(reports: list, maximize: bool) -> None:
    """observe/decide keeps the curves and the best other trial incrementally; the decision
    equals should_stop on the same curve against a brute-force best of the other trials."""
    rule = PredStoppingRule(max_resource=12, delta=0.2, mode="max" if maximize else "min")
    curves: dict[str, dict[int, float]] = {}
    last: dict[str, int] = {}
    for trial, step, value in reports:
        rule.observe(trial, step, value)
        curve = curves.setdefault(trial, {})
        last[trial] = max(last.get(trial, step), step)
        if math.isfinite(value) and step not in curve:  # first finite value of a step is kept
            curve[step] = value
    for trial, curve in curves.items():
        others = [v for t, c in curves.items() if t != trial for v in c.values() if math.isfinite(v)]
        best = (max(others) if maximize else min(others)) if others else math.nan
        if not (math.isnan(best) and math.isnan(rule.best_other(trial))):
            assert rule.best_other(trial) == best
        kept = dict(curve)
        kept.setdefault(last[trial], math.nan)
        assert rule.decide(trial) == rule.should_stop(kept, best)


def test_state_round_trip_and_validation() -> None:
    rule = PredStoppingRule(max_resource=10, delta=0.2)
    for s, v in [(1, 0.9), (2, 0.92)]:
        rule.observe("good", s, v)
    for s, v in [(1, 0.2), (2, 0.21), (3, 0.215)]:
        rule.observe("bad", s, v)
    copy = PredStoppingRule.from_state_dict(rule.state_dict())
    assert copy.decide("bad") and rule.decide("bad")
    assert copy.best_other("bad") == rule.best_other("bad") == 0.92
    state = rule.state_dict()
    state["trials"][0][2][0][1] = math.nan
    with pytest.raises(ValueError, match="non-finite"):
        PredStoppingRule.from_state_dict(state)
    with pytest.raises(ValueError, match="format"):
        PredStoppingRule.from_state_dict({"format": "other"})
    rule.forget("good")
    assert math.isnan(rule.best_other("bad"))

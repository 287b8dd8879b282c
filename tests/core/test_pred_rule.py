"""The Pred stopping rule (Bateni et al., Alg. 6-8) as one decision for every adapter."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.adacent import pred as pred_module
from uvp_plugins.adacent.curves import pred_last_slope, tail_fit_bound
from uvp_plugins.adacent.guidance import Guidance
from uvp_plugins.adacent.pred import (
    KEEP_FRACTION,
    MIN_PEERS,
    PredStoppingRule,
    TrialRecord,
    optimistic_prediction,
    outside_kept_share,
    probes_for,
)


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
        ({"max_resource": 10, "keep_fraction": 0.0}, ValueError, r"keep_fraction must be a float in \(0, 1\]"),
        ({"max_resource": 10, "keep_fraction": 1.5}, ValueError, r"keep_fraction must be a float in \(0, 1\]"),
        ({"max_resource": 10, "keep_fraction": "half"}, TypeError, "keep_fraction"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        PredStoppingRule(**kwargs)


@settings(max_examples=60, deadline=None)
@given(
    reports=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d", "e", "f"]),
            st.integers(1, 12),
            st.one_of(st.floats(0.0, 1.0), st.just(math.nan)),
        ),
        min_size=1,
        max_size=60,
    ),
    maximize=st.booleans(),
)
def test_stateful_decisions_equal_the_stateless_rule(reports: list, maximize: bool) -> None:
    """observe/decide keeps the curves and the best other trial incrementally; the decision
    equals should_stop on the same curve against a brute-force best of the other trials."""
    rule = PredStoppingRule(
        max_resource=12, delta=0.2, mode="max" if maximize else "min", calibrate=False
    )
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
        at_step = [c[last[trial]] for t, c in curves.items() if t != trial and last[trial] in c]
        assert rule.decide(trial) == rule.should_stop(kept, best, at_step=at_step)


def test_state_round_trip_and_validation() -> None:
    rule = PredStoppingRule(max_resource=10, delta=0.2, calibrate=False)
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


def test_the_median_cut_stops_a_trial_outside_the_best_half_at_its_step() -> None:
    """Past the depth, a trial Pred would keep (steep curve) stops when at least half of the other
    values at its step are better - once MIN_PEERS others reported it; not with
    keep_fraction=None (Pred alone), not before the depth, not at T."""
    assert KEEP_FRACTION == 0.5 and MIN_PEERS == 3
    rule = PredStoppingRule(max_resource=10, delta=0.2)
    steep = {1: 0.3, 2: 0.6}
    assert not rule.should_stop(steep, best_other=0.9)  # Pred alone keeps it
    assert rule.should_stop(steep, best_other=0.9, at_step=[0.9, 0.8, 0.7])  # 3 of 4 better
    assert rule.should_stop(steep, best_other=0.9, at_step=[0.9, 0.7, 0.5])  # 2 of 4: not top half
    assert not rule.should_stop(steep, best_other=0.9, at_step=[0.9, 0.5, 0.4])  # 1 of 4 better
    assert not rule.should_stop(steep, best_other=0.9, at_step=[0.9, 0.8])  # fewer than 3 peers
    assert not rule.should_stop({1: 0.3}, best_other=0.9, at_step=[0.9, 0.8, 0.7])  # step 1 < 2
    at_t = {s: 0.1 * s for s in range(1, 11)}
    assert not rule.should_stop(at_t, best_other=0.9, at_step=[2.0, 2.0, 2.0])
    # a diverged last report is not cut (and Pred decides on the finite history)
    assert not rule.should_stop({1: 0.3, 2: 0.6, 3: math.nan}, 0.9, at_step=[0.9, 0.8, 0.7])
    alone = PredStoppingRule(max_resource=10, delta=0.2, keep_fraction=None)
    assert not alone.needs_step_values
    assert not alone.should_stop(steep, best_other=0.9, at_step=[0.9, 0.8, 0.7])
    # minimisation mirrors it; a third keeps fewer
    low = PredStoppingRule(max_resource=10, delta=0.2, mode="min")
    assert low.should_stop({1: 0.7, 2: 0.4}, best_other=0.1, at_step=[0.1, 0.2, 0.3])
    assert not low.should_stop({1: 0.7, 2: 0.15}, best_other=0.1, at_step=[0.1, 0.2, 0.3])
    third = PredStoppingRule(max_resource=10, delta=0.2, keep_fraction=1 / 3)
    assert third.should_stop({1: 0.3, 2: 0.6}, 0.9, at_step=[0.9, 0.7, 0.5, 0.4, 0.3])
    assert not rule.should_stop({1: 0.3, 2: 0.6}, 0.9, at_step=[0.9, 0.7, 0.5, 0.4, 0.3])


def test_the_probe_phase_stops_the_first_trials_at_the_depth() -> None:
    """With ``n_probes=10`` (the guided sampler's, ``probes_for``) the first ten trials to reach
    the depth stop there, whatever Pred and the cut say; later trials are decided as before.
    Only at a trial's first step at or past the depth (sparse reports included), never before
    the depth, not with n_probes=0 (the rule's default); a caller's override wins."""
    assert probes_for(Guidance()) == 10 and probes_for(None) == 0
    rule = PredStoppingRule(max_resource=10, delta=0.2, n_probes=probes_for(Guidance()))
    steep = {1: 0.3, 2: 0.9}  # the depth is step 2; the best value so far
    nine = [0.1] * 9
    assert rule.needs_step_values
    assert rule.should_stop(steep, best_other=math.nan)  # the first trial: no rival, yet a probe
    assert rule.should_stop(steep, best_other=0.5, at_step=nine)  # 9 others there: the 10th probe
    assert not rule.should_stop(steep, best_other=0.5, at_step=nine + [0.2])  # the 11th trial
    assert not rule.should_stop({1: 0.3}, best_other=math.nan)  # before the depth
    # only the first step at or past the depth is a probe's last step
    assert not rule.should_stop({1: 0.3, 2: 0.6, 3: 0.9}, best_other=math.nan)
    assert rule.should_stop({1: 0.3, 4: 0.9}, best_other=math.nan)  # sparse: 4 is its first
    off = PredStoppingRule(max_resource=10, delta=0.2)
    assert off.n_probes == 0 and not off.should_stop(steep, best_other=math.nan)
    assert off.should_stop(steep, best_other=math.nan, n_probes=1)  # the override
    assert not rule.should_stop(steep, best_other=math.nan, n_probes=0)
    # the stateful use counts the other trials observed at the step
    few = PredStoppingRule(max_resource=10, delta=0.2, n_probes=2, keep_fraction=None)
    for i, trial in enumerate("abc"):
        few.observe(trial, 1, 0.3)
        few.observe(trial, 2, 0.5 + 0.1 * i)
        assert few.decide(trial) == (i < 2), trial
    restored = PredStoppingRule.from_state_dict(few.state_dict())
    assert restored.n_probes == 2 and restored.decide("c") is False
    restored.observe("d", 2, 0.1)  # a fourth trial with the worst value: not a probe, Pred decides
    assert restored.decide("d") is False and few.should_stop({2: 0.1, 3: 0.1}, 0.7) is True


def test_outside_kept_share_and_the_module_examples() -> None:
    assert outside_kept_share(0.5, [0.9, 0.8, 0.7], 0.5)
    assert not outside_kept_share(0.5, [0.5, 0.5, 0.5], 0.5)  # ties are not better
    assert outside_kept_share(0.5, [0.1, 0.2, 0.3], 0.5, maximize=False)
    assert doctest.testmod(pred_module, raise_on_error=True).attempted >= 8


def test_states_keep_the_cut_and_old_states_are_pred_alone() -> None:
    rule = PredStoppingRule(max_resource=10, delta=0.2, keep_fraction=1 / 3)
    assert PredStoppingRule.from_state_dict(rule.state_dict()).keep_fraction == 1 / 3
    old = PredStoppingRule(max_resource=10, delta=0.2).state_dict()
    del old["params"]["keep_fraction"]  # a state saved before the cut existed
    assert PredStoppingRule.from_state_dict(old).keep_fraction is None
    old["params"]["n_probes"] = 4
    assert PredStoppingRule.from_state_dict(old).n_probes == 4
    del old["params"]["n_probes"]  # a state saved before the probe phase existed
    assert PredStoppingRule.from_state_dict(old).n_probes == 0
    with pytest.raises(ValueError, match="n_probes"):
        PredStoppingRule(max_resource=10, n_probes=-1)



# ------------------------------------------------------------------ the calibrated rule (issue 29)
def _concave(quality: float, speed: float = 3.0, T: int = 12) -> dict[int, float]:
    return {s: quality * (1 - math.exp(-s / speed)) for s in range(1, T + 1)}


def test_calibrated_stateful_decisions_equal_decide_among() -> None:
    rng = np.random.default_rng(0)
    rule = PredStoppingRule(max_resource=12, delta=0.2)
    curves: dict[str, dict[int, float]] = {}
    for k in range(12):
        q = float(rng.uniform(0.3, 0.9))
        last = 12 if k % 3 == 0 else int(rng.integers(2, 12))
        curve = {s: v for s, v in _concave(q).items() if s <= last}
        curves[f"t{k}"] = curve
        for s, v in curve.items():
            rule.observe(f"t{k}", s, v)
    for trial, curve in curves.items():
        if max(curve) >= 12:
            continue
        others = [
            TrialRecord(c, complete=max(c) >= 12, key=t) for t, c in curves.items() if t != trial
        ]
        assert rule.decide(trial) == rule.decide_among(curve, others)
    copy = PredStoppingRule.from_state_dict(rule.state_dict())
    assert copy.calibrate and copy.eta == rule.eta
    assert [copy.decide(t) for t in curves] == [rule.decide(t) for t in curves]


def test_old_states_load_with_the_issue_17_rule() -> None:
    rule = PredStoppingRule(max_resource=10, delta=0.2)
    state = rule.state_dict()
    for key in ("calibrate", "eta"):
        del state["params"][key]
    assert not PredStoppingRule.from_state_dict(state).calibrate


def test_nothing_but_the_probes_stops_a_trial_before_one_completed() -> None:
    rule = PredStoppingRule(max_resource=12, delta=0.2, n_probes=2)
    pruned = [TrialRecord({1: 0.9, 2: 0.95}, key=k) for k in range(5)]  # good, but not complete
    weak = {1: 0.1, 2: 0.11, 3: 0.111}
    assert not rule.decide_among(weak, pruned)  # PRED would stop it; no final value to beat
    assert rule.decide_among({1: 0.5, 2: 0.6}, pruned[:1])  # a probe: one other reached the depth
    assert not rule.decide_among({1: 0.5, 2: 0.6}, pruned[:2])


def _three_done(qualities: tuple[float, ...] = (0.4, 0.5, 0.6)) -> list[TrialRecord]:
    """Complete trials whose values rank at every step as their final values do."""
    return [TrialRecord(_concave(q), complete=True, key=f"done{q}") for q in qualities]


def test_pred_compares_with_final_values_not_with_pruned_trials_values() -> None:
    rule = PredStoppingRule(max_resource=12, delta=0.2, keep_fraction=None)
    done = _three_done()  # best final 0.59
    pruned_high = TrialRecord({1: 0.95, 2: 0.97, 3: 0.98}, key="p")
    # PRED from step 4 of a curve of quality 0.6: 0.94, below the pruned trial's 0.98 (the
    # issue-17 rule stops it) but above 0.59, the best final value (the calibrated one keeps it)
    mid = {s: v for s, v in _concave(0.6).items() if s <= 4}
    assert not rule.decide_among(mid, [*done, pruned_high])
    old = PredStoppingRule(max_resource=12, delta=0.2, keep_fraction=None, calibrate=False)
    assert old.decide_among(mid, [*done, pruned_high])
    low = {s: v for s, v in _concave(0.3).items() if s <= 4}  # PRED 0.47: cannot beat 0.59
    assert rule.decide_among(low, [*done, pruned_high])
    # PRED waits for three complete trials that rank at the step as at the end
    assert not rule.decide_among(low, done[:2])
    assert not rule.decide_among(low, _three_done((0.6, 0.5, 0.4))[:2] + [pruned_high])


def test_pred_slack_keeps_trials_where_complete_trials_beat_their_bound() -> None:
    """Late bloomers: flat early, then rising. PRED from the first steps is not optimistic for
    them; once a complete trial shows it, a flat start no longer condemns a trial."""
    T = 12
    bloom = {s: (0.2 if s <= 4 else 0.2 + 0.07 * (s - 4)) for s in range(1, T + 1)}
    flat_start = {1: 0.2, 2: 0.2, 3: 0.2, 4: 0.2}
    plain = PredStoppingRule(max_resource=T, delta=0.2, keep_fraction=None)
    concave = _three_done((0.3, 0.4, 0.5))  # best final 0.49
    assert plain.decide_among(flat_start, concave)  # PRED: no slope, cannot beat 0.49
    assert not plain.decide_among(flat_start, [*concave, TrialRecord(bloom, True, key="b")])


@pytest.mark.parametrize("agreement, kept", [("same", 2), ("reversed", 4)])
def test_the_cut_keeps_a_share_set_by_the_measured_rank_agreement(agreement: str, kept: int) -> None:
    """At a rung a trial continues only among the best kept_share of the values there; where the
    complete trials' values at the rung rank like their final values the share is small, where
    they rank the other way nobody is cut."""
    T = 12
    rule = PredStoppingRule(max_resource=T, delta=0.2)
    qualities = [0.9, 0.8, 0.7, 0.6, 0.5, 0.45]
    completes = []
    for k, q in enumerate(qualities):
        early = q if agreement == "same" else 1.4 - q
        curve = {s: (early * 0.5 if s <= 2 else q * 0.6 + 0.04 * s) for s in range(1, T + 1)}
        completes.append(TrialRecord(curve, complete=True, key=k))
    # four newcomers at the first rung (step 2); with the same ranking there, the share kept is
    # 1 - 0.83 (1 - 1/3) = 0.44 of 7: a newcomer with 4 or more better values stops
    stopped = 0
    for v in (0.2, 0.28, 0.33, 0.5):
        stopped += rule.decide_among({1: v * 0.9, 2: v}, completes)
    assert 4 - stopped == kept

def test_a_probe_phase_must_leave_a_trial_that_trains_on() -> None:
    rule = PredStoppingRule(12, 0.25, n_probes=3)
    rule.check_trials_beyond_probes(4)  # the 4th trial is not a probe
    for n_trials in (1, 3):
        with pytest.raises(ValueError, match=rf"n_probes=3 must be < the number of trials \({n_trials}\)"):
            rule.check_trials_beyond_probes(n_trials)
    PredStoppingRule(12, 0.25).check_trials_beyond_probes(1)  # no probe phase: nothing to refuse

"""PredPruner driven through real Optuna studies (ask/tell and optimize)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import TrialState, create_trial

from optuna_ext import EnhancedAdaCentSampler, PredPruner
from uvp_plugins.adacent.guidance import Guidance

pytestmark = pytest.mark.optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)

DIST = {"x": FloatDistribution(0.0, 1.0)}


def _study(direction: str, pruner: PredPruner, best: float | None = None) -> optuna.Study:
    study = optuna.create_study(direction=direction, pruner=pruner)
    if best is not None:
        study.add_trial(
            create_trial(params={"x": 0.5}, distributions=DIST, value=best,
                         intermediate_values={1: best})
        )
    return study


def _first_pruned_step(study: optuna.Study, values: list[float], steps: list[int] | None = None) -> int | None:
    trial = study.ask(DIST)
    for step, v in zip(steps or range(1, len(values) + 1), values, strict=True):
        trial.report(v, step)
        if trial.should_prune():
            study.tell(trial, state=TrialState.PRUNED)
            return step
    study.tell(trial, values[-1])
    return None


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"max_resource": 1}, "max_resource"),
        ({"max_resource": 2.5}, "max_resource"),
        ({"max_resource": 10, "delta": 0.0}, "delta"),
        ({"max_resource": 10, "delta": 1.0}, "delta"),
        ({"max_resource": 10, "delta": -0.2}, "delta"),
        ({"max_resource": 10, "predictor": "median"}, "predictor"),
        ({"max_resource": 10, "fraction": 0.0}, "fraction"),
        ({"max_resource": 10, "fraction": 1.5}, "fraction"),
        ({"max_resource": 10, "keep_fraction": 0.0}, "keep_fraction"),
        ({"max_resource": 10, "keep_fraction": 1.5}, "keep_fraction"),
    ],
)
def test_constructor_validation(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        PredPruner(**kwargs)  # type: ignore[arg-type]


def test_a_bool_is_not_a_budget() -> None:
    with pytest.raises(TypeError, match=r"max_resource must be an int >= 2, got True"):
        PredPruner(max_resource=True)


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
@pytest.mark.parametrize("predictor", ["tail", "last_slope"])
def test_no_pruning_before_exploration_depth_then_flat_curve_pruned(direction: str, predictor: str) -> None:
    # PRED's mechanics against one complete trial: the issue-17 rule (the calibrated one waits
    # for three complete trials, tests/core/test_pred_rule.py)
    pruner = PredPruner(max_resource=20, delta=0.5, predictor=predictor, calibrate=False)
    assert pruner.exploration_steps == 10
    best, flat = (1.0, 0.1) if direction == "maximize" else (0.1, 1.0)
    study = _study(direction, pruner, best)
    assert _first_pruned_step(study, [flat] * 20) == 10


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_optimistic_rising_curve_survives_and_stalled_curve_is_pruned(direction: str) -> None:
    sign = 1.0 if direction == "maximize" else -1.0
    study = _study(
        direction, PredPruner(max_resource=20, predictor="last_slope", calibrate=False), sign * 1.0
    )
    # rises by 0.1 per step: last-slope prediction at T=20 stays above 1.0 until it gets there
    rising = [sign * min(0.1 * s, 1.05) for s in range(1, 21)]
    assert _first_pruned_step(study, rising) is None
    # rises quickly, then stalls at 0.6: pruned once the slope no longer reaches the best value
    stalled = [sign * v for v in (0.3, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6)]
    assert _first_pruned_step(study, stalled) == 4


def test_intermediate_values_of_other_trials_count_as_reached() -> None:
    """The issue-17 rule (calibrate=False): a RUNNING trial's value is a value reached."""
    study = optuna.create_study(
        direction="maximize", pruner=PredPruner(max_resource=10, calibrate=False)
    )
    leader = study.ask(DIST)
    for step in range(1, 6):
        leader.report(0.8, step)  # still RUNNING, never completed
    assert _first_pruned_step(study, [0.3] * 5) == 2


def test_the_calibrated_rule_compares_with_complete_trials_only() -> None:
    """The default rule: a RUNNING (or PRUNED) trial's value is nothing the user gets; until a
    trial completes nothing is pruned; PRED then compares with the best final value, once three
    complete trials ranked at the step as at the end."""
    study = optuna.create_study(direction="maximize", pruner=PredPruner(max_resource=10))
    leader = study.ask(DIST)
    for step in range(1, 6):
        leader.report(0.8, step)  # still RUNNING, never completed
    assert _first_pruned_step(study, [0.3] * 5) is None
    for q in (0.6, 0.7, 0.8):
        study.add_trial(
            create_trial(params={"x": 0.5}, distributions=DIST, value=q,
                         intermediate_values={s: q * (1 - 0.5**s) for s in range(1, 11)})
        )
    assert _first_pruned_step(study, [0.3] * 5) is not None


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_the_median_cut_prunes_a_trial_outside_the_best_half_at_its_step(direction: str) -> None:
    """Three other trials reported step 2 (one RUNNING, one PRUNED, one COMPLETE; a FAILED one
    is ignored): a steep trial Pred would keep is pruned at the depth when it is not in the best
    half there, kept when it is, and kept by ``keep_fraction=None`` (Pred alone)."""
    sign = 1.0 if direction == "maximize" else -1.0

    def study_with_rivals(pruner: PredPruner, running: bool = True) -> optuna.Study:
        study = optuna.create_study(direction=direction, pruner=pruner)
        for v, state in [(0.9, TrialState.COMPLETE), (0.8, TrialState.PRUNED), (0.95, TrialState.FAIL)]:
            study.add_trial(
                create_trial(params={"x": 0.5}, distributions=DIST, state=state,
                             value=sign * v if state == TrialState.COMPLETE else None,
                             intermediate_values={1: sign * v / 2, 2: sign * v})
            )
        if running:
            study.ask(DIST).report(sign * 0.7, 2)
        return study

    steep_low = [sign * 0.3, sign * 0.6, sign * 0.9]  # 3 of 4 better at step 2
    steep_high = [sign * 0.3, sign * 0.85, sign * 1.2]  # 1 of 4 better at step 2

    def issue17(**kwargs: object) -> PredPruner:
        return PredPruner(max_resource=20, calibrate=False, **kwargs)  # type: ignore[arg-type]

    assert _first_pruned_step(study_with_rivals(issue17()), steep_low) == 2
    assert _first_pruned_step(study_with_rivals(issue17()), steep_high) is None
    alone = issue17(keep_fraction=None)
    assert alone.keep_fraction is None and issue17().keep_fraction == 0.5
    assert _first_pruned_step(study_with_rivals(alone), steep_low) is None
    # without the running trial only two counted trials reported step 2 (the FAILED one does
    # not count): too few for the cut
    assert _first_pruned_step(study_with_rivals(issue17(), False), steep_low) is None


def _rising_objective(T: int):  # type: ignore[no-untyped-def]
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        v = 0.0
        for step in range(1, T + 1):
            v = (0.5 + 0.5 * x) * (1 - 0.7**step)
            trial.report(v, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return v

    return objective


def test_the_probe_phase_prunes_the_first_ten_trials_at_the_depth() -> None:
    """With our guided sampler the default ``n_probes="auto"`` is its ``guidance.n_init`` = 10:
    the first ten trials to reach the depth are pruned there, whatever Pred and the cut say;
    later trials are decided by Pred and the cut, and the sampler's choices complete. With any
    other sampler "auto" is no probe phase, and the first trial completes."""
    T = 10
    pruner = PredPruner(max_resource=T, delta=0.2)
    assert pruner.n_probes == "auto"
    study = optuna.create_study(
        direction="maximize", sampler=EnhancedAdaCentSampler(seed=0, n_candidates=64), pruner=pruner
    )
    assert pruner.probes_in(study) == 10
    study.optimize(_rising_objective(T), n_trials=14)
    states = [(t.state, t.last_step) for t in study.trials]
    assert states[:10] == [(TrialState.PRUNED, 2)] * 10
    assert (TrialState.COMPLETE, T) in states[10:]
    # the completed trial beats every probe: it was chosen with their values to go on
    best = study.best_trial
    assert best.params["x"] >= max(t.params["x"] for t in study.trials[:10])
    for sampler in (optuna.samplers.TPESampler(seed=0), EnhancedAdaCentSampler(seed=0, guidance=None)):
        other = optuna.create_study(direction="maximize", sampler=sampler, pruner=pruner)
        assert pruner.probes_in(other) == 0
        other.optimize(_rising_objective(T), n_trials=1)
        assert other.trials[0].state == TrialState.COMPLETE
    six = optuna.create_study(sampler=EnhancedAdaCentSampler(guidance=Guidance(n_init=6)))
    assert pruner.probes_in(six) == 6
    # an int holds for any sampler
    fixed = PredPruner(max_resource=T, n_probes=3)
    assert fixed.n_probes == 3 and fixed.probes_in(six) == 3 and fixed.probes_in(other) == 3
    assert PredPruner(max_resource=T, n_probes=0).probes_in(study) == 0
    with pytest.raises(ValueError, match="n_probes must be an int >= 0 or 'auto'"):
        PredPruner(max_resource=T, n_probes="ten")
    with pytest.raises(ValueError, match="n_probes"):
        PredPruner(max_resource=T, n_probes=-1)


def test_a_study_of_at_most_n_probes_trials_completes_none() -> None:
    """The documented cost of the probe phase: every trial of a short study is a probe."""
    study = optuna.create_study(direction="maximize", pruner=PredPruner(max_resource=10, n_probes=3))
    study.optimize(_rising_objective(10), n_trials=3)
    assert all(t.state == TrialState.PRUNED for t in study.trials)
    with pytest.raises(ValueError):
        _ = study.best_trial


def test_the_probe_phase_with_two_workers() -> None:
    """Under ``n_jobs=2`` the count of other trials at the depth is read while the other worker
    runs: about ten probes (one more or less when both reach the depth together), then trials
    are trained past the depth and complete."""
    T = 10
    study = optuna.create_study(
        direction="maximize",
        sampler=optuna.samplers.RandomSampler(seed=1),
        pruner=PredPruner(max_resource=T, delta=0.2, keep_fraction=None, n_probes=10),
    )
    study.optimize(_rising_objective(T), n_trials=16, n_jobs=2)
    at_depth = [t for t in study.trials if t.state == TrialState.PRUNED and t.last_step == 2]
    assert 9 <= len(at_depth) <= 11
    assert any(t.state == TrialState.COMPLETE for t in study.trials)


def test_non_finite_values_are_ignored_and_all_nan_is_pruned() -> None:
    study = _study("maximize", PredPruner(max_resource=10, predictor="last_slope"), 1.0)
    # an inf reported by another trial is not a "reached" value
    other = study.ask(DIST)
    other.report(math.inf, 1)
    # NaNs between rising finite values do not stop a promising trial
    values = [0.2, math.nan, 0.4, math.nan, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
    assert _first_pruned_step(study, values) is None
    # only NaN after the exploration depth: pruned at the first step it may be
    assert _first_pruned_step(study, [math.nan] * 10) == 1


def test_steps_beyond_max_resource_are_not_pruned_and_warn() -> None:
    pruner = PredPruner(max_resource=5)
    study = _study("maximize", pruner, 1.0)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert _first_pruned_step(study, [0.1] * 3, steps=[5, 6, 7]) is None
    assert any("max_resource" in str(w.message) for w in rec)


def test_sparse_and_zero_based_steps() -> None:
    study = _study("maximize", PredPruner(max_resource=20, predictor="last_slope", calibrate=False), 1.0)
    # every 4th step from 0, steep enough to pass 1.0 by step 20
    steps = [0, 4, 8, 12, 16]
    assert _first_pruned_step(study, [0.25, 0.45, 0.65, 0.85, 0.95], steps) is None
    # every 4th step, slope too small to reach 1.0
    assert _first_pruned_step(study, [0.25, 0.3, 0.35, 0.4, 0.45], steps) == 4


_CONCAVE_T = 15


def _concave_final(x: float) -> float:
    return 0.2 + 0.7 * math.exp(-8 * (x - 0.37) ** 2)


def _concave_objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", 0.0, 1.0)
    rate = 0.15 + 0.5 * x  # curve speed varies with x: the best x starts slowly
    v = 0.0
    for step in range(1, _CONCAVE_T + 1):
        v = _concave_final(x) * (1 - (1 - rate) ** step)
        trial.report(v, step)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return v


def _best_trial_state(seed: int, pruner: PredPruner) -> tuple[TrialState, int]:
    """State of the trial with the best true final value, and the number of pruned trials."""
    study = optuna.create_study(
        direction="maximize", sampler=optuna.samplers.RandomSampler(seed=seed), pruner=pruner
    )
    study.optimize(_concave_objective, n_trials=30)
    trials = study.trials
    true_final = [
        _concave_final(t.params["x"]) * (1 - (1 - 0.15 - 0.5 * t.params["x"]) ** _CONCAVE_T)
        for t in trials
    ]
    pruned = sum(t.state == TrialState.PRUNED for t in trials)
    return trials[int(np.argmax(true_final))].state, pruned


def test_best_configuration_is_never_pruned_on_concave_curves() -> None:
    """Lemma 3.11 / Theorem 3.14 in Optuna: with last-slope PRED alone (``keep_fraction=None``,
    the paper's rule) on concave curves the trial with the best final value completes, whatever
    the sampling order."""
    for seed in range(3):
        pruner = PredPruner(max_resource=_CONCAVE_T, predictor="last_slope", keep_fraction=None)
        state, pruned = _best_trial_state(seed, pruner)
        assert pruned >= 5
        assert state == TrialState.COMPLETE


def test_the_median_cut_gives_up_the_guarantee_for_slow_starters() -> None:
    """The default median cut stops a trial outside the best half at its step, however good its
    optimistic prediction: on the same concave curves, where the best configuration is a slow
    starter, it prunes more, and on some sampling orders it prunes the best configuration (the
    trade-off documented in uvp_plugins.adacent.pred)."""
    outcomes = [
        _best_trial_state(seed, PredPruner(max_resource=_CONCAVE_T, calibrate=False))
        for seed in range(3)
    ]
    alone = [
        _best_trial_state(
            seed, PredPruner(max_resource=_CONCAVE_T, keep_fraction=None, calibrate=False)
        )
        for seed in range(3)
    ]
    assert sum(p for _, p in outcomes) > sum(p for _, p in alone)
    assert any(state == TrialState.PRUNED for state, _ in outcomes)


def test_nothing_crashes_the_study() -> None:
    T = 6

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        for step in range(1, T + 3):  # two steps beyond max_resource
            value = [math.nan, math.inf, -math.inf, x][trial.number % 4] if step == 2 else x * step
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return x

    study = optuna.create_study(
        direction="maximize",
        sampler=EnhancedAdaCentSampler(seed=0, n_candidates=64),
        pruner=PredPruner(max_resource=T),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=12, catch=())
    assert len(study.trials) == 12
    assert all(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in study.trials)

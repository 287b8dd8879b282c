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
    pruner = PredPruner(max_resource=20, delta=0.5, predictor=predictor)
    assert pruner.exploration_steps == 10
    best, flat = (1.0, 0.1) if direction == "maximize" else (0.1, 1.0)
    study = _study(direction, pruner, best)
    assert _first_pruned_step(study, [flat] * 20) == 10


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_optimistic_rising_curve_survives_and_stalled_curve_is_pruned(direction: str) -> None:
    sign = 1.0 if direction == "maximize" else -1.0
    study = _study(direction, PredPruner(max_resource=20, predictor="last_slope"), sign * 1.0)
    # rises by 0.1 per step: last-slope prediction at T=20 stays above 1.0 until it gets there
    rising = [sign * min(0.1 * s, 1.05) for s in range(1, 21)]
    assert _first_pruned_step(study, rising) is None
    # rises quickly, then stalls at 0.6: pruned once the slope no longer reaches the best value
    stalled = [sign * v for v in (0.3, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6)]
    assert _first_pruned_step(study, stalled) == 4


def test_intermediate_values_of_other_trials_count_as_reached() -> None:
    study = optuna.create_study(direction="maximize", pruner=PredPruner(max_resource=10))
    leader = study.ask(DIST)
    for step in range(1, 6):
        leader.report(0.8, step)  # still RUNNING, never completed
    assert _first_pruned_step(study, [0.3] * 5) == 2


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
    study = _study("maximize", PredPruner(max_resource=20, predictor="last_slope"), 1.0)
    # every 4th step from 0, steep enough to pass 1.0 by step 20
    steps = [0, 4, 8, 12, 16]
    assert _first_pruned_step(study, [0.25, 0.45, 0.65, 0.85, 0.95], steps) is None
    # every 4th step, slope too small to reach 1.0
    assert _first_pruned_step(study, [0.25, 0.3, 0.35, 0.4, 0.45], steps) == 4


def test_best_configuration_is_never_pruned_on_concave_curves() -> None:
    """Lemma 3.11 / Theorem 3.14 in Optuna: with last-slope PRED on concave curves the trial with
    the best final value completes, whatever the sampling order."""
    T = 15

    def final(x: float) -> float:
        return 0.2 + 0.7 * math.exp(-8 * (x - 0.37) ** 2)

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        rate = 0.15 + 0.5 * x  # curve speed varies with x
        v = 0.0
        for step in range(1, T + 1):
            v = final(x) * (1 - (1 - rate) ** step)
            trial.report(v, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return v

    for seed in range(3):
        study = optuna.create_study(
            direction="maximize",
            sampler=optuna.samplers.RandomSampler(seed=seed),
            pruner=PredPruner(max_resource=T, predictor="last_slope"),
        )
        study.optimize(objective, n_trials=30)
        trials = study.trials
        assert sum(t.state == TrialState.PRUNED for t in trials) >= 5
        true_final = [final(t.params["x"]) * (1 - (1 - 0.15 - 0.5 * t.params["x"]) ** T) for t in trials]
        assert trials[int(np.argmax(true_final))].state == TrialState.COMPLETE


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

"""The Tobit model in algorithm configuration: SMAC's AlgorithmConfigurationFacade racing over
instances, with instance features of any width or none, SMAC 2.4's adaptive capping
(``Scenario(adaptive_capping=True, runtime_cutoff=...)``) and ``trial_walltime_limit``; every
combination runs through the real facade (issue 31)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ConfigSpace import Categorical, Configuration, ConfigurationSpace, EqualsCondition, Float
from shared_helpers import SMAC_LOCAL_SEARCH_WARNINGS
from smac import AlgorithmConfigurationFacade, Scenario
from smac.acquisition.maximizer import LocalAndSortedRandomSearch
from smac.runhistory import RunHistory
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runhistory.enumerations import StatusType

from smac_ext import (
    CensoredRunHistoryEncoder,
    CutoffRecorder,
    TobitEnsembleModel,
    tobit_facade_kwargs,
)

pytestmark = [pytest.mark.smac, *SMAC_LOCAL_SEARCH_WARNINGS]

FAST: dict[str, Any] = {"n_steps": 80}
N_INSTANCES = 6
SLOW_ABOVE = 0.8  # walltime tests: runtimes above this sleep past the walltime limit


def space(seed: int = 0) -> ConfigurationSpace:
    cs = ConfigurationSpace(seed=seed)
    mode = Categorical("mode", ["fast", "careful"])
    x = Float("x", (0.0, 1.0))
    z = Float("z", (0.5, 4.0), log=True)
    cs.add([mode, x, z, EqualsCondition(z, mode, "careful")])
    return cs


def instance_runtime(config: Configuration, instance: str) -> float:
    """Runtime > 0 of a configuration on instance ``i<k>``: instances get harder with k."""
    k = int(instance[1:])
    base = 0.2 + 2.0 * (config["x"] - 0.3) ** 2
    if config["mode"] == "careful":
        base *= config.get("z", 1.0) ** 0.5
    return base * (1.0 + 0.5 * k)


def features(width: int) -> dict[str, list[float]]:
    rng = np.random.default_rng(width)
    return {
        f"i{k}": [float(k)] + rng.normal(size=width - 1).round(3).tolist()
        for k in range(N_INSTANCES)
    }


def capped_target(config: Configuration, instance: str, seed: int = 0, cutoff: float | None = None) -> float:
    """SMAC 2.4's convention: stop at ``cutoff`` and return the cost used (the cutoff)."""
    rt = instance_runtime(config, instance)
    return rt if cutoff is None else min(rt, float(cutoff))


def plain_target(config: Configuration, instance: str, seed: int = 0) -> float:
    return instance_runtime(config, instance)


def sleepy_target(config: Configuration, instance: str, seed: int = 0, cutoff: float | None = None) -> float:
    """Module-level (pynisher runs it in a child process): slow configurations sleep past the
    walltime limit and are killed; the others return their (tiny) runtime."""
    rt = instance_runtime(config, instance)
    if rt > SLOW_ABOVE:
        time.sleep(1.3)
    return rt if cutoff is None else min(rt, float(cutoff))


def sleepy_plain_target(config: Configuration, instance: str, seed: int = 0) -> float:
    return sleepy_target(config, instance, seed)


def make_scenario(tmp_path: Path, *, width: int | None, n_trials: int, **kw: Any) -> Scenario:
    return Scenario(
        space(),
        instances=[f"i{k}" for k in range(N_INSTANCES)],
        instance_features=None if width is None else features(width),
        n_trials=n_trials,
        deterministic=True,
        seed=0,
        output_directory=tmp_path / "smac",
        **kw,
    )


def run_facade(scenario: Scenario, target: Any, **extra: Any) -> tuple[AlgorithmConfigurationFacade, dict[str, Any]]:
    kwargs = {**tobit_facade_kwargs(scenario, **FAST), **extra}
    smac = AlgorithmConfigurationFacade(
        scenario,
        target,
        acquisition_maximizer=LocalAndSortedRandomSearch(
            scenario.configspace, challengers=200, local_search_iterations=2, seed=0
        ),
        overwrite=True,
        logging_level=40,
        **kwargs,
    )
    smac.optimize()
    return smac, kwargs


def test_the_issue_scenario_runs_to_the_end_with_instance_features(tmp_path: Path) -> None:
    """Issue 31's crash: X_test must have shape (n, 3), got (5000, 2) after 2 trials."""
    scen = make_scenario(tmp_path, width=3, n_trials=30)
    smac, kwargs = run_facade(scen, plain_target)
    model: TobitEnsembleModel = kwargs["model"]
    assert smac.runhistory.finished == 30
    assert model.ensemble is not None
    # the network's input is configuration + instance features (3 columns)
    width = model._encoder.width  # noqa: SLF001
    assert model.ensemble.n_features_in_ == width + 3
    # SMAC's maximiser asks about configurations alone: the answer is the cost over instances
    configs = smac.runhistory.get_configs()
    X = np.array([c.get_array() for c in configs])
    sample = model.sample_functions(X)
    feats = np.array(list(features(3).values()))
    per_instance = np.stack(
        [model.sample_functions(np.hstack((X, np.tile(f, (len(X), 1)))))[:, 0] for f in feats]
    )
    np.testing.assert_allclose(
        sample[:, 0], np.log(np.exp(per_instance).mean(axis=0)), rtol=1e-5, atol=1e-6
    )
    mean, var = model.predict_marginalized(X)
    assert mean.shape == var.shape == (len(X), 1) and np.isfinite(mean).all()
    # racing over instances happened: some configuration ran on several instances
    assert max(len(smac.runhistory.get_instance_seed_budget_keys(c)) for c in configs) >= 2


@pytest.mark.parametrize("width", [1, 12])
def test_instance_features_of_any_width(tmp_path: Path, width: int) -> None:
    scen = make_scenario(tmp_path, width=width, n_trials=20)
    smac, kwargs = run_facade(scen, plain_target)
    model: TobitEnsembleModel = kwargs["model"]
    assert smac.runhistory.finished == 20
    assert model.ensemble is not None
    if width == 12:  # more features than pca_components (7): reduced by PCA, as SMAC's models
        assert model._apply_pca  # noqa: SLF001
        assert model.ensemble.n_features_in_ == model._encoder.width + 7  # noqa: SLF001
    else:
        assert model.ensemble.n_features_in_ == model._encoder.width + 1  # noqa: SLF001
    X = np.array([c.get_array() for c in smac.runhistory.get_configs()])
    assert np.isfinite(model.predict_marginalized(X)[0]).all()


def test_instances_without_features_model_configurations_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scen = make_scenario(tmp_path, width=None, n_trials=16)
    with caplog.at_level(logging.INFO, logger="smac_ext._tobit_model"):
        smac, kwargs = run_facade(scen, plain_target)
    assert "no instance features" in caplog.text
    model: TobitEnsembleModel = kwargs["model"]
    assert smac.runhistory.finished == 16
    assert model.ensemble is not None
    assert model.ensemble.n_features_in_ == model._encoder.width  # noqa: SLF001
    X = np.array([c.get_array() for c in smac.runhistory.get_configs()])
    # without features the cost over instances is the plain prediction
    np.testing.assert_allclose(model.predict_marginalized(X)[0], model.predict(X)[0])
    with pytest.raises(ValueError, match=rf"shape \(n, {X.shape[1]}\)"):
        model.sample_functions(np.hstack((X, X)))


@pytest.mark.parametrize("features_width", [2, None])
def test_adaptive_capping_runs_are_censored_at_their_cutoff(
    tmp_path: Path, features_width: int | None
) -> None:
    scen = make_scenario(
        tmp_path, width=features_width, n_trials=30, adaptive_capping=True,
        runtime_cutoff=int(10 * N_INSTANCES),
    )
    smac, kwargs = run_facade(scen, capped_target)
    rh = smac.runhistory
    assert rh.finished == 30
    recorded = [v.additional_info.get("cutoff") for v in rh.values()]
    assert all(c is not None for c in recorded)  # every run kept the cutoff SMAC gave it
    capped = [k for k, v in rh.items() if v.cost >= v.additional_info["cutoff"]]
    assert capped, "adaptive capping should have stopped some challengers"
    encoder: CensoredRunHistoryEncoder = kwargs["runhistory_encoder"]
    X, Y = encoder.transform()
    assert Y.shape == (len(rh), 2)
    assert int(Y[:, 1].sum()) == len(capped)
    # censored at the cutoff, SMAC's status of these runs is SUCCESS
    assert all(rh[k].status == StatusType.SUCCESS for k in capped)
    model: TobitEnsembleModel = kwargs["model"]
    assert model.last_censored.any()
    # the run history on disk keeps the cutoffs: a restarted run censors the same runs
    loaded = RunHistory()
    loaded.load(scen.output_directory / "runhistory.json", scen.configspace)
    enc2 = CensoredRunHistoryEncoder(scen)
    enc2.runhistory = loaded
    np.testing.assert_array_equal(np.sort(enc2.transform()[1], axis=0), np.sort(Y, axis=0))


@pytest.mark.filterwarnings("ignore:Proposed cutoff for the incumbent is negative")  # SMAC's
@pytest.mark.parametrize("capping", [False, True])
def test_walltime_limit_kills_are_censored_at_the_limit(tmp_path: Path, capping: bool) -> None:
    extra: dict[str, Any] = {"adaptive_capping": True, "runtime_cutoff": 60} if capping else {}
    scen = make_scenario(tmp_path, width=2, n_trials=6, trial_walltime_limit=1.0, **extra)
    smac, kwargs = run_facade(scen, sleepy_target if capping else sleepy_plain_target)
    rh = smac.runhistory
    assert rh.finished == 6
    slow = [k for k in rh if instance_runtime(rh.get_config(k.config_id), str(k.instance)) > SLOW_ABOVE]
    assert slow, "the default configuration is slow on the hard instances"
    # SMAC 2.4.1 records a run pynisher stopped at the limit with crash_cost (inf); with an
    # infinite cost its runner reports CRASHED rather than TIMEOUT
    assert all(rh[k].cost == np.inf for k in slow)
    assert {rh[k].status for k in slow} <= {StatusType.CRASHED, StatusType.TIMEOUT}
    encoder: CensoredRunHistoryEncoder = kwargs["runhistory_encoder"]
    _, Y = encoder.transform()
    at_limit = Y[Y[:, 0] == 1.0]  # inf -> the walltime limit, censored
    assert len(at_limit) == len(slow) and at_limit[:, 1].all()
    model: TobitEnsembleModel = kwargs["model"]
    assert model.ensemble is not None and model.last_censored.any()


def test_a_cost_at_or_below_zero_with_log_y_is_refused_naming_the_option(tmp_path: Path) -> None:
    # known before the first trial: a finite crash_cost <= 0
    scen = make_scenario(tmp_path, width=2, n_trials=10, crash_cost=0.0)
    with pytest.raises(ValueError, match="log_y"):
        tobit_facade_kwargs(scen)
    tobit_facade_kwargs(scen, log_y=False)  # fine without the log
    # only known when the trial returns: refused when SMAC is told, before it stores the run
    scen = make_scenario(tmp_path, width=2, n_trials=10)
    calls: list[str] = []

    def zero_on_i3(config: Configuration, instance: str, seed: int = 0) -> float:
        calls.append(instance)
        return 0.0 if instance == "i3" else instance_runtime(config, instance)

    with pytest.raises(ValueError, match=r"log_y=True.*'i3'.*log_y=False"):
        run_facade(scen, zero_on_i3)
    assert "i3" in calls
    stored = RunHistory()
    stored.load(scen.output_directory / "runhistory.json", scen.configspace)
    # the refused result is not stored (its trial stays RUNNING in SMAC's run history)
    assert stored.finished == len(calls) - 1
    assert all(v.cost > 0 for v in stored.values() if v.status != StatusType.RUNNING)
    # a bound <= 0 of a capped run (cutoff 0) is no information: accepted, then left out
    cs = space()
    info = TrialInfo(cs.get_default_configuration(), instance="i1", additional_info={"cutoff": 0.0})
    value = TrialValue(cost=0.0)
    CutoffRecorder(log_y=True).on_tell_start(None, info, value)
    assert value.additional_info == {"cutoff": 0.0}
    with pytest.raises(ValueError, match="log_y"):
        CutoffRecorder(log_y=True).on_tell_start(None, TrialInfo(info.config, instance="i1"), TrialValue(cost=-1.0))


def test_declared_and_recorded_censoring_in_the_encoder(tmp_path: Path) -> None:
    scen = make_scenario(tmp_path, width=2, n_trials=10, adaptive_capping=True, runtime_cutoff=60)
    cs = scen.configspace
    configs = cs.sample_configuration(5)
    rh = RunHistory()
    rh.add(configs[0], cost=1.0, instance="i0", seed=0, additional_info={"cutoff": 3.0})
    rh.add(configs[1], cost=3.0, instance="i0", seed=0, additional_info={"cutoff": 3.0})
    rh.add(configs[2], cost=4.0, instance="i1", seed=0, additional_info={"cutoff": 3.0})  # cutoff + 1
    rh.add(configs[3], cost=2.0, instance="i1", seed=0, additional_info={"censored": True})
    rh.add(configs[4], cost=5.0, instance="i2", seed=0, status=StatusType.TIMEOUT)
    enc = CensoredRunHistoryEncoder(scen)
    enc.runhistory = rh
    X, Y = enc.transform()
    assert X.shape == (5, len(list(cs.values())) + 2)
    assert sorted(map(tuple, Y.tolist())) == [
        (1.0, 0.0), (2.0, 1.0), (3.0, 1.0), (3.0, 1.0), (5.0, 1.0)
    ]


def test_cutoff_recorder_docstring_example_runs() -> None:
    import doctest

    from smac_ext import _cutoff_recorder

    assert doctest.testmod(_cutoff_recorder, raise_on_error=True).attempted >= 3

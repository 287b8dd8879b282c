"""TobitEnsembleModel, CensoredRunHistoryEncoder and Thompson sampling driven through real SMAC3."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ConfigSpace import (
    Categorical,
    Configuration,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    Integer,
    OrdinalHyperparameter,
)
from shared_helpers import SMAC_LOCAL_SEARCH_WARNINGS
from smac import HyperparameterOptimizationFacade, Scenario
from smac.acquisition.maximizer import LocalAndSortedRandomSearch
from smac.model.random_forest import RandomForest
from smac.runhistory import RunHistory
from smac.runhistory.dataclasses import TrialValue
from smac.runhistory.encoder import RunHistoryEncoder
from smac.runhistory.enumerations import StatusType

from smac_ext import (
    CensoredRunHistoryEncoder,
    MaxUCBIntensifier,
    TobitEnsembleModel,
    TobitThompsonSampling,
    tobit_facade_kwargs,
)
from smac_ext._thompson import tobit_arm_factories

pytestmark = [pytest.mark.smac, *SMAC_LOCAL_SEARCH_WARNINGS]

FAST: dict[str, Any] = {"n_steps": 120}  # short training keeps the SMAC tests fast
CUTOFF = 3.0


def conditional_space(seed: int = 0) -> ConfigurationSpace:
    cs = ConfigurationSpace(seed=seed)
    kind = Categorical("kind", ["a", "b"])
    x = Float("x", (0.0, 1.0))
    z = Float("z", (0.1, 10.0), log=True)
    k = Integer("k", (1, 8))
    o = OrdinalHyperparameter("o", ["lo", "mid", "hi"])
    cs.add([kind, x, z, k, o, EqualsCondition(z, kind, "b"), EqualsCondition(o, kind, "a")])
    return cs


def runtime(config: Configuration) -> float:
    """A runtime-like cost, > 0; about half of the space needs more than CUTOFF."""
    base = 1.0 + 8.0 * (config["x"] - 0.3) ** 2 + 0.1 * config["k"]
    if config["kind"] == "b":
        return base * config.get("z", 1.0) ** 0.5
    return base + {"lo": 0.0, "mid": 0.5, "hi": 2.0}[config.get("o", "lo")]


def fast_maximizer(scenario: Scenario) -> LocalAndSortedRandomSearch:
    return LocalAndSortedRandomSearch(
        scenario.configspace, challengers=300, local_search_iterations=2, seed=scenario.seed
    )


def scenario(tmp_path: Path, n_trials: int = 24, seed: int = 0, **kw: Any) -> Scenario:
    return Scenario(
        conditional_space(seed),
        n_trials=n_trials,
        deterministic=True,
        seed=seed,
        output_directory=tmp_path / f"smac-{seed}",
        **kw,
    )


def run_ask_tell(smac: HyperparameterOptimizationFacade, n: int) -> list[Configuration]:
    """Runtime minimisation with a cutoff: runs above CUTOFF report TIMEOUT at cost CUTOFF."""
    asked = []
    for _ in range(n):
        info = smac.ask()
        rt = runtime(info.config)
        if rt > CUTOFF:
            value = TrialValue(cost=CUTOFF, time=CUTOFF, status=StatusType.TIMEOUT)
        else:
            value = TrialValue(cost=rt, time=rt)
        smac.tell(info, value)
        asked.append(info.config)
    return asked


def tobit_smac(tmp_path: Path, seed: int = 0, n_trials: int = 24) -> tuple[Any, dict[str, Any]]:
    scen = scenario(tmp_path, n_trials=n_trials, seed=seed)
    kwargs = tobit_facade_kwargs(scen, **FAST)
    smac = HyperparameterOptimizationFacade(
        scen,
        lambda config, seed=0: runtime(config),
        acquisition_maximizer=fast_maximizer(scen),
        initial_design=HyperparameterOptimizationFacade.get_initial_design(scen, n_configs=8),
        overwrite=True,
        logging_level=40,
        **kwargs,
    )
    return smac, kwargs


def test_facade_optimizes_a_conditional_space_with_the_tobit_model(tmp_path: Path) -> None:
    scen = scenario(tmp_path, n_trials=20)
    kwargs = tobit_facade_kwargs(scen, **FAST)
    seen_nan: list[bool] = []
    model = kwargs["model"]
    original = model._train

    def spy(X: np.ndarray, Y: np.ndarray) -> Any:
        seen_nan.append(bool(np.isnan(X).any()))
        return original(X, Y)

    model._train = spy  # observe what SMAC hands over, the real training still runs
    smac = HyperparameterOptimizationFacade(
        scen,
        lambda config, seed=0: runtime(config),
        acquisition_maximizer=fast_maximizer(scen),
        initial_design=HyperparameterOptimizationFacade.get_initial_design(scen, n_configs=6),
        overwrite=True,
        logging_level=40,
        **kwargs,
    )
    incumbent = smac.optimize()
    assert isinstance(incumbent, Configuration)
    assert smac.runhistory.finished == 20
    assert seen_nan and any(seen_nan)  # inactive hyperparameters arrive as NaN ...
    assert model.ensemble is not None  # ... and the model trains on them
    X = np.array([c.get_array() for c in smac.runhistory.get_configs()])
    mean, var = model.predict(X)
    assert np.isfinite(mean).all() and np.isfinite(var).all()
    # model-based proposals after the initial design
    origins = {c.origin for c in smac.runhistory.get_configs()}
    assert any(o and "Acquisition" in o or o and "Local Search" in o for o in origins)


def test_timeout_runs_reach_the_model_as_censored(tmp_path: Path) -> None:
    smac, kwargs = tobit_smac(tmp_path, n_trials=20)
    run_ask_tell(smac, 20)
    model: TobitEnsembleModel = kwargs["model"]
    encoder: CensoredRunHistoryEncoder = kwargs["runhistory_encoder"]
    rh = smac.runhistory
    n_timeouts = sum(rh[k].status == StatusType.TIMEOUT for k in rh)
    assert n_timeouts > 0
    X, Y = encoder.transform()
    assert Y.shape == (len(rh), 2)
    assert int(Y[:, 1].sum()) == n_timeouts
    np.testing.assert_allclose(Y[Y[:, 1] == 1.0, 0], CUTOFF)
    # the model's last training set had the censoring flags (trained on a prefix of the history)
    assert model.last_censored.any()
    np.testing.assert_allclose(model.last_y[model.last_censored], CUTOFF)
    # retraining on the full history: timed-out configurations are predicted above the cutoff
    model.train(X, Y)
    log_pred = model.predict(X[Y[:, 1] == 1.0])[0]
    assert np.mean(log_pred) > np.log(CUTOFF) - 0.1


def test_censored_encoder_handles_walltime_kills_and_custom_states(tmp_path: Path) -> None:
    scen = scenario(tmp_path, trial_walltime_limit=5.0)
    cs = scen.configspace
    configs = cs.sample_configuration(4)
    rh = RunHistory()
    rh.add(configs[0], cost=1.0, status=StatusType.SUCCESS)
    rh.add(configs[1], cost=float("inf"), status=StatusType.TIMEOUT)  # pynisher kill
    rh.add(configs[2], cost=2.0, status=StatusType.MEMORYOUT)
    rh.add(configs[3], cost=float("inf"), status=StatusType.CRASHED)
    enc = CensoredRunHistoryEncoder(scen)
    enc.runhistory = rh
    X, Y = enc.transform()
    rows = {round(float(y), 6): bool(c) for y, c in Y}
    assert rows == {1.0: False, 2.0: False, 5.0: True}  # inf -> walltime limit, censored
    assert Y.shape == (4, 2) and int(Y[:, 1].sum()) == 2
    enc2 = CensoredRunHistoryEncoder(
        scen, censored_states=[StatusType.TIMEOUT, StatusType.MEMORYOUT], timeout_cost=7.0
    )
    enc2.runhistory = rh
    _, Y2 = enc2.transform()
    assert sorted(map(tuple, Y2.tolist())) == [(1.0, 0.0), (2.0, 1.0), (7.0, 1.0), (7.0, 1.0)]
    assert len(enc2.get_configurations()) == 4


def test_thompson_sample_is_a_fixed_function_between_trainings(tmp_path: Path) -> None:
    smac, kwargs = tobit_smac(tmp_path, n_trials=14)
    run_ask_tell(smac, 14)
    model: TobitEnsembleModel = kwargs["model"]
    acq: TobitThompsonSampling = kwargs["acquisition_function"]
    assert acq.model is model
    configs = smac.runhistory.get_configs()
    first = acq(configs)
    np.testing.assert_array_equal(first, acq(configs))  # same function within an iteration
    X = np.array([c.get_array() for c in configs])
    np.testing.assert_allclose(first[:, 0], -model.predict(X)[0][:, 0])  # n_members=1: its mean
    X_train, Y_train = kwargs["runhistory_encoder"].transform()
    model.train(X_train, Y_train)  # a new iteration trains a fresh network (new seed)
    assert not np.allclose(first, acq(configs))
    with pytest.raises(TypeError, match="sample_functions"):
        TobitThompsonSampling().update(RandomForest(model._configspace))


def test_ensemble_member_draws_and_ei_compatible_predictions(tmp_path: Path) -> None:
    scen = scenario(tmp_path)
    model = TobitEnsembleModel(scen, n_members=3, log_y=True, **FAST)
    configs = scen.configspace.sample_configuration(30)
    X = np.array([c.get_array() for c in configs])
    y = np.array([runtime(c) for c in configs])
    Y = np.column_stack((np.minimum(y, CUTOFF), (y > CUTOFF).astype(float)))
    model.train(X, Y)
    members = model.ensemble.predict_members(model._encode(X))  # type: ignore[union-attr]
    drawn = {model.draw_thompson_member() for _ in range(30)}
    assert drawn == {0, 1, 2}
    for _ in range(3):
        m = model.draw_thompson_member()
        np.testing.assert_allclose(model.sample_functions(X)[:, 0], members[m])
    mean, var = model.predict(X)
    assert var is not None
    assert mean.shape == (30, 1) and var.shape == (30, 1) and np.all(var > 0)
    _, std = model.predict(X, covariance_type="std")
    assert std is not None
    np.testing.assert_allclose(std**2, var)
    with pytest.raises(ValueError, match="covariance_type"):
        model.predict(X, covariance_type="full")


def test_plain_smac_encoder_and_all_censored_histories_still_train(tmp_path: Path) -> None:
    scen = scenario(tmp_path)
    configs = scen.configspace.sample_configuration(10)
    rh = RunHistory()
    for c in configs:
        rh.add(c, cost=CUTOFF, status=StatusType.TIMEOUT)
    # every run timed out: the model warns (through logging) and fits the cutoffs as exact
    enc = CensoredRunHistoryEncoder(scen)
    enc.runhistory = rh
    X, Y = enc.transform()
    assert Y[:, 1].all()
    model = TobitEnsembleModel(scen, n_members=2, log_y=True, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing leaks as a Python warning
        model.train(X, Y)
    assert np.isfinite(model.predict(X)[0]).all()
    # SMAC's own encoder: one column, nothing censored
    plain = RunHistoryEncoder(scen)
    plain.runhistory = rh
    X1, Y1 = plain.transform()
    model.train(X1, Y1)
    assert not model.last_censored.any()


def test_seeded_runs_are_reproducible(tmp_path: Path) -> None:
    a, _ = tobit_smac(tmp_path / "a", seed=3, n_trials=14)
    b, _ = tobit_smac(tmp_path / "b", seed=3, n_trials=14)
    assert run_ask_tell(a, 14) == run_ask_tell(b, 14)


def test_bad_inputs_raise_clear_errors(tmp_path: Path) -> None:
    scen = scenario(tmp_path)
    with pytest.raises(TypeError, match="Scenario or a ConfigSpace"):
        TobitEnsembleModel({"x": (0.0, 1.0)})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_members"):
        TobitEnsembleModel(scen, n_members=0)
    with pytest.raises(TypeError, match="set by the model"):
        TobitEnsembleModel(scen, input_bounds=None)
    with pytest.raises(ValueError, match="n_steps"):
        tobit_arm_factories(n_steps=0)
    with pytest.raises(ValueError, match="retrain_after"):
        tobit_facade_kwargs(scen, retrain_after=0)
    # one fresh network (Thompson draw) per proposal by default
    assert tobit_facade_kwargs(scen)["config_selector"]._retrain_after == 1
    with pytest.raises(TypeError, match="StatusType"):
        CensoredRunHistoryEncoder(scen, censored_states=["TIMEOUT"])  # type: ignore[list-item]
    model = TobitEnsembleModel(scen.configspace, log_y=True, **FAST)
    X = np.array([c.get_array() for c in scen.configspace.sample_configuration(5)])
    with pytest.raises(ValueError, match="> 0"):
        model.train(X, np.zeros((5, 1)))
    with pytest.raises(ValueError, match="1 column"):
        model.train(X, np.zeros((5, 3)))
    with pytest.raises(RuntimeError, match="not trained"):
        TobitEnsembleModel(scen.configspace).predict(X)


def cash_space(seed: int = 0) -> ConfigurationSpace:
    cs = ConfigurationSpace(seed=seed)
    algo = Categorical("algorithm", ["quad", "lin"])
    x = Float("quad:x", (0.0, 1.0))
    y = Float("lin:y", (0.0, 1.0))
    cs.add([algo, x, y, EqualsCondition(x, algo, "quad"), EqualsCondition(y, algo, "lin")])
    return cs


def test_one_tobit_model_per_maxucb_arm(tmp_path: Path) -> None:
    scen = Scenario(
        cash_space(),
        n_trials=30,
        deterministic=True,
        seed=0,
        output_directory=tmp_path / "cash",
    )
    intensifier = MaxUCBIntensifier(
        scen,
        n_initial=3,
        max_consecutive_crashes=None,  # TIMEOUTs are not credited to the bandit
        acquisition_maximizer_factory=fast_maximizer,
        **tobit_arm_factories(**FAST),
    )
    smac = HyperparameterOptimizationFacade(
        scen,
        lambda config, seed=0: 0.0,
        intensifier=intensifier,
        overwrite=True,
        logging_level=40,
    )

    def cost(config: Configuration) -> float:
        if config["algorithm"] == "quad":
            return 1.0 + 6.0 * (config["quad:x"] - 0.2) ** 2
        return 1.5 + 4.0 * abs(config["lin:y"] - 0.5)

    for _ in range(30):
        info = smac.ask()
        c = cost(info.config)
        if c > 2.0:
            smac.tell(info, TrialValue(cost=2.0, time=2.0, status=StatusType.TIMEOUT))
        else:
            smac.tell(info, TrialValue(cost=c, time=c))
    models: list[Any] = [
        hpo.selector._model for hpo in intensifier._arm_hpo if hpo is not None  # noqa: SLF001
    ]
    assert len(models) == 2
    assert all(isinstance(m, TobitEnsembleModel) for m in models)
    trained = [m for m in models if m.ensemble is not None]
    assert trained and any(m.last_censored.any() for m in trained)
    # each arm's model sees its own subspace only (1 hyperparameter)
    assert all(m._n_hps == 1 for m in models)  # noqa: SLF001


def test_runtime_benchmark_runs_with_censoring() -> None:
    from uvp_plugins.bench.methods.tobit_bench import SGDTimeToLoss, run_runtime_benchmark

    problem = SGDTimeToLoss(kappa_max=5.0)
    cs = problem.configspace(0)
    fast = Configuration(
        cs, {"learning_rate": 1.0, "momentum": 0.5, "batch_size": 32, "decay_power": 0.0}
    )
    rt, timed_out = problem.runtime(fast)
    assert not timed_out and 0 < rt < 5.0
    assert problem.runtime(fast, cutoff=rt / 2) == (rt / 2, True)
    rows = run_runtime_benchmark(
        seeds=[0], methods=["smac-tobit-ts", "random"], runtime_budget=25.0, max_trials=12,
        n_initial=4, kappa_max=5.0,
    )
    assert {r["method"] for r in rows} == {"smac-tobit-ts", "random"}
    assert all(r["trials"] >= 1 and r["best"] <= 5.0 for r in rows)

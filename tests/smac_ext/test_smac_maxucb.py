"""MaxUCBIntensifier driven through real SMAC3 (HyperparameterOptimizationFacade)."""

from __future__ import annotations

import json
import math
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
)
from smac import HyperparameterOptimizationFacade, Scenario
from smac.acquisition.maximizer import LocalAndSortedRandomSearch
from smac.callback import Callback
from smac.model.random_forest import RandomForest
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runhistory.enumerations import StatusType

from smac_ext import MaxUCBIntensifier
from uvp_plugins.bandits import CashBandit, MaxUCB

pytestmark = pytest.mark.smac

#: the bandit of Alg. 1 (alpha 0.5, no exploration floor): the tests that follow the paper's rule
#: step by step pin it (the intensifier's defaults are the CASH settings chosen in issue 30)
ALG1: dict[str, Any] = {"alpha": 0.5, "floor": 0.0}


def cash_space(empty_arm: bool = True, seed: int = 0) -> ConfigurationSpace:
    """Arms: 'quad' (x), 'lin' (y, z), optionally 'const' without hyperparameters."""
    cs = ConfigurationSpace(seed=seed)
    arms = ["quad", "lin", "const"] if empty_arm else ["quad", "lin"]
    algo = Categorical("algorithm", arms)
    x = Float("quad:x", (-2.0, 2.0))
    y = Float("lin:y", (0.0, 1.0))
    z = Integer("lin:z", (1, 5))
    cs.add([algo, x, y, z, EqualsCondition(x, algo, "quad"), EqualsCondition(y, algo, "lin"),
            EqualsCondition(z, algo, "lin")])
    return cs


def loss(config: Configuration) -> float:
    arm = config["algorithm"]
    if arm == "quad":
        return 0.3 + (config["quad:x"] - 1.0) ** 2
    if arm == "lin":
        return 0.1 + abs(config["lin:y"] - 0.7) + 0.01 * config["lin:z"]
    return 0.5


def train(config: Configuration, seed: int = 0) -> float:
    return loss(config)


def fast_maximizer(scenario: Scenario) -> LocalAndSortedRandomSearch:
    """A cheaper acquisition maximiser than the facade's 10000 challengers (test speed)."""
    return LocalAndSortedRandomSearch(scenario.configspace, challengers=300,
                                      local_search_iterations=2, seed=scenario.seed)


def make_scenario(tmp_path: Path, cs: ConfigurationSpace, n_trials: int, **kw: Any) -> Scenario:
    return Scenario(cs, deterministic=True, n_trials=n_trials, output_directory=tmp_path,
                    seed=0, **kw)


class Recorder(Callback):
    """Records told trials (config, status, cost) in order; optionally stops after ``stop_after``."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.told: list[tuple[Configuration, StatusType, Any]] = []
        self.asks = 0
        self.stop_after = stop_after

    def on_ask_end(self, smbo: Any, info: TrialInfo) -> None:
        self.asks += 1

    def on_tell_end(self, smbo: Any, info: TrialInfo, value: TrialValue) -> bool | None:
        self.told.append((info.config, value.status, value.cost))
        if self.stop_after is not None and len(self.told) >= self.stop_after:
            return False
        return None


def expected_arm(core: MaxUCB, available: list[bool]) -> int:
    """Hand-written oracle of the documented rule: the policy's choice if available, else the
    policy's rule restricted to the available arms (round robin first, then the largest index)."""
    choice = core.select()
    if available[choice]:
        return choice
    core.cancel(choice)
    idx = [i for i, a in enumerate(available) if a]
    n, pending = core.n_pulls, core.pending
    if min(n[i] for i in idx) == 0:
        return min(idx, key=lambda i: (n[i] + pending[i], i))
    index = core.indices()
    return max(idx, key=lambda i: (index[i], -i))


def replay_maxucb(intensifier: MaxUCBIntensifier, told: list[tuple[Configuration, Any, float]],
                  alpha: float = 0.5) -> MaxUCB:
    """The arms of the told trials are exactly what a core MaxUCB fed the same losses selects
    (an arm without hyperparameters is unavailable after its single evaluation)."""
    cash = intensifier.cash_space
    core = MaxUCB(cash.n_arms, alpha=alpha)
    available = [True] * cash.n_arms
    for config, status, cost in told:
        arm = intensifier.arm_of(config)
        assert expected_arm(core, available) == arm
        if status == StatusType.SUCCESS and math.isfinite(cost):
            core.update(arm, cost)
        else:
            core.cancel(arm)
        if cash.is_empty(arm):
            available[arm] = False
    assert core.history() == intensifier.policy.history()
    return core


# ------------------------------------------------------------------------------ optimize()
def test_optimize_follows_maxucb_and_keeps_joint_incumbent(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=False)
    scenario = make_scenario(tmp_path, cs, n_trials=24)
    intensifier = MaxUCBIntensifier(scenario, **ALG1, n_initial=2,
                                    acquisition_maximizer_factory=fast_maximizer)
    rec = Recorder()
    smac = HyperparameterOptimizationFacade(scenario, train, intensifier=intensifier,
                                            callbacks=[rec], overwrite=True, logging_level=40)
    incumbent: Any = smac.optimize()

    # every trial was asked, evaluated and told; configurations live in the joint space
    assert rec.asks == len(rec.told) == 24 == smac.runhistory.finished
    assert all(c.config_space is cs for c, _, _ in rec.told)
    assert len({c for c, _, _ in rec.told}) == 24  # no configuration evaluated twice
    assert len({k.seed for k in smac.runhistory}) == 1
    # the incumbent is the best joint configuration of the run history
    best = min(rec.told, key=lambda t: t[2])
    assert incumbent.config_space is cs and incumbent == best[0]
    # arm selection is exactly MaxUCB on the same losses (Alg. 1)
    replay_maxucb(intensifier, rec.told)
    # each arm's first pull evaluated its default configuration (Alg. 1, line 3)
    for arm, sub in enumerate(intensifier.cash_space.subspaces):
        first = next(c for c, _, _ in rec.told if intensifier.arm_of(c) == arm)
        assert intensifier.cash_space.to_arm(first)[1] == sub.get_default_configuration()
    # the better arm ('lin', min 0.11 vs 0.3) got most pulls; counts match the run history
    assert intensifier.pulls["lin"] > intensifier.pulls["quad"]
    assert sum(intensifier.pulls.values()) == 24
    # SMAC's output directory holds the bandit state in intensifier.json
    data = json.loads((scenario.output_directory / "intensifier.json").read_text())
    bandit_state = data["state"]["bandit"]
    assert bandit_state["format"] == "uvp-cash-bandit/2"
    assert bandit_state["policy"]["history"] == [list(h) for h in intensifier.policy.history()]
    assert data["incumbent_ids"] == [smac.runhistory.get_config_id(incumbent)]


def test_burn_in_can_cover_every_arms_initial_design(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=False)
    scenario = make_scenario(tmp_path, cs, n_trials=24)
    # K = 2 arms, n_initial = 2: each arm's design is its default + 2 Sobol configurations
    intensifier = MaxUCBIntensifier(scenario, burn_in="initial_design", n_initial=2, **ALG1,
                                    acquisition_maximizer_factory=fast_maximizer)
    assert intensifier.policy.burn_in == 3 and intensifier.meta["burn_in"] == "design"
    assert intensifier.meta["n_initial"] == 2
    rec = Recorder()
    smac = HyperparameterOptimizationFacade(scenario, train, intensifier=intensifier,
                                            callbacks=[rec], overwrite=True, logging_level=40)
    smac.optimize()
    arms = [intensifier.arm_of(c) for c, _, _ in rec.told]
    assert arms[:6] == [0, 1] * 3  # the burn-in: round robin over the designs
    assert arms[6:8] == [0, 1]  # then Alg. 1 starts afresh with one pull per arm
    # the designs' results are not observed by the bandit; every later result is
    assert len(intensifier.policy.history()) == 24 - 6
    # the arms' model-based phase starts right after the burn-in (origins of pulls 7 and 8)
    assert all("Initial Design" not in str(c.origin) for c, _, _ in rec.told[6:8])
    assert all("Default" in str(c.origin) or "Sobol" in str(c.origin)
               for c, _, _ in rec.told[:6])


def test_arm_without_hyperparameters_is_pulled_once_then_exhausted(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=True)
    scenario = make_scenario(tmp_path, cs, n_trials=14)
    intensifier = MaxUCBIntensifier(scenario, acquisition_maximizer_factory=fast_maximizer)
    rec = Recorder()
    smac = HyperparameterOptimizationFacade(scenario, train, intensifier=intensifier,
                                            callbacks=[rec], overwrite=True, logging_level=40)
    smac.optimize()
    const = [c for c, _, _ in rec.told if c["algorithm"] == "const"]
    assert const == [cs.get_default_configuration().__class__(cs, values={"algorithm": "const"})]
    assert intensifier.unavailable_arms == {"const": "exhausted"}
    assert intensifier.pulls["const"] == 1
    assert len(rec.told) == 14  # the other arms took the remaining budget
    # the initial round robin visits every arm once, in order
    assert [intensifier.arm_of(c) for c, _, _ in rec.told[:3]] == [0, 1, 2]


def test_exhausted_best_arm_falls_back_to_the_policy_rule_on_the_other_arms(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=True)
    scenario = make_scenario(tmp_path, cs, n_trials=9)

    def const_best(config: Configuration, seed: int = 0) -> float:
        return 0.01 if config["algorithm"] == "const" else loss(config)

    intensifier = MaxUCBIntensifier(scenario, **ALG1, acquisition_maximizer_factory=fast_maximizer)
    rec = Recorder()
    smac = HyperparameterOptimizationFacade(scenario, const_best, intensifier=intensifier,
                                            callbacks=[rec], overwrite=True, logging_level=40)
    smac.optimize()
    # the core policy keeps choosing the (exhausted) best arm; every later pull is a fallback
    core = MaxUCB(3)
    for _config, _, cost in rec.told[:3]:
        core.update(core.select(), cost)
    assert core.select() == 2
    assert [c["algorithm"] for c, _, _ in rec.told].count("const") == 1
    assert len(rec.told) == 9 and intensifier.policy.pending == [0, 0, 0]
    replay_maxucb(intensifier, rec.told)
    assert smac.intensifier.get_incumbent() == Configuration(cs, values={"algorithm": "const"})


def test_model_factory_builds_one_surrogate_per_arm_on_its_subspace(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=True)
    scenario = make_scenario(tmp_path, cs, n_trials=16)
    built: list[Scenario] = []

    def factory(arm_scenario: Scenario) -> RandomForest:
        built.append(arm_scenario)
        return RandomForest(arm_scenario.configspace, n_trees=4, seed=arm_scenario.seed)

    intensifier = MaxUCBIntensifier(scenario, model_factory=factory, n_initial=1,
                                    acquisition_maximizer_factory=fast_maximizer)
    smac = HyperparameterOptimizationFacade(scenario, train, intensifier=intensifier,
                                            overwrite=True, logging_level=40)
    smac.optimize()
    subspaces = intensifier.cash_space.subspaces
    # one model per arm with hyperparameters, each on its own subspace; the empty arm needs none
    assert sorted(id(s.configspace) for s in built) == sorted(id(s) for s in subspaces[:2])
    for arm in range(2):
        hpo = intensifier._arm_hpo[arm]
        assert hpo is not None and hpo.selector._model is not None
        assert hpo.selector._model._configspace is subspaces[arm]
        # the arm's run-history view holds exactly that arm's trials, in the subspace
        view = intensifier._arm_rh[arm]
        mine = [c for c in smac.runhistory.get_configs() if intensifier.arm_of(c) == arm]
        assert sorted(view.get_configs(), key=str) == sorted(
            (intensifier.cash_space.to_arm(c)[1] for c in mine), key=str)
    assert intensifier.meta["factories"]["model"].endswith("factory")


# --------------------------------------------------------------------------------- ask/tell
def test_ask_tell_out_of_order_and_told_configs_are_credited_by_selector(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=True)
    scenario = make_scenario(tmp_path, cs, n_trials=50)
    intensifier = MaxUCBIntensifier(scenario, acquisition_maximizer_factory=fast_maximizer)
    smac = HyperparameterOptimizationFacade(scenario, None, intensifier=intensifier,
                                            overwrite=True, logging_level=40)
    infos = [smac.ask() for _ in range(3)]
    # pending pulls spread the initial round robin over the arms
    assert [intensifier.arm_of(i.config) for i in infos] == [0, 1, 2]
    assert intensifier.policy.pending == [1, 1, 1]
    for info in reversed(infos):  # results arrive in reverse order
        smac.tell(info, TrialValue(cost=loss(info.config)))
    assert intensifier.policy.pending == [0, 0, 0]
    assert intensifier.policy.history() == [
        (intensifier.arm_of(i.config), loss(i.config)) for i in reversed(infos)]
    # a configuration the user tells without asking is credited to its selector's arm
    own = Configuration(cs, values={"algorithm": "quad", "quad:x": 1.0})
    smac.tell(TrialInfo(own, seed=infos[0].seed), TrialValue(cost=0.3))
    assert intensifier.policy.observations(0)[-1] == 0.3
    incumbent: Any = smac.intensifier.get_incumbent()
    assert incumbent == own or loss(incumbent) <= 0.3
    # further asks never repeat a configuration, and follow MaxUCB sequentially
    told = [(i.config, StatusType.SUCCESS, loss(i.config)) for i in reversed(infos)]
    told.append((own, StatusType.SUCCESS, 0.3))
    for _ in range(8):
        info = smac.ask()
        assert not any(info.config == c for c, _, _ in told)
        smac.tell(info, TrialValue(cost=loss(info.config)))
        told.append((info.config, StatusType.SUCCESS, loss(info.config)))
    assert intensifier.policy.history() == [(intensifier.arm_of(c), v) for c, _, v in told]


# ------------------------------------------------------------------------------- crashes
def test_crashed_and_non_finite_trials_are_not_credited(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=True)
    scenario = make_scenario(tmp_path, cs, n_trials=18, crash_cost=10.0)
    calls = {"n": 0}

    def flaky(config: Configuration, seed: int = 0) -> float:
        calls["n"] += 1
        if config["algorithm"] == "lin" and config["lin:y"] > 0.6:
            raise RuntimeError("diverged")
        return loss(config)

    intensifier = MaxUCBIntensifier(scenario, **ALG1, acquisition_maximizer_factory=fast_maximizer,
                                    max_consecutive_crashes=None)
    rec = Recorder()
    smac = HyperparameterOptimizationFacade(scenario, flaky, intensifier=intensifier,
                                            callbacks=[rec], overwrite=True, logging_level=40)
    smac.optimize()
    crashed = [c for c, s, _ in rec.told if s == StatusType.CRASHED]
    assert crashed, "the test space must produce crashes"
    assert all(c["algorithm"] == "lin" for c in crashed)
    # credited observations = successful trials only, per arm
    for arm, value in enumerate(intensifier.cash_space.arms):
        ok = [v for c, s, v in rec.told if s == StatusType.SUCCESS and c["algorithm"] == value]
        assert intensifier.policy.observations(arm) == ok
    assert 10.0 not in intensifier.policy.observations(1)
    assert intensifier.policy.pending == [0, 0, 0]
    replay_maxucb(intensifier, rec.told)
    # crashed trials stay in SMAC's run history and in the arm's own view (its model sees them)
    assert smac.runhistory.finished == 18
    view = intensifier._arm_rh[1]
    assert sum(view[k].status == StatusType.CRASHED for k in view) == len(crashed)

    # a SUCCESS with a non-finite cost, told through ask/tell, is not credited either
    scenario2 = make_scenario(tmp_path / "nan", cs, n_trials=10)
    intensifier2 = MaxUCBIntensifier(scenario2, acquisition_maximizer_factory=fast_maximizer)
    smac2 = HyperparameterOptimizationFacade(scenario2, None, intensifier=intensifier2,
                                             overwrite=True, logging_level=40)
    first = smac2.ask()
    smac2.tell(first, TrialValue(cost=0.4))
    bad = smac2.ask()
    smac2.tell(bad, TrialValue(cost=float("inf")))
    assert intensifier2.policy.history() == [(0, 0.4)]
    assert intensifier2.policy.pending == [0, 0, 0]


def test_an_arm_that_always_crashes_is_dropped(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=False)
    scenario = make_scenario(tmp_path, cs, n_trials=12)

    def broken_lin(config: Configuration, seed: int = 0) -> float:
        if config["algorithm"] == "lin":
            raise ValueError("this model class cannot be fit")
        return loss(config)

    intensifier = MaxUCBIntensifier(scenario, acquisition_maximizer_factory=fast_maximizer,
                                    max_consecutive_crashes=3)
    rec = Recorder()
    smac = HyperparameterOptimizationFacade(scenario, broken_lin, intensifier=intensifier,
                                            callbacks=[rec], overwrite=True, logging_level=40)
    smac.optimize()
    lin = [s for c, s, _ in rec.told if c["algorithm"] == "lin"]
    assert lin == [StatusType.CRASHED] * 3
    assert intensifier.unavailable_arms == {"lin": "crashed"}
    assert intensifier.pulls == {"quad": 9, "lin": 0}
    assert intensifier.get_state()["bandit"]["crash_streak"] == [0, 3]
    assert intensifier.bandit.retired == {1: "crashed"}


# -------------------------------------------------------------------------------- restart
def test_restart_from_output_directory_continues_with_same_arm_statistics(tmp_path: Path) -> None:
    def run(stop_after: int | None) -> tuple[Any, MaxUCBIntensifier, Recorder]:
        scenario = make_scenario(tmp_path, cash_space(empty_arm=True), n_trials=14,
                                 name="restart")
        intensifier = MaxUCBIntensifier(scenario, **ALG1,
                                        acquisition_maximizer_factory=fast_maximizer)
        rec = Recorder(stop_after)
        smac = HyperparameterOptimizationFacade(scenario, train, intensifier=intensifier,
                                                callbacks=[rec], logging_level=40)
        return smac, intensifier, rec

    smac1, int1, rec1 = run(stop_after=6)
    smac1.optimize()  # stopped by the callback after 6 trials
    assert smac1.runhistory.finished == 6
    saved = json.loads((smac1.scenario.output_directory / "intensifier.json").read_text())
    state1 = int1.get_state()
    assert saved["state"] == json.loads(json.dumps(state1))

    smac2, int2, rec2 = run(stop_after=None)  # same scenario, same directory: continues
    assert smac2.runhistory.finished == 6
    assert int2.get_state() == json.loads(json.dumps(state1))
    assert int2.pulls == int1.pulls and int2.unavailable_arms == int1.unavailable_arms
    smac2.optimize()
    assert smac2.runhistory.finished == 14
    history1, history2 = int1.policy.history(), int2.policy.history()
    assert history2[: len(history1)] == history1 and len(history2) == 14
    # the continued run never re-evaluates a configuration of the first part
    configs = [c for c, _, _ in rec1.told] + [c for c, _, _ in rec2.told]
    assert len(configs) == len(set(configs)) == 14
    # the arm views were rebuilt from the restored run history
    for arm in range(3):
        n_arm = sum(intensifier_arm == arm for intensifier_arm in map(int2.arm_of, configs))
        assert len(int2._arm_rh[arm]) == n_arm
    # the joined selection sequence is MaxUCB on the joined results
    replay_maxucb(int2, rec1.told + rec2.told)


# ---------------------------------------------------------------------- SMAC's contract
def test_intensifier_contract_and_state_round_trip(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=True)
    scenario = make_scenario(tmp_path, cs, n_trials=30)
    intensifier = MaxUCBIntensifier(scenario, alpha=0.7, burn_in=1)
    assert intensifier.uses_seeds is True
    assert intensifier.uses_budgets is False
    assert intensifier.uses_instances is False
    assert intensifier.uses_cutoffs is False
    cutoff = MaxUCBIntensifier(make_scenario(tmp_path / "c", cs, n_trials=30, runtime_cutoff=5))
    assert cutoff.uses_cutoffs is True
    meta = intensifier.meta
    assert json.loads(json.dumps(meta)) == meta
    assert meta["name"] == "MaxUCBIntensifier" and meta["alpha"] == 0.7 and meta["burn_in"] == 1

    # drive a few trials, then round-trip the state into a fresh intensifier
    smac = HyperparameterOptimizationFacade(scenario, None, intensifier=intensifier,
                                            overwrite=True, logging_level=40)
    infos = [smac.ask() for _ in range(4)]
    assert [intensifier.arm_of(i.config) for i in infos] == [0, 1, 2, 0]  # burn-in round robin
    for info in infos[:3]:
        smac.tell(info, TrialValue(cost=loss(info.config)))
    state = intensifier.get_state()
    assert json.loads(json.dumps(state)) == state
    policy_state = state["bandit"]["policy"]
    assert len(policy_state["burn_discarded"]) == 3 and policy_state["pending"] == [1, 0, 0]
    fresh = MaxUCBIntensifier(scenario, alpha=0.7, burn_in=1)
    fresh.set_state(json.loads(json.dumps(state)))
    assert fresh.get_state() == state
    assert np.array_equal(fresh.policy.indices(), intensifier.policy.indices(), equal_nan=True)
    # the layout written before the bandit moved into the core is still read
    legacy = {"selector": state["selector"], "arms": state["arms"],
              "policy": state["bandit"]["policy"], "unavailable": [None, None, ""],
              "crash_streak": [0, 2, 0]}
    old = MaxUCBIntensifier(scenario, alpha=0.7, burn_in=1)
    old.set_state(legacy)
    assert old.policy.state_dict() == intensifier.policy.state_dict()
    assert old.bandit.crash_streak == [0, 2, 0] and old.unavailable_arms == {}
    # a corrupt bandit state is rejected, naming the field
    broken = json.loads(json.dumps(state))
    broken["bandit"]["policy"]["burn_discarded"][0][1] = float("nan")
    with pytest.raises(ValueError, match=r"state\['burn_discarded'\]\[0\]: loss must be finite"):
        MaxUCBIntensifier(scenario, alpha=0.7, burn_in=1).set_state(broken)
    # a state of another CASH space or policy is rejected
    with pytest.raises(ValueError, match="arms"):
        MaxUCBIntensifier(make_scenario(tmp_path / "o", cash_space(False), 30)).set_state(state)
    with pytest.raises(ValueError, match="policy 'MaxUCB', not 'UCB'"):
        MaxUCBIntensifier(scenario, policy="UCB").set_state(state)
    # SMAC saves incumbents, trajectory and our state in intensifier.json
    path = tmp_path / "int.json"
    intensifier.save(path)
    again = MaxUCBIntensifier(scenario, alpha=0.7, burn_in=1)
    again.runhistory = smac.runhistory
    again.load(path)
    assert again.get_state() == state
    assert again.get_incumbent() == intensifier.get_incumbent()


def test_bad_input_is_rejected_with_clear_errors(tmp_path: Path) -> None:
    cs = cash_space(empty_arm=True)
    scenario = make_scenario(tmp_path, cs, n_trials=10)
    with pytest.raises(ValueError, match="alpha must be a float >= 0, got -0.1"):
        MaxUCBIntensifier(scenario, alpha=-0.1)
    with pytest.raises(ValueError, match="burn_in"):
        MaxUCBIntensifier(scenario, burn_in=-1)
    with pytest.raises(ValueError, match="burn_in must be one of 'design'"):
        MaxUCBIntensifier(scenario, burn_in="designs")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_pulls must be an int >= 1"):
        MaxUCBIntensifier(scenario, min_pulls=0)
    with pytest.raises(ValueError, match="floor must be"):
        MaxUCBIntensifier(scenario, floor=-1.0)
    with pytest.raises(ValueError, match="with initial_design_factory give them as ints"):
        MaxUCBIntensifier(scenario, burn_in="initial_design",
                          initial_design_factory=lambda s: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="policy must be one of"):
        MaxUCBIntensifier(scenario, policy="Thompson")
    with pytest.raises(ValueError, match=r"n_initial must be None or an int in .* = \[0, 9\]"):
        MaxUCBIntensifier(scenario, n_initial=-2)
    with pytest.raises(ValueError, match="n_initial"):
        MaxUCBIntensifier(scenario, n_initial=10)
    with pytest.raises(ValueError, match="max_consecutive_crashes"):
        MaxUCBIntensifier(scenario, max_consecutive_crashes=0)
    with pytest.raises(ValueError, match="alpha is not a parameter of policy 'RoundRobin'"):
        MaxUCBIntensifier(scenario, policy="RoundRobin", alpha=1.0)
    flat = ConfigurationSpace({"x": (0.0, 1.0), "algorithm": ["a", "b"]})
    with pytest.raises(ValueError, match="not a CASH space"):
        MaxUCBIntensifier(make_scenario(tmp_path, flat, n_trials=10))
    with pytest.raises(ValueError, match="'nope' is not a hyperparameter"):
        MaxUCBIntensifier(scenario, selector="nope")
    with pytest.raises(ValueError, match="single-objective"):
        MaxUCBIntensifier(make_scenario(tmp_path, cs, n_trials=10, objectives=["a", "b"]))
    with pytest.raises(ValueError, match="instances"):
        MaxUCBIntensifier(make_scenario(tmp_path, cs, n_trials=10, instances=["i1"]))
    # a told configuration whose selector value is not an arm of this space
    other = ConfigurationSpace({"algorithm": ["quad", "xgb"]})
    smac = HyperparameterOptimizationFacade(scenario, None,
                                            intensifier=MaxUCBIntensifier(scenario),
                                            overwrite=True, logging_level=40)
    with pytest.raises(ValueError, match="'xgb' of 'algorithm' is not an arm"):
        smac.tell(TrialInfo(Configuration(other, values={"algorithm": "xgb"}), seed=0),
                  TrialValue(cost=0.1))


# ------------------------------------------------------------ composes with the Tobit model
def test_one_tobit_surrogate_per_arm(tmp_path: Path) -> None:
    from smac_ext import CensoredRunHistoryEncoder, TobitEnsembleModel, TobitThompsonSampling

    cs = cash_space(empty_arm=True)
    scenario = make_scenario(tmp_path, cs, n_trials=16)
    models: list[TobitEnsembleModel] = []

    def tobit(arm_scenario: Scenario) -> TobitEnsembleModel:
        models.append(TobitEnsembleModel(arm_scenario, n_members=1, log_y=False, n_steps=60))
        return models[-1]

    intensifier = MaxUCBIntensifier(
        scenario,
        n_initial=1,
        **ALG1,
        model_factory=tobit,
        runhistory_encoder_factory=CensoredRunHistoryEncoder,
        acquisition_function_factory=lambda s: TobitThompsonSampling(),
        acquisition_maximizer_factory=fast_maximizer,
    )
    rec = Recorder()
    smac = HyperparameterOptimizationFacade(scenario, train, intensifier=intensifier,
                                            callbacks=[rec], overwrite=True, logging_level=40)
    smac.optimize()
    assert len(rec.told) == 16
    replay_maxucb(intensifier, rec.told)
    subspaces = intensifier.cash_space.subspaces
    assert [m._configspace for m in models] == list(subspaces[:2])  # one model per arm
    for arm, model in enumerate(models):
        n_arm = sum(intensifier.arm_of(c) == arm for c, _, _ in rec.told)
        # each model was trained on its own arm's observations only
        assert 0 < len(model.last_y) <= n_arm


# ------------------------------------------------------------------------- parallel workers
class InFlight(Recorder):
    """Also records the largest number of trials asked but not yet told."""

    def __init__(self) -> None:
        super().__init__()
        self.max_in_flight = 0

    def on_ask_end(self, smbo: Any, info: TrialInfo) -> None:
        super().on_ask_end(smbo, info)
        self.max_in_flight = max(self.max_in_flight, self.asks - len(self.told))


def slow_train(config: Configuration, seed: int = 0) -> float:
    import time

    time.sleep(0.05)  # long enough for the two workers to overlap
    return loss(config)


def test_parallel_dask_workers_credit_every_result_to_its_arm(tmp_path: Path) -> None:
    """SMAC with two Dask workers (the user's own client, as SMAC documents): trials run
    concurrently, results come back out of order, and every one is credited to its arm."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        cs = cash_space(empty_arm=True)
        scenario = make_scenario(tmp_path, cs, n_trials=20, n_workers=2)
        intensifier = MaxUCBIntensifier(scenario, acquisition_maximizer_factory=fast_maximizer)
        rec = InFlight()
        smac = HyperparameterOptimizationFacade(
            scenario, slow_train, intensifier=intensifier, callbacks=[rec], overwrite=True,
            logging_level=40, dask_client=client,
        )
        smac.optimize()
    finally:
        client.close()
        cluster.close()
    assert rec.max_in_flight >= 2  # both workers were busy at once
    assert len(rec.told) == 20 == smac.runhistory.finished
    assert len({c for c, _, _ in rec.told}) == 20
    assert sum(intensifier.pulls.values()) == 20
    # every result credited exactly once, to the arm of its configuration; nothing pending
    history = intensifier.policy.history()
    assert len(history) == 20 and intensifier.policy.pending == [0, 0, 0]
    told_arms = sorted(intensifier.arm_of(c) for c, _, _ in rec.told)
    assert sorted(arm for arm, _ in history) == told_arms
    assert intensifier.pulls["lin"] > intensifier.pulls["quad"]


# ------------------------------------------------------------- driver stopped mid-flight
def _credited(intensifier: MaxUCBIntensifier) -> list[list[float]]:
    """Per arm, every result the bandit took (observations and discarded burn-in results)."""
    state = intensifier.policy.state_dict()
    out: list[list[float]] = [[] for _ in range(intensifier.cash_space.n_arms)]
    for arm, value in state["history"] + state["burn_discarded"]:
        out[arm].append(value)
    return [sorted(v) for v in out]


def _successes(smac: Any, intensifier: MaxUCBIntensifier) -> list[list[float]]:
    rh = smac.runhistory
    out: list[list[float]] = [[] for _ in range(intensifier.cash_space.n_arms)]
    for key in rh:
        value = rh[key]
        if value.status == StatusType.SUCCESS and math.isfinite(value.cost):
            out[intensifier.arm_of(rh.get_config(key.config_id))].append(value.cost)
    return [sorted(v) for v in out]


def test_trials_running_when_the_driver_stopped_are_submitted_again(tmp_path: Path) -> None:
    def facade() -> tuple[Any, MaxUCBIntensifier]:
        scenario = make_scenario(tmp_path, cash_space(empty_arm=True), n_trials=12, name="k")
        intensifier = MaxUCBIntensifier(scenario, acquisition_maximizer_factory=fast_maximizer)
        return HyperparameterOptimizationFacade(scenario, None, intensifier=intensifier,
                                                logging_level=40), intensifier

    smac, _ = facade()
    infos = [smac.ask() for _ in range(4)]
    smac.tell(infos[0], TrialValue(cost=loss(infos[0].config)))
    # the driver dies here: the saved run history holds three RUNNING trials
    del smac
    smac, intensifier = facade()
    assert smac.runhistory.running == 3
    again = [smac.ask() for _ in range(3)]
    assert [i.config for i in again] == [i.config for i in infos[1:]]  # re-submitted first
    assert sum(intensifier.policy.pending) == 3  # their pulls are pending again
    for info in reversed(again):
        smac.tell(info, TrialValue(cost=loss(info.config)))
    while smac.runhistory.finished < 12:
        info = smac.ask()
        smac.tell(info, TrialValue(cost=loss(info.config)))
    assert smac.runhistory.running == 0 and smac.runhistory.submitted == 12
    assert intensifier.policy.pending == [0, 0, 0]
    assert _credited(intensifier) == _successes(smac, intensifier)


def test_a_result_saved_in_the_run_history_but_not_in_the_bandit_state_is_credited(
    tmp_path: Path,
) -> None:
    scenario = make_scenario(tmp_path, cash_space(empty_arm=True), n_trials=12, name="w")
    smac = HyperparameterOptimizationFacade(
        scenario, None, intensifier=MaxUCBIntensifier(scenario, burn_in=1),
        logging_level=40)
    infos = [smac.ask() for _ in range(5)]
    for info in infos[:4]:
        smac.tell(info, TrialValue(cost=loss(info.config)))
    before = (scenario.output_directory / "intensifier.json").read_text()
    smac.tell(infos[4], TrialValue(cost=loss(infos[4].config)))
    # killed between SMAC's two writes: runhistory.json has the result, intensifier.json not
    (scenario.output_directory / "intensifier.json").write_text(before)
    intensifier = MaxUCBIntensifier(scenario, burn_in=1)
    smac = HyperparameterOptimizationFacade(scenario, None, intensifier=intensifier,
                                            logging_level=40)
    smac.ask()  # the intensifier starts: the missing result is credited to its arm
    assert _credited(intensifier) == _successes(smac, intensifier)
    assert len(intensifier.policy.history()) == 2  # 3 burn-in results discarded, 2 credited


# ------------------------------------------------------------- the defaults chosen in issue 30
def test_defaults_are_the_core_cash_settings(tmp_path: Path) -> None:
    from uvp_plugins.bandits import CASH_FLOOR, CASH_MAXUCB_ALPHA, CashSettings

    cs = cash_space(empty_arm=False)
    scenario = make_scenario(tmp_path, cs, n_trials=40)
    intensifier = MaxUCBIntensifier(scenario, acquisition_maximizer_factory=fast_maximizer)
    settings = CashSettings()
    assert intensifier.policy.alpha == CASH_MAXUCB_ALPHA and intensifier.policy.floor == CASH_FLOOR
    assert intensifier.policy.min_pulls == 1 and intensifier.policy.burn_in == 0
    assert intensifier.meta["n_initial"] == settings.design_size(2, 40)
    assert intensifier.meta["floor"] == CASH_FLOOR
    # the same settings make the same core bandit as every other adapter
    twin = CashBandit.from_settings(2, settings, n_trials=40)
    assert intensifier.bandit.state_dict() == twin.state_dict()
    # min_pulls="design" observes each arm's whole initial design (its default + n_initial)
    observed = MaxUCBIntensifier(scenario, n_initial=3, min_pulls="design",
                                 acquisition_maximizer_factory=fast_maximizer)
    assert observed.policy.min_pulls == 4
    rec = Recorder()
    smac = HyperparameterOptimizationFacade(scenario, train, intensifier=observed,
                                            callbacks=[rec], overwrite=True, logging_level=40)
    smac.optimize()
    arms = [observed.arm_of(c) for c, _, _ in rec.told]
    assert arms[:8] == [0, 1] * 4  # the designs, round robin, all observed
    assert len(observed.policy.history()) == 40

"""IterativeDeepeningHyperbandIntensifier driven through real SMAC3 (Hyperband / MultiFidelity
facades): brackets as SMAC's Hyperband, continuation with a larger max_budget on the same output
directory, restarts, parallel workers, SMAC's intensifier contract and bad input."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ConfigSpace import Configuration, ConfigurationSpace, Float
from smac import HyperbandFacade, MultiFidelityFacade, Scenario
from smac.callback import Callback
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runhistory.enumerations import StatusType

from smac_ext import IterativeDeepeningHyperbandIntensifier, hyperband_trials, plain_config
from uvp_plugins.hyperband import HyperbandSchedule, IterativeDeepeningHyperband

pytestmark = pytest.mark.smac


def space() -> ConfigurationSpace:
    cs = ConfigurationSpace(seed=0)
    cs.add([Float("x", (0.0, 1.0)), Float("y", (0.0, 1.0))])
    return cs


def loss(config: Any, budget: float) -> float:
    """A learning-curve-like loss: the final quality is reached at large budgets."""
    return (config["x"] - 0.3) ** 2 + 0.5 * (config["y"] - 0.6) ** 2 + 1.0 / (1.0 + budget)


def train(config: Configuration, seed: int = 0, budget: float = 1.0) -> float:
    return loss(config, budget)


def make_scenario(tmp_path: Path, max_budget: float, n_trials: int = 300, **kw: Any) -> Scenario:
    return Scenario(space(), name="idhb", output_directory=tmp_path, deterministic=True,
                    min_budget=1, max_budget=max_budget, n_trials=n_trials, seed=0, **kw)


class Recorder(Callback):
    """Records told trials (config, budget, status, cost); optionally stops after a number."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.told: list[tuple[Configuration, float, StatusType, Any]] = []
        self.asked: list[Configuration] = []
        self.stop_after = stop_after
        self.asks = 0
        self.max_in_flight = 0

    def on_ask_end(self, smbo: Any, info: TrialInfo) -> None:
        self.asks += 1
        self.asked.append(info.config)
        self.max_in_flight = max(self.max_in_flight, self.asks - len(self.told))

    def on_tell_end(self, smbo: Any, info: TrialInfo, value: TrialValue) -> bool | None:
        self.told.append((info.config, float(info.budget), value.status, value.cost))
        if self.stop_after is not None and len(self.told) >= self.stop_after:
            return False
        return None


def run(tmp_path: Path, max_budget: float, facade: Any = HyperbandFacade,
        stop_after: int | None = None, **kw: Any) -> tuple[Any, IterativeDeepeningHyperbandIntensifier, Recorder]:
    scenario = make_scenario(tmp_path, max_budget)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario, **kw)
    rec = Recorder(stop_after)
    smac = facade(scenario, train, intensifier=intensifier, callbacks=[rec], logging_level=40)
    smac.optimize()
    return smac, intensifier, rec


def core_replay(told: list[tuple[Configuration, float, StatusType, Any]], budgets: list[int],
                variant: str = "efficient", asked: list[Configuration] | None = None,
                ) -> tuple[IterativeDeepeningHyperband, list[tuple]]:
    """The oracle: the core ID-HB run directly on the same configurations (in the order SMAC's
    run drew them: the ``asked`` order, else the order they were first told, which is the same
    when results arrive in order) and the same losses, deepened through ``budgets``; returns it
    and its ``(config, budget)`` evaluation sequence."""
    order: list[dict] = []
    drawn = [c for c, _, _, _ in told] if asked is None else asked
    for config in drawn:
        values = plain_config(config)
        if values not in order:
            order.append(values)
    draws = iter(order)
    hb = IterativeDeepeningHyperband(budgets[0], 3, variant, seed=0)
    sequence = []
    for i, _ in enumerate(budgets):
        if i:
            hb.deepen()
        while (job := hb.ask(lambda rng: next(draws))) is not None:
            sequence.append((tuple(sorted(job.config.items())), float(job.budget)))
            hb.tell(job, loss(job.config, job.budget))
    return hb, sequence


def smac_sequence(rec: Recorder) -> list[tuple]:
    return [(tuple(sorted(plain_config(c).items())), b) for c, b, _, _ in rec.told]


def test_docstring_examples_run() -> None:
    import doctest

    import smac_ext._idhb_intensifier as module

    assert doctest.testmod(module, raise_on_error=True).attempted >= 10


# ------------------------------------------------------------------------- one iteration
def test_one_iteration_has_the_brackets_of_smacs_hyperband(tmp_path: Path) -> None:
    smac, intensifier, rec = run(tmp_path / "ours", 27)
    # the same number of trials per budget as SMAC's own Hyperband for one iteration
    n = hyperband_trials(1, 27, 3)
    assert n == 69 == len(rec.told) == smac.runhistory.finished
    scenario = Scenario(space(), deterministic=True, min_budget=1, max_budget=27, n_trials=n,
                        seed=0, output_directory=tmp_path / "smac")
    hb = HyperbandFacade(scenario, train, intensifier=HyperbandFacade.get_intensifier(scenario),
                         overwrite=True, logging_level=40)
    hb.optimize()
    budgets = Counter(float(k.budget) for k in hb.runhistory)
    assert Counter(b for _, b, _, _ in rec.told) == budgets == {1: 27, 3: 21, 9: 13, 27: 8}
    # every decision is the core's Successive Halving on the told losses
    _, expected = core_replay(rec.told, [27])
    assert smac_sequence(rec) == expected
    # the iteration ends the run although n_trials (300) is larger; the incumbent is SMAC's
    incumbent: Any = smac.intensifier.get_incumbent()
    at_top = [(cost, c) for c, b, _, cost in rec.told if b == 27.0]
    assert incumbent == min(at_top, key=lambda t: t[0])[1]
    assert intensifier.idhb.finished and intensifier.idhb.ledger.full_charge == HyperbandSchedule(27, 3).total_budget


def test_real_valued_budgets_follow_smacs_rungs(tmp_path: Path) -> None:
    scenario = Scenario(space(), deterministic=True, min_budget=0.5, max_budget=20.0,
                        n_trials=100, seed=0, output_directory=tmp_path)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
    rec = Recorder()
    HyperbandFacade(scenario, train, intensifier=intensifier, callbacks=[rec], overwrite=True,
                    logging_level=40).optimize()
    # s_max = floor(log3(40)) = 3: SMAC's rungs 20/27, 20/9, 20/3, 20
    assert sorted({round(b, 9) for _, b, _, _ in rec.told}) == [
        round(20 / 27, 9), round(20 / 9, 9), round(20 / 3, 9), 20.0]
    assert len(rec.told) == hyperband_trials(0.5, 20.0, 3) == 69


# --------------------------------------------------------------- continuing with larger R
def test_continue_on_the_same_output_directory_with_a_larger_max_budget(tmp_path: Path) -> None:
    smac9, int9, rec9 = run(tmp_path, 9)
    assert len(rec9.told) == hyperband_trials(1, 9, 3) == 22
    first_ledger = int9.idhb.ledger.to_dict()

    # the same script, max_budget 9 -> 27: SMAC continues the run (no prompt, same directory)
    smac27, int27, rec27 = run(tmp_path, 27)
    assert smac27.scenario.output_directory == smac9.scenario.output_directory
    assert int27.idhb.max_budget == 27 and int27.idhb.n_deepenings == 1
    # earlier results are reused: the continued run never repeats a (config, budget) trial
    seq9, seq27 = smac_sequence(rec9), smac_sequence(rec27)
    assert not set(seq9) & set(seq27)
    assert smac27.runhistory.finished == len(seq9) + len(seq27)
    # decisions are exactly the core's eID-HB continuation on the same configurations/losses
    hb, expected = core_replay(rec9.told + rec27.told, [9, 27])
    assert seq9 + seq27 == expected
    assert int27.idhb.ledger.to_dict() == hb.ledger.to_dict()
    assert hb.ledger.to_dict()["full_charge"] > first_ledger["full_charge"]
    # eID-HB total = a fresh Hyperband at 27 (Brandt et al.): the run at 9 is not paid twice
    assert hb.ledger.full_charge == HyperbandSchedule(27, 3).total_budget
    # the stored scenario now says 27; running the same script again changes nothing
    stored = json.loads((smac27.scenario.output_directory / "scenario.json").read_text())
    assert stored["max_budget"] == 27
    smac_again, _, rec_again = run(tmp_path, 27)
    assert rec_again.told == [] and smac_again.runhistory.finished == 69
    # and further deepening by eta**2 in one step works (27 -> 243 would be k=2; use 81)
    _, int81, rec81 = run(tmp_path, 81)
    assert int81.idhb.max_budget == 81 and len(rec81.told) > 0


@pytest.mark.parametrize("variant", ["preserving", "discarding"])
def test_the_variant_decides_what_re_enters(tmp_path: Path, variant: str) -> None:
    _, _, rec9 = run(tmp_path, 9, variant=variant)
    _, int27, rec27 = run(tmp_path, 27, variant=variant)
    hb, expected = core_replay(rec9.told + rec27.told, [9, 27], variant=variant)
    assert smac_sequence(rec9) + smac_sequence(rec27) == expected
    assert int27.idhb.ledger.to_dict() == hb.ledger.to_dict()


def test_smacs_own_prompt_is_kept_when_continuation_is_switched_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(tmp_path, 9)
    prompts: list[str] = []
    monkeypatch.setattr("builtins.input", lambda text="": prompts.append(text) or "abort")
    scenario = make_scenario(tmp_path, 27)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario, continue_runs=False)
    with pytest.raises(RuntimeError, match="stopped by the user"):
        HyperbandFacade(scenario, train, intensifier=intensifier, logging_level=40)
    assert len(prompts) == 1 and "Overwrite old run" in prompts[0]  # SMAC asked
    # SMAC's own Hyperband in the same situation asks too (SMAC3#898: no way to keep results)
    hyperband = HyperbandFacade.get_intensifier(scenario)
    with pytest.raises(RuntimeError, match="stopped by the user"):
        HyperbandFacade(scenario, train, intensifier=hyperband, logging_level=40)
    assert len(prompts) == 2


def test_overwrite_starts_afresh_at_the_new_budget(tmp_path: Path) -> None:
    run(tmp_path, 9)
    scenario = make_scenario(tmp_path, 27)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
    smac = HyperbandFacade(scenario, train, intensifier=intensifier, overwrite=True,
                           logging_level=40)
    smac.optimize()
    assert smac.runhistory.finished == 69 and intensifier.idhb.n_deepenings == 0


# ------------------------------------------------------------------------------- restarts
def test_restart_mid_run_continues_to_the_same_decisions(tmp_path: Path) -> None:
    _, int1, rec1 = run(tmp_path, 27, facade=MultiFidelityFacade, stop_after=30)
    assert len(rec1.told) == 30 and not int1.idhb.finished
    saved = json.loads((tmp_path / "idhb" / "0" / "intensifier.json").read_text())
    assert saved["state"]["format"] == "uvp-smac-idhb/1"
    assert saved["state"] == json.loads(json.dumps(int1.get_state()))
    smac2, int2, rec2 = run(tmp_path, 27, facade=MultiFidelityFacade)
    assert len(rec1.told) + len(rec2.told) == 69 == smac2.runhistory.finished
    _, expected = core_replay(rec1.told + rec2.told, [27])
    assert smac_sequence(rec1) + smac_sequence(rec2) == expected
    assert int2.idhb.finished


def test_trials_running_when_the_driver_stopped_are_submitted_again(tmp_path: Path) -> None:
    scenario = make_scenario(tmp_path, 9)
    smac = HyperbandFacade(scenario, None, intensifier=IterativeDeepeningHyperbandIntensifier(
        scenario), logging_level=40)
    infos = [smac.ask() for _ in range(4)]
    smac.tell(infos[0], TrialValue(cost=train(infos[0].config, budget=infos[0].budget)))
    # the driver dies here: runhistory.json holds 3 RUNNING trials, intensifier.json 3 pending
    data = json.loads((scenario.output_directory / "runhistory.json").read_text())
    assert data["stats"]["running"] == 3
    del smac
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
    smac = HyperbandFacade(scenario, None, intensifier=intensifier, logging_level=40)
    again = [smac.ask() for _ in range(3)]
    assert [(i.config, i.budget) for i in again] == [(i.config, i.budget) for i in infos[1:]]
    for info in again:
        smac.tell(info, TrialValue(cost=train(info.config, budget=info.budget)))
    told = 4
    while True:
        try:
            info = smac.ask()
        except StopIteration:
            break
        smac.tell(info, TrialValue(cost=train(info.config, budget=info.budget)))
        told += 1
    assert told == 22 == smac.runhistory.finished and smac.runhistory.running == 0
    assert intensifier.idhb.finished


def test_a_result_in_the_run_history_but_not_in_the_state_is_applied(tmp_path: Path) -> None:
    scenario = make_scenario(tmp_path, 9)
    smac = HyperbandFacade(scenario, None, intensifier=IterativeDeepeningHyperbandIntensifier(
        scenario), logging_level=40)
    first, second = smac.ask(), smac.ask()
    smac.tell(first, TrialValue(cost=0.5))
    state_before = (scenario.output_directory / "intensifier.json").read_text()
    smac.tell(second, TrialValue(cost=0.4))
    # a kill between SMAC's two writes: runhistory.json has the result, intensifier.json not
    (scenario.output_directory / "intensifier.json").write_text(state_before)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
    smac = HyperbandFacade(scenario, None, intensifier=intensifier, logging_level=40)
    nxt = smac.ask()
    assert (nxt.config, nxt.budget) != (second.config, second.budget)  # not re-run
    assert intensifier.idhb.ledger.n_evaluations == 2 and len(intensifier.idhb.pending) == 1


# ----------------------------------------------------------------------- parallel / ask-tell
def slow_train(config: Configuration, seed: int = 0, budget: float = 1.0) -> float:
    # long enough that both workers hold a trial at once even when an ask is slow, and of a
    # length that depends on the configuration, so that results come back out of the order they
    # were asked in
    time.sleep(0.1 + 0.3 * config["y"])
    return loss(config, budget)


def test_parallel_dask_workers_wait_for_complete_rungs(tmp_path: Path) -> None:
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        scenario = make_scenario(tmp_path, 9)
        intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
        rec = Recorder()
        smac = HyperbandFacade(scenario, slow_train, intensifier=intensifier, callbacks=[rec],
                               logging_level=40, dask_client=client)
        smac.optimize()
    finally:
        client.close()
        cluster.close()
    assert rec.max_in_flight >= 2, f"at most {rec.max_in_flight} trial(s) ran at once"
    assert len(rec.told) == 22 == smac.runhistory.finished, (len(rec.told), smac.runhistory.finished)
    assert intensifier.idhb.finished
    # results arrived out of order, yet every promotion is the core's on complete rungs
    # (the oracle draws the configurations in the order they were asked: an earlier version
    # took the order of their first results and failed whenever a later-asked one finished first)
    hb, _ = core_replay(rec.told, [9], asked=rec.asked)
    assert intensifier.idhb.results == hb.results
    assert Counter(b for _, b, _, _ in rec.told) == {1: 9, 3: 8, 9: 5}


def test_ask_without_work_while_results_are_pending_is_a_clear_error(tmp_path: Path) -> None:
    scenario = make_scenario(tmp_path, 3)  # brackets: 3 configs at 1 -> 1 at 3, then 2 at 3
    smac = HyperbandFacade(scenario, None, intensifier=IterativeDeepeningHyperbandIntensifier(
        scenario, eta=3), logging_level=40)
    infos = [smac.ask() for _ in range(5)]  # bracket 0's rung 0, then bracket 1 (2 at budget 3)
    assert Counter(i.budget for i in infos) == {1.0: 3, 3.0: 2}
    with pytest.raises(RuntimeError, match="nothing to run until the 5 pending trial"):
        smac.ask()
    for info in infos:
        smac.tell(info, TrialValue(cost=train(info.config, budget=info.budget)))
    promoted = smac.ask()  # rung 0 of bracket 0 is complete: its best one goes to budget 3
    best = min(infos[:3], key=lambda i: train(i.config, budget=1.0))
    assert promoted.budget == 3.0 and promoted.config == best.config


def test_crashed_trials_leave_their_bracket(tmp_path: Path) -> None:
    def flaky(config: Configuration, seed: int = 0, budget: float = 1.0) -> float:
        if config["x"] > 0.7:
            raise RuntimeError("diverged")
        return loss(config, budget)

    scenario = make_scenario(tmp_path, 9, crash_cost=10.0)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
    rec = Recorder()
    HyperbandFacade(scenario, flaky, intensifier=intensifier, callbacks=[rec],
                    logging_level=40).optimize()
    crashed = [c for c, _, s, _ in rec.told if s == StatusType.CRASHED]
    assert crashed and intensifier.idhb.ledger.n_failures == len(crashed)
    assert intensifier.idhb.finished
    # a crashed configuration is never promoted
    for c in crashed:
        assert [b for cc, b, _, _ in rec.told if cc == c] == [min(b for cc, b, _, _ in rec.told if cc == c)]


# --------------------------------------------------------------------- contract / bad input
def test_intensifier_contract(tmp_path: Path) -> None:
    scenario = make_scenario(tmp_path, 9)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario, variant="preserving")
    assert intensifier.uses_seeds and intensifier.uses_budgets
    assert not intensifier.uses_instances and not intensifier.uses_cutoffs
    meta = intensifier.meta
    assert json.loads(json.dumps(meta)) == meta
    assert meta["name"] == "IterativeDeepeningHyperbandIntensifier" and meta["eta"] == 3
    assert meta["variant"] == "preserving" and "max_budget" not in json.dumps(meta)
    smac = HyperbandFacade(scenario, None, intensifier=intensifier, logging_level=40)
    for _ in range(5):
        info = smac.ask()
        smac.tell(info, TrialValue(cost=train(info.config, budget=info.budget)))
    state = intensifier.get_state()
    assert json.loads(json.dumps(state)) == state
    twin = IterativeDeepeningHyperbandIntensifier(scenario, variant="preserving")
    twin.set_state(json.loads(json.dumps(state)))
    assert twin.get_state() == state
    with pytest.raises(ValueError, match="variant='preserving'"):
        IterativeDeepeningHyperbandIntensifier(scenario).set_state(state)
    deeper = IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path / "d", 27),
                                                    variant="preserving")
    deeper.set_state(state)
    assert deeper.idhb.max_budget == 27 and deeper.idhb.n_deepenings == 1
    with pytest.raises(ValueError, match=r"max_budget = 9 \* 3\*\*k"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path / "e", 20),
                                               variant="preserving").set_state(state)


def test_bad_input_is_rejected_with_clear_errors(tmp_path: Path) -> None:
    cs = space()
    with pytest.raises(ValueError, match="needs budgets"):
        IterativeDeepeningHyperbandIntensifier(Scenario(cs, output_directory=tmp_path))
    with pytest.raises(ValueError, match="max_budget must be >= eta \\* min_budget"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path, 2))
    with pytest.raises(ValueError, match="eta must be an int >= 2"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path, 9), eta=1)
    with pytest.raises(ValueError, match="variant must be one of"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path, 9), variant="greedy")
    with pytest.raises(ValueError, match="incumbent_selection"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path, 9),
                                               incumbent_selection="best")
    with pytest.raises(ValueError, match="instances"):
        IterativeDeepeningHyperbandIntensifier(Scenario(cs, min_budget=1, max_budget=9,
                                                        instances=["a", "b"]))
    with pytest.raises(ValueError, match="single-objective"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path, 9, objectives=["a", "b"]))
    # continuing a finished run: only max_budget * eta**k, the same min_budget
    run(tmp_path / "r", 9)
    with pytest.raises(ValueError, match=r"max_budget = 9 \* 3\*\*k .* got 20"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path / "r", 20))
    with pytest.raises(ValueError, match="got 3"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path / "r", 3))
    changed_min = Scenario(space(), name="idhb", output_directory=tmp_path / "r",
                           deterministic=True, min_budget=3, max_budget=27, n_trials=300, seed=0)
    with pytest.raises(ValueError, match="min_budget=1"):
        IterativeDeepeningHyperbandIntensifier(changed_min)
    with pytest.raises(ValueError, match="eta=3"):
        IterativeDeepeningHyperbandIntensifier(make_scenario(tmp_path / "r", 18), eta=2)


def test_a_trial_asked_after_the_saved_state_is_adopted_not_run_twice(tmp_path: Path) -> None:
    scenario = make_scenario(tmp_path, 9)
    smac = HyperbandFacade(scenario, None, intensifier=IterativeDeepeningHyperbandIntensifier(
        scenario), logging_level=40)
    a, b = smac.ask(), smac.ask()
    smac.tell(a, TrialValue(cost=train(a.config, budget=a.budget)))
    state_with_b_pending = (scenario.output_directory / "intensifier.json").read_text()
    c = smac.ask()
    smac.tell(b, TrialValue(cost=train(b.config, budget=b.budget)))
    # killed between SMAC's two writes: runhistory.json has b's result and c running,
    # intensifier.json is the state before c was asked
    (scenario.output_directory / "intensifier.json").write_text(state_with_b_pending)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
    smac = HyperbandFacade(scenario, None, intensifier=intensifier, logging_level=40)
    first = smac.ask()
    assert (first.config, first.budget) == (c.config, c.budget)  # re-submitted
    smac.tell(first, TrialValue(cost=train(first.config, budget=first.budget)))
    told = [(a.config, a.budget), (b.config, b.budget), (c.config, c.budget)]
    while True:
        try:
            info = smac.ask()
        except StopIteration:
            break
        told.append((info.config, info.budget))
        smac.tell(info, TrialValue(cost=train(info.config, budget=info.budget)))
    # c filled the slot it was drawn for: one Hyperband iteration, nothing evaluated twice
    assert len(told) == len(set(told)) == 22 == smac.runhistory.finished
    assert intensifier.idhb.finished and intensifier.idhb.ledger.n_evaluations == 22

"""The claim protocol (optuna_ext._claims): no two trials win one configuration, under every
interleaving of the protocol's storage operations, with finished, crashed and slow rivals."""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.storages import BaseStorage, InMemoryStorage, JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.study import StudyDirection
from optuna.trial import TrialState

from optuna_ext import EnhancedAdaCentSampler
from optuna_ext._claims import (
    ATTR_CLAIM,
    Claimant,
    HoldingsCache,
    Proposal,
    Verdict,
    claim,
    holdings,
    judge,
)

pytestmark = pytest.mark.optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)

DIST = FloatDistribution(0.0, 10.0)


def key(params: Any) -> float:
    return float(params["x"])


def proposer(storage: BaseStorage, study_id: int, trial_id: int, grid: list[float]) -> Proposal:
    """The sampler's rule: the first grid point no other trial holds or claims (a read)."""
    held: set[Any] = set()
    for t in storage.get_all_trials(study_id, deepcopy=False):
        if t._trial_id != trial_id:
            good, undecided = holdings(t, key)
            held |= good | {undecided}
    free = [x for x in grid if x not in held]
    return Proposal({"x": free[0] if free else grid[0]}, exclusive=bool(free))


#: what a process yields between atomic storage operations: "read", "write", or ("wait", v):
#: blocked until some other process writes after version v (a re-read would see nothing new);
#: the scheduler sends True into a blocked process when every process is blocked (a timeout)
Step = Any
Process = Generator[Step, bool, None]


def claimant_process(
    storage: BaseStorage,
    study_id: int,
    trial_id: int,
    grid: list[float],
    results: dict[int, float],
    versions: list[int],
    crash_after_claim: bool = False,
) -> Process:
    """One trial running the protocol's steps, yielding between atomic storage operations."""
    trial = storage.get_trial(trial_id)
    c = Claimant(storage, study_id, trial, key)
    while True:
        proposal = proposer(storage, study_id, trial_id, grid)  # choose(): a read
        yield "read"
        c.propose(proposal)
        yield "write"
        if crash_after_claim:
            return  # dies with an undecided claim; its trial stays RUNNING
        verdict = Verdict.WIN if c.decided else c.check()
        if not c.decided:
            yield "read"
        while verdict is Verdict.WAIT:
            timed_out = yield ("wait", versions[0])
            if timed_out:
                break
            verdict = c.check()
            yield "read"
        if verdict is Verdict.WIN:
            params = c.win()
            yield "write"
            results[trial_id] = params["x"]
            storage.set_trial_param(trial_id, "x", params["x"], DIST)
            storage.set_trial_state_values(trial_id, TrialState.COMPLETE, [0.0])
            yield "write"
            return
        c.withdraw()  # yield (also after a timeout)
        yield "write"


def run_schedule(
    make_storage: Callable[[], BaseStorage],
    n: int,
    grid: list[float],
    pick: Callable[[list[int]], int],
    crash: int | None = None,
    start_order: list[int] | None = None,
) -> dict[int, float]:
    """Run ``n`` claimants to the end, ``pick`` choosing which runnable one steps next."""
    storage = make_storage()
    study_id = storage.create_new_study([StudyDirection.MINIMIZE], "s")
    tids = [storage.create_new_trial(study_id) for _ in range(n)]
    results: dict[int, float] = {}
    versions = [0]  # number of writes so far
    procs: dict[int, Process] = {}
    blocked: dict[int, int] = {}  # process -> version it waits beyond
    for i in start_order or range(n):
        procs[i] = claimant_process(
            storage, study_id, tids[i], grid, results, versions, crash_after_claim=i == crash
        )
    started: set[int] = set()
    while procs:
        runnable = [i for i in sorted(procs) if i not in blocked or versions[0] > blocked[i]]
        timeout = not runnable
        i = pick(runnable) if runnable else min(blocked)
        blocked.pop(i, None)
        try:
            if i not in started:
                started.add(i)
                step = next(procs[i])
            else:
                step = procs[i].send(timeout)
        except StopIteration:
            del procs[i]
            continue
        if step == "write":
            versions[0] += 1
        elif isinstance(step, tuple):
            blocked[i] = step[1]
    return results


def assert_exclusive(results: dict[int, float], n_winners: int) -> None:
    assert len(results) == n_winners
    assert len(set(results.values())) == len(results), results


def all_schedules(
    make_storage: Callable[[], BaseStorage], n: int, grid: list[float], **kw: Any
) -> int:
    """Depth-first over every interleaving (replaying prefixes); returns how many were run."""
    count = 0
    stack: list[list[int]] = [[]]
    while stack:
        prefix = stack.pop()
        choices: list[list[int]] = []

        def pick(ready: list[int], prefix: list[int] = prefix, choices: list[list[int]] = choices) -> int:
            step = len(choices)
            choices.append(ready)
            return ready[prefix[step]] if step < len(prefix) else ready[0]

        results = run_schedule(make_storage, n, grid, pick, **kw)
        count += 1
        assert_exclusive(results, n - (kw.get("crash") is not None))
        # branch on every alternative after the replayed prefix
        for step in range(len(prefix), len(choices)):
            for alt in range(1, len(choices[step])):
                stack.append([*prefix, *([0] * (step - len(prefix))), alt])
    return count


def test_every_interleaving_of_two_claimants_gives_distinct_configurations() -> None:
    # a grid of two: both want the first point; every order of reads and writes
    n = all_schedules(InMemoryStorage, 2, [1.0, 2.0])
    assert n > 100


def test_every_interleaving_with_a_crashed_rival_leaves_the_others_distinct_and_live() -> None:
    # trial 1 writes its claim and dies (RUNNING, never decides): trial 0 waits, then yields
    for crash in (0, 1):
        all_schedules(InMemoryStorage, 2, [1.0, 2.0, 3.0], crash=crash)


@pytest.mark.parametrize("backend", ["memory", "journal"])
def test_random_interleavings_of_four_claimants(tmp_path: Path, backend: str) -> None:
    rng = random.Random(0)
    counter = itertools.count()

    def make() -> BaseStorage:
        if backend == "memory":
            return InMemoryStorage()
        return JournalStorage(JournalFileBackend(str(tmp_path / f"{next(counter)}.log")))

    runs = 400 if backend == "memory" else 20
    for _ in range(runs):
        order = rng.sample(range(4), 4)
        results = run_schedule(make, 4, [1.0, 2.0, 3.0, 4.0, 5.0], rng.choice, start_order=order)
        assert_exclusive(results, 4)


def _storage_with_trials(n: int) -> tuple[InMemoryStorage, int, list[int]]:
    storage = InMemoryStorage()
    study_id = storage.create_new_study([StudyDirection.MINIMIZE], "s")
    return storage, study_id, [storage.create_new_trial(study_id) for _ in range(n)]


def test_a_lower_trial_that_already_finished_with_the_configuration_wins() -> None:
    storage, sid, (lo, hi) = _storage_with_trials(2)
    storage.set_trial_system_attr(lo, ATTR_CLAIM, {"params": {"x": 1.0}, "state": "won"})
    storage.set_trial_param(lo, "x", 1.0, DIST)
    storage.set_trial_state_values(lo, TrialState.COMPLETE, [0.0])
    trials = storage.get_all_trials(sid)
    assert judge(trials, trials[1], 1.0, key) is Verdict.YIELD
    # a finished trial holds its parameters even without a claim record (another sampler)
    storage2, sid2, (a, b) = _storage_with_trials(2)
    storage2.set_trial_param(b, "x", 1.0, DIST)
    storage2.set_trial_state_values(b, TrialState.COMPLETE, [0.0])
    trials2 = storage2.get_all_trials(sid2)
    assert judge(trials2, trials2[0], 1.0, key) is Verdict.YIELD


def test_undecided_rivals_lower_wins_higher_waits_won_always_wins() -> None:
    storage, sid, (t0, t1, t2) = _storage_with_trials(3)
    storage.set_trial_system_attr(t0, ATTR_CLAIM, {"params": {"x": 1.0}, "state": "claimed"})
    storage.set_trial_system_attr(t2, ATTR_CLAIM, {"params": {"x": 2.0}, "state": "claimed"})
    trials = storage.get_all_trials(sid)
    assert judge(trials, trials[1], 1.0, key) is Verdict.YIELD  # lower undecided
    assert judge(trials, trials[1], 2.0, key) is Verdict.WAIT  # higher undecided
    assert judge(trials, trials[1], 3.0, key) is Verdict.WIN
    storage.set_trial_system_attr(t2, ATTR_CLAIM, {"params": {"x": 2.0}, "state": "won"})
    trials = storage.get_all_trials(sid)
    assert judge(trials, trials[1], 2.0, key) is Verdict.YIELD  # higher decided
    storage.set_trial_system_attr(t2, ATTR_CLAIM, {"params": {"x": 2.0}, "state": "withdrawn"})
    trials = storage.get_all_trials(sid)
    assert judge(trials, trials[1], 2.0, key) is Verdict.WIN  # rival withdrew


def test_an_undecided_claim_of_a_trial_that_is_not_running_is_held() -> None:
    # a crashed claimant failed by the heartbeat, or its retry waiting in the queue
    storage, sid, (t0, t1) = _storage_with_trials(2)
    storage.set_trial_system_attr(t1, ATTR_CLAIM, {"params": {"x": 1.0}, "state": "claimed"})
    storage.set_trial_state_values(t1, TrialState.FAIL)
    trials = storage.get_all_trials(sid)
    assert judge(trials, trials[0], 1.0, key) is Verdict.YIELD
    assert holdings(trials[1], key) == ({1.0}, None)


def test_holdings_cache_reads_running_trials_every_time_and_finished_ones_once() -> None:
    calls: list[Any] = []

    def counting_key(params: Any) -> float:
        calls.append(params)
        return key(params)

    cache = HoldingsCache()
    storage, sid, (t0, t1) = _storage_with_trials(2)
    storage.set_trial_system_attr(t0, ATTR_CLAIM, {"params": {"x": 1.0}, "state": "claimed"})
    trials = storage.get_all_trials(sid)
    assert judge(trials, trials[1], 1.0, counting_key, cache=cache) is Verdict.YIELD  # lower undecided
    storage.set_trial_system_attr(t0, ATTR_CLAIM, {"params": {"x": 1.0}, "state": "withdrawn"})
    trials = storage.get_all_trials(sid)
    assert judge(trials, trials[1], 1.0, counting_key, cache=cache) is Verdict.WIN  # re-read: withdrawn
    storage.set_trial_system_attr(t0, ATTR_CLAIM, {"params": {"x": 2.0}, "state": "won"})
    storage.set_trial_param(t0, "x", 2.0, DIST)
    storage.set_trial_state_values(t0, TrialState.COMPLETE, [0.0])
    trials = storage.get_all_trials(sid)
    assert judge(trials, trials[1], 2.0, counting_key, cache=cache) is Verdict.YIELD
    before = len(calls)
    for _ in range(3):  # a finished trial's holdings come from the cache
        assert judge(storage.get_all_trials(sid), trials[1], 2.0, counting_key, cache=cache) is Verdict.YIELD
        assert judge(storage.get_all_trials(sid), trials[1], 1.0, counting_key, cache=cache) is Verdict.WIN
    assert len(calls) == before
    assert judge(trials, trials[1], 2.0, key) is judge(trials, trials[1], 2.0, key, cache=cache)


def test_claim_waits_for_a_crashed_later_rival_then_takes_another_configuration() -> None:
    study = optuna.create_study()
    me, rival = study.ask(), study.ask()
    study._storage.set_trial_system_attr(
        rival._trial_id, ATTR_CLAIM, {"params": {"x": 1.0}, "state": "claimed"}
    )
    proposals = iter([1.0, 2.0])

    def choose() -> Proposal:  # a stale first proposal (read before the rival wrote)
        return Proposal({"x": next(proposals)})

    frozen = study._storage.get_trial(me._trial_id)
    t0 = time.monotonic()
    assert claim(study, frozen, choose, key, wait=0.3) == {"x": 2.0}
    assert 0.3 <= time.monotonic() - t0 < 5.0
    record = study._storage.get_trial(me._trial_id).system_attrs[ATTR_CLAIM]
    assert record == {"params": {"x": 2.0}, "state": "won"}


def test_claim_returns_a_deliberate_repeat_without_waiting() -> None:
    study = optuna.create_study()
    study.enqueue_trial({"x": 1.0})
    first = study.ask()
    first.suggest_float("x", 0.0, 10.0)
    me = study.ask()
    frozen = study._storage.get_trial(me._trial_id)
    out = claim(study, frozen, lambda: Proposal({"x": 1.0}, {"k": 1}, exclusive=False), key)
    assert out == {"x": 1.0}
    attrs = study._storage.get_trial(me._trial_id).system_attrs
    assert attrs["k"] == 1 and attrs[ATTR_CLAIM]["state"] == "won"


def test_claim_gives_up_exclusivity_after_max_attempts_with_a_warning() -> None:
    study = optuna.create_study()
    study.enqueue_trial({"x": 1.0})
    first = study.ask()
    first.suggest_float("x", 0.0, 10.0)
    me = study._storage.get_trial(study.ask()._trial_id)
    with pytest.warns(RuntimeWarning, match="no exclusive configuration after 3 attempts"):
        out = claim(study, me, lambda: Proposal({"x": 1.0}), key, max_attempts=3)
    assert out == {"x": 1.0}


def test_claim_withdraws_when_choose_fails_and_checks_its_arguments() -> None:
    study = optuna.create_study()
    me = study._storage.get_trial(study.ask()._trial_id)
    with pytest.raises(ValueError, match=r"wait must be a float > 0"):
        claim(study, me, lambda: Proposal({"x": 1.0}), key, wait=0)
    with pytest.raises(ValueError, match=r"max_attempts must be an int >= 1"):
        claim(study, me, lambda: Proposal({"x": 1.0}), key, max_attempts=0)

    class Boom(RuntimeError):
        pass

    def failing_key(params: Any) -> float:  # fails while judging the rival's claim
        if params.get("x") == 5.0:
            raise Boom("storage or key failed")
        return float(params["x"])

    rival = study.ask()
    study._storage.set_trial_system_attr(
        rival._trial_id, ATTR_CLAIM, {"params": {"x": 5.0}, "state": "claimed"}
    )
    with pytest.raises(Boom):
        claim(study, me, lambda: Proposal({"x": 2.0}), failing_key)
    record = study._storage.get_trial(me._trial_id).system_attrs[ATTR_CLAIM]
    assert record == {"params": {"x": 2.0}, "state": "withdrawn"}


# ------------------------------------------------------- the sampler, a forced race
class GatedJournalStorage(JournalStorage):
    """A real journal storage whose first system-attribute write for one trial waits at a gate:
    it forces "this worker read the study, then another worker did everything, then this worker
    wrote" - the ordering behind issue 19 (1)."""

    def __init__(self, path: str) -> None:
        super().__init__(JournalFileBackend(path))
        self.gated_trial: int | None = None
        self.reached, self.release = threading.Event(), threading.Event()

    def set_trial_system_attr(self, trial_id: int, key: str, value: Any) -> None:
        if trial_id == self.gated_trial and not self.release.is_set():
            self.reached.set()
            assert self.release.wait(60)
        super().set_trial_system_attr(trial_id, key, value)


def _objective(trial: optuna.Trial) -> float:
    return trial.suggest_int("x", 0, 3) + (trial.suggest_categorical("c", ["a", "b"]) == "b")


@pytest.mark.parametrize("rival_finishes", [True, False])
def test_sampler_workers_racing_for_the_farthest_configuration_get_distinct_ones(
    tmp_path: Path, rival_finishes: bool
) -> None:
    """Worker A (lower trial) reads, worker B chooses and writes, then A writes: both want the
    farthest configuration (x=3, c=b). Before the claim protocol A kept it too: A re-read only
    lower-numbered trials, B's re-read came before A's write; with ``rival_finishes`` B had even
    completed. (A's ``c`` is enqueued, so B cannot guess A's choice from a reservation.)"""
    path = str(tmp_path / "race.log")
    sampler = dict(n_candidates=64, enhanced=False, seed=0)
    store_a = GatedJournalStorage(path)
    study_a = optuna.create_study(
        study_name="s", storage=store_a, sampler=EnhancedAdaCentSampler(**sampler)
    )
    for params in ({"x": 0, "c": "a"}, {"x": 3, "c": "a"}, {"x": 0, "c": "b"}):
        study_a.enqueue_trial(params)
    study_a.optimize(_objective, n_trials=3)
    study_a.enqueue_trial({"c": "b"})
    trial_a = study_a.ask()
    store_a.gated_trial = trial_a._trial_id

    def run_a() -> None:
        study_a.tell(trial_a, _objective(trial_a))

    worker_a = threading.Thread(target=run_a)
    worker_a.start()
    assert store_a.reached.wait(60)  # A has read the study and chosen
    study_b = optuna.load_study(
        study_name="s",
        storage=JournalStorage(JournalFileBackend(path)),
        sampler=EnhancedAdaCentSampler(**sampler),
    )
    trial_b = study_b.ask()
    value_b = _objective(trial_b)  # B chooses, writes, re-reads
    if rival_finishes:
        study_b.tell(trial_b, value_b)
    store_a.release.set()
    worker_a.join(60)
    if not rival_finishes:
        study_b.tell(trial_b, value_b)
    a, b = study_b.trials[3].params, study_b.trials[4].params
    assert b == {"x": 3, "c": "b"}
    assert a["c"] == "b" and a != b

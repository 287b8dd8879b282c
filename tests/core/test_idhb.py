"""Iterative-Deepening Hyperband core (Brandt et al., Alg. 1-5): costs, decisions, ask/tell, state."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.hyperband import (
    HyperbandSchedule,
    Incumbent,
    IterativeDeepeningHyperband,
    Job,
)

VARIANTS = ("efficient", "preserving", "discarding")
GRID = [(4, 2), (8, 2), (16, 2), (12, 2), (9, 3), (27, 3), (10, 3), (25, 5)]


def sample(rng: np.random.Generator) -> dict[str, float]:
    return {
        "a": float(rng.uniform()),
        "b": float(rng.uniform()),
        "tau": float(rng.uniform(0.05, 1.0)),
    }


def loss(cfg: dict[str, float], budget: int) -> float:
    """Crossing learning curves (slow configurations look bad early and good late) plus a
    deterministic per-(configuration, budget) noise, so that rankings change between rungs."""
    noise = np.random.default_rng([int(cfg["a"] * 2**40), budget]).normal()
    return cfg["a"] + 2.0 * cfg["b"] * math.exp(-budget / (30.0 * cfg["tau"])) + 0.3 * noise


def key(cfg: dict[str, float]) -> tuple[float, ...]:
    return (cfg["a"], cfg["b"], cfg["tau"])


class CountingLoss:
    def __init__(self) -> None:
        self.calls: Counter[tuple[tuple[float, ...], int]] = Counter()

    def __call__(self, cfg: dict[str, float], budget: int) -> float:
        self.calls[(key(cfg), budget)] += 1
        return loss(cfg, budget)


def run_idhb(R: int, eta: int, variant: str, seed: int, deepenings: int = 1, **kw: Any):
    hb = IterativeDeepeningHyperband(R, eta, variant, seed=seed, **kw)
    hb.run(sample, loss)
    for _ in range(deepenings):
        hb.deepen()
        hb.run(sample, loss)
    return hb


@dataclass
class _RefBracket:
    s: int
    cands: list[tuple[float, ...]] = field(default_factory=list)


class ReferenceIDHB:
    """Independent, literal transcription of Alg. 2-5 (and the authors' reference code) used as
    an oracle: candidates per bracket, losses keyed by budget, Successive Halving loops."""

    def __init__(self, R: int, eta: int, variant: str, seed: int) -> None:
        self.R, self.eta, self.variant, self.seed = R, eta, variant, seed
        self.s_max = max(s for s in range(64) if eta**s <= R)
        self.brackets = [_RefBracket(s) for s in range(self.s_max, -1, -1)]
        self.rngs = [
            np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(j,)))
            for j in range(len(self.brackets))
        ]
        self.perf: dict[tuple[tuple[float, ...], int], float] = {}
        self.cost = 0

    def deepen(self) -> None:
        self.R *= self.eta
        self.s_max += 1
        for b in self.brackets:
            b.s += 1
        self.brackets.append(_RefBracket(0))
        j = len(self.brackets) - 1
        self.rngs.append(np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(j,))))

    def _eval(self, c: tuple[float, ...], budget: int) -> None:
        if (c, budget) not in self.perf:
            self.perf[(c, budget)] = loss(dict(zip(("a", "b", "tau"), c, strict=True)), budget)
            self.cost += budget

    def run(self) -> None:
        eta = self.eta
        for j, b in enumerate(self.brackets):
            s = b.s
            n = math.ceil((self.s_max + 1) * eta**s / (s + 1))
            b.cands += [key(sample(self.rngs[j])) for _ in range(n - len(b.cands))]
            cl = list(b.cands)
            order = {c: p for p, c in enumerate(b.cands)}
            for i in range(s + 1):
                r_i, r_next = (
                    self.R // eta ** (s - i),
                    self.R // eta ** (s - i - 1) if i < s else -1,
                )
                k = len(cl) // eta
                auto: list[tuple[float, ...]] = []
                if self.variant == "efficient":
                    auto = [c for c in cl if (c, r_next) in self.perf]
                    cl = [c for c in cl if c not in auto]
                for c in cl:
                    self._eval(c, r_i)
                if self.variant == "preserving":
                    cl += [c for c in b.cands if c not in cl and (c, r_i) in self.perf]
                ranked = sorted(cl, key=lambda c: (self.perf[(c, r_i)], order[c]))  # noqa: B023
                cl = auto + ranked[: k - len(auto)]

    def incumbent(self) -> tuple[tuple[float, ...], float]:
        at_r = [(v, c) for (c, bud), v in self.perf.items() if bud == self.R]
        v, c = min(at_r)
        return c, v


# ------------------------------------------------------------------ the paper's claims
@pytest.mark.parametrize(("R", "eta"), GRID + [(243, 3)])
def test_eid_cost_equals_one_hyperband_at_eta_r(R: int, eta: int) -> None:
    fresh = HyperbandSchedule(eta * R, eta)
    for seed in (0, 1):
        hb = run_idhb(R, eta, "efficient", seed)
        assert hb.ledger.full_charge == fresh.total_budget
        assert hb.ledger.continuation == fresh.continuation_budget
        assert hb.ledger.n_evaluations == fresh.n_evaluations


@pytest.mark.parametrize(("R", "eta"), [(4, 2), (9, 3), (10, 3)])
def test_eid_cost_after_two_deepenings(R: int, eta: int) -> None:
    hb = run_idhb(R, eta, "efficient", seed=3, deepenings=2)
    assert hb.max_budget == eta * eta * R
    assert hb.ledger.full_charge == HyperbandSchedule(eta * eta * R, eta).total_budget
    assert hb.n_deepenings == 2


@pytest.mark.parametrize(("R", "eta"), GRID + [(81, 3)])
def test_did_incumbent_equals_fresh_hyperband_on_the_same_configurations(R: int, eta: int) -> None:
    for seed in range(3):
        did = run_idhb(R, eta, "discarding", seed)
        fresh = IterativeDeepeningHyperband(eta * R, eta, seed=seed)
        fresh.run(sample, loss)
        assert did.incumbent is not None and fresh.incumbent is not None
        assert key(did.incumbent.config) == key(fresh.incumbent.config)
        assert did.incumbent.value == fresh.incumbent.value
        assert did.incumbent.budget == fresh.incumbent.budget == eta * R
        # every Successive-Halving decision agrees, bracket by bracket
        for pos in range(len(fresh.schedule.brackets)):
            ours = [[key(did.config(c)) for c in m] for m in did.rung_members(pos)]
            theirs = [[key(fresh.config(c)) for c in m] for m in fresh.rung_members(pos)]
            assert ours == theirs


@pytest.mark.parametrize(("R", "eta"), GRID)
def test_pid_and_did_costs_lie_between_eid_and_ih_hb(R: int, eta: int) -> None:
    hb_r = HyperbandSchedule(R, eta)
    ih_hb = hb_r.total_budget + HyperbandSchedule(eta * R, eta).total_budget
    old_rung0 = sum(b.rungs[0].n * b.rungs[0].budget for b in hb_r.brackets)
    for seed in range(3):
        e = run_idhb(R, eta, "efficient", seed).ledger.full_charge
        for variant in ("preserving", "discarding"):
            c = run_idhb(R, eta, variant, seed).ledger.full_charge
            # the old rung-0 evaluations are always reused (Brandt et al., Sec. 5.1)
            assert e <= c <= ih_hb - old_rung0


@given(
    grid=st.sampled_from(GRID),
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 10_000),
    deepenings=st.integers(1, 2),
)
@settings(max_examples=40, deadline=None)
def test_matches_literal_transcription_of_the_paper(
    grid: tuple[int, int], variant: str, seed: int, deepenings: int
) -> None:
    R, eta = grid
    ref = ReferenceIDHB(R, eta, variant, seed)
    ref.run()
    hb = IterativeDeepeningHyperband(R, eta, variant, seed=seed)
    hb.run(sample, loss)
    for _ in range(deepenings):
        ref.deepen()
        ref.run()
        hb.deepen()
        hb.run(sample, loss)
        assert hb.ledger.full_charge == ref.cost
        inc = hb.incumbent
        assert inc is not None
        assert (key(inc.config), inc.value) == ref.incumbent()
    evaluated = {(key(hb.config(c)), hb.rung_budget(hb.bracket_of(c), r)) for (c, r) in hb.results}
    assert evaluated == set(ref.perf)


@pytest.mark.parametrize("variant", VARIANTS)
def test_nothing_is_evaluated_twice(variant: str) -> None:
    counting = CountingLoss()
    hb = IterativeDeepeningHyperband(8, 2, variant, seed=5)
    for _ in range(3):
        hb.run(sample, counting)
        hb.deepen()
    hb.run(sample, counting)
    assert max(counting.calls.values()) == 1
    assert sum(counting.calls.values()) == hb.ledger.n_evaluations == len(hb.results)
    assert hb.ledger.full_charge == sum(b for (_, b) in counting.calls)


@pytest.mark.parametrize(("R", "eta"), [(16, 2), (27, 3), (10, 3)])
def test_plain_hyperband_follows_the_schedule(R: int, eta: int) -> None:
    seen: list[tuple[int, int, int]] = []
    hb = IterativeDeepeningHyperband(R, eta, seed=0)
    while (job := hb.ask(sample)) is not None:
        seen.append((job.bracket, job.rung, job.budget))
        assert job.previous_budget == (
            0 if job.rung == 0 else hb.rung_budget(job.bracket, job.rung - 1)
        )
        hb.tell(job, loss(job.config, job.budget))
    assert hb.finished
    sched = HyperbandSchedule(R, eta)
    expected = Counter(
        {(b.position, r.index, r.budget): r.n for b in sched.brackets for r in b.rungs}
    )
    assert Counter(seen) == expected
    # brackets run in Li et al.'s order, largest s first, rungs bottom-up
    assert seen == sorted(seen, key=lambda t: (t[0], t[1]))
    assert hb.ledger.full_charge == sched.total_budget
    assert hb.ledger.continuation == sched.continuation_budget


@pytest.mark.parametrize("variant", VARIANTS)
def test_incumbent_is_best_result_at_r_and_mode_max_mirrors_min(variant: str) -> None:
    hb_min = run_idhb(9, 3, variant, seed=2)
    at_r = [
        (v, c)
        for (c, r), v in hb_min.results.items()
        if hb_min.rung_budget(hb_min.bracket_of(c), r) == 27
    ]
    best_v, best_c = min(at_r)
    inc = hb_min.incumbent
    assert isinstance(inc, Incumbent) and (inc.config_id, inc.value, inc.budget) == (
        best_c,
        best_v,
        27,
    )

    hb_max = IterativeDeepeningHyperband(9, 3, variant, mode="max", seed=2)
    hb_max.run(sample, lambda c, b: -loss(c, b))
    hb_max.deepen()
    hb_max.run(sample, lambda c, b: -loss(c, b))
    assert hb_max.ledger == hb_min.ledger
    assert hb_max.incumbent is not None
    assert key(hb_max.incumbent.config) == key(inc.config)
    assert hb_max.incumbent.value == -inc.value


# ------------------------------------------------------------------ ask / tell
def drive(
    hb: IterativeDeepeningHyperband, rng: np.random.Generator, width: int, steps: int | None = None
) -> None:
    """Keep up to ``width`` jobs in flight, tell a random one; stop after ``steps`` tells."""
    told = 0
    while steps is None or told < steps:
        while len(hb.pending) < width and (job := hb.ask(sample)) is not None:
            pass
        pending = sorted(hb.pending, key=lambda j: j.job_id)
        if not pending:
            return
        job = pending[int(rng.integers(len(pending)))]
        hb.tell(job.job_id, loss(job.config, job.budget))
        told += 1


def decisions(hb: IterativeDeepeningHyperband) -> list[list[list[tuple[float, ...]]]]:
    return [
        [[key(hb.config(c)) for c in m] for m in hb.rung_members(pos)]
        for pos in range(len(hb.schedule.brackets))
    ]


@given(
    variant=st.sampled_from(VARIANTS),
    grid=st.sampled_from([(8, 2), (9, 3), (10, 3)]),
    width=st.integers(2, 40),
    seed=st.integers(0, 1000),
)
@settings(max_examples=30, deadline=None)
def test_out_of_order_tells_give_the_same_decisions_as_run(
    variant: str, grid: tuple[int, int], width: int, seed: int
) -> None:
    R, eta = grid
    seq = IterativeDeepeningHyperband(R, eta, variant, seed=7)
    par = IterativeDeepeningHyperband(R, eta, variant, seed=7)
    rng = np.random.default_rng(seed)
    for _ in range(2):
        seq.run(sample, loss)
        drive(par, rng, width)
        assert par.finished and par.ask(sample) is None
        assert decisions(par) == decisions(seq)
        assert par.ledger == seq.ledger
        assert par.incumbent is not None and seq.incumbent is not None
        assert key(par.incumbent.config) == key(seq.incumbent.config)
        seq.deepen()
        par.deepen()


@given(
    variant=st.sampled_from(VARIANTS),
    steps=st.integers(0, 120),
    width=st.integers(1, 12),
    deepen_first=st.booleans(),
)
@settings(max_examples=30, deadline=None)
def test_state_dict_round_trip_mid_run_continues_identically(
    variant: str, steps: int, width: int, deepen_first: bool
) -> None:
    hb = IterativeDeepeningHyperband(9, 3, variant, seed=11)
    if deepen_first:
        hb.run(sample, loss)
        hb.deepen()
    drive(hb, np.random.default_rng(0), width, steps)
    while len(hb.pending) < width and hb.ask(sample) is not None:  # leave jobs in flight
        pass
    state = json.loads(json.dumps(hb.state_dict()))
    copy = IterativeDeepeningHyperband.from_state_dict(state)
    assert json.dumps(copy.state_dict()) == json.dumps(state)
    assert [j.job_id for j in copy.pending] == [j.job_id for j in hb.pending]
    for h in (hb, copy):
        drive(h, np.random.default_rng(1), width)
        h.deepen()
        h.run(sample, loss)
    assert json.dumps(copy.state_dict()) == json.dumps(hb.state_dict())
    assert copy.incumbent == hb.incumbent


def test_ask_new_and_ask_existing_for_event_driven_adapters() -> None:
    hb = IterativeDeepeningHyperband(4, 2, seed=0)
    sched = hb.schedule
    assert hb.free_slots == sched.n_configs
    external = np.random.default_rng(123)
    jobs: list[Job] = []
    while (job := hb.ask_new(sample(external))) is not None:
        assert job.rung == 0 and job.previous_budget == 0
        jobs.append(job)
    # every bracket was opened and filled: exactly the schedule's configurations
    assert len(jobs) == sched.n_configs and hb.free_slots == 0
    assert hb.ask_existing() is None  # no rung is complete yet
    for job in jobs:
        hb.tell(job, loss(job.config, job.budget))
    while (job := hb.ask_existing()) is not None:
        assert job.rung >= 1 and job.previous_budget == hb.rung_budget(job.bracket, job.rung - 1)
        hb.tell(job, loss(job.config, job.budget))
    assert hb.finished
    assert hb.ledger.full_charge == sched.total_budget
    hb.deepen()
    assert not hb.finished
    assert hb.free_slots == HyperbandSchedule(8, 2).n_configs - sched.n_configs


# ------------------------------------------------------------------ failures
def test_failed_job_leaves_its_bracket_and_never_blocks_it() -> None:
    hb = IterativeDeepeningHyperband(8, 2, "preserving", seed=0)
    first = hb.ask(sample)
    assert first is not None and first.bracket == 0 and first.rung == 0
    hb.fail(first)
    hb.run(sample, loss)
    assert hb.finished
    assert hb.ledger.n_failures == 1
    sched = hb.schedule
    assert hb.ledger.n_evaluations == sched.n_evaluations - 1
    members = hb.rung_members(0)
    # rung 1 still gets floor(n / eta) configurations out of the n - 1 successful ones
    assert len(members[1]) == sched.brackets[0].rungs[1].n
    assert all(first.config_id not in m for m in members[1:])
    hb.deepen()
    hb.run(sample, loss)
    assert all(first.config_id not in m for m in hb.rung_members(0)[1:])
    assert (first.config_id, 0) not in hb.results


def test_bracket_whose_configurations_all_fail_completes() -> None:
    hb = IterativeDeepeningHyperband(4, 2, seed=0)
    n0 = hb.schedule.brackets[0].n
    jobs = [hb.ask(sample) for _ in range(n0)]
    assert all(j is not None and j.bracket == 0 for j in jobs)
    for j in jobs:
        assert j is not None
        hb.fail(j.job_id)
    hb.run(sample, loss)
    assert hb.finished
    assert hb.rung_members(0)[1:] == [[], []]
    assert hb.incumbent is not None and hb.incumbent.budget == 4


def test_pending_jobs_can_fail_in_any_order() -> None:
    hb = IterativeDeepeningHyperband(9, 3, "efficient", seed=4)
    rng = np.random.default_rng(0)
    while not hb.finished:
        while hb.ask(sample) is not None:
            pass
        for j in sorted(hb.pending, key=lambda j: j.job_id):
            if rng.uniform() < 0.2:
                hb.fail(j)
            else:
                hb.tell(j, loss(j.config, j.budget))
    assert hb.ledger.n_failures > 0
    assert hb.ledger.n_evaluations == len(hb.results)
    assert hb.incumbent is not None and hb.incumbent.budget == 9


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"max_budget": 2, "eta": 3}, "max_budget"),
        ({"max_budget": 16, "eta": 1}, "eta"),
        ({"max_budget": 16, "eta": 2, "variant": "greedy"}, "variant"),
        ({"max_budget": 16, "eta": 2, "mode": "minimize"}, "mode"),
        ({"max_budget": 16, "eta": 2, "seed": -1}, "seed"),
        ({"max_budget": 16, "eta": 2, "min_budget": 0}, "min_budget"),
    ],
)
def test_bad_constructor_input(kwargs: dict[str, Any], word: str) -> None:
    with pytest.raises(ValueError, match=word):
        IterativeDeepeningHyperband(**kwargs)


def test_bad_calls() -> None:
    hb = IterativeDeepeningHyperband(16, 2, seed=0)
    with pytest.raises(ValueError, match="eta \\* max_budget"):
        hb.deepen(48)
    with pytest.raises(TypeError, match="new_max_budget"):
        hb.deepen(32.0)  # type: ignore[arg-type]
    job = hb.ask(sample)
    assert job is not None
    with pytest.raises(ValueError, match="NaN"):
        hb.tell(job, float("nan"))
    assert job in hb.pending  # still pending after the refused tell
    hb.tell(job, 0.5)
    with pytest.raises(ValueError, match="not pending"):
        hb.tell(job, 0.5)
    with pytest.raises(ValueError, match="not pending"):
        hb.fail(12345)
    with pytest.raises(ValueError, match="format"):
        IterativeDeepeningHyperband.from_state_dict({"format": "other"})
    hb.deepen(32)
    assert hb.max_budget == 32
    other = IterativeDeepeningHyperband(16, 2, seed=0)
    while other.ask(sample) is not None:
        pass
    with pytest.raises(RuntimeError, match="asked but not told"):
        other.run(sample, loss)


def test_status_tracks_each_configuration_through_its_bracket() -> None:
    hb = IterativeDeepeningHyperband(4, 2, "preserving", seed=0)
    n0 = hb.schedule.brackets[0].n
    jobs = [hb.ask(sample) for _ in range(n0)]
    assert all(j is not None for j in jobs)
    first = jobs[0]
    assert first is not None
    assert hb.status(first.config_id) == "pending"
    hb.tell(first, loss(first.config, first.budget))
    assert hb.status(first.config_id) == "waiting"
    for j in jobs[1:-1]:
        assert j is not None
        hb.tell(j, loss(j.config, j.budget))
    last = jobs[-1]
    assert last is not None
    hb.fail(last)
    assert hb.status(last.config_id) == "failed"
    members = hb.rung_members(0)
    promoted, dropped = set(members[1]), set(members[0]) - set(members[1]) - {last.config_id}
    assert promoted and dropped
    assert {hb.status(c) for c in promoted} == {"ready"}
    assert {hb.status(c) for c in dropped} == {"stopped"}
    hb.run(sample, loss)
    winners = hb.rung_members(0)[-1]
    assert {hb.status(c) for c in winners} == {"finished"}
    text = hb.describe()
    assert "ID-HB(preserving) R=4" in text and "bracket 2" in text and "failures=1" in text
    with pytest.raises(ValueError, match="config_id"):
        hb.status(10_000)


@given(
    variant=st.sampled_from(VARIANTS),
    steps=st.integers(0, 60),
    width=st.integers(1, 8),
    seed=st.integers(0, 100),
)
@settings(max_examples=25, deadline=None)
def test_deepening_mid_run_with_pending_jobs(
    variant: str, steps: int, width: int, seed: int
) -> None:
    counting = CountingLoss()
    hb = IterativeDeepeningHyperband(8, 2, variant, seed=seed)
    rng = np.random.default_rng(seed)
    told = 0
    while told < steps and not hb.finished:
        while len(hb.pending) < width and hb.ask(sample) is not None:
            pass
        job = sorted(hb.pending, key=lambda j: j.job_id)[int(rng.integers(len(hb.pending)))]
        hb.tell(job, counting(job.config, job.budget))
        told += 1
    hb.deepen()  # pending jobs stay pending and are told afterwards
    while not hb.finished:
        while len(hb.pending) < width and hb.ask(sample) is not None:
            pass
        job = sorted(hb.pending, key=lambda j: j.job_id)[int(rng.integers(len(hb.pending)))]
        hb.tell(job, counting(job.config, job.budget))
    assert max(counting.calls.values()) == 1
    fresh = IterativeDeepeningHyperband(16, 2, seed=seed)
    fresh.run(sample, loss)
    assert hb.incumbent is not None and fresh.incumbent is not None
    if variant == "discarding":  # decisions depend on the (deterministic) results only
        assert decisions(hb) == decisions(fresh)
        assert key(hb.incumbent.config) == key(fresh.incumbent.config)
    # the final rungs have the fresh run's sizes and every member has its result
    assert [len(m) for m in sum(decisions(hb), [])] == [len(m) for m in sum(decisions(fresh), [])]
    assert hb.ledger.full_charge >= fresh.ledger.full_charge


# ------------------------------------------------------------------ scaling (issue 19, item 4)
def _decision_trace(variant: str, R: int, eta: int, seed: int) -> tuple[str, int]:
    """A seeded event-driven run mixing ask / ask_new / ask_existing, up to 8 jobs in flight
    told in random order, 8 % failures and two deepenings, each while jobs are pending.
    Returns a digest of every job handed out, every tell/fail and the final state, and the
    number of events."""
    hb = IterativeDeepeningHyperband(R, eta, variant, seed=seed)
    rng = np.random.default_rng(seed + 1000)
    ext = np.random.default_rng(seed + 2000)
    trace: list[tuple[Any, ...]] = []

    def asked(job: Job) -> None:
        trace.append(
            ("ask", job.job_id, job.config_id, job.bracket, job.rung, job.budget,
             job.previous_budget)
        )

    for level in range(3):
        if level:
            hb.deepen()
        deepen_at = int(rng.integers(5, 60)) if level < 2 else -1
        steps = 0
        while not hb.finished:
            width = int(rng.integers(1, 9))
            while len(hb.pending) < width:
                how = rng.uniform()
                if how < 0.3:
                    job = hb.ask_existing()
                elif how < 0.5:
                    job = hb.ask_new(sample(ext))
                else:
                    job = hb.ask(sample)
                if job is None and how < 0.5:
                    job = hb.ask(sample)
                if job is None:
                    break
                asked(job)
            if not hb.pending:
                break
            pend = sorted(hb.pending, key=lambda j: j.job_id)
            job = pend[int(rng.integers(len(pend)))]
            if rng.uniform() < 0.08:
                hb.fail(job)
                trace.append(("fail", job.job_id))
            else:
                hb.tell(job, loss(job.config, job.budget))
                trace.append(("tell", job.job_id))
            steps += 1
            if steps == deepen_at:
                break  # deepen mid-run with pending jobs
    while hb.pending:
        j = min(hb.pending, key=lambda j: j.job_id)
        hb.tell(j, loss(j.config, j.budget))
        trace.append(("tell", j.job_id))
        while (job := hb.ask(sample)) is not None:
            asked(job)
    blob = json.dumps([trace, hb.state_dict()], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16], len(trace)


#: digests of :func:`_decision_trace` computed with the implementation before the linear-time
#: rung scans (the one whose ``_ready_existing`` rescanned the whole rung on every ask)
_DIGESTS_BEFORE_LINEAR_SCANS = {
    ("efficient", 9, 3, 0): ("c9f06917f59c017d", 412),
    ("efficient", 9, 3, 1): ("f5d0e6d88865ba62", 418),
    ("efficient", 8, 2, 0): ("b23b08c34e74faa2", 314),
    ("efficient", 8, 2, 1): ("cac0476232709d90", 316),
    ("efficient", 10, 3, 0): ("737064504d94c355", 412),
    ("efficient", 10, 3, 1): ("bc63f8c381b7023d", 418),
    ("preserving", 9, 3, 0): ("46eb14218a02c6ec", 412),
    ("preserving", 9, 3, 1): ("ba6eede256e12bbe", 424),
    ("preserving", 8, 2, 0): ("70887c6083f2f501", 320),
    ("preserving", 8, 2, 1): ("8773acdc1f0c8a97", 318),
    ("preserving", 10, 3, 0): ("e794e7269c99b7ec", 412),
    ("preserving", 10, 3, 1): ("5836ad130028c990", 422),
    ("discarding", 9, 3, 0): ("59f2a67c4cf0d01b", 412),
    ("discarding", 9, 3, 1): ("baf48c88d1c950b5", 424),
    ("discarding", 8, 2, 0): ("d0b37a698124c70c", 320),
    ("discarding", 8, 2, 1): ("7c9d3f73a03c186f", 318),
    ("discarding", 10, 3, 0): ("a999e3848406dfd9", 412),
    ("discarding", 10, 3, 1): ("c10c14f681680707", 422),
}


@pytest.mark.parametrize("case", sorted(_DIGESTS_BEFORE_LINEAR_SCANS))
def test_decisions_unchanged_by_the_linear_rung_scans(case: tuple[str, int, int, int]) -> None:
    assert _decision_trace(*case) == _DIGESTS_BEFORE_LINEAR_SCANS[case]


def _count_settled_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    original = IterativeDeepeningHyperband._settled

    def counted(self: IterativeDeepeningHyperband, b: Any, cid: int, rung: int) -> bool:
        calls[0] += 1
        return original(self, b, cid, rung)

    monkeypatch.setattr(IterativeDeepeningHyperband, "_settled", counted)
    return calls


def test_work_per_evaluation_does_not_grow_with_the_rung(monkeypatch: pytest.MonkeyPatch) -> None:
    """At max_budget = 3**12 the first rung holds 531 441 configurations. Handing out and
    telling its jobs must cost the same per evaluation at the 10 000th as at the first (counted
    rung-membership checks, not time): the rung scans were quadratic (issue 19, item 4)."""
    calls = _count_settled_checks(monkeypatch)
    hb = IterativeDeepeningHyperband(3**12, 3, seed=0)
    per_block = []
    for _block in range(5):
        before = calls[0]
        for _ in range(2000):
            job = hb.ask(lambda rng: float(rng.uniform()))
            assert job is not None and job.rung == 0
            hb.tell(job, job.config)
        per_block.append((calls[0] - before) / 2000)
    assert max(per_block) <= 4, per_block


def test_work_per_evaluation_is_bounded_with_many_jobs_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same with 64 jobs in flight told in random order, through promotions and a
    deepening (the Ray scheduler's pattern)."""
    calls = _count_settled_checks(monkeypatch)
    hb = IterativeDeepeningHyperband(3**5, 3, seed=1)
    rng = np.random.default_rng(0)
    told = 0
    for level in range(2):
        if level:
            hb.deepen()
        while not hb.finished:
            while len(hb.pending) < 64 and (job := hb.ask(sample)) is not None:
                pass
            pend = hb.pending
            job = pend[int(rng.integers(len(pend)))]
            hb.tell(job, loss(job.config, job.budget))
            told += 1
    assert told > 1500
    assert calls[0] / told <= 6, calls[0] / told


def test_tell_and_fail_say_when_a_rung_completed() -> None:
    """Event-driven adapters ask for new jobs only after a tell/fail that completed a rung or a
    bracket: the return value must be True exactly then."""
    hb = IterativeDeepeningHyperband(9, 3, seed=3)
    rng = np.random.default_rng(0)
    seen_true = 0
    while not hb.finished:
        while hb.ask(sample) is not None:
            pass
        pending = sorted(hb.pending, key=lambda j: j.job_id)
        job = pending[int(rng.integers(len(pending)))]
        before = [(len(m), d["done"]) for m, d in zip(
            (hb.rung_members(b) for b in range(len(hb.summary()))), hb.summary(), strict=True
        )]
        if rng.uniform() < 0.1:
            advanced = hb.fail(job)
        else:
            advanced = hb.tell(job, loss(job.config, job.budget))
        after = [(len(m), d["done"]) for m, d in zip(
            (hb.rung_members(b) for b in range(len(hb.summary()))), hb.summary(), strict=True
        )]
        assert advanced == (before != after)
        seen_true += advanced
    assert seen_true > 5

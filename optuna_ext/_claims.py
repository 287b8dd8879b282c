"""Exclusive claims of configurations by concurrent trials, on any Optuna storage.

A sampler that hands every trial a configuration no other trial has (the k-center sampler, a
grid) must keep simultaneous workers apart. Optuna's storages offer no transaction across
trials: a worker can only write its *own* trial's system attributes and read the whole study
(``SQLite``/``PostgreSQL`` through :class:`~optuna.storages.RDBStorage`, ``JournalFileBackend``,
:class:`~optuna.storages.GrpcStorageProxy`). This module decides, with those two operations
alone, which of several trials that proposed the same configuration at the same time gets it.

**Protocol** (one trial; ``key(params)`` names a configuration). Each attempt:

1. ``choose()`` re-reads the storage and proposes parameters that no other trial holds
   (:class:`Proposal`).
2. *Claim:* write the proposal's system attributes, then the claim record
   ``"uvp:claim" = {"params": ..., "state": "claimed"}`` - one attribute, so a reader sees a
   record whole.
3. *Read back* the study and judge the claim (:func:`judge`) against every other trial:

   - some trial *holds* the key for good - it is finished with these parameters, its record
     says ``"won"``, its record is a stale ``"claimed"`` on a trial that is not RUNNING, or its
     own ``params``/enqueued ``fixed_params`` are the configuration - **yield**;
   - a RUNNING trial that comes first in the order ``(number, trial_id)`` has an undecided
     ``"claimed"`` record with the key - **yield**;
   - a RUNNING trial that comes later has an undecided record with the key - **wait**: read
     again (2 ms, doubling to 50 ms) until its record is ``"won"`` (then yield) or no longer
     claims the key (it yielded: judge again); after ``wait`` seconds (a crashed rival), yield;
   - otherwise **win**: rewrite the record as ``"won"`` and return the parameters.

4. *Yield:* rewrite the record as ``"withdrawn"`` (a waiting rival stops waiting at once) and
   start a new attempt; ``choose()`` now sees the configuration as held and proposes another.

A proposal with ``exclusive=False`` (nothing free is left: the caller repeats a configuration
on purpose) is recorded as ``"won"`` without the read-back.

**Why two trials never both win one key.** Assume trials ``c`` and ``d`` both won key ``k``,
``c`` first in the order. Let ``W_c``, ``W_d`` be their last claim writes (of ``k``; after it a
winner writes only ``"won"``) and ``R_c``, ``R_d`` the reads on which they decided (each after
its own claim write). The storage is linearisable for these operations: a read returns every
write that completed before it started (an RDB commits each write before returning and reads
unfinished trials afresh; the journal appends under a file lock and replays the file; the gRPC
proxy forwards both to such a storage).

* If ``W_c`` came before ``W_d``: ``R_d`` is after ``W_d``, so it shows ``c``'s record as
  ``"claimed"`` or ``"won"`` with ``k`` (or ``c`` finished with ``k``). ``c`` comes first, so
  ``d`` yields in both cases - contradiction.
* If ``W_d`` came before ``W_c``: ``R_c`` shows ``d``'s record ``"claimed"`` or ``"won"`` with
  ``k`` (or ``d`` finished with it). ``"won"``/finished: ``c`` yields. ``"claimed"``: ``c``
  waits, and a wait ends with a win only after a read that no longer shows ``d`` claiming ``k``
  - impossible, since ``d``'s record stays ``k`` until it says ``"won"`` - so ``c`` yields.
  Contradiction.

This covers a rival that already returned its parameters (``"won"``), or even finished, before
the other wrote (the case a re-read of lower-numbered *running* trials alone misses), and a
rival that read before the other wrote (the waiting rule). A timeout only ever leads to a yield,
so it cannot break safety, only waste one candidate.

**Progress.** A trial waits only for later trials and yields to earlier ones, so waits form no
cycle; the earliest undecided claimant of a key never yields to an undecided rival, and every
yield to a held key means some trial got that key. A waiting claimant's rival decides within
one read and one write, or - crashed - the wait ends after ``wait`` seconds. A trial that
crashed while claiming leaves at most one candidate unused (its record counts as held once the
trial is not RUNNING, e.g. failed by Optuna's heartbeat). ``max_attempts`` bounds the loop for
a ``choose`` that never stops proposing held configurations (then the last proposal is
returned with a :class:`RuntimeWarning`; it may repeat a configuration).

Threads of one process sharing a sampler should hold the sampler's lock around :func:`claim`:
the protocol is then run once at a time per process and never waits for its own process.

Example:
    >>> import optuna
    >>> from optuna_ext._claims import Proposal, claim
    >>> study = optuna.create_study()
    >>> trial = study.ask()
    >>> grid = [{"x": 0.0}, {"x": 1.0}]
    >>> def choose():
    ...     held = {t.system_attrs.get("uvp:claim", {}).get("params", {}).get("x")
    ...             for t in study.trials if t.number != trial.number}
    ...     free = [g for g in grid if g["x"] not in held]
    ...     return Proposal(free[0] if free else grid[0], exclusive=bool(free))
    >>> claim(study, study._storage.get_trial(trial._trial_id), choose, key=lambda p: p["x"])
    {'x': 0.0}
"""

from __future__ import annotations

import contextlib
import enum
import time
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from optuna.trial import TrialState

from uvp_plugins.validation import check_float, check_int

if TYPE_CHECKING:
    from optuna.storages import BaseStorage
    from optuna.study import Study
    from optuna.trial import FrozenTrial

__all__ = ["ATTR_CLAIM", "Proposal", "Verdict", "Claimant", "HoldingsCache", "claim", "judge", "holdings"]

#: the claim record of a trial: ``{"params": {...}, "state": "claimed" | "won" | "withdrawn"}``
ATTR_CLAIM = "uvp:claim"
CLAIMED, WON, WITHDRAWN = "claimed", "won", "withdrawn"

#: seconds a claimant waits for a later rival's decision before it yields (a crashed rival)
DEFAULT_WAIT = 5.0
DEFAULT_MAX_ATTEMPTS = 100
_POLL_FIRST, _POLL_MAX = 0.002, 0.05

KeyFn = Callable[[Mapping[str, Any]], Hashable]


@dataclass(frozen=True)
class Proposal:
    """What ``choose()`` returns: the parameters, the system attributes to write with them, and
    whether the configuration is meant to be exclusive (``False``: no free configuration is
    left, a repeat is intended)."""

    params: dict[str, Any]
    system_attrs: Mapping[str, Any] = field(default_factory=dict)
    exclusive: bool = True


class Verdict(enum.Enum):
    WIN = "win"
    YIELD = "yield"
    WAIT = "wait"


def _safe_key(key: KeyFn, params: object) -> Hashable | None:
    """``key(params)``, or ``None`` if ``params`` do not name a configuration of the space."""
    if not isinstance(params, Mapping) or not params:
        return None
    try:
        return key(params)
    except (KeyError, ValueError, TypeError):
        return None


def holdings(
    t: FrozenTrial, key: KeyFn, attr: str = ATTR_CLAIM
) -> tuple[set[Hashable], Hashable | None]:
    """What trial ``t`` holds: the keys it holds for good, and the key of its undecided claim
    (``None`` if none). Only a RUNNING trial can have an undecided claim; a ``"claimed"``
    record on a trial in any other state (a crashed claimant failed by the heartbeat, a retry
    waiting in the queue) counts as held. ``attr`` is the system attribute of the claim records
    (one per kind of claim, so that two protocols on one trial never overwrite each other)."""
    held: set[Hashable] = set()
    attrs = t.system_attrs
    fixed = attrs.get("fixed_params") or {}
    for params in (t.params, fixed, {**fixed, **t.params}):
        k = _safe_key(key, params)
        if k is not None:
            held.add(k)
    undecided: Hashable | None = None
    record = attrs.get(attr)
    if isinstance(record, Mapping) and record.get("state") in (CLAIMED, WON):
        k = _safe_key(key, record.get("params"))
        if k is not None:
            if record.get("state") == CLAIMED and t.state == TrialState.RUNNING:
                undecided = k
            else:
                held.add(k)
    return held, undecided


_SETTLED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


class HoldingsCache:
    """:func:`holdings` of finished trials, computed once per trial.

    A finished trial (COMPLETE, PRUNED, FAIL) no longer changes its parameters or its claim
    record (only the RUNNING claimant writes it), so what it holds is fixed; RUNNING and WAITING
    trials are read every time. Without the cache every claim re-derived the keys of every
    trial: quadratic in the study's size (at 1000 trials it was 85 % of the sampler's time).
    One cache per study, key function and claim attribute (the caller keeps it; entries are
    per trial id).
    """

    def __init__(self) -> None:
        self._settled: dict[int, tuple[set[Hashable], Hashable | None]] = {}  # by trial id

    def settled(self, trial_id: int) -> tuple[set[Hashable], Hashable | None] | None:
        """What the finished trial ``trial_id`` holds, if it was seen finished before."""
        return self._settled.get(trial_id)

    def holdings(
        self, t: FrozenTrial, key: KeyFn, attr: str = ATTR_CLAIM
    ) -> tuple[set[Hashable], Hashable | None]:
        if t.state not in _SETTLED:
            return holdings(t, key, attr)
        hit = self._settled.get(t._trial_id)
        if hit is None:
            hit = self._settled[t._trial_id] = holdings(t, key, attr)
        return hit


def judge(
    trials: Iterable[FrozenTrial],
    me: FrozenTrial,
    claimed: Hashable,
    key: KeyFn,
    attr: str = ATTR_CLAIM,
    cache: HoldingsCache | None = None,
) -> Verdict:
    """The verdict on ``me``'s claim of ``claimed`` given a read of the study (module doc);
    ``cache`` (optional) remembers what finished trials hold."""
    mine = (me.number, me._trial_id)
    verdict = Verdict.WIN
    for t in trials:
        if t._trial_id == me._trial_id:
            continue
        if cache is None:
            held, undecided = holdings(t, key, attr)
        else:  # a settled trial's entry first (a plain lookup: thousands of trials per check)
            held, undecided = cache.settled(t._trial_id) or cache.holdings(t, key, attr)
        if claimed in held:
            return Verdict.YIELD
        if undecided == claimed:
            if (t.number, t._trial_id) < mine:
                return Verdict.YIELD
            verdict = Verdict.WAIT
    return verdict


class Claimant:
    """One trial's claims, as the protocol's explicit steps (:func:`claim` runs them; tests
    interleave them).

    Args:
        storage: the study's storage.
        study_id: the study's id in it.
        trial: the claiming trial (its number and id are used).
        key: configuration key of a parameter mapping (same in every process).
        attr: the system attribute of the claim records (default ``"uvp:claim"``).
        cache: what finished trials hold (:class:`HoldingsCache`), kept by the caller across
            claims of one study, key function and ``attr``; ``None``: recomputed at every check.
    """

    def __init__(
        self,
        storage: BaseStorage,
        study_id: int,
        trial: FrozenTrial,
        key: KeyFn,
        attr: str = ATTR_CLAIM,
        cache: HoldingsCache | None = None,
    ) -> None:
        self.storage, self.study_id, self.trial, self.key = storage, study_id, trial, key
        self.attr = attr
        self.cache = cache
        self.proposal: Proposal | None = None
        self.claimed: Hashable | None = None

    def _record(self, state: str) -> None:
        assert self.proposal is not None
        self.storage.set_trial_system_attr(
            self.trial._trial_id, self.attr, {"params": self.proposal.params, "state": state}
        )

    def propose(self, proposal: Proposal) -> None:
        """Write the proposal's attributes, then the claim record (``"claimed"``; ``"won"`` at
        once for a non-exclusive proposal or one without a key)."""
        self.proposal = proposal
        self.claimed = _safe_key(self.key, proposal.params) if proposal.exclusive else None
        for name, value in proposal.system_attrs.items():
            self.storage.set_trial_system_attr(self.trial._trial_id, name, value)
        self._record(CLAIMED if self.claimed is not None else WON)

    @property
    def decided(self) -> bool:
        """Whether the last proposal needed no read-back (non-exclusive or without a key)."""
        return self.claimed is None

    def check(self) -> Verdict:
        """Read the study back and judge the claim."""
        assert self.claimed is not None
        trials = self.storage.get_all_trials(self.study_id, deepcopy=False)
        return judge(trials, self.trial, self.claimed, self.key, self.attr, self.cache)

    def win(self) -> dict[str, Any]:
        assert self.proposal is not None
        self._record(WON)
        return self.proposal.params

    def withdraw(self) -> None:
        self._record(WITHDRAWN)


def claim(
    study: Study,
    trial: FrozenTrial,
    choose: Callable[[], Proposal],
    key: KeyFn,
    *,
    wait: float = DEFAULT_WAIT,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    attr: str = ATTR_CLAIM,
    cache: HoldingsCache | None = None,
) -> dict[str, Any]:
    """Claim a configuration for ``trial`` and return its parameters (see the module doc).

    Args:
        study: the study (``study._storage`` and ``study._study_id`` are used, so a
            :class:`~optuna.pruners.HyperbandPruner` bracket view works too).
        trial: the trial being sampled.
        choose: re-reads the storage and returns the next :class:`Proposal`; it must not propose
            a configuration another trial holds (its ``"uvp:claim"`` params, ``params`` or
            ``fixed_params``) while a free one exists, and must set ``exclusive=False`` when it
            repeats one on purpose.
        key: hashable key of a parameter mapping, equal in every process for equal
            configurations; may raise ``KeyError``/``ValueError``/``TypeError`` for mappings
            that are not a configuration of the space (such trials hold nothing).
        wait: seconds to wait for a later rival's decision before yielding (``> 0``).
        max_attempts: attempts before giving up exclusivity (``>= 1``).
        attr: the trial system attribute holding the claim records (``"uvp:claim"``; another
            name for another kind of claim made on the same trials, e.g. the CASH sampler's
            burn-in slots, so that it never overwrites a configuration claim).
        cache: a :class:`HoldingsCache` kept across claims of this study, ``key`` and ``attr``.
    """
    wait = check_float("wait", wait, 0.0, low_open=True)
    max_attempts = check_int("max_attempts", max_attempts, 1)
    claimant = Claimant(study._storage, study._study_id, trial, key, attr, cache)
    for _attempt in range(max_attempts):
        claimant.propose(choose())
        if claimant.decided:
            assert claimant.proposal is not None
            return claimant.proposal.params
        try:
            verdict = claimant.check()
            deadline = time.monotonic() + wait
            pause = _POLL_FIRST
            while verdict is Verdict.WAIT and time.monotonic() < deadline:
                time.sleep(pause)
                pause = min(2 * pause, _POLL_MAX)
                verdict = claimant.check()
            if verdict is Verdict.WIN:
                return claimant.win()
        except BaseException:
            with contextlib.suppress(Exception):
                claimant.withdraw()  # never leave an undecided claim behind
            raise
        claimant.withdraw()
    warnings.warn(
        f"trial {trial.number}: no exclusive configuration after {max_attempts} attempts; "
        "the last proposal is used and may repeat another trial's configuration",
        RuntimeWarning,
        stacklevel=2,
    )
    return claimant.win()

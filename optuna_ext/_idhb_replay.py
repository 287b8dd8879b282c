"""Rebuild the Iterative-Deepening Hyperband core from an Optuna study's trials.

The storage is the only state shared by the threads and processes of a study (Optuna's storages
are not transactional), so :class:`~optuna_ext.IterativeDeepeningHyperbandPruner` keeps no
bracket state of its own: every decision replays the study's trials into a fresh
:class:`uvp_plugins.hyperband.IterativeDeepeningHyperband` (Brandt et al., Alg. 1-5), which takes
all decisions. This module only translates trials into the core's events:

* **configurations** are trials in trial-number order: the ``k``-th *new-configuration* trial is the
  core's ``k``-th new configuration (:meth:`~IterativeDeepeningHyperband.ask_new`). Trial numbers
  are assigned atomically by every storage, so every process agrees on this order without a lock.
  Re-entry trials (enqueued by the pruner for a promotion), retries of stale trials (Optuna's
  ``RetryHeartbeatStaleTrialCallback``) and trials the pruner marked as spare or rejected are not
  new configurations.
* **jobs** of the core, ``(configuration, rung)``, are held by trials: the configuration's own
  trial for rung 0, a re-entry trial for the rung it was enqueued for, a trial that continued in
  place into the next rung (its *claim*), and retries of those. When several trials could hold a
  job (a race between processes), the lowest trial number that has the result or is still
  running/waiting holds it.
* **results** are the trials' intermediate values: the result of a job at budget ``r`` is the
  value reported at the first step ``>= r`` by its holder (``step`` counts the resource units
  trained, 1 after the first epoch). A holder that ended without reaching ``r`` (failed, or pruned
  by the objective itself) fails the job, and so does a non-finite value: the configuration leaves
  its bracket (the core's failure rule).
* **deepening** ``R <- eta R`` happens in the replay when the brackets at the current ``R`` are
  complete and the pruner's ``max_resource`` is larger (Alg. 1): the study's trials at the smaller
  ``R`` keep their brackets and results.

Because the promotions the core decides do not depend on the order in which results arrive
(ranking by value, ties by pool position), every process that sees the same results takes the
same decisions.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optuna.trial import FrozenTrial, TrialState

from uvp_plugins.contract import StateFormat
from uvp_plugins.hyperband import IterativeDeepeningHyperband, Job

__all__ = [
    "RECORD_ATTR",
    "RECORD_FORMAT",
    "REENTRY_ATTR",
    "RETRY_ATTR",
    "StudyParams",
    "TrialFacts",
    "Replay",
    "trial_facts",
    "replay",
    "records",
    "configuration_of",
]

#: system attribute of the pruner's record of a trial, written only by the process running it:
#: the study's ID-HB parameters, the rungs it continued into in place (``claims``), ``spare``
#: (had no work) or ``rejected`` (the pruner's arguments did not match the study)
RECORD_ATTR = "idhb:trial"
#: the format of that record (:mod:`uvp_plugins.contract`). Version 1 carried an integer
#: ``"v": 1`` instead of the ``"format"`` tag (still read: its keys are version 2's); version
#: 2 is the same record under the tag.
RECORD_FORMAT = StateFormat(
    "uvp-optuna-idhb-trial", 2, upgrades={1: lambda record: record}, legacy_key="v"
)
#: system attribute of a re-entry trial, set when the pruner enqueues it:
#: ``{"config": <number of the configuration's first trial>, "rung": <rung index>}``
REENTRY_ATTR = "idhb:reentry"
#: Optuna's ``RetryHeartbeatStaleTrialCallback`` marks a retry with the first failed trial number
RETRY_ATTR = "failed_trial"

_ALIVE = (TrialState.RUNNING, TrialState.WAITING)


@dataclass(frozen=True)
class StudyParams:
    """The ID-HB parameters a study was started with (the same for every process)."""

    initial_max_resource: int
    reduction_factor: int
    min_resource: int
    variant: str


@dataclass
class TrialFacts:
    """What the replay needs from one trial.

    Attributes:
        kind: ``"new"`` (a new configuration), ``"reentry"``, ``"retry"`` or ``"excluded"``.
        config: number of the trial that introduced the configuration (None when excluded).
        start_rung: the rung of the first job the trial may hold.
        claims: rungs the trial continued into in place.
    """

    number: int
    trial_id: int
    state: TrialState
    kind: str
    config: int | None
    start_rung: int
    claims: tuple[int, ...]
    steps: list[int]
    values: list[float]
    params: dict[str, Any]
    record: Mapping[str, Any] | None

    @property
    def alive(self) -> bool:
        return self.state in _ALIVE

    def value_at(self, budget: int) -> float | None:
        """The value reported at the first step ``>= budget`` (None if not reached yet)."""
        i = bisect.bisect_left(self.steps, budget)
        return self.values[i] if i < len(self.steps) else None


def configuration_of(number: int, system_attrs: Mapping[str, Any]) -> int:
    """Number of the trial that introduced the configuration a trial trains."""
    reentry = system_attrs.get(REENTRY_ATTR)
    if isinstance(reentry, Mapping):
        return int(reentry["config"])
    if RETRY_ATTR in system_attrs:
        return int(system_attrs[RETRY_ATTR])
    return int(number)


def trial_facts(trial: FrozenTrial, values: Mapping[int, float] | None = None) -> TrialFacts:
    """The replay's view of ``trial`` (``values`` overrides its intermediate values)."""
    attrs = trial.system_attrs
    record = attrs.get(RECORD_ATTR)
    record = RECORD_FORMAT.read(record) if isinstance(record, Mapping) else None
    reentry = attrs.get(REENTRY_ATTR)
    if record is not None and (record.get("spare") or record.get("rejected")):
        kind, config, start = "excluded", None, 0
    elif isinstance(reentry, Mapping):
        kind, config, start = "reentry", int(reentry["config"]), int(reentry["rung"])
    elif RETRY_ATTR in attrs:
        kind, config, start = "retry", int(attrs[RETRY_ATTR]), 0
    else:
        kind, config, start = "new", trial.number, 0
    claims = tuple(int(r) for r in record.get("claims", ())) if record is not None else ()
    iv = trial.intermediate_values if values is None else values
    steps = sorted(iv)
    params = dict(trial.params) if trial.params else dict(attrs.get("fixed_params", {}) or {})
    return TrialFacts(
        number=trial.number,
        trial_id=trial._trial_id,
        state=trial.state,
        kind=kind,
        config=config,
        start_rung=start,
        claims=claims,
        steps=steps,
        values=[float(iv[s]) for s in steps],
        params=params,
        record=record,
    )


@dataclass
class Replay:
    """The core rebuilt from the trials, and who holds which job.

    Attributes:
        core: the core after every known result was told.
        holder: ``job_id -> trial number`` for every job that has a holder (pending or settled).
        result_holder: ``(config id, rung) -> trial number`` of the trial whose value was told.
        unheld: pending jobs no trial holds yet (promotions waiting for a re-entry trial, or for
            the running trial that holds the previous rung to continue in place).
        spares: new-configuration trials without a slot at the target ``R``, in number order.
        cid: ``configuration (first trial number) -> core config id``.
        failed_holder: ``job_id -> trial number`` of the last holder of a failed job.
    """

    core: IterativeDeepeningHyperband
    target: int
    holder: dict[int, int] = field(default_factory=dict)
    result_holder: dict[tuple[int, int], int] = field(default_factory=dict)
    unheld: list[Job] = field(default_factory=list)
    spares: list[int] = field(default_factory=list)
    cid: dict[int, int] = field(default_factory=dict)
    failed_holder: dict[int, int] = field(default_factory=dict)
    running: set[int] = field(default_factory=set)

    def reserved_for(self, job: Job) -> int | None:
        """The running trial that holds the previous rung of ``job``'s configuration: an unheld
        job is left to it (it continues in place at its next ``should_prune``), so that no other
        process enqueues a re-entry for a configuration that is still training."""
        number = self.result_holder.get((job.config_id, job.rung - 1))
        return number if number is not None and number in self.running else None

    def busy(self) -> set[int]:
        """Running trials that hold a pending job or may continue into a promotion: while there
        are some, work can still appear (promotions, or slots after deepening)."""
        out = {self.holder[j.job_id] for j in self.core.pending if j.job_id in self.holder}
        out |= {n for j in self.unheld if (n := self.reserved_for(j)) is not None}
        return out & self.running

    @property
    def finished(self) -> bool:
        """Every bracket at the target ``R`` is complete."""
        return self.core.finished and self.core.max_budget == self.target

    def pending_of(self, number: int) -> Job | None:
        """The pending job trial ``number`` holds, if any."""
        for job in self.core.pending:
            if self.holder.get(job.job_id) == number:
                return job
        return None

    def held_rungs(self, number: int, cid: int) -> list[int]:
        """Rungs of configuration ``cid`` whose value came from trial ``number``."""
        return sorted(r for (c, r), n in self.result_holder.items() if c == cid and n == number)


def replay(
    facts: Sequence[TrialFacts], params: StudyParams, target: int, minimize: bool
) -> Replay:
    """Feed the trials to a fresh core at ``params.initial_max_resource``, deepening up to
    ``target`` whenever the brackets at the current ``R`` are complete."""
    core = IterativeDeepeningHyperband(
        params.initial_max_resource,
        params.reduction_factor,
        params.variant,
        min_budget=params.min_resource,
        mode="min",
    )
    out = Replay(core, target, running={f.number for f in facts if f.state == TrialState.RUNNING})
    candidates: dict[tuple[int, int], list[TrialFacts]] = {}
    for f in sorted(facts, key=lambda f: f.number):
        if f.config is None:
            continue
        for rung in (f.start_rung, *f.claims):
            candidates.setdefault((f.config, rung), []).append(f)
    new = [f for f in sorted(facts, key=lambda f: f.number) if f.kind == "new"]
    sign = 1.0 if minimize else -1.0

    def settle(job: Job) -> None:
        config = int(job.config)
        found = candidates.get((config, job.rung), [])
        for f in found:
            value = f.value_at(job.budget)
            if value is not None:
                out.holder[job.job_id] = f.number
                if math.isfinite(value):
                    core.tell(job, sign * value)
                    out.result_holder[(job.config_id, job.rung)] = f.number
                else:
                    core.fail(job)
                    out.failed_holder[job.job_id] = f.number
                return
            if f.alive:
                out.holder[job.job_id] = f.number
                return
        if found:  # every trial that could hold it ended without reaching the budget
            core.fail(job)
            out.failed_holder[job.job_id] = found[-1].number
            return
        out.unheld.append(job)

    queue = 0
    while True:
        job = core.ask_existing()
        if job is not None:
            settle(job)
            continue
        if core.free_slots > 0 and queue < len(new):
            f = new[queue]
            queue += 1
            job = core.ask_new(f.number)
            assert job is not None  # free_slots > 0
            out.cid[f.number] = job.config_id
            settle(job)
            continue
        if core.finished and core.max_budget < target:
            core.deepen()
            continue
        break
    out.spares = [f.number for f in new[queue:]]
    return out


def records(facts: Iterable[TrialFacts]) -> list[tuple[int, Mapping[str, Any]]]:
    """``(trial number, record)`` of every trial whose record carries the study's parameters."""
    return [
        (f.number, f.record)
        for f in facts
        if f.record is not None and not f.record.get("rejected") and "R0" in f.record
    ]

"""Ray Tune scheduler running Iterative-Deepening Hyperband (Brandt et al., Alg. 1-5).

The scheduler is a thin event translator: every bracket decision (which configuration runs at
which rung with which budget, who is promoted, how deepening ``R <- eta * R`` reuses earlier
results) is taken by :class:`uvp_plugins.hyperband.IterativeDeepeningHyperband`, the framework-free
core, and the ladder of maximum budgets by :func:`uvp_plugins.hyperband.deepening_ladder`. This
module only

* maps Ray trials to the core's configurations (each new Ray trial is a new configuration, in
  the order Ray adds them),
* runs a trial until ``result[time_attr] >= job.budget`` and tells the core the metric,
* pauses trials at rung milestones and resumes the ones the core promotes from their checkpoints,
* journals every result and every decision (:mod:`raytune_ext._journal`: a snapshot plus an
  append-only log in the experiment directory), so a later run (a resumed experiment, a driver
  that was killed) continues where it stopped: Ray never calls ``TrialScheduler.save/restore``.
"""

from __future__ import annotations

import functools
import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ray.tune.experiment import Trial
from ray.tune.schedulers.trial_scheduler import TrialScheduler

from raytune_ext._journal import Journal
from raytune_ext._ray_trials import prepare_held_trial, publish_result_logs, restore_progress
from raytune_ext._result_logs import row_key
from raytune_ext._run_state import RunState
from raytune_ext._search_properties import (
    SearchPropertiesMixin,
    check_result_keys,
    concurrency_cap,
    missing_metric_or_mode,
    total_trials,
)
from uvp_plugins.hyperband import (
    VARIANTS,
    HyperbandSchedule,
    IterativeDeepeningHyperband,
    Job,
    deepening_ladder,
)
from uvp_plugins.validation import (
    check_bool,
    check_choice,
    check_int,
    check_reported_number,
    check_reported_progress,
    check_seed,
)

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController

__all__ = ["IterativeDeepeningHyperBandScheduler", "STATE_FILE_NAME", "load_saved_state"]

logger = logging.getLogger(__name__)

#: name of the scheduler's state snapshot inside the experiment directory; its log of later
#: records is ``idhb_scheduler.state.log<generation>`` beside it (see :mod:`raytune_ext._journal`;
#: neither is ``*.json``, which Ray copies back and forth on a resume).
STATE_FILE_NAME = "idhb_scheduler.state"
_Hook = TypeVar("_Hook", bound=Callable[..., Any])


def _journaled(hook: _Hook) -> _Hook:
    """Write the records a hook produced when it returns (appended at once), before Ray acts
    on its decisions."""

    @functools.wraps(hook)
    def wrapper(self: IterativeDeepeningHyperBandScheduler, *args: Any, **kwargs: Any) -> Any:
        try:
            return hook(self, *args, **kwargs)
        finally:
            if self._run is not None:
                self._run.flush()

    return wrapper  # type: ignore[return-value]


def _ladder(max_t: int | Sequence[int], eta: int, start: int | None = None) -> list[int]:
    return deepening_ladder(max_t, eta, start, name="max_t", eta_name="reduction_factor")


class IterativeDeepeningHyperBandScheduler(SearchPropertiesMixin, TrialScheduler):
    """Iterative-Deepening Hyperband (ID-HB) as a Ray Tune trial scheduler.

    Synchronous Hyperband brackets as in Ray's ``HyperBandScheduler``: a trial trains until its
    result reaches the rung budget (``result[time_attr] >= r_i``), is then paused; when the rung
    is complete the core promotes the top ``floor(n_i / eta)`` and those trials resume from their
    checkpoints. All decisions come from the core
    :class:`uvp_plugins.hyperband.IterativeDeepeningHyperband` (Brandt et al., *Iterative
    Deepening Hyperband*, Alg. 1-5); the scheduler only translates Ray events.

    **Deepening.** ``max_t`` may be a list of increasing maximum budgets, e.g. ``[9, 27]``: when
    all brackets for ``R = 9`` are done, the core deepens to ``R = 27`` (every bracket gains a
    rung and is filled up with new configurations, a new bracket at the new ``R`` runs last) and
    the same trials continue from their checkpoints. A finished experiment can also be
    continued later with a larger ``max_t``: see :func:`raytune_ext.resume_with_larger_budget`.

    **Trials.** Each Ray trial is one configuration of the core, in the order Ray adds them. New
    trials are held ``PAUSED`` (never started) until the core asks for a new configuration, so
    ``num_samples`` should be at least :meth:`num_samples_needed` for the largest ``max_t`` you
    may deepen to. Trials the schedule does not need (yet) are stopped without running when the
    last level ends; they appear in the results without metrics (a later resume may use them).
    If too few trials exist, the core's remaining slots are dropped from their brackets with a
    warning. Trials that lost a rung stay ``PAUSED`` until the last level ends (a later level may
    still reuse or promote them) and are then stopped. Works with ``tune.run`` and
    ``tune.Tuner(...).fit()``, also with trials on several nodes (give the experiment a
    ``storage_path`` every node can reach).

    **Parallelism.** Limit how many trials run at once with resources
    (``tune.with_resources(trainable, {"cpu": k})`` or ``resources_per_trial``). Ray's
    ``max_concurrent_trials`` (a ``ConcurrencyLimiter``) caps the trials that *exist*: Ray
    creates a new one only when a capped trial has ended, ``PAUSED`` ones included, while ID-HB
    keeps its trials until the last bracket is done - under a smaller cap a rung would wait
    forever. A cap below the trials the run uses (``min(num_samples_needed, num_samples)``) is
    therefore refused with a ``ValueError`` when the first trial is added, before any trial runs
    (a scheduler is not given ``TuneConfig``, so the constructor cannot know it).

    **Checkpoints.** The trainable must report a checkpoint with every result
    (``tune.report(metrics, checkpoint=...)``) and load ``tune.get_checkpoint()``. A trial that
    comes back with less progress than it had (no checkpoint, or an older one) retrains the
    difference: the decisions stay those of ID-HB (a rung result is taken when ``time_attr``
    reaches the rung budget again), but the epochs are paid twice; the scheduler then logs one
    warning naming the trial and the fix.

    **Robustness.** A trial that errors (and is not retried by ``max_failures``), is removed, or
    finishes before reaching its rung budget leaves its bracket (``core.fail``); the bracket
    goes on without it. A NaN metric at a rung budget counts as a failed evaluation (warned
    once). A metric that is not a number, or a ``time_attr`` value that is not a finite number
    ``>= 0``, stops the run at the first such result (``TypeError``/``ValueError`` naming the
    key, the trial and the accepted values). ``tune.run(..., reuse_actors=True)`` avoids
    starting a new worker process for every pause and resume. Before a paused trial restarts its
    result logs are uploaded to the experiment directory (Ray's loggers replace them by that copy
    on a restart, which lost rows when it was older).

    **State and kill safety.** Every result (``time_attr``, the latest checkpoint's name, the
    whole row) and every decision is appended to a journal next to ``state_path`` (default:
    ``<experiment dir>/idhb_scheduler.state`` on local or shared storage) before the scheduler
    returns: one line per result copied into a memory-mapped log (no system call), no rewrite of
    the state (a snapshot is written when a run starts and every 20 000 records). A scheduler
    that starts and finds the state of the same experiment continues from it (a new experiment
    started in the directory of an earlier one sets the old state aside, with a warning); the
    configurations are taken from the trials in the order Ray first added them, also when a
    resumed experiment re-adds them in another order. After a killed driver (``kill -9`` included) and a resume
    (:func:`raytune_ext.resume_with_larger_budget` or ``Tuner.restore``), trials whose results or
    checkpoints are newer in the journal than in Ray's own experiment snapshot (written every few
    seconds) are brought up to the journal: their last result is in the returned analysis and
    they continue from their latest checkpoint. Every result row is journaled whole, in the
    record of the decision taken with it: a resumed experiment completes each trial's result
    history (``result.json`` and ``progress.csv``, what ``get_dataframe()`` and
    ``Result.metrics_dataframe`` read) with the rows Ray had not yet uploaded when the driver
    died - a resume in another Ray session lost them (:mod:`raytune_ext._result_logs`) - and
    each trial's ``Result.metrics`` is its last row. The rows of compacted logs are kept in
    ``<state_path>.archive`` (about the size of the trials' ``result.json`` files). Records are
    not ``fsync``-ed unless ``fsync=True``: a killed process loses nothing, a crash of the whole
    machine may lose the last records (see :mod:`raytune_ext._journal`).

    Example::

        from ray import tune
        from raytune_ext import IterativeDeepeningHyperBandScheduler

        sched = IterativeDeepeningHyperBandScheduler(metric="loss", mode="min", max_t=[9, 27],
                                                     reduction_factor=3)
        tune.run(trainable, config=space, scheduler=sched,
                 num_samples=IterativeDeepeningHyperBandScheduler.num_samples_needed(27, 3))

    Args:
        time_attr: result key measuring training progress (monotone within a trial), in the
            core's integer budget units: a rung budget ``r`` is reached when
            ``result[time_attr] >= r``. ``"training_iteration"`` by default.
        metric: result key of the objective; may come from ``tune.run(metric=...)``.
        mode: ``"min"`` or ``"max"``; may come from ``tune.run(mode=...)``.
        max_t: maximum budget ``R`` (int ``>= reduction_factor``), or an increasing list of
            budgets whose ratios are powers of ``reduction_factor`` to deepen within one run.
        reduction_factor: ``eta``, an int ``>= 2``.
        variant: ``"efficient"`` (eID-HB), ``"preserving"`` (pID-HB) or ``"discarding"``
            (dID-HB), how deepening reuses earlier promotions (paper Sec. 5).
        min_t: smallest budget the core may schedule (its ``min_budget``), ``>= 1``.
        state_path: where to keep the state; default in the experiment directory.
        seed: seed of the core (an int ``>= 0``).
        fsync: ``fsync`` every journal record (survives a machine crash, costs a disk flush per
            result); by default records survive a killed process only.
    """

    _supports_buffered_results = False

    def __init__(
        self,
        time_attr: str = "training_iteration",
        metric: str | None = None,
        mode: str | None = None,
        max_t: int | Sequence[int] = 81,
        reduction_factor: int = 3,
        variant: str = "efficient",
        min_t: int = 1,
        state_path: str | os.PathLike[str] | None = None,
        seed: int = 0,
        fsync: bool = False,
    ) -> None:
        super().__init__()
        check_result_keys(time_attr, metric, mode)
        check_choice("variant", variant, VARIANTS)
        self._eta = check_int("reduction_factor", reduction_factor, low=2)
        self._min_t = check_int("min_t", min_t, low=1)
        seed_i = check_seed("seed", seed)
        assert seed_i is not None
        self._fsync = check_bool("fsync", fsync)
        self._requested_max_t: list[int] = _ladder(max_t, self._eta)
        if self._requested_max_t[0] < self._eta * self._min_t:
            raise ValueError(
                f"max_t must be >= reduction_factor * min_t = {self._eta * self._min_t} (a "
                f"Hyperband needs two rungs), got max_t={self._requested_max_t[0]}"
            )
        self._time_attr = time_attr
        self._metric = metric
        self._mode = mode
        self._variant = variant
        self._seed = seed_i
        self._state_path: str | None = os.fspath(state_path) if state_path is not None else None

        self._run: RunState | None = None  # the durable state, from the first trial on
        self._trials: dict[str, Trial] = {}  # trial_id -> live Trial object
        self._free: dict[str, None] = {}  # present trials not yet given to the core
        self._next_new = 0  # index into the run's order of first additions: next new config
        self._used: set[str] = set()  # trial ids the core holds as configurations
        self._jobs: dict[str, Job] = {}  # trial_id -> the core job it runs
        self._orphans: dict[str, Job] = {}  # pending jobs of trials Ray has not re-added yet
        self._queue: dict[str, None] = {}  # trial ids with a job, to (re)start when PAUSED
        self._starting: set[str] = set()  # trials handed to Ray to (re)start
        self._stopping = False
        self._n_stopped = 0
        self._warned: set[str] = set()
        self._last_key: dict[str, Any] = {}  # trial -> identity of its last journaled row

    # ------------------------------------------------------------------ helpers for users
    @staticmethod
    def num_samples_needed(
        max_t: int | Sequence[int], reduction_factor: int = 3, min_t: int = 1
    ) -> int:
        """Number of configurations (Ray trials) ID-HB uses up to the largest ``max_t``.

        Deepening fills every bracket up to its pool size at the new ``R`` (Alg. 2), so the total
        equals the configurations of one Hyperband run at the final ``R``
        (:attr:`uvp_plugins.hyperband.HyperbandSchedule.n_configs`).
        """
        eta = check_int("reduction_factor", reduction_factor, low=2)
        ladder = _ladder(max_t, eta)
        return int(HyperbandSchedule(ladder[-1], eta, check_int("min_t", min_t, low=1)).n_configs)

    @property
    def core(self) -> IterativeDeepeningHyperband | None:
        """The core object (None before the first trial was added)."""
        return self._run.hb if self._run is not None else None

    @property
    def max_t_ladder(self) -> list[int]:
        """The levels ``R`` this scheduler runs (resumed runs start at the saved level)."""
        return list(self._run.ladder) if self._run is not None else list(self._requested_max_t)

    @property
    def consumed(self) -> float:
        """``time_attr`` units trained by trials under this scheduler (across resumed runs)."""
        return self._run.consumed if self._run is not None else 0.0

    @property
    def state_path(self) -> str | None:
        """Where the state is kept (known once the first trial was added)."""
        return self._state_path

    def trial_id_of(self, config_id: int) -> str | None:
        """Ray trial id of the core's configuration ``config_id`` (None for an empty slot)."""
        if self._run is None:
            return None
        cfg = self._run.hb.config(config_id)
        return cfg.get("trial_id") if isinstance(cfg, Mapping) else None

    @property
    def best_trial_id(self) -> str | None:
        """Ray trial id of the core's incumbent (best result at the largest budget so far)."""
        inc = self._run.hb.incumbent if self._run is not None else None
        return self.trial_id_of(inc.config_id) if inc is not None else None

    @property
    def finished(self) -> bool:
        """True once the last level's brackets are complete."""
        return self._run is not None and self._run.done

    def __getstate__(self) -> dict[str, Any]:
        # Ray pickles the scheduler (Tuner keeps it for Tuner.restore): the live trials and the
        # journal's open file stay behind.
        state = dict(self.__dict__)
        state["_trials"] = {}
        state["_last_key"] = {}
        if self._run is not None:
            state["_run"] = None
        return state

    # ------------------------------------------------------------------ Ray API
    @_journaled
    def on_trial_add(self, tune_controller: TuneController, trial: Trial) -> None:
        if self._run is None:
            self._refuse_concurrency_cap(tune_controller)
        run = self._ensure_run(trial)
        tid = trial.trial_id
        known = self._trials.get(tid)
        self._trials[tid] = trial
        if known is trial:
            # Ray re-queued the same trial object after a recoverable error (max_failures): it is
            # already PENDING in Ray's bookkeeping, keeps its job and restarts from its checkpoint.
            return
        report = run.last_report(tid)
        rows = run.rows.pop(tid, None)
        if report is not None or rows:
            # A resumed experiment: Ray's snapshot and its per-trial history may be older than
            # the journal (results of the seconds before a driver was killed).
            ckpt, metrics = report if report is not None else (None, {})
            restore_progress(trial, metrics, ckpt, self._time_attr, rows or ())
        if rows:
            self._last_key[tid] = row_key(rows[-1])
        if trial.status == Trial.ERROR:
            self._mark_dead(tid)
            return
        if trial.status == Trial.TERMINATED:  # resumed with ResumeConfig(finished=SKIP)
            return  # cannot run in this run (_route fails its jobs); a later resume may
        if trial.status == Trial.PENDING:
            # Hold new and restored trials until the core gives them a job. Ray starts every
            # PENDING trial first-in-first-out; a PAUSED one only when choose_trial_to_run
            # returns it (it then restores from its checkpoint, if any).
            trial.set_status(Trial.PAUSED)
            prepare_held_trial(trial)
        run.add_trial(tid)
        if tid in self._orphans:
            self._jobs[tid] = self._orphans.pop(tid)
            self._queue[tid] = None
        elif tid not in self._used:
            self._free[tid] = None
        self._pump(tune_controller, adding=True)

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: dict) -> str:
        # The hot path (most results take no decision) journals and returns without the
        # _journaled wrapper; a rung result goes through _rung_result.
        run = self._run
        assert run is not None
        tid = trial.trial_id
        key = row_key(result)
        if key is not None and key == self._last_key.get(tid):
            # Ray repeats a trial's last result when its trainable returns (not a new row)
            return TrialScheduler.CONTINUE
        self._last_key[tid] = key
        now = result.get(self._time_attr)
        if type(now) is not int and (type(now) is not float or now != now or now < 0):
            if now is None:
                raise ValueError(
                    f"time_attr {self._time_attr!r} is missing from the result of trial {tid}; "
                    f"reported keys: {sorted(result)}"
                )
            now = check_reported_progress(self._time_attr, now, f"trial {tid}")
        metric = self._metric
        if metric is not None and type(result.get(metric, 0.0)) is not float:
            check_reported_number(metric, result[metric], f"trial {tid}")
        now = float(now)
        if tid in self._starting:
            self._starting.discard(tid)
            last = run.progress.get(tid, 0.0)
            if last > 0 and now <= last:
                self._warn_retraining(tid, now, last)
        self._queue.pop(tid, None)
        job = self._jobs.get(tid)
        if job is None or now < job.budget:
            if job is not None:
                decision = TrialScheduler.CONTINUE
            else:  # not scheduled by the core (a trial Ray started on its own): keep it for later
                decision = TrialScheduler.STOP if run.done else TrialScheduler.PAUSE
            row = result if decision != TrialScheduler.STOP else {**result, "done": True}
            run.progress_seen(
                tid, now, result.get("training_iteration"), result.get("checkpoint_dir_name"), row
            )
            return decision
        return self._rung_result(tune_controller, tid, job, now, result)

    @_journaled
    def _rung_result(
        self, tune_controller: TuneController, tid: str, job: Job, now: float, result: dict
    ) -> str:
        """``result`` reached ``job``'s budget: tell the core, take the next decisions."""
        run = self._run
        assert run is not None
        run.result_seen(tid, now, result.get("checkpoint_dir_name"), dict(result))
        del self._jobs[tid]
        value = self._metric_value(tid, now, result)
        advanced = run.fail(job) if value is None else run.tell(job, value)
        if advanced:  # otherwise no job can be ready and the run cannot have finished
            self._pump(tune_controller)
        if tid in self._jobs:  # promoted right away: keeps running from where it is
            self._queue.pop(tid, None)
            return TrialScheduler.CONTINUE
        if run.done:
            # The other idle trials are stopped by the next choose_trial_to_run (Ray calls it
            # every step): stopping dozens of trials here would make this one result slow.
            run.stop_row()
            return TrialScheduler.STOP
        return TrialScheduler.PAUSE

    @_journaled
    def on_trial_complete(
        self, tune_controller: TuneController, trial: Trial, result: dict
    ) -> None:
        tid = trial.trial_id
        key = row_key(result) if result else None
        if key is not None and key != self._last_key.get(tid) and self._run is not None:
            # a result Ray logged without showing it to the scheduler (a stopper ended the trial)
            self._last_key[tid] = key
            self._run.history_seen(tid, result)
        if self._stopping or self.finished:
            return  # our own stop at the end of the last level: the trial stays reusable
        # Terminated in this run (its trainable returned, a stopper, a user): it cannot train
        # again in this run (_route fails its jobs) but a resumed run may continue it.
        self._free.pop(tid, None)
        self._queue.pop(tid, None)
        self._starting.discard(tid)
        job = self._jobs.pop(tid, None)
        if job is not None and self._run is not None:
            # Finished (its trainable returned) or stopped before reaching the rung budget.
            logger.info(
                "trial %s ended before reaching budget %s: leaves its bracket", tid, job.budget
            )
            self._run.fail(job)
            self._pump(tune_controller)

    @_journaled
    def on_trial_error(self, tune_controller: TuneController, trial: Trial) -> None:
        tid = trial.trial_id
        self._starting.discard(tid)
        if trial.should_recover():
            # Ray retries it (max_failures) and re-adds the same object: keep its job.
            return
        job = self._jobs.pop(tid, None)
        self._mark_dead(tid)
        if job is not None and self._run is not None:
            self._run.fail(job)
        self._pump(tune_controller)

    def on_trial_remove(self, tune_controller: TuneController, trial: Trial) -> None:
        if self._stopping:
            return
        self.on_trial_complete(tune_controller, trial, {})

    @_journaled
    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        self._pump(tune_controller)
        if self.finished:
            self._stop_idle(tune_controller)
            return None
        for tid in list(self._queue):
            trial = self._trials.get(tid)
            if trial is None or trial.status in (Trial.ERROR, Trial.TERMINATED):
                del self._queue[tid]
                continue
            if trial.status == Trial.PAUSED:
                self._starting.add(tid)
                if trial.checkpoint is not None:
                    # Ray's loggers replace the trial's result logs by the stored copy when it
                    # restarts: make that copy current (see _ray_trials.publish_result_logs).
                    publish_result_logs(trial)
                return trial
        return None

    def debug_string(self) -> str:
        run = self._run
        ladder = run.ladder if run is not None else self._requested_max_t
        level = run.level if run is not None else 0
        head = (
            f"Using IterativeDeepeningHyperBand ({self._variant}, eta={self._eta}, "
            f"max_t levels={ladder}, level={level}): "
            f"{self._time_attr} trained={self.consumed:g}, stopped={self._n_stopped}"
        )
        if run is None:
            return head
        hb = run.hb
        lines = [head]
        ledger = hb.ledger
        lines.append(
            f"  core ledger: full-charge={ledger.full_charge:g}, "
            f"continuation={ledger.continuation:g}, evaluations={ledger.n_evaluations}"
        )
        for b in hb.summary():
            rungs = ", ".join(
                f"r={hb.schedule.budget(b['s'], i)}:{n}" for i, n in enumerate(b["rung_sizes"])
            )
            state = "done" if b["done"] else ("open" if b["opened"] else "not opened")
            lines.append(
                f"  bracket {b['bracket']} (s={b['s']}, n={b['n']}, sampled={b['sampled']}, "
                f"failed={b['failed']}, {state}): rung {b['rung']} at r={b['rung_budget']}; "
                f"members per rung [{rungs}]"
            )
        lines.append(
            f"  trials: {len(self._jobs)} with a job, {len(self._free)} not used yet, "
            f"{len(run.dead)} gone"
        )
        return "\n".join(lines)

    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state: the core's ``state_dict``, the ladder, the trial mapping and
        what every trial last reported (the snapshot format of the state file)."""
        assert self._run is not None, "no state before the first trial was added"
        return self._run.state_dict()

    def save(self, checkpoint_path: str) -> None:
        """Write the scheduler state as a snapshot to ``checkpoint_path`` (Ray does not call
        this; the journal next to ``state_path`` is always current)."""
        Journal(checkpoint_path).write_snapshot(self.state_dict())

    def restore(self, checkpoint_path: str) -> None:
        """Load a state written by :meth:`save` or kept in an experiment (before any trial was
        added). The state stays in memory: the journal is not written."""
        run = self._continue(RunState.load(Journal(checkpoint_path), {}))
        run.journal = None
        self._run = run

    # ------------------------------------------------------------------ core plumbing
    def _params(self) -> dict[str, Any]:
        return {
            "time_attr": self._time_attr,
            "metric": self._metric,
            "mode": self._mode,
            "reduction_factor": self._eta,
            "variant": self._variant,
            "min_t": self._min_t,
            "seed": self._seed,
        }

    def _refuse_concurrency_cap(self, tune_controller: TuneController) -> None:
        """``ValueError`` when Ray caps the live trials below what ID-HB holds at once.

        Ray's ``max_concurrent_trials`` (a ``ConcurrencyLimiter`` or the
        ``BasicVariantGenerator``'s ``max_concurrent``) creates a new trial only when one of the
        capped trials has ended; a ``PAUSED`` trial counts. ID-HB keeps every trial it used
        alive until the last bracket is done (paused at its rung, to be promoted, or reused when
        it deepens), so a cap below the configurations it uses makes a rung wait forever for
        trials Ray never creates. There is no clean way around it in Ray 2.60: freeing a slot
        means ending the trial (its searcher and callbacks are told it completed) and Ray offers
        schedulers no way to start an ended trial again. Checked at the first trial, the
        earliest moment a scheduler sees the search algorithm (``TuneConfig`` is not passed to
        the scheduler's constructor).
        """
        search_alg = getattr(tune_controller, "search_alg", None)
        cap = concurrency_cap(search_alg)
        if cap is None:
            return
        ladder = self._requested_max_t
        needed = self.num_samples_needed(ladder[-1], self._eta, self._min_t)
        total = total_trials(search_alg)
        uses = needed if total is None else min(needed, total)
        if cap >= uses:
            return
        first_rung = HyperbandSchedule(ladder[0], self._eta, self._min_t).brackets[0].n
        raise ValueError(
            f"IterativeDeepeningHyperBandScheduler cannot run with max_concurrent_trials={cap}: "
            f"Ray creates a new trial only when one of {cap} live trials has ended, and ID-HB "
            f"keeps the trials it uses alive (PAUSED at their rung until promoted, or reused "
            f"when it deepens) until its last bracket is done; its first rung alone needs "
            f"{first_rung} trials at once and this run uses {uses}, so it would wait forever. "
            f"To run fewer trials at a time, give each trial more resources "
            f"(tune.with_resources(trainable, {{'cpu': k}}) or resources_per_trial) and leave "
            f"max_concurrent_trials unset, or set max_concurrent_trials >= {uses}"
        )

    def _ensure_run(self, trial: Trial) -> RunState:
        if self._run is not None:
            return self._run
        if not self._metric or not self._mode:
            raise missing_metric_or_mode(self, self._metric, self._mode)
        if self._state_path is None:
            self._state_path = _default_state_path(trial)
        journal = Journal(self._state_path, fsync=self._fsync) if self._state_path else None
        run = None
        if journal is not None and journal.exists():
            saved = RunState.load(journal, {})
            if saved.knows(trial.trial_id):
                # A resumed experiment (Ray re-adds the saved trials first): continue it.
                run = self._continue(saved)
                logger.info("IDHB scheduler continues from %s", self._state_path)
            else:
                # A new experiment run in the directory of an earlier one (same name and
                # storage_path, no resume): it starts afresh; the old state is kept aside.
                kept = journal.set_aside()
                logger.warning(
                    "%s holds the ID-HB state of an earlier experiment whose trials are not in "
                    "this run: starting a new ID-HB run (the old state is kept as %s; to "
                    "continue that experiment, resume it with resume_with_larger_budget or "
                    "Tuner.restore)",
                    os.path.dirname(journal.path),
                    kept,
                )
        if run is None:
            hb = IterativeDeepeningHyperband(
                max_budget=self._requested_max_t[0],
                eta=self._eta,
                variant=self._variant,
                min_budget=self._min_t,
                mode=self._mode,
                seed=self._seed,
            )
            run = RunState(hb, self._requested_max_t, self._params(), journal)
        run.snapshot()  # a fresh start, or a compacted journal after a resume
        self._run = run
        return run

    def _continue(self, run: RunState) -> RunState:
        """Continue a saved state: its levels, then the larger ``max_t`` asked for here."""
        params = self._params()
        run.check_params(
            {k: params[k] for k in ("time_attr", "metric", "mode", "reduction_factor", "variant")}
        )
        saved = run.ladder
        targets = saved[run.level :] + [v for v in self._requested_max_t if v > saved[-1]]
        run.ladder = _ladder(targets, self._eta, start=saved[run.level])
        run.level = 0
        run.done = False
        # Jobs handed out before the driver stopped stay pending in the core: re-route them
        # to their trials when Ray re-adds those.
        self._orphans = {}
        for job in run.hb.pending:
            tid = job.config.get("trial_id") if isinstance(job.config, Mapping) else None
            if tid is not None:
                self._orphans[tid] = job
        self._used = {
            cfg["trial_id"]
            for cfg in run.hb.configs.values()
            if isinstance(cfg, Mapping) and cfg.get("trial_id") is not None
        }
        return run

    def _route(self, job: Job) -> None:
        """Give ``job`` to the Ray trial of its configuration (or fail it if that trial is gone)."""
        run = self._run
        assert run is not None
        tid = job.config.get("trial_id") if isinstance(job.config, Mapping) else None
        trial = self._trials.get(tid) if tid is not None else None
        if (
            tid is None
            or tid in run.dead
            or (trial is not None and trial.status in (Trial.ERROR, Trial.TERMINATED))
        ):
            run.fail(job)
            return
        if trial is None:  # known from a saved state, not (yet) re-added by Ray
            self._orphans[tid] = job
            return
        self._jobs[tid] = job
        self._queue[tid] = None

    def _mark_dead(self, tid: str) -> None:
        self._free.pop(tid, None)
        self._queue.pop(tid, None)
        if self._run is not None:
            self._run.mark_dead(tid)

    def _metric_value(self, tid: str, now: float, result: Mapping[str, Any]) -> float | None:
        """The rung result of ``tid``: the metric as a float, or None (NaN: a failed job)."""
        assert self._metric is not None
        value = result.get(self._metric)
        if type(value) is float and value == value:  # the common case: a float, not NaN
            return value
        if self._metric not in result:
            raise ValueError(
                f"metric {self._metric!r} is missing from the result of trial {tid} at "
                f"{self._time_attr}={now:g}; reported keys: {sorted(result)}"
            )
        value = check_reported_number(self._metric, result[self._metric], f"trial {tid}")
        if math.isnan(value):
            if "nan" not in self._warned:
                self._warned.add("nan")
                logger.warning(
                    "trial %s reported %s=NaN at %s=%g: counted as a failed evaluation (it leaves "
                    "its bracket); further NaN results are handled alike without a warning",
                    tid,
                    self._metric,
                    self._time_attr,
                    now,
                )
            return None
        return value

    def _warn_retraining(self, tid: str, now: float, last: float) -> None:
        if "retrain" in self._warned:
            return
        self._warned.add("retrain")
        logger.warning(
            "trial %s came back at %s=%g after it had reached %g: it had no checkpoint for that "
            "progress and retrains it (decisions are unaffected, the epochs are paid twice). "
            "Report a checkpoint with every result, tune.report(metrics, checkpoint=...), and "
            "load tune.get_checkpoint() when the trainable starts. (Warned once.)",
            tid,
            self._time_attr,
            now,
            last,
        )

    def _search_finished(self, tune_controller: TuneController) -> bool:
        search_alg = getattr(tune_controller, "search_alg", None)
        if search_alg is None:
            return True
        try:
            return bool(search_alg.is_finished())
        except Exception:  # pragma: no cover - exotic search algorithms
            return False

    def _pump(self, tune_controller: TuneController, adding: bool = False) -> None:
        """Ask the core for every job it can give now, route them, deepen.

        Promotions and re-evaluations come from ``ask_existing``; a configuration slot the core
        needs is filled with the next unused Ray trial through ``ask_new({"trial_id": ...})``.
        When no trial is left and the search algorithm is finished, the remaining slots are
        filled with empty configurations that fail at once (they leave their brackets).
        """
        run = self._run
        if run is None or run.done:
            return
        hb = run.hb
        while True:
            job = run.ask_existing()
            if job is not None:
                self._route(job)
                continue
            free_slots = hb.free_slots
            tid = self._next_free(adding or not self._search_finished(tune_controller)) if (
                free_slots and self._free
            ) else None
            if tid is not None:
                del self._free[tid]
                self._used.add(tid)
                job = run.ask_new(tid)
                assert job is not None  # free_slots > 0 guarantees a slot
                self._route(job)
                continue
            if (
                (free_slots or self._orphans)
                and not adding
                and self._search_finished(tune_controller)
            ):
                if self._orphans:
                    # Trials of the saved state that Ray did not restore: they leave.
                    for tid, job in list(self._orphans.items()):
                        del self._orphans[tid]
                        self._mark_dead(tid)
                        run.fail(job)
                    continue
                if "short" not in self._warned:
                    logger.warning(
                        "ID-HB needs %d more configurations than Ray trials exist (they leave "
                        "their brackets); use num_samples >= %d",
                        free_slots,
                        self.num_samples_needed(run.ladder[-1], self._eta, self._min_t),
                    )
                    self._warned.add("short")
                empty = run.ask_new(None)
                if empty is not None:
                    run.fail(empty)
                    continue
            if hb.finished:
                if run.level + 1 < len(run.ladder):
                    run.deepen()
                    logger.info("ID-HB deepens to R=%d", run.ladder[run.level])
                    continue
                run.finish()
            break

    def _next_free(self, more_may_come: bool) -> str | None:
        """The trial that takes the next new configuration: the first trial, in the order Ray
        first added them, that the core does not hold yet. In a resumed experiment Ray re-adds
        the trials in another order; while trials may still come (``more_may_come``) the
        scheduler waits for the next one in the original order, so the resumed run assigns the
        configurations as the uninterrupted run did. A trial Ray does not bring back is
        skipped."""
        run = self._run
        assert run is not None
        added = run.added
        while self._next_new < len(added):
            tid = added[self._next_new]
            if tid in self._free:
                return tid
            if tid in self._used or tid in run.dead or tid in self._trials or not more_may_come:
                # taken, gone, present but unable to run (restored as finished or errored), or
                # not brought back by Ray
                self._next_new += 1
                continue
            return None  # not re-added yet: wait for it
        return None

    def _stop_idle(self, tune_controller: TuneController) -> None:
        """After the last level: stop every trial that is not running (Ray then ends)."""
        if self._stopping:
            return
        self._stopping = True
        try:
            for trial in list(self._trials.values()):
                # A trial still saving its pause checkpoint is stopped on a later call, once
                # PAUSED: stopping it mid-save leaves a stale STOP in Ray's cached decisions,
                # which Ray persists and replays on the first save after a resume (Ray 2.60).
                if trial.status in (Trial.PAUSED, Trial.PENDING) and not trial.is_saving:
                    tune_controller.stop_trial(trial)
                    self._n_stopped += 1
            search_alg = getattr(tune_controller, "search_alg", None)
            if search_alg is not None and hasattr(search_alg, "set_finished"):
                search_alg.set_finished()
        finally:
            self._stopping = False


def _default_state_path(trial: Trial, name: str = STATE_FILE_NAME) -> str | None:
    """``<experiment dir>/<name>`` (default ``idhb_scheduler.state``) when the storage is a
    local directory."""
    storage = getattr(trial, "storage", None)
    if storage is None:
        return None
    fs = getattr(storage, "storage_filesystem", None)
    exp = getattr(storage, "experiment_fs_path", None)
    if exp and fs is not None and getattr(fs, "type_name", "") == "local":
        return os.path.join(exp, name)
    staging = getattr(storage, "experiment_driver_staging_path", None)
    if staging:
        logger.warning(
            "experiment storage is not local: the scheduler state goes to %s; pass state_path= "
            "to continue after a killed driver",
            staging,
        )
        return os.path.join(staging, name)
    return None


def load_saved_state(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The scheduler parameters, ladder and current level of a saved state (snapshot plus
    journal), as the resume helper needs them: ``{**params, "ladder": [...], "level": k}``."""
    state, records = Journal(path).load()
    out = dict(state["params"])
    out["ladder"] = [int(v) for v in state["ladder"]]
    out["level"] = int(state["level"]) + sum(1 for r in records if r[0] == "d")
    return out

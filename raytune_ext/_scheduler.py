"""Ray Tune scheduler running Iterative-Deepening Hyperband (Brandt et al., Alg. 1-5).

The scheduler is a thin event translator: every bracket decision (which configuration runs at
which rung with which budget, who is promoted, how deepening ``R <- eta * R`` reuses earlier
results) is taken by :class:`uvp_plugins.hyperband.IterativeDeepeningHyperband`, the framework-free
core. This module only

* maps Ray trials to the core's configurations (each new Ray trial is a new configuration, in
  the order Ray adds them),
* runs a trial until ``result[time_attr] >= job.budget`` and tells the core the metric,
* pauses trials at rung milestones (Ray checkpoints them) and resumes the ones the core promotes
  from their checkpoints,
* persists the core's state to a JSON file in the experiment directory after every decision, so a
  later run (a resumed experiment, a driver that was killed) continues where it stopped: Ray never
  calls ``TrialScheduler.save/restore``.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ray.tune.experiment import Trial
from ray.tune.result import DEFAULT_METRIC
from ray.tune.schedulers.trial_scheduler import TrialScheduler

from uvp_plugins.hyperband import IterativeDeepeningHyperband, Job

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController

__all__ = ["IterativeDeepeningHyperBandScheduler", "STATE_FILE_NAME", "VARIANTS"]

logger = logging.getLogger(__name__)

#: name of the scheduler's state file (JSON) inside the experiment directory. Not ``*.json``: on
#: resume Ray copies every ``*.json``/``*.pkl`` of the experiment directory to its staging
#: directory and later uploads it back, which would overwrite a newer state with the old one.
STATE_FILE_NAME = "idhb_scheduler.state"
#: the variants of ID-HB (paper Sec. 5.1-5.3): eID, pID, dID
VARIANTS = ("efficient", "preserving", "discarding")
_STATE_VERSION = 1


def _check_eta(reduction_factor: Any) -> int:
    if isinstance(reduction_factor, bool) or not isinstance(reduction_factor, (int, float)):
        raise TypeError(
            f"reduction_factor must be an int >= 2, got {type(reduction_factor).__name__}"
        )
    if reduction_factor != int(reduction_factor) or reduction_factor < 2:
        raise ValueError(
            f"reduction_factor must be an int >= 2 (Hyperband's eta), got {reduction_factor!r}"
        )
    return int(reduction_factor)


def _power_of(ratio: int, eta: int) -> int | None:
    """k with ``ratio == eta**k`` (k >= 0), else None (exact integer arithmetic)."""
    k = 0
    while ratio > 1 and ratio % eta == 0:
        ratio //= eta
        k += 1
    return k if ratio == 1 else None


def deepening_ladder(max_t: int | Sequence[int], eta: int, start: int | None = None) -> list[int]:
    """The maximum budgets ``R`` the scheduler runs, one Hyperband level each.

    ``max_t`` is an int or an increasing sequence whose consecutive ratios are powers of ``eta``
    (ID-HB deepens by ``R <- eta * R``, Alg. 1); intermediate levels are inserted, e.g.
    ``[9, 81]`` with ``eta=3`` runs ``9, 27, 81``. ``start`` is the level a resumed core is at:
    the ladder then starts there and keeps only the larger requested values.
    """
    if isinstance(max_t, bool):
        raise TypeError("max_t must be a positive int or an increasing sequence of ints")
    values = [max_t] if isinstance(max_t, (int, float)) else list(max_t)
    if not values:
        raise ValueError("max_t must not be empty")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
            raise TypeError(f"max_t values must be ints, got {v!r}")
    ints = [int(v) for v in values]
    if start is None:
        if ints[0] < eta:
            raise ValueError(
                f"max_t must be >= reduction_factor={eta} (one Hyperband rung needs budget "
                f"R >= eta), got max_t={ints[0]}"
            )
        ladder = [ints[0]]
        rest = ints[1:]
    else:
        ladder = [int(start)]
        rest = [v for v in ints if v > start]
    for v in rest:
        prev = ladder[-1]
        k = _power_of(v // prev, eta) if v % prev == 0 else None
        if v <= prev or k is None or k == 0:
            raise ValueError(
                f"max_t values must grow by powers of reduction_factor={eta} (ID-HB deepens by "
                f"R <- eta * R): {v} is not {prev} * {eta}**k for an integer k >= 1"
            )
        for _ in range(k):
            ladder.append(ladder[-1] * eta)
    return ladder


class IterativeDeepeningHyperBandScheduler(TrialScheduler):
    """Iterative-Deepening Hyperband (ID-HB) as a Ray Tune trial scheduler.

    Synchronous Hyperband brackets as in Ray's ``HyperBandScheduler``: a trial trains until its
    result reaches the rung budget (``result[time_attr] >= r_i``), is then paused (Ray saves a
    checkpoint); when the rung is complete the core promotes the top ``floor(n_i / eta)`` and
    those trials resume from their checkpoints. All decisions come from the core
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
    may deepen to (trials the schedule never needs are stopped without running when the last
    level ends; if too few trials exist, the core's remaining slots are dropped from their
    brackets with a warning). Trials that lost a rung stay ``PAUSED`` until the last level ends
    (a later level may still reuse or promote them) and are then stopped. Limit parallelism with
    resources (``resources_per_trial``), not ``max_concurrent_trials``: a synchronous rung needs
    all its trials to exist at once.

    **Robustness.** A trial that errors (and is not retried by ``max_failures``), is removed, or
    finishes before reaching its rung budget leaves its bracket (``core.fail``); the bracket
    goes on without it. The trainable must report a checkpoint with every result
    (``tune.report(metrics, checkpoint=...)``) and load ``tune.get_checkpoint()``, otherwise a
    promoted trial restarts from scratch. ``tune.run(..., reuse_actors=True)`` avoids starting a
    new worker process for every pause and resume.

    **State.** After every decision the core's state (``state_dict()``) and the trial mapping are
    written atomically to ``state_path`` (default: ``<experiment dir>/idhb_scheduler.state``
    on local storage). When a scheduler starts and finds the file it continues from it.

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
        state_path: where to persist the state; default in the experiment directory.
        seed: seed of the core.
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
    ) -> None:
        super().__init__()
        if not isinstance(time_attr, str) or not time_attr:
            raise TypeError(f"time_attr must be a non-empty str, got {time_attr!r}")
        if metric is not None and not isinstance(metric, str):
            raise TypeError(f"metric must be a str or None, got {metric!r}")
        if mode not in (None, "min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if isinstance(min_t, bool) or not isinstance(min_t, int) or min_t < 1:
            raise ValueError(f"min_t must be an int >= 1, got {min_t!r}")
        self._eta = _check_eta(reduction_factor)
        self._requested_max_t: list[int] = deepening_ladder(max_t, self._eta)
        if self._requested_max_t[0] < self._eta * min_t:
            raise ValueError(
                f"max_t must be >= reduction_factor * min_t = {self._eta * min_t} (a Hyperband "
                f"needs two rungs), got max_t={self._requested_max_t[0]}"
            )
        self._ladder: list[int] = list(self._requested_max_t)
        self._time_attr = time_attr
        self._metric = metric
        self._mode = mode
        self._variant = variant
        self._min_t = min_t
        self._seed = int(seed)
        self._state_path: str | None = os.fspath(state_path) if state_path is not None else None

        self._hb: IterativeDeepeningHyperband | None = None
        self._level = 0  # index into self._ladder of the core's current R
        self._trials: dict[str, Trial] = {}  # trial_id -> live Trial object
        self._free: list[str] = []  # trial ids not yet given to the core, in Ray's add order
        self._used: set[str] = set()  # trial ids the core holds as configurations
        self._jobs: dict[str, Job] = {}  # trial_id -> the core job it runs
        self._orphans: dict[str, Job] = {}  # pending jobs of trials Ray has not re-added yet
        self._warned_short = False
        self._queue: list[str] = []  # trial ids with a job, to (re)start when PAUSED
        self._dead: set[str] = set()  # trials that errored / were removed / finished
        self._progress: dict[str, float] = {}  # last time_attr seen per trial
        self._consumed = 0.0  # time_attr units trained through this scheduler (all runs)
        self._done = False
        self._stopping = False
        self._dirty = False
        self._n_stopped = 0

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
        from uvp_plugins.hyperband import HyperbandSchedule

        eta = _check_eta(reduction_factor)
        ladder = deepening_ladder(max_t, eta)
        return int(HyperbandSchedule(ladder[-1], eta, min_t).n_configs)

    @property
    def core(self) -> IterativeDeepeningHyperband | None:
        """The core object (None before the first trial was added)."""
        return self._hb

    @property
    def max_t_ladder(self) -> list[int]:
        """The levels ``R`` this scheduler runs (resumed runs start at the saved level)."""
        return list(self._ladder)

    @property
    def consumed(self) -> float:
        """``time_attr`` units trained by trials under this scheduler (across resumed runs)."""
        return self._consumed

    def trial_id_of(self, config_id: int) -> str | None:
        """Ray trial id of the core's configuration ``config_id`` (None for an empty slot)."""
        if self._hb is None:
            return None
        cfg = self._hb.config(config_id)
        return cfg.get("trial_id") if isinstance(cfg, Mapping) else None

    @property
    def best_trial_id(self) -> str | None:
        """Ray trial id of the core's incumbent (best result at the largest budget so far)."""
        if self._hb is None or self._hb.incumbent is None:
            return None
        return self.trial_id_of(self._hb.incumbent.config_id)

    @property
    def finished(self) -> bool:
        """True once the last level's brackets are complete."""
        return self._done

    # ------------------------------------------------------------------ Ray API
    def set_search_properties(self, metric: str | None, mode: str | None, **spec: Any) -> bool:
        if self._metric and metric:
            return False
        if self._mode and mode:
            return False
        if metric:
            self._metric = metric
        if mode:
            if mode not in ("min", "max"):
                raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
            self._mode = mode
        if self._metric is None and self._mode:
            self._metric = DEFAULT_METRIC
        return True

    def on_trial_add(self, tune_controller: TuneController, trial: Trial) -> None:
        self._ensure_core(trial)
        tid = trial.trial_id
        known = self._trials.get(tid)
        self._trials[tid] = trial
        if known is trial:
            # Ray re-queued the same trial object after a recoverable error (max_failures): it is
            # already PENDING in Ray's bookkeeping, keeps its job and restarts from its checkpoint.
            self._dead.discard(tid)
            return
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
        last = trial.last_result.get(self._time_attr) if trial.last_result else None
        if last is not None:
            self._progress[tid] = float(last)
        if tid in self._orphans:
            job = self._orphans.pop(tid)
            self._jobs[tid] = job
            self._queue.append(tid)
        elif tid not in self._used and tid not in self._free:
            self._free.append(tid)
        self._pump(tune_controller, adding=True)

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: dict) -> str:
        tid = trial.trial_id
        if self._time_attr not in result:
            raise ValueError(
                f"time_attr {self._time_attr!r} is missing from the result of trial {tid}; "
                f"reported keys: {sorted(result)}"
            )
        now = float(result[self._time_attr])
        last = self._progress.get(tid, 0.0)
        self._consumed += now - last if now > last else now  # now <= last: restarted
        self._progress[tid] = now  # persisted with the next decision (no write per result)
        if tid in self._queue:
            self._queue.remove(tid)
        job = self._jobs.get(tid)
        if job is None:
            # Not scheduled by the core (a trial Ray started on its own): keep it for later.
            return TrialScheduler.STOP if self._done else TrialScheduler.PAUSE
        if now < job.budget:
            return TrialScheduler.CONTINUE
        if self._metric not in result:
            raise ValueError(
                f"metric {self._metric!r} is missing from the result of trial {tid} at "
                f"{self._time_attr}={now:g}; reported keys: {sorted(result)}"
            )
        del self._jobs[tid]
        assert self._hb is not None
        self._hb.tell(job, float(result[self._metric]))
        self._dirty = True
        self._pump(tune_controller)
        if tid in self._jobs:  # promoted right away: keeps running from where it is
            if tid in self._queue:
                self._queue.remove(tid)
            return TrialScheduler.CONTINUE
        if self._done:
            self._stop_idle(tune_controller, exclude=tid)
            return TrialScheduler.STOP
        return TrialScheduler.PAUSE

    def on_trial_complete(
        self, tune_controller: TuneController, trial: Trial, result: dict
    ) -> None:
        tid = trial.trial_id
        if self._stopping or self._done:
            return  # our own stop at the end of the last level: the trial stays reusable
        # Terminated in this run (its trainable returned, a stopper, a user): it cannot train
        # again in this run (_route fails its jobs) but a resumed run may continue it.
        if tid in self._free:
            self._free.remove(tid)
        if tid in self._queue:
            self._queue.remove(tid)
        job = self._jobs.pop(tid, None)
        if job is not None:
            # Finished (its trainable returned) or stopped before reaching the rung budget.
            logger.info(
                "trial %s ended before reaching budget %s: leaves its bracket", tid, job.budget
            )
            self._fail(job)
            self._pump(tune_controller)

    def on_trial_error(self, tune_controller: TuneController, trial: Trial) -> None:
        tid = trial.trial_id
        if trial.should_recover():
            # Ray retries it (max_failures) and re-adds the same object: keep its job.
            return
        job = self._jobs.pop(tid, None)
        self._mark_dead(tid)
        if job is not None:
            self._fail(job)
        self._pump(tune_controller)

    def on_trial_remove(self, tune_controller: TuneController, trial: Trial) -> None:
        if self._stopping:
            return
        self.on_trial_complete(tune_controller, trial, {})

    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        self._pump(tune_controller)
        if self._done:
            self._stop_idle(tune_controller)
            return None
        for tid in list(self._queue):
            trial = self._trials.get(tid)
            if trial is None or trial.status in (Trial.ERROR, Trial.TERMINATED):
                self._queue.remove(tid)
                continue
            if trial.status == Trial.PAUSED:
                return trial
        return None

    def debug_string(self) -> str:
        head = (
            f"Using IterativeDeepeningHyperBand ({self._variant}, eta={self._eta}, "
            f"max_t levels={self._ladder}, level={self._level}): "
            f"{self._time_attr} trained={self._consumed:g}, stopped={self._n_stopped}"
        )
        if self._hb is None:
            return head
        lines = [head]
        ledger = self._hb.ledger
        lines.append(
            f"  core ledger: full-charge={ledger.full_charge:g}, "
            f"continuation={ledger.continuation:g}, evaluations={ledger.n_evaluations}"
        )
        for b in self._hb.summary():
            rungs = ", ".join(
                f"r={self._hb.schedule.budget(b['s'], i)}:{n}"
                for i, n in enumerate(b["rung_sizes"])
            )
            state = "done" if b["done"] else ("open" if b["opened"] else "not opened")
            lines.append(
                f"  bracket {b['bracket']} (s={b['s']}, n={b['n']}, sampled={b['sampled']}, "
                f"failed={b['failed']}, {state}): rung {b['rung']} at r={b['rung_budget']}; "
                f"members per rung [{rungs}]"
            )
        lines.append(
            f"  trials: {len(self._jobs)} with a job, {len(self._free)} not used yet, "
            f"{len(self._dead)} gone"
        )
        return "\n".join(lines)

    def save(self, checkpoint_path: str) -> None:
        """Write the scheduler state (Ray does not call this; the state file is kept current)."""
        self._write_state(checkpoint_path)

    def restore(self, checkpoint_path: str) -> None:
        """Load a state written by :meth:`save` (before any trial was added)."""
        self._load_state(checkpoint_path)

    # ------------------------------------------------------------------ core plumbing
    def _ensure_core(self, trial: Trial) -> None:
        if self._hb is not None:
            return
        if not self._metric or not self._mode:
            raise ValueError(
                f"{type(self).__name__} needs `metric` and `mode`: pass them to the scheduler "
                f"or to tune.run/TuneConfig (got metric={self._metric!r}, mode={self._mode!r})"
            )
        if self._state_path is None:
            self._state_path = _default_state_path(trial)
        if self._state_path and os.path.exists(self._state_path):
            self._load_state(self._state_path)
            logger.info("IDHB scheduler continues from %s", self._state_path)
        else:
            self._hb = IterativeDeepeningHyperband(
                max_budget=self._ladder[0],
                eta=self._eta,
                variant=self._variant,
                min_budget=self._min_t,
                mode=self._mode,  # type: ignore[arg-type]
                seed=self._seed,
            )
            self._dirty = True

    def _route(self, job: Job) -> None:
        """Give ``job`` to the Ray trial of its configuration (or fail it if that trial is gone)."""
        tid = job.config.get("trial_id") if isinstance(job.config, Mapping) else None
        trial = self._trials.get(tid) if tid is not None else None
        if (
            tid is None
            or tid in self._dead
            or (trial is not None and trial.status in (Trial.ERROR, Trial.TERMINATED))
        ):
            self._fail(job)
            return
        self._dirty = True
        if trial is None:  # known from a saved state, not (yet) re-added by Ray
            self._orphans[tid] = job
            return
        self._jobs[tid] = job
        if tid not in self._queue:
            self._queue.append(tid)

    def _fail(self, job: Job) -> None:
        assert self._hb is not None
        self._hb.fail(job)
        self._dirty = True

    def _mark_dead(self, tid: str) -> None:
        self._dead.add(tid)
        if tid in self._free:
            self._free.remove(tid)
        if tid in self._queue:
            self._queue.remove(tid)
        self._dirty = True

    def _search_finished(self, tune_controller: TuneController) -> bool:
        search_alg = getattr(tune_controller, "search_alg", None)
        if search_alg is None:
            return True
        try:
            return bool(search_alg.is_finished())
        except Exception:  # pragma: no cover - exotic search algorithms
            return False

    def _pump(self, tune_controller: TuneController, adding: bool = False) -> None:
        """Ask the core for every job it can give now, route them, deepen, persist.

        Promotions and re-evaluations come from ``ask_existing``; a configuration slot the core
        needs is filled with the next unused Ray trial through ``ask_new({"trial_id": ...})``.
        When no trial is left and the search algorithm is finished, the remaining slots are
        filled with empty configurations that fail at once (they leave their brackets).
        """
        hb = self._hb
        if hb is None or self._done:
            self._persist()
            return
        while True:
            job = hb.ask_existing()
            if job is not None:
                self._route(job)
                continue
            if hb.free_slots > 0 and self._free:
                tid = self._free.pop(0)
                self._used.add(tid)
                job = hb.ask_new({"trial_id": tid})
                if job is None:  # pragma: no cover - free_slots > 0 guarantees a slot
                    self._free.insert(0, tid)
                    break
                self._route(job)
                continue
            if not adding and self._search_finished(tune_controller):
                if self._orphans:
                    # Trials of the saved state that Ray did not restore: they leave.
                    for tid, job in list(self._orphans.items()):
                        del self._orphans[tid]
                        self._mark_dead(tid)
                        self._fail(job)
                    continue
                if hb.free_slots > 0:
                    if not self._warned_short:
                        logger.warning(
                            "ID-HB needs %d more configurations than Ray trials exist (they "
                            "leave their brackets); use num_samples >= %d",
                            hb.free_slots,
                            self.num_samples_needed(self._ladder[-1], self._eta, self._min_t),
                        )
                        self._warned_short = True
                    empty = hb.ask_new({"trial_id": None})
                    if empty is not None:
                        self._fail(empty)
                        continue
            if hb.finished:
                if self._level + 1 < len(self._ladder):
                    hb.deepen()
                    self._level += 1
                    self._dirty = True
                    logger.info("ID-HB deepens to R=%d", self._ladder[self._level])
                    continue
                self._done = True
                self._dirty = True
            break
        self._persist()

    def _stop_idle(self, tune_controller: TuneController, exclude: str | None = None) -> None:
        """After the last level: stop every trial that is not running (Ray then ends)."""
        if self._stopping:
            return
        self._stopping = True
        try:
            for tid, trial in list(self._trials.items()):
                if tid == exclude:
                    continue
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

    # ------------------------------------------------------------------ persistence
    def _persist(self) -> None:
        if self._dirty and self._state_path:
            self._write_state(self._state_path)
        self._dirty = False

    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state: the core's ``state_dict`` plus the trial mapping."""
        assert self._hb is not None
        return {
            "version": _STATE_VERSION,
            "params": {
                "time_attr": self._time_attr,
                "metric": self._metric,
                "mode": self._mode,
                "reduction_factor": self._eta,
                "variant": self._variant,
                "min_t": self._min_t,
                "seed": self._seed,
            },
            "ladder": self._ladder,
            "level": self._level,
            "done": self._done,
            "core": self._hb.state_dict(),
            "dead": sorted(self._dead),
            "progress": self._progress,
            "consumed": self._consumed,
        }

    def _write_state(self, path: str) -> None:
        if self._hb is None:
            return
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".idhb_", suffix=".tmp", dir=directory)
        try:
            text = json.dumps(self.state_dict(), separators=(",", ":"))  # one write: fast
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def _load_state(self, path: str) -> None:
        with open(path) as fh:
            state = json.load(fh)
        if state.get("version") != _STATE_VERSION:
            raise ValueError(f"unsupported IDHB scheduler state version in {path}")
        params = state["params"]
        mine = {
            "time_attr": self._time_attr,
            "metric": self._metric,
            "mode": self._mode,
            "reduction_factor": self._eta,
            "variant": self._variant,
        }
        for key, value in mine.items():
            if params[key] != value:
                raise ValueError(
                    f"{key}={value!r} differs from the saved experiment's {key}="
                    f"{params[key]!r} ({path}); use the same value to continue it"
                )
        self._hb = IterativeDeepeningHyperband.from_state_dict(state["core"])
        saved_ladder = [int(v) for v in state["ladder"]]
        level = int(state["level"])
        current = saved_ladder[level]
        # Continue the saved levels, then the larger values this scheduler asks for.
        targets = saved_ladder[level:] + [v for v in self._requested_max_t if v > saved_ladder[-1]]
        self._ladder = deepening_ladder(targets, self._eta, start=current)
        self._level = 0
        # Jobs handed out before the driver stopped stay pending in the core: re-route them
        # to their trials when Ray re-adds those.
        self._orphans = {}
        for job in self._hb.pending:
            tid = job.config.get("trial_id") if isinstance(job.config, Mapping) else None
            if tid is not None:
                self._orphans[tid] = job
        self._used = {
            cfg["trial_id"]
            for cfg in self._hb.configs.values()
            if isinstance(cfg, Mapping) and cfg.get("trial_id") is not None
        }
        self._dead = set(state["dead"])
        self._progress = {k: float(v) for k, v in state["progress"].items()}
        self._consumed = float(state["consumed"])
        self._done = False
        self._dirty = True


def _default_state_path(trial: Trial) -> str | None:
    """``<experiment dir>/idhb_scheduler.state`` when the storage is a local directory."""
    storage = getattr(trial, "storage", None)
    if storage is None:
        return None
    fs = getattr(storage, "storage_filesystem", None)
    exp = getattr(storage, "experiment_fs_path", None)
    if exp and fs is not None and getattr(fs, "type_name", "") == "local":
        return os.path.join(exp, STATE_FILE_NAME)
    staging = getattr(storage, "experiment_driver_staging_path", None)
    if staging:
        logger.warning(
            "experiment storage is not local: the IDHB state goes to %s; pass state_path= to "
            "continue after a killed driver",
            staging,
        )
        return os.path.join(staging, STATE_FILE_NAME)
    return None


def load_state_params(path: str | os.PathLike[str]) -> Mapping[str, Any]:
    """The scheduler parameters saved in a state file (used by the resume helper)."""
    with open(os.fspath(path)) as fh:
        state = json.load(fh)
    out = dict(state["params"])
    out["ladder"] = list(state["ladder"])
    out["level"] = int(state["level"])
    return out

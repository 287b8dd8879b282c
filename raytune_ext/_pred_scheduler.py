"""Ray Tune scheduler stopping trials with the Pred rule of AdaCent / Enhanced-AdaCent.

A thin event translator: every stop decision is taken by the framework-free core
:class:`uvp_plugins.adacent.pred.PredStoppingRule` (Bateni et al., *Budget Allocation for Unknown
Value Functions in a Lipschitz Space*, Alg. 6/7/8 and Sec. 4). This module only feeds Ray results
to the rule (``observe``), asks it (``decide``), stops trials at ``max_t`` and journals every
observation (:mod:`raytune_ext._journal`) so that ``Tuner.restore`` continues with the same rule
state: Ray never calls ``TrialScheduler.save/restore``.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ray.tune.experiment import Trial
from ray.tune.schedulers.trial_scheduler import FIFOScheduler, TrialScheduler

from raytune_ext._journal import Journal, save_checkpoint_json
from raytune_ext._ray_trials import restore_progress
from raytune_ext._result_logs import row_key
from raytune_ext._scheduler import _default_state_path
from raytune_ext._search_properties import (
    SearchPropertiesMixin,
    check_result_keys,
    check_step_attr,
    missing_metric_or_mode,
    total_trials,
)
from uvp_plugins.adacent.pred import (
    DEFAULT_PREDICTOR,
    DELTA,
    KEEP_FRACTION,
    TAIL_FRACTION,
    PredStoppingRule,
)
from uvp_plugins.contract import StateFormat
from uvp_plugins.validation import (
    check_bool,
    check_int,
    check_reported_number,
    check_reported_step,
)

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController

__all__ = ["PredStoppingScheduler", "PRED_STATE_FILE_NAME"]

logger = logging.getLogger(__name__)

#: name of the scheduler's state inside the experiment directory (snapshot; its log of later
#: records is ``pred_scheduler.state.log<generation>``; not ``*.json``, see the journal)
PRED_STATE_FILE_NAME = "pred_scheduler.state"
#: the format of the scheduler's state (:mod:`uvp_plugins.contract`); version 1 is the only
#: one written so far
STATE_FORMAT = StateFormat("uvp-ray-pred-scheduler", 1)
#: records after which the journal is compacted into a new snapshot
_COMPACT_EVERY = 20_000


class PredStoppingScheduler(SearchPropertiesMixin, FIFOScheduler):
    """Stop a trial when its optimistic learning-curve prediction at ``max_t`` cannot beat the best
    value another trial has reached: the Pred rule of AdaCent / Enhanced-AdaCent (Bateni et al.,
    *Budget Allocation for Unknown Value Functions in a Lipschitz Space*, Alg. 7 line 9 and Alg. 8
    line 11), asynchronous and per trial, used like Ray's ``MedianStoppingRule``::

        keep x  iff  PRED(H(x)) >= max_x' H_last(x')

    ``PRED`` is the last-slope extrapolation of Alg. 6 (default, ``predictor="last_slope"``) or the
    tail fit of Sec. 4 (``"tail"``, a line through the last 30 % of the monotone envelope; the
    default before 2026-11-26: a state saved with it resumes only with ``predictor="tail"``). Every
    decision comes from :class:`uvp_plugins.adacent.pred.PredStoppingRule`; this class holds no
    formula. Trials run first-in-first-out (``FIFOScheduler``); after each result:

    * ``result[time_attr]`` is the step (resource units ``0..max_t``, an integer) and
      ``result[metric]`` the value; both are given to the rule (``observe``);
    * a trial at ``time_attr >= max_t`` is stopped (it has its full budget, as ASHA's ``max_t``);
    * steps below ``floor(delta * max_t)`` are never stopped (Enhanced-AdaCent's exploration
      depth);
    * otherwise the trial is stopped when the rule says so (``decide``): its prediction at
      ``max_t`` is worse than the best value any other trial has reached so far (by
      monotonicity every reported value is a lower bound on that trial's final value);
    * or, by default, when its value at its step is not among the best half of the values the
      trials reported at that step (once at least three others reported it): the median cut of
      Ray's ``MedianStoppingRule`` and successive halving, added to Pred since 2026-11-26 (not in
      the paper; ``keep_fraction=None`` is Pred alone, and a state saved before resumes only with
      it). Why: :mod:`uvp_plugins.adacent.pred`;
    * and, with ``n_probes > 0``, when it is one of the first ``n_probes`` trials to reach the
      depth (at its first step at or past the depth, fewer than ``n_probes`` other trials
      reported a value there): the probe phase that Optuna's ``PredPruner`` uses with our guided
      sampler (not in the paper). Off by default here, because a Ray scheduler is not told the
      searcher; with :class:`~raytune_ext.EnhancedAdaCentSearch` pass ``n_probes=10`` (its
      ``guidance.n_init``; on three lcbench tasks better in 10 of 15 runs, worse in 1,
      ``docs/results/ray_pred.md``). A state saved before the phase existed reads as
      ``n_probes=0``. ``n_probes`` at or above the number of trials of the experiment (when
      Ray knows it) would stop every trial at the depth: it is refused with a ``ValueError``
      when the first trial is added, before any trial runs.

    **Bad values (the core's documented behaviour).** Non-finite metrics (``nan``, ``+-inf``) enter
    neither the trial's history nor the best value; they still count as a step. A trial past the
    exploration depth without any finite value is stopped (it diverged). A result without
    ``time_attr`` or ``metric`` is skipped, as Ray's schedulers do. A metric that is not a number,
    or a ``time_attr`` value that is not an int ``>= 0``, stops the run at the first such result
    (``TypeError``/``ValueError`` naming the key, the trial and the accepted type); Ray's times
    in seconds (``time_total_s``, ``time_this_iter_s``, ``time_since_restore``) are refused as
    ``time_attr`` when the scheduler is constructed (use a counter such as
    ``training_iteration``).

    **Errored, removed and retried trials keep their results.** The values a trial reported were
    reached before it errored (an out-of-memory worker, a lost node): they stay lower bounds on
    what that configuration attains and keep counting as the best value others must beat. A trial
    Ray retries (``max_failures``) continues its curve; re-reported steps are ignored (the first
    finite value of a step is kept, as in the core).

    **State and kill safety.** Every result is appended to a journal beside ``state_path``
    (default ``<experiment dir>/pred_scheduler.state``: a snapshot with the core's JSON state
    plus a memory-mapped log, :mod:`raytune_ext._journal`) before the decision is returned, in
    one record: what the rule observed, whether the scheduler stopped the trial, and the whole
    result row; trials that ended otherwise are journaled too. A resumed experiment
    (``Tuner.restore``, ``tune.run(resume=...)``, also after a killed driver, ``kill -9``
    included) continues from it with the same rule state, so the decisions are those of an
    uninterrupted run on the same results. Ray's own experiment snapshot (every 10 s or more)
    can be older than the journal; then, when Ray re-adds a trial: a trial stopped (or ended)
    before the driver died stays stopped with the result it was stopped with (Ray restored it
    as unfinished and would run it again), the others continue from their latest journaled
    checkpoint, and every trial's result history (``result.json``, ``progress.csv``, what
    ``get_dataframe()`` reads) is completed with the rows Ray had not yet uploaded
    (:mod:`raytune_ext._result_logs`), its ``Result.metrics`` being its last row. The rows of
    compacted logs are kept in ``<state_path>.archive``. :meth:`save` / :meth:`restore` write
    and read the rule's JSON state to a file of your choice.

    Example (local two-CPU cluster, quiet):

        >>> import logging, os, tempfile
        >>> os.environ.update(TUNE_DISABLE_AUTO_CALLBACK_LOGGERS="1", RAY_AIR_NEW_OUTPUT="0")
        >>> import ray
        >>> from ray import tune
        >>> from raytune_ext import PredStoppingScheduler
        >>> def trainable(config):
        ...     for epoch in range(1, 21):   # accuracy saturating at 1 - |lr - 0.3|
        ...         tune.report({"acc": (1 - abs(config["lr"] - 0.3)) * (1 - 0.7 ** epoch)})
        >>> started = not ray.is_initialized()
        >>> if started:
        ...     _ = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
        ...                  logging_level=logging.ERROR)
        >>> sched = PredStoppingScheduler(max_t=20, delta=0.1)
        >>> tuner = tune.Tuner(
        ...     trainable,
        ...     param_space={"lr": tune.grid_search([0.3, 0.9, 0.0, 0.6])},
        ...     tune_config=tune.TuneConfig(metric="acc", mode="max", scheduler=sched,
        ...                                 max_concurrent_trials=1),  # one order: one outcome
        ...     run_config=tune.RunConfig(storage_path=tempfile.mkdtemp(), verbose=0),
        ... )
        >>> results = tuner.fit()
        >>> {r.config["lr"]: r.metrics["training_iteration"] for r in results}  # epochs trained
        {0.3: 20, 0.9: 20, 0.0: 20, 0.6: 7}
        >>> len(sched.stopped_trials)   # the calibrated rule waits for 3 trials that reached 20
        1
        >>> if started:
        ...     ray.shutdown()

    Args:
        time_attr: result key counting the resource units a trial has trained (integer,
            monotone within a trial): ``"training_iteration"`` by default.
        metric: result key of the objective; ``None`` takes it from ``tune.TuneConfig`` /
            ``tune.run(metric=...)`` (Ray's ``"_metric"`` if only a mode is given).
        mode: ``"min"`` or ``"max"``; ``None`` takes it from ``tune.TuneConfig`` /
            ``tune.run(mode=...)``.
        max_t: the full budget ``T`` in ``time_attr`` units (an int ``>= 2``): trials stop there
            and predictions extrapolate to it.
        delta: exploration fraction in ``(0, 1)``: no stop before ``floor(delta * max_t)``
            (the paper uses 0.1).
        predictor: ``"last_slope"`` (Alg. 6, default) or ``"tail"`` (tail fit, Sec. 4).
        fraction: share of the history the tail fit uses, in ``(0, 1]`` (paper: 0.3).
        keep_fraction: the cut: past the depth a trial continues only while its value at its
            step is among the best ``keep_fraction`` of the values reported there (a float in
            ``(0, 1]``; default 0.5, the median); ``None``: Pred alone (the paper).
        n_probes: the probe phase: a trial stops at its first step at or past the depth while
            fewer than ``n_probes`` other trials reported a finite value there (an int ``>= 0``;
            default 0: no probe phase).
        calibrate: ``True`` (default since issue 29): the calibrated rule of
            :class:`~uvp_plugins.adacent.pred.PredStoppingRule` - nothing stops before a trial
            reached ``max_t``, cuts and PRED scaled by how well values ranked like final values
            on the trials that reached ``max_t``; ``False``: the issue-17 rule (PRED against the
            best value any trial reached, plus the median cut).
        state_path: where to journal the state; default in the experiment directory.
        fsync: ``fsync`` every journal record (survives a machine crash, costs a disk flush per
            result); by default records survive a killed process only.
    """

    #: the format of its state (``save``/``restore`` and the journal)
    STATE_FORMAT: ClassVar[StateFormat] = STATE_FORMAT

    # decisions are taken per result, in the order Ray reports them
    _supports_buffered_results = False

    def __init__(
        self,
        time_attr: str = "training_iteration",
        metric: str | None = None,
        mode: str | None = None,
        max_t: int | None = None,
        delta: float = DELTA,
        predictor: str = DEFAULT_PREDICTOR,
        fraction: float = TAIL_FRACTION,
        keep_fraction: float | None = KEEP_FRACTION,
        n_probes: int = 0,
        calibrate: bool = True,
        state_path: str | os.PathLike[str] | None = None,
        fsync: bool = False,
    ) -> None:
        super().__init__()
        check_result_keys(time_attr, metric, mode)
        check_step_attr(time_attr, type(self).__name__)
        if max_t is None:
            raise TypeError("max_t (the full budget T in time_attr units, an int >= 2) is required")
        self._max_t = check_int("max_t", max_t, low=2)
        self._time_attr = time_attr
        self._metric = metric
        self._mode = mode
        self._fsync = check_bool("fsync", fsync)
        self._state_path = os.fspath(state_path) if state_path is not None else None
        # the core validates delta, predictor, fraction, keep_fraction and n_probes (errors name
        # them); mode is a placeholder until set_search_properties/on_trial_add know it
        self._rule = PredStoppingRule(
            self._max_t,
            delta,
            predictor,
            fraction,
            mode=mode or "max",
            keep_fraction=keep_fraction,
            n_probes=n_probes,
            calibrate=calibrate,
        )
        self._added: dict[str, None] = {}  # trial ids in the order Ray first added them
        self._stopped: dict[str, int] = {}  # trial id -> step at which the rule stopped it
        self._ended: set[str] = set()  # trials stopped by this scheduler or ended otherwise
        self._journal: Journal | None = None
        self._started = False
        self._last_key: dict[str, Any] = {}  # trial id -> identity of its last journaled row
        #: a resumed experiment: journaled rows per trial (until Ray re-adds the trial)
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._to_stop: dict[str, Trial] = {}  # ended before a killed driver, restored unfinished

    # ------------------------------------------------------------------ read-only views
    @property
    def rule(self) -> PredStoppingRule:
        """The core rule (its ``state_dict()`` is the JSON state this scheduler persists)."""
        return self._rule

    @property
    def max_t(self) -> int:
        """The full budget ``T``."""
        return self._max_t

    @property
    def stopped_trials(self) -> dict[str, int]:
        """Trials the rule stopped early: ``{trial_id: step}`` (not those that reached
        ``max_t``)."""
        return dict(self._stopped)

    @property
    def state_path(self) -> str | None:
        """Where the state is journaled (known once the first trial was added)."""
        return self._state_path

    def __getstate__(self) -> dict[str, Any]:
        # Ray pickles the scheduler into the experiment (tuner.pkl) when it starts; an open
        # journal stays behind, and a copy re-reads the journal when its first trial is added.
        state = dict(self.__dict__)
        state["_journal"] = None
        state["_started"] = False
        state["_rows"], state["_to_stop"], state["_last_key"] = {}, {}, {}
        return state

    # ------------------------------------------------------------------ Ray API
    def _search_properties_changed(self) -> None:
        if self._mode:
            self._rule.mode = self._mode

    def on_trial_add(self, tune_controller: TuneController, trial: Trial) -> None:
        self._ensure_started(trial, tune_controller)
        tid = trial.trial_id
        if tid not in self._added:
            self._added[tid] = None
            self._record(["a", tid])
        rows = self._rows.pop(tid, None)
        if rows:
            # A resumed experiment: Ray's snapshot and its per-trial history may be older than
            # the journal (results of the seconds before a driver was killed).
            latest = next(
                (r["checkpoint_dir_name"] for r in reversed(rows) if r.get("checkpoint_dir_name")),
                None,
            )
            restore_progress(trial, {}, latest, self._time_attr, rows)
            self._last_key[tid] = row_key(rows[-1])
        if tid in self._ended and trial.status in (Trial.PENDING, Trial.PAUSED):
            # It ended before the driver was killed, after Ray's last snapshot: it stays ended
            # with its last result. Held back now (Ray starts PENDING trials on its own) and
            # stopped through Ray at its next choose_trial_to_run (once Ray tracks it).
            trial.set_status(Trial.PAUSED)
            self._to_stop[tid] = trial

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: dict) -> str:
        tid = trial.trial_id
        key = row_key(result)
        if key is not None and key == self._last_key.get(tid):
            # Ray repeats a trial's last result when its trainable returns: already decided on
            return TrialScheduler.CONTINUE
        self._last_key[tid] = key
        observed = self._observe(trial, result)
        decision = TrialScheduler.CONTINUE
        if observed is not None:
            step = observed[0]
            if step >= self._max_t:
                decision = TrialScheduler.STOP  # the full budget: nothing left to decide
            elif self._rule.decide(tid):
                self._stopped[tid] = step
                decision = TrialScheduler.STOP
                logger.debug(
                    "PredStoppingScheduler: stopping trial %s at %s=%d", tid, self._time_attr, step
                )
        stop = decision == TrialScheduler.STOP
        if stop:
            self._ended.add(tid)
        self._record_result(tid, observed, stop, result)
        return decision

    def on_trial_complete(
        self, tune_controller: TuneController, trial: Trial, result: dict
    ) -> None:
        # Usually the last result was already observed; one Ray did not show the scheduler (a
        # stopper ended the trial) is observed here.
        tid = trial.trial_id
        key = row_key(result) if result else None
        if key is not None and key != self._last_key.get(tid):
            self._last_key[tid] = key
            self._record_result(tid, self._observe(trial, result), False, result)
        if tid not in self._ended:
            self._ended.add(tid)
            self._record(["t", tid])

    def on_trial_error(self, tune_controller: TuneController, trial: Trial) -> None:
        pass  # its reported values stay (class docstring: errored trials keep their results)

    def on_trial_remove(self, tune_controller: TuneController, trial: Trial) -> None:
        pass  # as on_trial_error

    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        for trial in self._to_stop.values():
            if trial.status in (Trial.PENDING, Trial.PAUSED):
                tune_controller.stop_trial(trial)
        self._to_stop.clear()
        return super().choose_trial_to_run(tune_controller)

    def debug_string(self) -> str:
        return (
            f"Using PredStoppingScheduler (predictor={self._rule.predictor}, "
            f"keep_fraction={self._rule.keep_fraction}, n_probes={self._rule.n_probes}, "
            f"calibrate={self._rule.calibrate}, "
            f"max_t={self._max_t}, "
            f"no stop before {self._time_attr}={self._rule.exploration_steps}): "
            f"num_stopped={len(self._stopped)}."
        )

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state: the core rule's ``state_dict`` (the observed curves), the
        scheduler's parameters, the trials in the order Ray added them and the stops."""
        return STATE_FORMAT.stamp({
            "params": self._params(),
            "rule": self._rule.state_dict(),
            "trials": list(self._added),
            "stopped": dict(self._stopped),
            "ended": sorted(self._ended),
        })

    def save(self, checkpoint_path: str) -> None:
        """Write :meth:`state_dict` as JSON to ``checkpoint_path`` (``TrialScheduler.save``)."""
        save_checkpoint_json(checkpoint_path, self.state_dict())

    def restore(self, checkpoint_path: str) -> None:
        """Load a state written by :meth:`save` (``TrialScheduler.restore``). Its parameters
        must be this scheduler's (``ValueError`` otherwise); the trials and curves replace
        the current ones."""
        with open(checkpoint_path, encoding="utf-8") as fh:
            state = json.load(fh)
        self._load_state(state, [], [])
        if self._journal is not None:
            self._journal.write_snapshot(self.state_dict())

    # ------------------------------------------------------------------ plumbing
    def _params(self) -> dict[str, Any]:
        return {"time_attr": self._time_attr, "metric": self._metric}

    def _ensure_started(self, trial: Trial, tune_controller: TuneController) -> None:
        if self._started:
            return
        if not self._metric or not self._mode:
            raise missing_metric_or_mode(self, self._metric, self._mode)
        self._rule.mode = self._mode
        n_trials = total_trials(getattr(tune_controller, "search_alg", None))
        if n_trials is not None:
            self._rule.check_trials_beyond_probes(n_trials)
        if self._state_path is None:
            self._state_path = _default_state_path(trial, PRED_STATE_FILE_NAME)
        journal = Journal(self._state_path, fsync=self._fsync) if self._state_path else None
        if journal is not None and journal.exists():
            state, records = journal.load()
            if trial.trial_id in state.get("trials", []) or ["a", trial.trial_id] in records:
                # a resumed experiment: continue it (rows of earlier runs are in the archive)
                self._load_state(state, journal.archived_records(), records)
                logger.info("PredStoppingScheduler continues from %s", self._state_path)
            else:
                kept = journal.set_aside()
                logger.warning(
                    "%s holds the state of an earlier experiment whose trials are not in this "
                    "run: starting afresh (the old state is kept as %s)",
                    self._state_path,
                    kept,
                )
        self._journal = journal
        self._started = True
        if journal is not None:
            journal.write_snapshot(self.state_dict())  # fresh, or compacted after a resume

    def _load_state(
        self,
        state: Mapping[str, Any],
        archived: list[list[Any]],
        records: list[list[Any]],
    ) -> None:
        """Continue ``state`` (a snapshot) and the ``records`` journaled after it; ``archived``
        (the records of compacted logs) only gives result rows."""
        state = STATE_FORMAT.read(state)
        # the rule as saved (a state from before a parameter existed reads as made without it)
        rule = PredStoppingRule.from_state_dict(state["rule"])
        mine = {**self._params(), **self._rule.state_dict()["params"]}
        saved = {**state["params"], **rule.state_dict()["params"]}
        if self._mode is None:
            mine.pop("mode")
            saved.pop("mode", None)
        differ = {k: (saved.get(k), v) for k, v in mine.items() if saved.get(k) != v}
        if differ:
            raise ValueError(
                "the saved state was made with other scheduler arguments (saved, given): "
                + ", ".join(f"{k}={a!r} vs {b!r}" for k, (a, b) in sorted(differ.items()))
            )
        added = {str(t): None for t in state["trials"]}
        stopped = {str(t): int(s) for t, s in state["stopped"].items()}
        ended = {str(t) for t in state.get("ended", stopped)}
        rows: dict[str, list[dict[str, Any]]] = {}
        for rec in archived:
            row = _row_of(rec)
            if row is not None:
                rows.setdefault(rec[1], []).append(row)
        for rec in records:
            kind = rec[0]
            row = _row_of(rec)
            if row is not None:
                rows.setdefault(rec[1], []).append(row)
            if kind == "o":
                rule.observe(rec[1], int(rec[2]), float(rec[3]))
                if len(rec) > 4 and rec[4]:  # stopped with this result
                    ended.add(rec[1])
                    if int(rec[2]) < self._max_t:
                        stopped[rec[1]] = int(rec[2])
            elif kind == "a":
                added[rec[1]] = None
            elif kind == "s":  # a stop, as written before stops went into "o"
                stopped[rec[1]] = int(rec[2])
                ended.add(rec[1])
            elif kind == "t":
                ended.add(rec[1])
            elif kind != "h":
                raise ValueError(f"unknown record {rec!r} in the state of {self._state_path}")
        self._rule, self._added, self._stopped, self._ended = rule, added, stopped, ended
        self._rows = rows
        self._mode = rule.mode

    def _observe(self, trial: Trial, result: Mapping[str, Any]) -> tuple[int, float] | None:
        """Give ``result`` to the rule; its step and value, or None if it lacks ``time_attr`` or
        ``metric`` (a value of the wrong type is an error naming the key and the trial)."""
        metric = self._metric
        if metric is None or self._time_attr not in result or metric not in result:
            return None
        tid = trial.trial_id
        step = check_reported_step(self._time_attr, result[self._time_attr], f"trial {tid}")
        value = check_reported_number(metric, result[metric], f"trial {tid}")
        self._rule.observe(tid, step, value)
        return step, value

    def _record_result(
        self,
        tid: str,
        observed: tuple[int, float] | None,
        stop: bool,
        result: Mapping[str, Any],
    ) -> None:
        """Journal one result in one record: the observation, whether the scheduler stopped the
        trial with it, and the row (``done`` as Ray logs it) for Ray's history."""
        row = {**result, "done": True} if stop else result
        if observed is None:
            self._record(["h", tid, row])
            return
        step, value = observed
        shown = value if math.isfinite(value) else str(value)
        self._record(["o", tid, step, shown, int(stop), row])

    def _record(self, record: list[Any]) -> None:
        journal = self._journal
        if journal is None:
            return
        journal.append(record)
        if journal.n_records >= _COMPACT_EVERY:
            journal.write_snapshot(self.state_dict())


def _row_of(record: list[Any]) -> dict[str, Any] | None:
    """The result row a journal record carries (``["o", ..., row]``, ``["h", trial, row]``)."""
    kind = record[0]
    if kind == "o" and len(record) > 5 and isinstance(record[5], dict):
        return record[5]
    if kind == "h" and isinstance(record[2], dict):
        return record[2]
    return None

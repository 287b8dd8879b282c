"""IterativeDeepeningHyperbandPruner: Hyperband for Optuna that a study can continue at a larger
``max_resource`` (Brandt et al., *Iterative Deepening Hyperband*, Alg. 1-5)."""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import optuna
from optuna.pruners import BasePruner
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_ext._idhb_replay import (
    RECORD_ATTR,
    RECORD_FORMAT,
    REENTRY_ATTR,
    Replay,
    StudyParams,
    TrialFacts,
    configuration_of,
    records,
    replay,
    trial_facts,
)
from uvp_plugins.hyperband import VARIANTS, IterativeDeepeningHyperband, Job
from uvp_plugins.hyperband.schedule import check_hyperband_args
from uvp_plugins.validation import check_choice, check_int

if TYPE_CHECKING:
    from optuna.study import Study

__all__ = ["IterativeDeepeningHyperbandPruner"]

logger = logging.getLogger(__name__)

#: seconds between two looks at the storage while a trial without work waits
_POLL_SECONDS = 0.2
#: a trial without work waits at most this long for running trials to free work
_MAX_WAIT_SECONDS = 120.0


class IterativeDeepeningHyperbandPruner(BasePruner):
    """Hyperband whose ``max_resource`` can be raised later, continuing the same study.

    Optuna's :class:`~optuna.pruners.HyperbandPruner` runs Hyperband's brackets of Successive
    Halving for one ``max_resource``; changing it maps earlier trials to other brackets. This
    pruner runs the brackets of Iterative-Deepening Hyperband (Brandt et al., Alg. 1-5): a study
    run with ``max_resource=9`` can be loaded later with ``max_resource=27`` (``eta * R``, or
    ``eta**k * R``) and goes on where it stopped (a run left unfinished at 9 is completed first,
    then deepened, as in Alg. 1). Every earlier trial keeps its bracket and its rung results;
    every bracket gains one rung and new configurations, a new bracket at the new
    ``max_resource`` runs last, and ``variant`` decides which earlier configurations re-enter:

    * ``"efficient"`` (eID-HB, default): configurations promoted before are promoted again, the
      free places go to the best of the others. Continuing 9 -> 27 costs exactly one Hyperband
      at 27 (Brandt et al., Sec. 5.3);
    * ``"preserving"`` (pID-HB): configurations evaluated at a rung earlier compete there again;
    * ``"discarding"`` (dID-HB): promotions are recomputed; on the same configurations the
      decisions equal a fresh Hyperband at the new ``max_resource``.

    Every decision is taken by the framework-free core
    :class:`uvp_plugins.hyperband.IterativeDeepeningHyperband` (integer bracket arithmetic: rung
    budgets ``floor(R / eta**(s - i))``, pool sizes ``ceil((s_max + 1) eta**s / (s + 1))``).

    **Optuna's trial-at-a-time model.** The brackets are *synchronous*, as in the paper: a rung's
    best ``floor(n_i / eta)`` are promoted when all its results are in. A trial that reaches its
    rung budget while the rung is incomplete is pruned (it is *paused*, not lost); when the rung
    completes, each promoted configuration that is not running any more gets a *re-entry trial*:
    a new trial with the same parameters, enqueued like :meth:`~optuna.study.Study.enqueue_trial`
    (Optuna cannot resume a finished trial), which continues training the configuration. The
    trial that completes a rung and is promoted itself goes on in place. Use
    :meth:`configuration_id` to name checkpoints: re-entry trials of a configuration share it, so
    an objective that saves and loads checkpoints trains each configuration exactly as the core's
    continuation ledger says (with a checkpoint, a promotion from ``r`` to ``r'`` trains
    ``r' - r`` steps); without checkpoints a re-entry retrains from step 1.
    Hence ``PRUNED`` means "stopped at a rung"; ``COMPLETE`` trials reached the last rung of their
    bracket. When every bracket at ``max_resource`` is complete, the pruner calls
    :meth:`~optuna.study.Study.stop` (``study.optimize(objective)`` needs no ``n_trials``);
    :meth:`finished` tells the same to ask-and-tell loops.

    **Steps.** ``step`` counts resource units trained (1 after the first epoch). A rung's result is
    the value reported at the first step ``>= r_i``; a non-finite value, or a trial that ends
    before ``r_i`` (failed, or pruned by the objective), takes its configuration out of its bracket
    (not replaced). The objective should train up to ``max_resource`` steps.

    **Trials without work.** New trials beyond the brackets' pools have no work: calling
    ``trial.should_prune()`` once *before* training (optional) prunes them before they train (it
    also prunes a re-entry that another process enqueued twice). With parallel workers, such a
    trial waits (polling the storage every 0.2 s, at most 120 s) until running trials free work,
    so that workers do not spin through empty trials; meanwhile it fails stale trials of a storage
    with heartbeats, as ``study.optimize`` does between trials.

    **Parallel use and restarts.** The pruner holds no bracket state: each decision replays the
    study's trials, in trial-number order, into the core (see :mod:`optuna_ext._idhb_replay`), and
    the little it writes lives in trial system attributes (the parameters, the rungs a trial
    continued into, re-entry trials). So ``n_jobs>1``, several processes on one Journal,
    PostgreSQL (or another RDB server that locks rows) or gRPC-proxy storage, and a restart from
    storage work. Not parallel
    workers on SQLite: Optuna may hand one enqueued trial to two workers there
    (optuna/optuna#4002), which re-entry trials rely on; the pruner warns when it sees it. Trials of a killed process stay ``RUNNING`` and
    hold their brackets until they are failed: use a storage with heartbeats
    (``RDBStorage(heartbeat_interval=..., grace_period=...)``); with
    ``RetryHeartbeatStaleTrialCallback`` the retry takes over the killed trial's work.

    **Samplers.** Samplers see the whole study (Optuna gives a bracket-filtered view only to its own
    ``HyperbandPruner``, whose brackets are independent asynchronous Successive Halvings). Re-entry
    trials take their parameters from the queue, not from the sampler.

    Example:
        >>> import optuna
        >>> from optuna_ext import IterativeDeepeningHyperbandPruner
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> checkpoints = {}  # configuration id -> (steps trained, value)
        >>> def objective(trial):
        ...     x = trial.suggest_float("x", 0.0, 1.0)
        ...     key = IterativeDeepeningHyperbandPruner.configuration_id(trial)
        ...     done, loss = checkpoints.get(key, (0, 0.0))
        ...     for step in range(done + 1, trial.study.pruner.max_resource + 1):
        ...         loss = (x - 0.3) ** 2 + 1.0 / step          # one step of training
        ...         checkpoints[key] = (step, loss)
        ...         trial.report(loss, step)
        ...         if trial.should_prune():
        ...             raise optuna.TrialPruned()
        ...     return loss
        >>> study = optuna.create_study(
        ...     sampler=optuna.samplers.RandomSampler(seed=0),
        ...     pruner=IterativeDeepeningHyperbandPruner(max_resource=9, reduction_factor=3),
        ... )
        >>> study.optimize(objective)   # stops when Hyperband at 9 is done
        >>> pruner = IterativeDeepeningHyperbandPruner(max_resource=27, reduction_factor=3)
        >>> study = optuna.load_study(study_name=study.study_name, storage=study._storage,
        ...                           sampler=optuna.samplers.RandomSampler(seed=1), pruner=pruner)
        >>> study.optimize(objective)   # continues the same brackets up to 27
        >>> core = pruner.core(study)
        >>> core.ledger.continuation == sum(step for step, _ in checkpoints.values())
        True
        >>> pruner.best_trial(study).last_step
        27

    Args:
        min_resource: the smallest rung budget, ``r_min`` (int >= 1).
        max_resource: ``R``, the largest step a trial trains to (int >= ``reduction_factor *
            min_resource``). To continue a study, ``R0 * reduction_factor**k`` with ``R0`` the
            ``max_resource`` the study started with.
        reduction_factor: ``eta`` (int >= 2); a rung keeps ``floor(n_i / eta)`` configurations.
        variant: ``"efficient"``, ``"preserving"`` or ``"discarding"`` (see above).
    """

    def __init__(
        self,
        min_resource: int = 1,
        max_resource: int | None = None,
        reduction_factor: int = 3,
        variant: str = "efficient",
    ) -> None:
        if max_resource is None:
            raise TypeError(
                "max_resource is required: the largest step a trial trains to (Hyperband's R), "
                "an int >= reduction_factor * min_resource"
            )
        min_resource = check_int("min_resource", min_resource, low=1)
        reduction_factor = check_int("reduction_factor", reduction_factor, low=2)
        max_resource = check_int(
            "max_resource", max_resource, low=reduction_factor * min_resource
        )
        check_hyperband_args(max_resource, reduction_factor, min_resource)
        self._min_resource = min_resource
        self._max_resource = max_resource
        self._eta = reduction_factor
        self._variant = check_choice("variant", variant, VARIANTS)
        self._lock = threading.RLock()
        # (storage, trial_id) -> budget of the job the trial holds (trials of this process)
        self._budget: dict[tuple[int, int], int] = {}
        self._final: set[tuple[int, int]] = set()  # trials that reached their last rung
        self._warned_beyond: set[tuple[int, int]] = set()
        self._warned_sqlite = False

    # ------------------------------------------------------------------ parameters
    @property
    def min_resource(self) -> int:
        return self._min_resource

    @property
    def max_resource(self) -> int:
        return self._max_resource

    @property
    def reduction_factor(self) -> int:
        return self._eta

    @property
    def variant(self) -> str:
        return self._variant

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the arguments only (a lock and per-process caches do not travel)."""
        return {
            "min_resource": self._min_resource,
            "max_resource": self._max_resource,
            "reduction_factor": self._eta,
            "variant": self._variant,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(min_resource={self._min_resource}, "
            f"max_resource={self._max_resource}, reduction_factor={self._eta}, "
            f"variant={self._variant!r})"
        )

    # ------------------------------------------------------------------ public helpers
    @staticmethod
    def configuration_id(trial: optuna.Trial | FrozenTrial) -> int:
        """Number of the trial that introduced the configuration ``trial`` trains.

        Re-entry trials of a configuration (and retries of its trials) return the same number:
        name checkpoints after it, so that a re-entry continues training where the configuration
        stopped.
        """
        if isinstance(trial, FrozenTrial):
            attrs: Mapping[str, Any] = trial.system_attrs
        else:
            attrs = trial.study._storage.get_trial_system_attrs(trial._trial_id)
        return configuration_of(trial.number, attrs)

    def core(self, study: Study) -> IterativeDeepeningHyperband:
        """The core rebuilt from the study's trials: its ``ledger`` (steps the schedule trained,
        with and without checkpoints), ``incumbent``, ``describe()`` and ``state_dict()``."""
        return self._replay(study)[0].core

    def finished(self, study: Study) -> bool:
        """True when every bracket at ``max_resource`` is complete (further trials have no work)."""
        return self._replay(study)[0].finished

    def best_trial(self, study: Study) -> FrozenTrial | None:
        """The trial that reported the core's incumbent: the best value at the largest budget
        evaluated (after a finished run, at ``max_resource``). Unlike ``study.best_trial`` it
        ignores trials that completed at a smaller ``max_resource`` before the study was
        continued. None before any rung result."""
        rep, facts = self._replay(study)
        inc = rep.core.incumbent
        if inc is None:
            return None
        rungs = [r for (c, r) in rep.result_holder if c == inc.config_id]
        number = rep.result_holder[(inc.config_id, max(rungs))]
        return study._storage.get_trial(facts[number].trial_id)

    # ------------------------------------------------------------------ BasePruner
    def prune(self, study: Study, trial: FrozenTrial) -> bool:
        step = trial.last_step
        tid = (id(study._storage), trial._trial_id)
        budget = self._budget.get(tid)
        if budget is not None and (step is None or step < budget):
            return False
        if tid in self._final:
            if step is not None and step > self._max_resource and tid not in self._warned_beyond:
                self._warned_beyond.add(tid)
                warnings.warn(
                    f"trial {trial.number} reports step {step} > max_resource="
                    f"{self._max_resource}: its bracket ended at {self._max_resource}; stop "
                    "training at max_resource",
                    stacklevel=2,
                )
            return False
        return self._decide(study, trial)

    # ------------------------------------------------------------------ decisions
    def _decide(self, study: Study, trial: FrozenTrial) -> bool:
        key = (id(study._storage), trial._trial_id)
        started = time.monotonic()
        warned = False
        while True:
            with self._lock:
                rep, facts = self._replay(study, trial)
                me = facts[trial.number]
                action, job = self._action(rep, me)
                claimed = action == "claim"
                if claimed:
                    assert job is not None
                    self._claim(study, me, job)
                    rep.unheld.remove(job)
                    rep.holder[job.job_id] = me.number
                    action = "continue"
                self._enqueue(study, rep, facts)
                done = rep.finished
                if len(rep.running) > 1 and not self._warned_sqlite and _is_sqlite(study):
                    self._warned_sqlite = True
                    warnings.warn(
                        f"trials {sorted(rep.running)} are RUNNING at once on SQLite (parallel "
                        "workers, or trials of a killed process): Optuna cannot hand an enqueued "
                        "trial to exactly one of several workers on SQLite (optuna/optuna#4002), "
                        "and this pruner enqueues its re-entry trials; a worker may then fail "
                        "with 'Cannot tell a PRUNED trial'. For parallel workers use "
                        "JournalStorage(JournalFileBackend(path)), PostgreSQL or GrpcStorageProxy",
                        stacklevel=3,
                    )
            if done:
                self._stop(study)
            if action == "continue":
                assert job is not None
                if claimed and trial.last_step is not None and trial.last_step >= job.budget:
                    continue  # already past the claimed rung (sparse reports): tell it now
                self._budget[key] = job.budget
                return False
            self._budget.pop(key, None)
            if action == "complete":
                self._final.add(key)
                return False
            if action == "prune":
                return True
            # no work for this new trial (yet): wait while running trials may free some
            waiting = any(f.state == TrialState.WAITING for f in facts.values())
            others = sorted(rep.busy() - {me.number})
            if done or waiting or not others or time.monotonic() - started > _MAX_WAIT_SECONDS:
                if not done and others and not waiting:
                    logger.warning(
                        "trial %d had no work for %.0f s: ID-HB at max_resource=%d waits for "
                        "running trials %s; if their process died, fail them (heartbeat storage "
                        "or study.tell(..., state=TrialState.FAIL))",
                        trial.number, _MAX_WAIT_SECONDS, self._max_resource, others,
                    )
                self._write_record(study, me, spare=True)
                return True
            if not warned:
                logger.info("trial %d waits for work (running: %s)", trial.number, others)
                warned = True
            time.sleep(_POLL_SECONDS)
            with warnings.catch_warnings():  # as study.optimize does between trials
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                optuna.storages.fail_stale_trials(study)

    @staticmethod
    def _action(rep: Replay, me: TrialFacts) -> tuple[str, Job | None]:
        """What trial ``me`` does now: ``continue`` (to the job's budget), ``claim`` (continue
        in place into its configuration's promotion), ``complete``, ``prune`` or ``nowork``."""
        job = rep.pending_of(me.number)
        if job is not None:
            return "continue", job
        if me.config is None or me.config not in rep.cid:
            return ("nowork", None) if me.kind == "new" else ("prune", None)
        cid = rep.cid[me.config]
        held = rep.held_rungs(me.number, cid)
        if not held:
            return "prune", None  # a duplicate re-entry, or its job failed
        core = rep.core
        if core.max_budget == rep.target and core.rung_budget(core.bracket_of(cid), held[-1]) == (
            rep.target
        ):
            return "complete", None  # its result at max_resource is in: the trial may end
        if core.status(cid) == "pending":
            for j in rep.unheld:
                if j.config_id == cid and rep.reserved_for(j) == me.number:
                    return "claim", j
        return "prune", None

    # ------------------------------------------------------------------ storage
    def _replay(
        self, study: Study, trial: FrozenTrial | None = None
    ) -> tuple[Replay, dict[int, TrialFacts]]:
        if study._is_multi_objective():
            raise ValueError(
                f"{type(self).__name__} supports single-objective studies only (Optuna's "
                "Trial.report and should_prune do too)"
            )
        trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
        facts = {t.number: trial_facts(t) for t in trials}
        if trial is not None:  # its latest reports
            stored = next(t for t in trials if t.number == trial.number)
            facts[trial.number] = trial_facts(stored, trial.intermediate_values)
        try:
            params = self._study_params(facts)
        except ValueError:
            if trial is not None:
                self._write_record(study, facts[trial.number], rejected=True)
            raise
        if trial is not None:
            me = facts[trial.number]
            if me.record is None or me.record.get("R") != self._max_resource:
                self._write_record(study, me, params=params)
        minimize = study.direction == StudyDirection.MINIMIZE
        return replay(list(facts.values()), params, self._max_resource, minimize), facts

    def _study_params(self, facts: Mapping[int, TrialFacts]) -> StudyParams:
        """The study's parameters from the trials' records, checked against this pruner's."""
        recs = records(facts.values())
        mine = {
            "reduction_factor": self._eta,
            "min_resource": self._min_resource,
            "variant": self._variant,
        }
        if not recs:
            return StudyParams(self._max_resource, self._eta, self._min_resource, self._variant)
        first_number, first = recs[0]
        for number, rec in recs:
            if rec["R0"] != first["R0"] or any(rec[k] != first[k] for k in mine):
                raise ValueError(
                    f"trials {first_number} and {number} of this study were pruned with different "
                    f"ID-HB parameters ({dict(first)} vs {dict(rec)}): the study's processes "
                    "must use the same min_resource, reduction_factor and variant and start at "
                    "the same max_resource"
                )
        for name, value in mine.items():
            if first[name] != value:
                raise ValueError(
                    f"{name}={value!r} differs from this study's {name}={first[name]!r}; use the "
                    f"same {name} to continue the study"
                )
        r0 = int(first["R0"])
        reached = max(int(rec["R"]) for _, rec in recs)
        ratio, k = self._max_resource, 0
        while ratio % self._eta == 0 and ratio > r0:
            ratio //= self._eta
            k += 1
        if ratio != r0:
            raise ValueError(
                f"max_resource must be {r0} * {self._eta}**k (k >= 0) to continue this study, "
                f"which started with max_resource={r0} (ID-HB deepens by R <- eta * R); got "
                f"max_resource={self._max_resource}"
            )
        if self._max_resource < reached:
            raise ValueError(
                f"this study was already continued up to max_resource={reached}; max_resource "
                f"must be >= {reached}, got {self._max_resource}"
            )
        return StudyParams(r0, self._eta, self._min_resource, self._variant)

    def _write_record(
        self,
        study: Study,
        me: TrialFacts,
        params: StudyParams | None = None,
        spare: bool = False,
        rejected: bool = False,
    ) -> None:
        record: dict[str, Any] = RECORD_FORMAT.stamp(me.record or {})
        if params is not None:
            record.update(
                R0=params.initial_max_resource,
                R=self._max_resource,
                reduction_factor=params.reduction_factor,
                min_resource=params.min_resource,
                variant=params.variant,
            )
            record.setdefault("claims", [])
        if spare:
            record["spare"] = True
        if rejected:
            record = RECORD_FORMAT.stamp({"rejected": True})
        study._storage.set_trial_system_attr(me.trial_id, RECORD_ATTR, record)
        me.record = record

    def _claim(self, study: Study, me: TrialFacts, job: Job) -> None:
        record = RECORD_FORMAT.stamp(me.record or {})
        record["claims"] = [*record.get("claims", []), int(job.rung)]
        study._storage.set_trial_system_attr(me.trial_id, RECORD_ATTR, record)
        me.record = record
        me.claims = (*me.claims, int(job.rung))

    def _enqueue(self, study: Study, rep: Replay, facts: Mapping[int, TrialFacts]) -> None:
        """A re-entry trial for every promotion no trial holds or may continue into (in the
        core's order)."""
        for job in rep.unheld:
            if rep.reserved_for(job) is not None:
                continue
            config = int(job.config)
            origin = facts[config]
            study.add_trial(
                optuna.trial.create_trial(
                    state=TrialState.WAITING,
                    system_attrs={
                        "fixed_params": dict(origin.params),
                        REENTRY_ATTR: {"config": config, "rung": int(job.rung)},
                    },
                )
            )
            logger.debug(
                "re-entry of configuration %d at rung %d (budget %d)", config, job.rung, job.budget
            )

    @staticmethod
    def _stop(study: Study) -> None:
        try:
            study.stop()
        except RuntimeError:  # not inside study.optimize (ask-and-tell): see finished()
            pass


def _is_sqlite(study: Study) -> bool:
    """Whether the study lives in SQLite (behind Optuna's cache of RDB storages)."""
    storage = getattr(study._storage, "_backend", study._storage)
    engine = getattr(storage, "engine", None)
    return engine is not None and engine.dialect.name == "sqlite"

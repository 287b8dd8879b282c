"""PredPruner: AdaCent's optimistic learning-curve pruning (Bateni et al., Alg. 6-8) for Optuna."""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING

from optuna.pruners import BasePruner
from optuna.study import StudyDirection
from optuna.trial import TrialState

from uvp_plugins.adacent.pred import (
    DEFAULT_PREDICTOR,
    DELTA,
    ETA,
    KEEP_FRACTION,
    TAIL_FRACTION,
    PredStoppingRule,
    TrialRecord,
    probes_for,
)

if TYPE_CHECKING:
    from optuna.study import Study
    from optuna.trial import FrozenTrial

__all__ = ["PredPruner"]

_COUNTED_STATES = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)
#: the attribute through which a sampler tells the pruner its exploitation settings (the
#: guided EnhancedAdaCentSampler's Guidance, or None): the probe phase is sized from it
SAMPLER_GUIDANCE_ATTR = "uvp_guidance"


class PredPruner(BasePruner):
    """Prune a trial when its optimistic prediction at ``max_resource`` cannot beat the best value.

    This is the pruning rule of AdaCent and Enhanced-AdaCent (Bateni et al., *Budget Allocation
    for Unknown Value Functions in a Lipschitz Space*, Alg. 7 line 9 and Alg. 8 line 11)::

        keep x  iff  PRED(H(x)) >= max_x' H_last(x')

    with ``PRED`` the last-slope extrapolation of Alg. 6 (default, ``predictor="last_slope"``,
    optimistic under concave curves, Lemma 3.11) or the tail-fit bound (``predictor="tail"``:
    linear regression on the last ``fraction`` of the history, extrapolated to ``T``, the paper's
    practical refinement of §4; the default before 2026-11-26, see
    :mod:`uvp_plugins.adacent.pred` for why it changed). Both come from
    :mod:`uvp_plugins.adacent.curves`; the direction of the study is respected (for
    ``minimize``, the prediction is a lower bound and a trial is pruned when it cannot get below
    the best value).

    **From Alg. 8 to Optuna's trial-at-a-time model.** Alg. 8 keeps an active pool, probes every
    new center to the exploration depth ``T_explore = floor(delta T)`` and then trains the pool in
    lock-step, pruning after every step. In Optuna each trial runs on its own (sequentially or in
    parallel workers) and calls :meth:`~optuna.trial.Trial.should_prune` after each report:

    * steps ``< floor(delta T)`` are the exploration probe: never pruned, so every trial reaches
      the depth whose value :class:`~optuna_ext.EnhancedAdaCentSampler` uses for the enhanced
      distances (the two objects together are Enhanced-AdaCent; each also works alone);
    * after that, the trial is pruned as soon as its prediction is worse than the best value any
      other trial of the study has *reached* (COMPLETE, PRUNED or RUNNING; FAILED trials are
      ignored, as Optuna's samplers do). By monotonicity (Assumption 1.1) every observed
      intermediate value is a lower bound on that trial's final value, so the comparison is the
      paper's ``max H_last`` taken over all trials seen so far rather than over the current
      pool: sequential Optuna compares against fully trained earlier trials, which only prunes
      earlier, never wrongly when the prediction is optimistic (Theorem 3.14's argument; for
      Pred alone - the median cut below gives this up);
    * the budget ``B`` of the paper is Optuna's ``n_trials``/``timeout``; the pool's
      round-robin order is replaced by Optuna's trial order.

    **The median cut (default since 2026-11-26; not in the paper).** Past the exploration depth
    a trial is also pruned when its value at its step is not among the best half of the values
    the trials reported at that step (itself included; FAILED trials ignored), once at least
    three other trials reported it: Optuna's ``MedianPruner`` rule, successive halving's cut.
    Pred alone lets most trials continue while the best value is weak, early in a study; the cut
    spends that budget on more configurations. ``keep_fraction=None`` is Pred alone (the
    paper's rule); why 0.5 and the measurements: :mod:`uvp_plugins.adacent.pred`.

    **The probe phase (default with our guided sampler since 2026-11-26; not in the paper).**
    With ``n_probes="auto"`` (the default) and :class:`~optuna_ext.EnhancedAdaCentSampler` with
    its default ``guidance``, the first ten trials (``guidance.n_init``) to reach the exploration
    depth are pruned there: a trial is pruned at its first step at or past the depth while fewer
    than that many other trials reported a finite value at that step. In Alg. 8 a round of
    centers is probed before any is trained further; in Optuna the first trial would otherwise
    train to ``max_resource`` alone. The sampler's model starts on exactly those values, so the
    first configuration trained past the depth is its choice among ten. With any other sampler
    (TPE, or ours with ``guidance=None``) ``"auto"`` means no probe phase: on the tuning tasks
    the probes cost those more than they saved. The pruner reads ``study.sampler`` for this, as Optuna's
    ``TPESampler`` reads ``study.pruner`` for ``HyperbandPruner``. **A study of at most ten
    trials therefore completes none** (``study.best_trial`` raises); run more trials, or pass
    ``n_probes=0``. An int sets the phase for any sampler. Why and the measurements:
    :mod:`uvp_plugins.adacent.pred`.

    **Steps.** ``step`` counts resource units (epochs, ...) trained so far, ``1..T``. Steps may be
    sparse (values are linearly interpolated between reports, which keeps the last-slope
    predictor optimistic on concave curves) and may start at 0 (Optuna's convention; the
    prediction then looks one step further ahead, i.e. prunes slightly less). The predictors are
    asked for ``max_resource - last_step`` more steps.

    **Bad input (documented, tested, never raises inside the study).**

    * Non-finite reported values (``nan``, ``+-inf``) are ignored: they enter neither the history
      nor the best value. A trial past the exploration depth without any finite value is pruned
      (it has diverged; nothing can be extrapolated).
    * A step ``>= max_resource`` is never pruned (nothing left to save); a step
      ``> max_resource`` additionally emits one ``UserWarning`` per pruner, since it means
      ``max_resource`` is set too low.
    * With no finite value from any other trial, nothing is pruned.

    Example:

        .. code-block:: python

            import optuna
            from optuna_ext import EnhancedAdaCentSampler, PredPruner

            def objective(trial):
                x = trial.suggest_float("x", 0.0, 1.0)
                acc = 0.0
                for epoch in range(1, 21):
                    acc = (1 - abs(x - 0.3)) * (1 - 0.5 ** epoch)
                    trial.report(acc, epoch)
                    if trial.should_prune():
                        raise optuna.TrialPruned()
                return acc

            study = optuna.create_study(direction="maximize",
                                        sampler=EnhancedAdaCentSampler(seed=0),
                                        pruner=PredPruner(max_resource=20))
            study.optimize(objective, n_trials=30)

    Args:
        max_resource: the full budget ``T`` (largest step a trial reports), an int ``>= 2``.
        delta: exploration fraction in ``(0, 1)``; no pruning before step ``floor(delta T)``
            (the paper uses 0.1).
        predictor: ``"last_slope"`` (Alg. 6, default) or ``"tail"`` (tail-fit bound, Sec. 4).
        fraction: share of the history the tail fit uses, in ``(0, 1]`` (paper: 0.3).
        keep_fraction: the cut: past the depth a trial continues only while its value at its
            step is among the best ``keep_fraction`` of the values reported there (a float in
            ``(0, 1]``; default 0.5, the median); ``None``: Pred alone (the paper).
        n_probes: the probe phase: a trial is pruned at its first step at or past the depth
            while fewer than ``n_probes`` other trials reported a finite value there (an int
            ``>= 0``; 0: no probe phase) or ``"auto"`` (default): the guided sampler's
            ``guidance.n_init`` when the study's sampler is ``EnhancedAdaCentSampler`` with
            guidance, else 0.
    """

    def __init__(
        self,
        max_resource: int,
        delta: float = DELTA,
        predictor: str = DEFAULT_PREDICTOR,
        fraction: float = TAIL_FRACTION,
        keep_fraction: float | None = KEEP_FRACTION,
        n_probes: int | str = "auto",
        calibrate: bool = True,
        eta: float = ETA,
    ) -> None:
        # validation and the decision itself: uvp_plugins.adacent.pred (one rule for every adapter)
        self._auto_probes = n_probes == "auto"
        if self._auto_probes:
            n_probes = 0  # resolved per study from its sampler (probes_in)
        elif isinstance(n_probes, str):
            raise ValueError(f"n_probes must be an int >= 0 or 'auto', got {n_probes!r}")
        self._rule = PredStoppingRule(
            max_resource,
            delta,
            predictor,
            fraction,
            mode="max",
            keep_fraction=keep_fraction,
            n_probes=n_probes,
            calibrate=calibrate,
            eta=eta,
        )
        self._warned = False
        self._lock = threading.Lock()

    @property
    def max_resource(self) -> int:
        """The full budget ``T``."""
        return self._rule.max_resource

    @property
    def delta(self) -> float:
        """The exploration fraction ``delta``."""
        return self._rule.delta

    @property
    def exploration_steps(self) -> int:
        """``floor(delta T)``: steps below it are never pruned."""
        return self._rule.exploration_steps

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def predict(self, history: list[float] | object, remaining: int, maximize: bool) -> float:
        """Optimistic value after ``remaining`` more steps of a dense ``history``."""
        return self._rule.predict(history, remaining, maximize)  # type: ignore[arg-type]

    @property
    def keep_fraction(self) -> float | None:
        """The cut's share (``None``: Pred alone)."""
        return self._rule.keep_fraction

    @property
    def n_probes(self) -> int | str:
        """The probe phase as given: ``"auto"`` or a number of probes (0: none)."""
        return "auto" if self._auto_probes else self._rule.n_probes

    @property
    def calibrate(self) -> bool:
        """Whether the calibrated rule decides (``False``: the issue-17 rule)."""
        return self._rule.calibrate

    def probes_in(self, study: Study) -> int:
        """The number of probes in ``study``: ``"auto"`` resolved from its sampler (a sampler
        that offers :data:`SAMPLER_GUIDANCE_ATTR`, as ``EnhancedAdaCentSampler`` does, gets its
        guidance's ``n_init``; any other sampler none)."""
        if not self._auto_probes:
            return self._rule.n_probes
        sampler = study.sampler
        if not hasattr(sampler, SAMPLER_GUIDANCE_ATTR):
            return 0
        return probes_for(getattr(sampler, SAMPLER_GUIDANCE_ATTR))

    @staticmethod
    def _records(study: Study, trial: FrozenTrial) -> list[TrialRecord]:
        """The other trials as the rule reads them (COMPLETE, PRUNED and RUNNING; FAILED
        trials are ignored, as Optuna's samplers do)."""
        out: list[TrialRecord] = []
        for t in study._storage.get_all_trials(study._study_id, deepcopy=False):
            if t.number == trial.number or t.state not in _COUNTED_STATES:
                continue
            complete = t.state == TrialState.COMPLETE
            final = float(t.values[0]) if complete and t.values else None
            out.append(TrialRecord(t.intermediate_values, complete, final, t._trial_id))
        return out

    def prune(self, study: Study, trial: FrozenTrial) -> bool:
        step = trial.last_step
        if step is None:
            return False
        if step > self.max_resource:
            with self._lock:
                warn, self._warned = not self._warned, True
            if warn:
                warnings.warn(
                    f"PredPruner: trial {trial.number} reported step {step} > max_resource="
                    f"{self.max_resource}; steps beyond max_resource are never pruned. "
                    "Set max_resource to the largest step your objective reports.",
                    UserWarning,
                    stacklevel=2,
                )
            return False
        if step >= self.max_resource or step < self.exploration_steps:
            return False  # (cheap exits before the storage is read)
        maximize = study.direction == StudyDirection.MAXIMIZE
        probes = self.probes_in(study)
        others = self._records(study, trial)
        with self._lock:  # the rule remembers measurements on complete trials
            return self._rule.decide_among(trial.intermediate_values, others, maximize, probes)

"""The Pred stopping rule of AdaCent / Enhanced-AdaCent as one per-trial decision.

Bateni et al., *Budget Allocation for Unknown Value Functions in a Lipschitz Space*, prune a
configuration ``x`` of the active pool when its optimistic prediction at the full budget ``T``
cannot beat the best value reached (Alg. 7 line 9, Alg. 8 line 11)::

    keep x  iff  PRED(H(x)) >= max_x' H_last(x')

with ``PRED`` the last-slope extrapolation of Alg. 6 (optimistic under concave curves, Lemma 3.11;
the default, :data:`DEFAULT_PREDICTOR`) or the tail fit of Sec. 4 ("Practical Refinements": a line
through the last 30 % of the monotone envelope). Enhanced-AdaCent never prunes during the
exploration probe ``T_explore = floor(delta T)``.

**Why the last slope is the default.** Issue 17 chose the predictor of this online rule on
lcbench tasks 1-17 (seeds 100-104) before any held-out run: with the Optuna sampler the last
slope beat the tail fit on 14/2/1 tasks at 25 % of the budget and 13/1/3 at 50 %, and it beat it
again on the held-out lcbench tasks 18-34 (15/1/1, 16/0/1, 14/1/2 at 25/50/100 %; figures and
the rbv2/iaml checks in ``docs/results/optuna.md``). On a concave curve the last step is the
flattest part of the window, so the last slope predicts less than the tail fit's line through
the last 30 % of the envelope and stops flattening trials sooner; the budget goes to more
configurations early, and the final values are about the same. The offline allocators of
:mod:`uvp_plugins.adacent.allocators` keep the tail fit, the refinement of the paper's
experiments, as their default.

**The median cut (the default since 2026-11-26).** A trial past the exploration depth is also
stopped when its value at its step is not among the best half (:data:`KEEP_FRACTION`) of the
values reported at that step, itself included - once at least :data:`MIN_PEERS` other trials
reported the step. This is the median stopping rule (Golovin et al. 2017, "Google Vizier") and
successive halving's cut (Li et al., Hyperband) added to Pred; it is not in the paper
(``keep_fraction=None``: Pred alone). Why: Pred stops a trial only when even its optimistic
prediction cannot beat the best value, so early in a study, with a weak best value, most trials
continue and the first quarter of the budget goes to few configurations. Chosen on lcbench tasks
1-17 (seeds 100-104) before any held-out run, with the Optuna sampler: better than Pred alone on
14/2/1 tasks at 25 % of the budget, 16/0/1 at 50 % and 13/2/2 at the end (a top-third cut:
14/1/2, 14/0/3, 11/0/6); the held-out figures are in ``docs/results/optuna.md``. **What it
gives up:** Theorem 3.14's guarantee. Pred alone never stops the best configuration when the
curves are concave and the prediction optimistic; the cut can stop a slow starter that would
have won (``tests/optuna_ext/test_optuna_pruner.py`` shows both).

**The probe phase (``n_probes``; with the guided sampler the Optuna default since 2026-11-26).**
The first ``n_probes`` trials to reach the exploration depth stop there: a trial stops at its
first step at or past the depth while fewer than ``n_probes`` other trials reported a finite
value at that step. Why: Alg. 7 and 8 train a round of ``p`` centers together and prune each
against its round-mates, so no center trains past the depth alone; trials that run one after
another have no round-mates, and the first one always trained to ``T`` (with weak early values,
the next ones often did too) - in the tuning runs, trials at ``T`` took 57 % of the first
quarter of the budget. With the probes, the first configuration trained past the depth is
chosen by a model fitted to their values: :func:`probes_for` gives the guided sampler's
``Guidance.n_init`` (its model starts on exactly those values), and 0 (no probe phase) for any
other sampler. Chosen on lcbench tasks 1-17 (seeds 100-104) before any held-out run, with the
guided sampler: better than the median cut alone on 14/0/3 tasks at 25 % of the budget, even
later (9/0/8 at 50 %, 8/1/8 at the end); 25 probes (the paper's round size) were better early
and worse at the end. With TPE and with the paper-faithful sampler (no model) the probes cost
more than they save (lcbench 1-17, seeds 0-9: 4/0/13 tasks at the end for TPE, 3/0/14 for
Alg. 8), so those keep ``n_probes=0``; figures: ``docs/results/optuna.md``. **What it costs:**
a study of at most ``n_probes`` trials completes none (every trial is a probe), and the probes
give up Theorem 3.14's guarantee as the cut does.

**The calibrated rule (the default since issue 29, ``calibrate=True``).** The median cut at every
step, the probes and PRED against any value another trial reached were chosen on lcbench's
saturating curves at one budget. Where early values do not rank like final ones (trainsize
curves that cross, multi-fidelity functions whose low fidelities are biased), the same rule
pruned almost every trial: on a multi-fidelity Hartmann suite 1-2 of about 185 trials
completed, so ``study.best_value`` rested on one or two trials. The calibrated rule keeps
PRED, the probes and a successive-halving cut, but lets the trials that completed say how far
each can be trusted (:mod:`uvp_plugins.adacent.reliability`):

* PRED compares with the best *final* value of the complete trials (the value a user gets),
  not with an intermediate value of a trial that was itself pruned; and its bound is raised by
  the largest amount by which a complete trial beat its own PRED bound from the same step
  (0 where curves are concave, as Lemma 3.11 promises);
* the cut acts only at rungs ``depth * eta^k`` (successive halving's geometric rungs, Li et al.)
  and keeps :func:`~uvp_plugins.adacent.reliability.kept_share` of the trials there: ``1/eta``
  when values at the rung rank exactly like the final values of the complete trials, up to
  everyone as that rank agreement falls to 0;
* until a trial has completed, nothing but the probe phase stops a trial: the first trial
  after the probes completes (the user always gets a result, and the rule a first
  measurement); PRED waits until the complete trials show early values ranking like final
  ones (the shrunk rank agreement above :data:`PRED_MIN_AGREEMENT`, which takes at least
  three of them);
* trials are compared at the same share of ``T`` (their envelope value at a step, whatever
  steps they reported), so steps may be epochs, samples seen or any other unit, and a trial is
  a probe while fewer than ``n_probes`` other trials *reached* the depth.

``calibrate=False`` keeps the issue-17 rule below; states saved before issue 29 load with it.

Every adapter takes this decision from here: Optuna's :class:`~optuna_ext.PredPruner` (which reads
curves from the study's storage and calls :meth:`PredStoppingRule.should_stop`), Ray Tune's
stopping scheduler (which keeps the curves in the rule itself: :meth:`PredStoppingRule.observe`,
:meth:`PredStoppingRule.decide`, JSON state of format :data:`STATE_FORMAT`, ``"uvp-pred-rule/1"``)
and the offline allocators
(:func:`optimistic_prediction`).

**From the pool to trials that run on their own.** The paper's ``max H_last`` runs over the
active pool; frameworks run each trial on its own (sequentially or in parallel), so the rule
compares a trial against the best value any *other* trial has reached so far. By monotonicity
(Assumption 1.1) every reported value is a lower bound on that trial's final value, so this only
prunes earlier than the pool version, never wrongly when the prediction is optimistic (Theorem
3.14's argument; this holds for Pred alone, not for the median cut or the probe phase).

**Steps and bad values (documented, tested):**

* steps are resource units ``0..T`` (sparse reports are linearly interpolated,
  :func:`uvp_plugins.adacent.histories.dense_history`; the predictor is asked for
  ``T - last_step`` more steps, so steps starting at 0 or 1 both work);
* non-finite values are ignored (neither history nor best value); a trial past the exploration
  depth without any finite value is stopped (it has diverged);
* a step ``>= T`` is never stopped (nothing left to save);
* without a finite value from any other trial nothing is stopped.

Example:
    >>> rule = PredStoppingRule(max_resource=10, delta=0.2, mode="max")
    >>> rule.exploration_steps, rule.rungs
    (2, [2])
    >>> done = [TrialRecord({s: q - 0.3 / s for s in range(1, 11)}, complete=True)
    ...         for q in (0.7, 0.8, 0.9)]                        # three trials reached T = 10
    >>> rule.decide_among({1: 0.50, 2: 0.52, 3: 0.53}, done)   # flat curve, far below 0.87
    True
    >>> rule.decide_among({1: 0.50, 2: 0.60, 3: 0.70}, done)   # still steep
    False
    >>> rule.decide_among({1: 0.50, 2: 0.52, 3: 0.53}, done[:2])   # PRED waits for 3 (module doc)
    False
    >>> for k, record in enumerate(done):
    ...     for s, v in record.curve.items():
    ...         rule.observe(k, s, v)
    >>> rule.observe("b", 1, 0.5); rule.observe("b", 2, 0.51); rule.observe("b", 3, 0.515)
    >>> rule.decide("b")
    True
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from uvp_plugins.adacent.curves import pred_last_slope, tail_fit_bound
from uvp_plugins.adacent.guidance import Guidance
from uvp_plugins.adacent.histories import dense_history, final_value
from uvp_plugins.adacent.reliability import (
    kept_share,
    pred_slack,
    rank_agreement,
    rung_steps,
    value_at,
)
from uvp_plugins.contract import StateFormat
from uvp_plugins.validation import check_bool, check_choice, check_float, check_int

__all__ = [
    "PREDICTORS",
    "DEFAULT_PREDICTOR",
    "TAIL_FRACTION",
    "DELTA",
    "KEEP_FRACTION",
    "MIN_PEERS",
    "ETA",
    "PRED_MIN_AGREEMENT",
    "probes_for",
    "TrialRecord",
    "PredStoppingRule",
    "outside_kept_share",
    "optimistic_prediction",
    "exploration_steps",
]

#: the predictors: the tail fit of Sec. 4 and the last slope of Alg. 6
PREDICTORS = ("tail", "last_slope")
#: the online rule's predictor unless one is given (PredPruner, PredStoppingScheduler): Alg. 6
DEFAULT_PREDICTOR = "last_slope"
#: share of the history the tail fit uses (Sec. 4: theta = 30 %)
TAIL_FRACTION = 0.3
#: exploration fraction of Enhanced-AdaCent (Sec. 3.4 and the authors' code: 0.1)
DELTA = 0.1

#: the median cut: past the depth a trial continues only among the best half of the values
#: reported at its step (module doc; ``None`` in a rule: Pred alone, the paper)
KEEP_FRACTION: float | None = 0.5
#: the cut needs the values of at least this many other trials at the step
MIN_PEERS = 3
#: the calibrated rule's rungs are ``depth * ETA^k`` and its strongest cut keeps ``1 / ETA``
ETA = 3.0
#: the calibrated rule applies PRED only where the measured rank agreement at the rung is above
#: this (the prior: PRED waits for evidence that early values rank like final ones; where they
#: do not, a curve's shape says as little)
PRED_MIN_AGREEMENT = 0.5

#: the state format (:mod:`uvp_plugins.contract`); version 1 is the only one written so far
#: (its parameters grew with defaults: states saved before ``keep_fraction``, ``n_probes`` or
#: ``calibrate`` existed read as ``None``, ``0`` and ``False``, the rule that wrote them)
STATE_FORMAT = StateFormat("uvp-pred-rule", 1)


def check_delta(delta: Any) -> float:
    """The exploration fraction ``delta``, a float in ``(0, 1)``."""
    return check_float("delta", delta, 0.0, 1.0, low_open=True, high_open=True)


def check_fraction(fraction: Any) -> float:
    """The tail-fit fraction, a float in ``(0, 1]``."""
    return check_float("fraction", fraction, 0.0, 1.0, low_open=True)


def check_keep_fraction(keep_fraction: Any) -> float | None:
    """The cut's share, a float in ``(0, 1]``, or ``None`` (no cut: Pred alone)."""
    if keep_fraction is None:
        return None
    return check_float("keep_fraction", keep_fraction, 0.0, 1.0, low_open=True)


def check_n_probes(n_probes: Any) -> int:
    """The number of probes, an int ``>= 0`` (0: no probe phase)."""
    return check_int("n_probes", n_probes, low=0)


def probes_for(guidance: Guidance | None) -> int:
    """The probe phase that goes with a sampler's exploitation step (module doc): the guided
    sampler's ``n_init`` - its model starts on the probes' values - and none without a model.

    Example:
        >>> probes_for(Guidance()), probes_for(Guidance(n_init=6)), probes_for(None)
        (10, 6, 0)
    """
    return 0 if guidance is None else guidance.n_init


def outside_kept_share(
    value: float, others: Sequence[float], keep_fraction: float, maximize: bool = True
) -> bool:
    """Whether ``value`` is outside the best ``keep_fraction`` of ``others + [value]``: at least
    ``max(1, ceil(keep_fraction (n + 1)))`` of the ``n`` other values are strictly better. Never
    with fewer than :data:`MIN_PEERS` other values.

    Example:
        >>> outside_kept_share(0.5, [0.9, 0.8, 0.7], 0.5)   # 3 of 4 better: not in the top half
        True
        >>> outside_kept_share(0.8, [0.9, 0.7, 0.6], 0.5)   # 1 better: kept
        False
    """
    n = len(others)
    if n < MIN_PEERS:
        return False
    better = sum(1 for v in others if (v > value if maximize else v < value))
    return better >= max(1, math.ceil(keep_fraction * (n + 1)))


def check_max_resource(max_resource: Any) -> int:
    """The full budget ``T`` (the largest step a trial reports), an int ``>= 2``."""
    return check_int("max_resource", max_resource, low=2)


def exploration_steps(delta: float, max_resource: int) -> int:
    """``T_explore = floor(delta T)`` (Alg. 8 line 2): steps below it are never pruned."""
    return int(math.floor(delta * max_resource))


def optimistic_prediction(
    history: np.ndarray | list[float],
    horizon: int,
    predictor: str = DEFAULT_PREDICTOR,
    fraction: float = TAIL_FRACTION,
    maximize: bool = True,
) -> float:
    """Optimistic value at budget ``horizon`` of a dense history (values at budgets
    ``1..len(history)``): PRED (Alg. 6, ``"last_slope"``) or the tail fit (Sec. 4, ``"tail"``),
    both on the monotone envelope. For ``maximize=False`` the bound is a lower bound."""
    check_choice("predictor", predictor, PREDICTORS)
    if predictor == "last_slope":
        return float(pred_last_slope(history, horizon, maximize=maximize))
    return float(tail_fit_bound(history, horizon, fraction=fraction, maximize=maximize))


@dataclass(frozen=True)
class TrialRecord:
    """What the calibrated rule needs to know of another trial.

    Attributes:
        curve: ``{step: value}`` it reported (non-finite values are ignored).
        complete: whether it reached the full budget (Optuna: COMPLETE).
        final: its final value if complete (default: the envelope value of its curve).
        key: a hashable id, used only to remember measurements on complete trials.
    """

    curve: Mapping[int, float]
    complete: bool = False
    final: float | None = None
    key: Hashable | None = None

    @property
    def last_step(self) -> int | None:
        return max((int(s) for s in self.curve), default=None)


class PredStoppingRule:
    """Stop a trial when its optimistic prediction at ``max_resource`` cannot beat the best
    value another trial has reached (Bateni et al., Alg. 7 line 9, Alg. 8 line 11).

    An observe/decide object of the core contract (:class:`uvp_plugins.contract.ObserveDecide`):
    its state is :data:`STATE_FORMAT` (``"uvp-pred-rule/1"``).

    Args:
        max_resource: the full budget ``T``, an int ``>= 2``.
        delta: exploration fraction in ``(0, 1)``; no stop before step ``floor(delta T)``.
        predictor: ``"last_slope"`` (Alg. 6, default) or ``"tail"`` (tail fit, Sec. 4).
        fraction: share of the history the tail fit uses, in ``(0, 1]`` (paper: 0.3).
        mode: ``"max"`` if higher values are better, ``"min"`` otherwise.
        keep_fraction: the cut (module doc): ``None`` is Pred alone (the paper), in both rules.
            The issue-17 rule (``calibrate=False``): past the depth a trial also stops when its
            value at its step is not among the best ``keep_fraction`` of the values reported
            there (a float in ``(0, 1]``; default 0.5, the median). The calibrated rule cuts at
            its rungs with the share set by ``eta`` and the measured agreement instead.
        n_probes: the probe phase (module doc): a trial stops at its first step at or past the
            depth while fewer than ``n_probes`` other trials reached the depth (an int ``>= 0``;
            default 0: none; :func:`probes_for` gives the guided sampler's).
        calibrate: ``True`` (default since issue 29): the calibrated rule (module doc) - PRED
            and the cut act only as far as the complete trials show they hold; ``False``: the
            issue-17 rule (PRED against any value another trial reached, ``keep_fraction`` at
            every step).
        eta: the calibrated rule's rung factor (rungs ``depth * eta^k``; its strongest cut keeps
            ``1/eta``), a float ``> 1``.

    Two ways to use it (same decision): :meth:`decide_among` with a trial's reported values and
    the other trials' records (a caller that keeps curves elsewhere, e.g. Optuna's storage), or
    :meth:`observe` / :meth:`decide` with the curves kept here (:meth:`state_dict` is
    JSON-serialisable). :meth:`should_stop` is the issue-17 rule's stateless form.
    """

    #: the format of :meth:`state_dict` (``"uvp-pred-rule/1"``)
    STATE_FORMAT: ClassVar[StateFormat] = STATE_FORMAT

    def __init__(
        self,
        max_resource: int,
        delta: float = DELTA,
        predictor: str = DEFAULT_PREDICTOR,
        fraction: float = TAIL_FRACTION,
        mode: str = "max",
        keep_fraction: float | None = KEEP_FRACTION,
        n_probes: int = 0,
        calibrate: bool = True,
        eta: float = ETA,
    ) -> None:
        self.max_resource = check_max_resource(max_resource)
        self.keep_fraction = check_keep_fraction(keep_fraction)
        self.n_probes = check_n_probes(n_probes)
        self.calibrate = check_bool("calibrate", calibrate)
        self.eta = check_float("eta", eta, low=1.0, low_open=True)
        #: measurements on complete trials, by (step, keys of the complete trials)
        self._measured: dict[tuple[Any, ...], tuple[float, float]] = {}
        self.delta = check_delta(delta)
        self.predictor = check_choice("predictor", predictor, PREDICTORS)
        self.fraction = check_fraction(fraction)
        self.mode = check_choice("mode", mode, ("max", "min"))
        self._curves: dict[Hashable, dict[int, float]] = {}
        self._last_step: dict[Hashable, int] = {}
        self._best: dict[Hashable, float] = {}
        self._top: list[Hashable] = []  # the (at most) two trials with the best values

    @property
    def maximize(self) -> bool:
        return self.mode == "max"

    @property
    def exploration_steps(self) -> int:
        """``floor(delta T)``: steps below it are never stopped."""
        return exploration_steps(self.delta, self.max_resource)

    # ------------------------------------------------------------ stateless decision
    def predict(
        self, history: np.ndarray | list[float], remaining: int, maximize: bool | None = None
    ) -> float:
        """Optimistic value after ``remaining`` more steps of a dense ``history`` (direction:
        ``maximize``, default the rule's ``mode``)."""
        h = np.asarray(history, dtype=float)
        up = self.maximize if maximize is None else maximize
        return optimistic_prediction(h, int(h.size + max(0, remaining)), self.predictor, self.fraction, up)

    def should_stop(
        self,
        reported: Mapping[int, float],
        best_other: float,
        maximize: bool | None = None,
        at_step: Sequence[float] = (),
        n_probes: int | None = None,
    ) -> bool:
        """The decision for a trial that reported ``{step: value}`` (its last report is the
        largest step), given the best finite value any other trial reached (``nan``: none) and,
        for the cut and the probe phase, the finite values the other trials reported at that
        last step (``at_step``). ``maximize`` overrides the rule's ``mode`` and ``n_probes`` its
        probe phase (a caller whose direction or sampler is per study)."""
        up = self.maximize if maximize is None else maximize
        if not reported:
            return False
        step = max(int(s) for s in reported)
        if step >= self.max_resource or step < self.exploration_steps:
            return False
        probes = self.n_probes if n_probes is None else n_probes
        if probes and len(at_step) < probes and self._first_past_depth(reported, step):
            return True  # a probe: too few other trials have a value here yet
        history, last = dense_history(reported)
        if history.size == 0:
            return True  # past the exploration depth with no finite value: diverged
        if not math.isnan(best_other):
            predicted = self.predict(history, self.max_resource - last, up)
            if not math.isnan(predicted) and (
                predicted < best_other if up else predicted > best_other
            ):
                return True
        if self.keep_fraction is None:
            return False
        mine = reported.get(step)
        if mine is None or not math.isfinite(mine):
            return False
        return outside_kept_share(float(mine), at_step, self.keep_fraction, up)

    def _first_past_depth(self, reported: Mapping[int, float], step: int) -> bool:
        """Whether ``step`` is the trial's first reported step at or past the depth."""
        depth = self.exploration_steps
        return all(int(s) >= step or int(s) < depth for s in reported)

    # ------------------------------------------------------------ calibrated decision
    @property
    def rungs(self) -> list[int]:
        """The calibrated rule's rungs: ``depth * eta^k`` below ``max_resource``."""
        return rung_steps(self.exploration_steps, self.max_resource, self.eta)

    def decide_among(
        self,
        reported: Mapping[int, float],
        others: Sequence[TrialRecord],
        maximize: bool | None = None,
        n_probes: int | None = None,
    ) -> bool:
        """The decision for a trial that reported ``{step: value}`` (its last report is the
        largest step), given the other trials (``others``: running, pruned and complete ones;
        failed trials left out). With ``calibrate=False`` this is :meth:`should_stop` on the
        best value and the values at the step the records hold.

        The calibrated rule (module doc), in order:

        1. never before the depth ``floor(delta T)`` or at ``T``;
        2. probe phase: the trial's first step at or past the depth while fewer than
           ``n_probes`` other trials reached the depth;
        3. a trial without any finite value past the depth stops (it diverged);
        4. no complete trial yet: nothing else stops it (the first trial after the probes
           completes, so the user always gets a result and the rule a first measurement);
        5. where the rank agreement measured at the rung at or below the step is above
           :data:`PRED_MIN_AGREEMENT`: PRED (Alg. 6) plus the slack measured on the complete
           trials (:func:`~uvp_plugins.adacent.reliability.pred_slack`) cannot beat the best
           final value of the complete trials: stop;
        6. at its first step at or past a rung ``depth * eta^k``: stop when its value is not
           among the best :func:`~uvp_plugins.adacent.reliability.kept_share` of the values the
           other trials had at that rung (at least :data:`MIN_PEERS` of them), the share set
           by the rank agreement measured there on the complete trials.
        """
        up = self.maximize if maximize is None else maximize
        if not self.calibrate:
            best = math.nan
            values = [v for r in others for v in r.curve.values()]
            values += [r.final for r in others if r.complete and r.final is not None]
            finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
            if finite:
                best = max(finite) if up else min(finite)
            step = max((int(s) for s in reported), default=None)
            at_step = [] if step is None else [
                float(r.curve[step]) for r in others
                if step in r.curve and math.isfinite(float(r.curve[step]))
            ]
            return self.should_stop(reported, best, up, at_step, n_probes)
        if not reported:
            return False
        step = max(int(s) for s in reported)
        depth = self.exploration_steps
        if step >= self.max_resource or step < depth:
            return False
        probes = self.n_probes if n_probes is None else n_probes
        if probes and self._first_at_or_past(reported, step, depth):
            reached = sum(1 for r in others if _reached(r, depth, up))
            if reached < probes:
                return True
        history, last = dense_history(reported)
        if history.size == 0:
            return True
        complete = [r for r in others if r.complete]
        finals = [final_value(r.curve, r.final, up) for r in complete]
        valued = [(r, f) for r, f in zip(complete, finals, strict=True) if math.isfinite(f)]
        if not valued:
            return False
        best = max(f for _, f in valued) if up else min(f for _, f in valued)
        rungs = self.rungs
        below = [r for r in rungs if r <= step]
        rung = below[-1] if below else depth
        agreement, slack = self._measure(rung, valued, up)
        if agreement > PRED_MIN_AGREEMENT:
            bound = self.predict(history, self.max_resource - last, up)
            bound = bound + slack if up else bound - slack
            if math.isfinite(bound) and (bound < best if up else bound > best):
                return True
        if self.keep_fraction is None or not below or not self._first_at_or_past(reported, step, rung):
            return False
        peers = [value_at(r.curve, rung, up) for r in others if _reached(r, rung, up)]
        peers = [v for v in peers if math.isfinite(v)]
        mine = value_at(reported, step, up)
        if not math.isfinite(mine):
            return False
        return outside_kept_share(mine, peers, kept_share(agreement, self.eta), up)

    def _measure(
        self, step: int, valued: Sequence[tuple[TrialRecord, float]], maximize: bool
    ) -> tuple[float, float]:
        """Rank agreement and PRED's slack at ``step`` on the complete trials (remembered per
        step and set of complete trials when they have keys)."""
        keys = tuple(r.key for r, _ in valued)
        memo_key = (step, maximize, keys) if all(k is not None for k in keys) else None
        if memo_key is not None and memo_key in self._measured:
            return self._measured[memo_key]
        curves = [r.curve for r, _ in valued]
        finals = [f for _, f in valued]
        found = (
            rank_agreement(curves, finals, step, maximize),
            pred_slack(curves, finals, step, self.max_resource, maximize),
        )
        if memo_key is not None:
            if len(self._measured) > 4096:
                self._measured.clear()
            self._measured[memo_key] = found
        return found

    @staticmethod
    def _first_at_or_past(reported: Mapping[int, float], step: int, mark: int) -> bool:
        """Whether ``step`` is the trial's first reported step at or past ``mark``."""
        return all(int(s) >= step or int(s) < mark for s in reported)

    def check_trials_beyond_probes(self, n_trials: int) -> None:
        """Refuse a probe phase that would stop every trial: with ``n_trials <= n_probes`` each
        trial is one of the first ``n_probes`` to reach the depth (module doc, *what it costs*),
        so none trains past it. ``ValueError`` naming ``n_probes``, the number of trials and
        the accepted range; nothing to refuse without a probe phase.

        Example:
            >>> PredStoppingRule(12, 0.1, n_probes=10).check_trials_beyond_probes(11)
            >>> PredStoppingRule(12, 0.1, n_probes=10).check_trials_beyond_probes(8)
            Traceback (most recent call last):
            ...
            ValueError: n_probes=10 must be < the number of trials (8): every trial would be a probe and stop at the exploration depth (step 1), none would train to 12; use n_probes <= 7 (0: no probe phase)
        """
        if self.n_probes and n_trials <= self.n_probes:
            raise ValueError(
                f"n_probes={self.n_probes} must be < the number of trials ({n_trials}): every "
                f"trial would be a probe and stop at the exploration depth (step "
                f"{self.exploration_steps}), none would train to {self.max_resource}; use "
                f"n_probes <= {n_trials - 1} (0: no probe phase)"
            )

    @property
    def needs_step_values(self) -> bool:
        """Whether :meth:`should_stop` reads ``at_step`` (callers may skip collecting it)."""
        return self.keep_fraction is not None or self.n_probes > 0

    # ------------------------------------------------------------- stateful use
    def observe(self, trial: Hashable, step: int, value: float) -> None:
        """Record ``value`` reported by ``trial`` at ``step``. As in Optuna, the first finite
        value of a step is kept (a repeated step is ignored); a non-finite value only advances
        the trial's last step."""
        s = check_int("step", step, low=0)
        v = float(value)
        self._last_step[trial] = max(self._last_step.get(trial, s), s)
        curve = self._curves.setdefault(trial, {})
        if not math.isfinite(v) or s in curve:
            return
        curve[s] = v
        self._improve(trial, v)

    def decide(self, trial: Hashable) -> bool:
        """:meth:`should_stop` for a trial observed here, against every other observed trial."""
        curve = dict(self._curves.get(trial, {}))
        last = self._last_step.get(trial)
        if last is None:
            return False
        if last not in curve:
            curve[last] = math.nan  # the last report was not finite: it still counts as a step
        if self.calibrate:
            others = [
                TrialRecord(c, complete=self._last_step.get(t, 0) >= self.max_resource, key=t)
                for t, c in self._curves.items()
                if t != trial
            ]
            return self.decide_among(curve, others)
        at_step: list[float] = []
        if self.needs_step_values:
            at_step = [c[last] for t, c in self._curves.items() if t != trial and last in c]
        return self.should_stop(curve, self.best_other(trial), at_step=at_step)

    def best_other(self, trial: Hashable) -> float:
        """Best finite value observed for any trial other than ``trial`` (``nan`` if none)."""
        for t in self._top:
            if t != trial:
                return self._best[t]
        return math.nan

    def forget(self, trial: Hashable) -> None:
        """Drop a trial whose values must not count (e.g. it errored and its results are void)."""
        self._curves.pop(trial, None)
        self._last_step.pop(trial, None)
        if self._best.pop(trial, None) is not None:
            self._rebuild_top()

    def _better(self, a: float, b: float) -> bool:
        return a > b if self.maximize else a < b

    def _improve(self, trial: Hashable, v: float) -> None:
        old = self._best.get(trial)
        if old is not None and not self._better(v, old):
            return
        self._best[trial] = v
        # per-trial bests only improve, so the two best trials are kept incrementally
        top = [t for t in self._top if t != trial] + [trial]
        top.sort(key=lambda t: self._best[t], reverse=self.maximize)
        self._top = top[:2]

    def _rebuild_top(self) -> None:
        ranked = sorted(self._best, key=lambda t: self._best[t], reverse=self.maximize)
        self._top = ranked[:2]

    # ------------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, Any]:
        """Parameters and observed curves as plain data (trial ids must be JSON keys: str),
        format :data:`STATE_FORMAT` (``"uvp-pred-rule/1"``)."""
        return STATE_FORMAT.stamp({
            "params": {
                "max_resource": self.max_resource,
                "delta": self.delta,
                "predictor": self.predictor,
                "fraction": self.fraction,
                "mode": self.mode,
                "keep_fraction": self.keep_fraction,
                "n_probes": self.n_probes,
                "calibrate": self.calibrate,
                "eta": self.eta,
            },
            "trials": [
                [trial, self._last_step.get(trial, 0), [[s, v] for s, v in sorted(curve.items())]]
                for trial, curve in self._curves.items()
            ],
        })

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> PredStoppingRule:
        """Rebuild a rule from :meth:`state_dict` (validated: bad states raise ``ValueError``;
        a state of another format names ``"uvp-pred-rule/1"``)."""
        state = STATE_FORMAT.read(state)
        # a state saved before the cut, the probe phase or the calibrated rule existed was made
        # without it
        rule = cls(**{"keep_fraction": None, "n_probes": 0, "calibrate": False, **state["params"]})
        for trial, last, points in state["trials"]:
            key = tuple(trial) if isinstance(trial, list) else trial
            for s, v in points:
                if not math.isfinite(float(v)):
                    raise ValueError(f"state: trial {trial!r} has a non-finite value {v!r}")
                rule.observe(key, int(s), float(v))
            rule._last_step[key] = max(rule._last_step.get(key, 0), check_int("last_step", last, low=0))
            rule._curves.setdefault(key, {})
        return rule


def _reached(record: TrialRecord, step: int, maximize: bool) -> bool:
    """Whether a trial got to ``step`` with a finite value at or below it (a complete trial
    without a curve counts as having reached every step only through its curve)."""
    last = record.last_step
    if last is None or (last < step and not record.complete):
        return False
    return math.isfinite(value_at(record.curve, step, maximize))

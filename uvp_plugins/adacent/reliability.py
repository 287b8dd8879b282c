"""How far a trial's value at a step can be trusted to say how good it is at the full budget.

Bateni et al.'s pruning (Alg. 7 line 9, Alg. 8 line 11) and the exploitation step of
:mod:`uvp_plugins.adacent.guidance` both act on values read below the full budget ``T``: PRED
(Alg. 6) extrapolates a curve, the cut and the surrogate compare trials by their value at a step.
Both are only as good as two assumptions of the paper: curves are concave (Assumption 3.10, so
PRED is optimistic, Lemma 3.11) and a configuration that is better early stays better
(implicit in ranking by ``H_last``). On lcbench's saturating curves both hold; on trainsize
fidelities, crossing learning curves or multi-fidelity functions whose low fidelities are
biased, they hold partly or not at all (docs/results/optuna.md, issue 29).

This module *measures* them on the trials that reached both the step and ``T`` - the COMPLETE
trials, whose whole curve and final value are known - and turns the measurements into the
three quantities the decisions use:

* :func:`rank_agreement` - Spearman's rank correlation between the values at a step and the
  final values of the complete trials, shrunk towards :data:`PRIOR_AGREEMENT` with the weight of
  :data:`PRIOR_WEIGHT` trials (few complete trials say little). It sets how much of the cut
  survives (:func:`kept_share`) and how much a pruned trial's value tells the surrogate about
  its final value (:func:`pseudo_final`).
* :func:`kept_share` - the share of the trials at a rung that continue: ``1 / eta`` when values at
  the rung rank exactly like final values (successive halving, Li et al.), rising linearly to 1
  (no cut) as the agreement falls to 0 or below.
* :func:`pred_slack` - how far PRED fell short on the complete trials: the largest amount by which
  a complete trial's final value beat its own PRED bound computed from its curve up to the
  step (0 where PRED was optimistic, as Lemma 3.11 promises on concave curves). PRED plus this
  slack is optimistic on every complete trial seen, so the pruner stops a trial only when even
  that cannot beat the best final value.

Steps may be in any unit (epochs, samples seen, trainsize levels): a trial's value at a step is
its envelope value over the steps it reported up to there (:func:`value_at`), so trials that
report at different step values are compared at the same share of ``T``.

Example:
    >>> curves = [{1: 0.5, 5: 0.7, 10: 0.8}, {1: 0.6, 5: 0.75, 10: 0.85}, {1: 0.4, 5: 0.6, 10: 0.7},
    ...           {1: 0.7, 5: 0.8, 10: 0.9}]
    >>> finals = [0.8, 0.85, 0.7, 0.9]
    >>> rho = rank_agreement(curves, finals, 5)
    >>> round(rho, 3), round(kept_share(rho, 3), 3)
    (0.786, 0.476)
    >>> pred_slack(curves, finals, 5, 10)     # PRED from step 5 was optimistic on every curve
    0.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.stats import spearmanr

from uvp_plugins.adacent.curves import pred_last_slope
from uvp_plugins.adacent.histories import dense_history, value_at
from uvp_plugins.adacent.scores import quantile_score

__all__ = [
    "PRIOR_AGREEMENT",
    "PRIOR_WEIGHT",
    "MIN_MEASURED",
    "value_at",
    "rank_agreement",
    "kept_share",
    "pred_slack",
    "pseudo_final",
    "rung_steps",
]

#: the rank agreement assumed before any trial completed (moderate trust)
PRIOR_AGREEMENT = 0.5
#: the prior counts as this many complete trials
PRIOR_WEIGHT = 3.0
#: the agreement is measured from this many complete trials on (below: the prior)
MIN_MEASURED = 3


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho (scipy), 0 where one side is constant: the step says nothing about the
    order then (scipy returns NaN with a warning)."""
    if a.size < 2:
        return math.nan
    if np.all(a == a[0]) or np.all(b == b[0]):
        return 0.0
    return float(spearmanr(a, b).statistic)


def rank_agreement(
    curves: Sequence[Mapping[int, float]],
    finals: Sequence[float],
    step: float,
    maximize: bool = True,
    prior: float = PRIOR_AGREEMENT,
    weight: float = PRIOR_WEIGHT,
) -> float:
    """Spearman's correlation of the complete trials' values at ``step`` with their final
    values, shrunk towards ``prior``: ``(n rho + weight prior) / (n + weight)`` over the ``n``
    trials with a finite value at ``step`` and a finite final value (``prior`` when
    ``n < MIN_MEASURED``: two points always rank alike or opposite).
    The direction does not matter for a rank correlation except through :func:`value_at`."""
    pairs = [
        (value_at(c, step, maximize), float(f))
        for c, f in zip(curves, finals, strict=True)
        if f is not None and math.isfinite(float(f))
    ]
    pairs = [(v, f) for v, f in pairs if math.isfinite(v)]
    n = len(pairs)
    if n < MIN_MEASURED:
        return float(prior)
    rho = _spearman(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))
    return float((n * rho + weight * prior) / (n + weight))


def kept_share(agreement: float, eta: float) -> float:
    """The share of the trials at a rung that continue: ``1/eta`` at agreement 1, linear up
    to 1 (nobody is cut) at agreement ``<= 0``.

    Example:
        >>> round(kept_share(1.0, 3), 4), kept_share(0.0, 3), kept_share(-0.4, 3)
        (0.3333, 1.0, 1.0)
    """
    a = min(max(float(agreement), 0.0), 1.0)
    return 1.0 - a * (1.0 - 1.0 / float(eta))


def pred_slack(
    curves: Sequence[Mapping[int, float]],
    finals: Sequence[float],
    step: float,
    max_resource: int,
    maximize: bool = True,
) -> float:
    """The largest amount by which a complete trial's final value beat PRED (Alg. 6) computed
    from its curve up to ``step`` (0 if PRED was optimistic on every one, or if none has a
    curve there); in the direction of improvement (``>= 0``)."""
    slack = 0.0
    for curve, final in zip(curves, finals, strict=True):
        if final is None or not math.isfinite(float(final)):
            continue
        early = {s: v for s, v in curve.items() if s <= step}
        history, last = dense_history(early)
        if history.size == 0:
            continue
        bound = pred_last_slope(history, history.size + max(0, int(max_resource) - last), maximize)
        short = (float(final) - bound) if maximize else (bound - float(final))
        if math.isfinite(short):
            slack = max(slack, short)
    return slack


def pseudo_final(
    value: float,
    complete_values: Sequence[float],
    complete_scores: Sequence[float] | np.ndarray,
    agreement: float,
    maximize: bool = True,
) -> tuple[float, float]:
    """What a value at a step says about the final value, on the scale of the complete trials'
    final-value scores: the score at the value's quantile among the complete trials' values at
    the same step (:func:`uvp_plugins.adacent.scores.quantile_score`), shrunk towards the mean
    score by the agreement, and the variance left, ``(1 - agreement^2)`` times the scores'
    variance (at least 1 % of it) - the regression of a bivariate normal whose correlation is
    the measured rank agreement. Returns ``(mean, variance)``.

    Example:
        >>> m, v = pseudo_final(0.9, [0.5, 0.6, 0.7], [-1.0, 0.0, 1.0], 0.8)  # above them all
        >>> round(m, 3), round(v, 3)
        (0.8, 0.24)
    """
    ref = [float(v) for v in complete_values]
    scores = np.asarray(complete_scores, dtype=float)
    keep = [i for i, v in enumerate(ref) if math.isfinite(v)]
    a = min(max(float(agreement), -1.0), 1.0)
    if not keep or not math.isfinite(value):
        spread = float(scores.var()) if scores.size > 1 else 1.0
        return float(scores.mean()) if scores.size else 0.0, max(spread, 1e-6)
    ref_kept = [ref[i] if maximize else -ref[i] for i in keep]
    score = quantile_score(value if maximize else -value, ref_kept, scores[keep])
    centre = float(scores.mean())
    spread = float(scores.var()) if scores.size > 1 else 1.0
    spread = max(spread, 1e-6)
    return centre + a * (score - centre), max(1.0 - a * a, 0.01) * spread


def rung_steps(depth: int, max_resource: int, eta: float) -> list[int]:
    """The rungs of the cut: ``depth, depth eta, depth eta^2, ...`` (rounded) up to
    ``max_resource / eta`` (successive halving's geometric rungs, from the exploration depth; a
    rung closer to ``T`` would save less than a ``1/eta`` of a trial).

    Example:
        >>> rung_steps(5, 52, 3), rung_steps(2, 20, 3), rung_steps(10, 100, 3), rung_steps(0, 20, 3)
        ([5, 15], [2, 6], [10, 30], [1, 3])
    """
    out: list[int] = []
    r = float(max(1, depth))
    while int(round(r)) * eta <= max_resource:
        step = int(round(r))
        if not out or step > out[-1]:
            out.append(step)
        r *= float(eta)
    return out

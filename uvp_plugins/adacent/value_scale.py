"""Mapping objective values to the positive, higher-is-better scale of the UVP ratios.

Enhanced-KCenter (Bateni et al., Sec. 3.2, Alg. 4) weights each center ``c`` by the ratio
``eta_c = max_c' v(c') / v(c)`` and the smoothness constant of Assumption 1.2 is a ratio bound
``A(x_i, b) / A(x_j, b) >= 1 - eps ||x_i - x_j||``. Both need values ``v > 0`` where higher is
better (the paper's validation accuracies). Frameworks hand us values in either direction and of
any sign, so every adapter maps them with :func:`positive_scores`, using **one rule**:

1. ``maximize`` and every finite value ``> 0`` (accuracies, AUC, R^2 on good models, ...):
   the values are used **unchanged**, ``s = v``. Ratios keep the paper's meaning.
2. ``minimize`` and every finite value ``> 0`` (losses, error rates, RMSE, ...):
   the reciprocal ``s = 1 / v``. Then ``eta_c = v_c / v_best``: a center whose loss is twice the
   best loss is weighted like an accuracy half the best accuracy. Ratios stay scale free.
3. Otherwise (some finite value ``<= 0`` after orienting, e.g. maximising a log-likelihood,
   minimising a loss that reached 0, mixed signs), and also when rule 1 or 2 would overflow in
   floating point (a reciprocal or a ratio ``max s / min s`` beyond the float range, e.g. a loss
   of ``1e-309``): an affine map of the oriented values
   ``o = v`` (maximize) or ``o = -v`` (minimize) onto ``[FLOOR, 1]``::

       s = FLOOR + (1 - FLOOR) * (o - min o) / (max o - min o)       with FLOOR = 0.1

   so the worst observed value gets ``eta = 1 / FLOOR = 10`` (about the spread of accuracies on
   lcbench) and the best ``eta = 1``. If all values are equal, every score is ``1``.

Non-finite inputs (``nan``, ``+-inf``) map to ``nan`` ("no usable value": Enhanced-KCenter then
uses the plain distance for that center) and are ignored when choosing and applying the rule.
The rule depends on the whole set of values passed in, so callers map the values of all centers
together (the sampler does this on every call, from storage, which keeps it stateless).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["FLOOR", "positive_scores"]

#: score of the worst value under rule 3 (the largest enhancement factor is ``1 / FLOOR``)
FLOOR = 0.1


def positive_scores(values: Sequence[float] | np.ndarray, maximize: bool = True) -> np.ndarray:
    """Map objective values to positive, higher-is-better scores (rules 1-3 of the module doc).

    Args:
        values: objective values in the study's direction, any shape-(n,) float sequence.
        maximize: ``True`` if higher values are better, ``False`` if lower values are better.

    Returns:
        float array of shape ``(n,)``; finite entries are ``> 0`` and ordered like the values in
        the study's direction (better value -> higher score); non-finite inputs give ``nan``.

    Example:
        >>> positive_scores([0.5, 0.9]).tolist()                 # accuracies: unchanged
        [0.5, 0.9]
        >>> positive_scores([0.2, 0.1], maximize=False).tolist()  # losses: reciprocal
        [5.0, 10.0]
        >>> positive_scores([-3.0, -1.0]).tolist()                # non-positive: affine to [0.1, 1]
        [0.1, 1.0]
    """
    v = np.asarray(values, dtype=float).reshape(-1)
    out = np.full(v.shape, np.nan)
    finite = np.isfinite(v)
    if not finite.any():
        return out
    fv = v[finite]
    if np.all(fv > 0):
        with np.errstate(over="ignore", divide="ignore"):
            ratio_scores = fv if maximize else 1.0 / fv
            ratios_finite = np.isfinite(ratio_scores).all() and np.isfinite(
                ratio_scores.max() / ratio_scores.min()
            )
        if ratios_finite:
            out[finite] = ratio_scores
            return out
    oriented = fv if maximize else -fv
    lo, hi = float(oriented.min()), float(oriented.max())
    if hi - lo <= 0.0:
        out[finite] = 1.0
    else:
        out[finite] = FLOOR + (1.0 - FLOOR) * (oriented - lo) / (hi - lo)
    return out

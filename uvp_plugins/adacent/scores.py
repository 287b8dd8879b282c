"""Values -> scores the sampler's Gaussian process is fitted to (higher is better).

Two transforms of a set of observed values ``y`` (higher is better):

* :func:`copula` - the standard normal quantiles of their mid-ranks (a Gaussian copula; issue 17's
  transform). A few diverged trials at chance level cannot stretch the scale, but the top is
  distorted: near an optimum the best values differ by little and their normal scores by a lot
  (2.7, 2.4, 2.2 for the best three of 150), which a smooth surrogate cannot follow - its
  posterior puts every candidate far below the best score, and the expected improvement
  underflows everywhere (issue 29: a 5-d quadratic stalled after 100 trials).
* :func:`rank_scores` (the default since issue 29) - the copula for the values below the median
  and an affine map for those above it, continuous at the median (score 0) and matching the
  copula's score at the best value: the bad tail is compressed as before, the top keeps the
  geometry of the objective (a quadratic bowl stays a bowl).

:func:`quantile_score` maps a value measured elsewhere (at a lower fidelity) onto a set of
scores by its quantile among reference values (quantile matching).

Example:
    >>> y = np.array([0.0, 0.2, 0.5, 0.9, 0.95, 1.0])
    >>> copula(y).round(2).tolist()
    [-1.38, -0.67, -0.21, 0.21, 0.67, 1.38]
    >>> rank_scores(y).round(2).tolist()
    [-1.38, -0.67, -0.21, 0.92, 1.15, 1.38]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

__all__ = ["copula", "rank_scores", "quantile_score"]


def copula(y: np.ndarray) -> np.ndarray:
    """Values -> standard normal quantiles of their mid-ranks (ties share a rank)."""
    y = np.asarray(y, dtype=float)
    return np.asarray(ndtri((rankdata(y) - 0.5) / y.size), dtype=float)


def rank_scores(y: np.ndarray) -> np.ndarray:
    """The copula below the median, an affine map above it (module doc)."""
    y = np.asarray(y, dtype=float)
    z = copula(y)
    if y.size < 3:
        return z
    median = float(np.median(y))
    top = float(y.max())
    upper = y > median
    if top <= median or not upper.any():
        return z
    out = z.copy()
    out[upper] = (y[upper] - median) / (top - median) * float(z.max())
    out[y == median] = 0.0
    return out


def quantile_score(
    value: float,
    reference_values: Sequence[float] | np.ndarray,
    reference_scores: Sequence[float] | np.ndarray,
) -> float:
    """The score at ``value``'s quantile among ``reference_values``, read off the sorted
    ``reference_scores`` (mid-rank plotting positions, clamped to their range).

    Example:
        >>> round(quantile_score(0.65, [0.5, 0.6, 0.7, 0.8], [-1.0, -0.2, 0.3, 1.1]), 3)
        0.05
    """
    ref = np.sort(np.asarray(reference_values, dtype=float))
    scores = np.sort(np.asarray(reference_scores, dtype=float))
    n = ref.size
    if n == 0 or scores.size == 0:
        return 0.0
    below = float(np.searchsorted(ref, value, side="left"))
    equal = float(np.searchsorted(ref, value, side="right")) - below
    position = below + 0.5 * equal  # values below, ties counted half: in [0, n]
    grid = np.arange(scores.size) + 0.5
    return float(np.interp(position * scores.size / n, grid, scores))

"""Learning-curve utilities of Bateni et al.: envelope, PRED (Alg. 6), tail-fit, epsilon (Sec. 4.1).

A *history* ``h`` holds the values of one configuration at budgets ``1..len(h)`` (``h[b-1]`` is
the value at budget ``b``, ``H^{(x)}`` of Alg. 2). Every function takes ``maximize`` (default
``True``: higher is better, e.g. accuracies); with ``maximize=False`` all bounds are mirrored
(running minimum, optimistic *lower* bounds, ``-inf`` instead of ``+inf``).

* :func:`monotone_envelope` - the practical refinement of Sec. 4: ``A(x, b) := max_{t<=b} A(x, t)``.
* :func:`pred_last_slope` - PRED (Alg. 6): extrapolate the last observed slope to ``T``;
  optimistic under concavity (Lemma 3.11).
* :func:`tail_fit_bound` - the "tail-fit" refinement of Sec. 4: a least-squares line through
  the last 30 % of the history, extrapolated to ``T``.
* :func:`estimate_lipschitz` - the epsilon of Assumption 1.2 from observed pairs (Sec. 4.1).
* :func:`resolve_epsilon` - the one rule every Enhanced-AdaCent object uses for ``epsilon``
  (a given float, or ``"auto"``: the estimate from the histories of paid evaluations).

Both predictors are applied to the monotone envelope of the history (the paper enforces
monotonicity before predicting, Sec. 4), so their slope is never negative and the predicted
value is never worse than the last envelope value: a configuration is never predicted to get
worse with more budget.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.distance import pdist

__all__ = [
    "monotone_envelope",
    "pred_last_slope",
    "tail_fit_bound",
    "estimate_lipschitz",
    "pairwise_lipschitz",
    "resolve_epsilon",
    "EPSILON_PERCENTILE",
    "MAX_EPSILON_POINTS",
]

#: percentile of the pairwise estimates (Sec. 4.1 and the authors' code: 95)
EPSILON_PERCENTILE = 95.0
#: ``epsilon="auto"`` uses at most this many configurations (evenly spaced in their order)
MAX_EPSILON_POINTS = 200


def _as_history(h: np.ndarray | list[float]) -> np.ndarray:
    arr = np.asarray(h, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"a history must be 1-D (values at budgets 1..t), got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ValueError("a history must not contain NaN")
    return arr


def _check_max_budget(max_budget: int) -> int:
    if isinstance(max_budget, bool) or int(max_budget) != max_budget or max_budget < 1:
        raise ValueError(f"max_budget must be an int >= 1, got {max_budget!r}")
    return int(max_budget)


def monotone_envelope(h: np.ndarray | list[float], maximize: bool = True) -> np.ndarray:
    """Running best of a history: ``A(x, b) := max_{t<=b} A(x, t)`` (min when ``maximize=False``)."""
    arr = _as_history(h)
    if arr.size == 0:
        return arr
    return np.maximum.accumulate(arr) if maximize else np.minimum.accumulate(arr)


def pred_last_slope(h: np.ndarray | list[float], max_budget: int, maximize: bool = True) -> float:
    """PRED(H) of Bateni et al., Alg. 6, on the monotone envelope of ``h``.

    ``a2 + (a2 - a1) * (T - t2)`` with ``t2 = len(h)``, ``a1, a2`` the last two envelope values:
    the last observed slope extrapolated linearly to ``T = max_budget``. Returns ``+inf``
    (``-inf`` when minimising) for a single point, where no slope can be measured (Alg. 6 line 3).
    If the history already reaches ``T`` (or beyond), returns the last envelope value.

    Under concavity (Assumption 3.10) this is an upper bound on ``A(x, T)`` (Lemma 3.11).

    Raises:
        ValueError: on an empty history or ``max_budget < 1``.
    """
    T = _check_max_budget(max_budget)
    env = monotone_envelope(h, maximize)
    if env.size == 0:
        raise ValueError("PRED needs a non-empty history")
    if env.size == 1:
        return math.inf if maximize else -math.inf
    t2 = env.size
    a1, a2 = float(env[-2]), float(env[-1])
    return a2 + (a2 - a1) * max(T - t2, 0)


def tail_fit_bound(
    h: np.ndarray | list[float],
    max_budget: int,
    fraction: float = 0.3,
    maximize: bool = True,
) -> float:
    """Tail-fit predictor (Bateni et al., Sec. 4 "Practical Refinements"; theta = 30 %).

    Fits a least-squares line ``a + s * b`` to the last ``max(2, ceil(fraction * len(h)))``
    points of the monotone envelope of ``h`` (budgets ``b`` = their positions ``1..len(h)``) and
    evaluates it at ``T = max_budget``. With exactly two points this is :func:`pred_last_slope`.

    How it stays optimistic: the fit runs on the monotone envelope, so its least-squares slope
    never points the wrong way (>= 0 when maximising, <= 0 when minimising, by Chebyshev's sum
    inequality), and the result is never worse than the last envelope value
    (``max(fit(T), env[-1])`` when maximising, ``min`` when minimising). It is
    *not* an upper bound under concavity in general (a regression over several points can have a
    smaller slope than the last step); Alg. 6's PRED is the provably optimistic predictor.

    Returns ``+inf`` (``-inf`` when minimising) for a single point; the last envelope value if the
    history already reaches ``T``.

    Raises:
        ValueError: empty history, ``max_budget < 1`` or ``fraction`` outside ``(0, 1]``.
    """
    T = _check_max_budget(max_budget)
    if not (0.0 < float(fraction) <= 1.0):
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    env = monotone_envelope(h, maximize)
    if env.size == 0:
        raise ValueError("the tail fit needs a non-empty history")
    if env.size == 1:
        return math.inf if maximize else -math.inf
    last = float(env[-1])
    if env.size >= T:
        return last
    m = max(2, int(math.ceil(float(fraction) * env.size)))
    y = env[-m:]
    b = np.arange(env.size - m + 1, env.size + 1, dtype=float)
    bc = b - b.mean()
    slope = float(np.dot(bc, y - y.mean()) / np.dot(bc, bc))
    intercept = float(y.mean() - slope * b.mean())
    pred = intercept + slope * T
    return max(pred, last) if maximize else min(pred, last)


def pairwise_lipschitz(X: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-pair estimates ``eps_ij`` of Bateni et al. Sec. 4.1, for unordered pairs ``i < j``.

    ``eps_ij = max{0, (1 - min_b A(x_i, b) / A(x_j, b)) / ||x_i - x_j||}`` is the smallest epsilon
    for which Assumption 1.2 holds for the ordered pair ``(i, j)``. The assumption quantifies over
    both orders, so a pair contributes ``max(eps_ij, eps_ji)``. The minimum runs over the budgets
    observed for both configurations (NaN = not observed).

    Args:
        X: ``(m, d)`` embedded configurations.
        values: ``(m,)`` values at one common budget, or ``(m, L)`` values at budgets ``1..L`` with
            NaN where unobserved. Higher is better; observed values must be > 0.

    Returns:
        1-D array of estimates over the pairs that have distance > 0 and at least one budget
        observed by both (possibly empty).
    """
    Xa = np.asarray(X, dtype=float)
    if Xa.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n_points, n_dims), got shape {Xa.shape}")
    V = np.asarray(values, dtype=float)
    if V.ndim == 1:
        V = V[:, None]
    if V.ndim != 2 or V.shape[0] != Xa.shape[0]:
        raise ValueError(f"values must have shape ({Xa.shape[0]},) or ({Xa.shape[0]}, L), got {np.shape(values)}")
    obs = ~np.isnan(V)
    if np.any(~np.isfinite(V[obs])) or np.any(V[obs] <= 0):
        raise ValueError("observed values must be finite and > 0 (higher is better) to estimate epsilon")
    m = Xa.shape[0]
    if m < 2:
        return np.empty(0)
    dist = pdist(Xa)  # condensed: pairs (i, j), i < j, in np.triu_indices order
    iu, ju = np.triu_indices(m, k=1)
    if V.shape[1] == 1 and obs.all():
        # one common budget, all observed: worst ratio = min(v_i, v_j) / max(v_i, v_j)
        vi, vj = V[iu, 0], V[ju, 0]
        keep = dist > 0
        if not keep.all():
            vi, vj, dist = vi[keep], vj[keep], dist[keep]
        # in place on the fresh pair arrays (the same operations as the plain expression
        # max(0, (1 - min/max) / dist), so the same values; fewer fresh pages per call)
        eps = np.minimum(vi, vj)
        eps /= np.maximum(vi, vj, out=vi)
        np.subtract(1.0, eps, out=eps)
        eps /= dist
        return np.maximum(0.0, eps, out=eps)
    with np.errstate(invalid="ignore", divide="ignore"):
        r_ij = V[iu] / V[ju]  # (pairs, L), NaN where either is unobserved
        both = ~np.isnan(r_ij)
        min_ij = np.where(both, r_ij, np.inf).min(axis=1)
        min_ji = np.where(both, 1.0 / r_ij, np.inf).min(axis=1)
        worst = np.minimum(min_ij, min_ji)  # <= 1 whenever some budget is shared
        keep = both.any(axis=1) & (dist > 0)
        eps = np.maximum(0.0, (1.0 - worst[keep]) / dist[keep])
    return eps


def estimate_lipschitz(
    X: np.ndarray, values: np.ndarray, percentile: float = EPSILON_PERCENTILE
) -> float:
    """Estimate the epsilon of Assumption 1.2 from observed configurations (Bateni et al. Sec. 4.1).

    The ``percentile``-th percentile (default 95, as in the authors' code) of
    :func:`pairwise_lipschitz` over all pairs. Feed it only evaluations that were paid for
    (shared/anchors/lcbench.md: the reference code's epsilon used free extra evaluations).

    Degenerate cases: with fewer than 2 observed configurations, or no pair at distance > 0
    sharing a budget, there is no evidence and the result is ``math.inf`` - the value for which
    the enhanced distance of :mod:`uvp_plugins.adacent.kcenter` reduces to the plain distance. If every
    pair has ``eps_ij = 0`` (equal values) the result is ``0.0``; callers that divide by epsilon
    should treat ``0`` like "no evidence" too (see :func:`resolve_epsilon`).

    Raises:
        ValueError: bad shapes, non-positive observed values, ``percentile`` outside ``[0, 100]``.
    """
    if not (0.0 <= float(percentile) <= 100.0):
        raise ValueError(f"percentile must be in [0, 100], got {percentile!r}")
    eps = pairwise_lipschitz(X, values)
    if eps.size == 0:
        return math.inf
    return float(np.percentile(eps, float(percentile)))


def resolve_epsilon(
    epsilon: float | str,
    X: np.ndarray,
    histories: list[np.ndarray] | np.ndarray,
    percentile: float = EPSILON_PERCENTILE,
    max_points: int = MAX_EPSILON_POINTS,
) -> float:
    """The epsilon to use in enhanced distances (the one rule of every Enhanced-AdaCent object).

    A float is returned as is. ``"auto"`` estimates it with :func:`estimate_lipschitz` (Sec. 4.1:
    the percentile of ``eps_ij``, whose ``min_b`` runs over every budget both configurations were
    evaluated at) from the given paid histories: ``histories[i][b]`` is the value of ``X[i]`` at
    the ``b``-th budget of a common grid (NaN = not evaluated there; a list of 1-D arrays is
    right-padded with NaN). Values must be on the positive higher-is-better scale
    (:func:`uvp_plugins.adacent.value_scale.positive_scores`). With more than ``max_points``
    configurations, ``max_points`` of them evenly spaced in the given order are used (the same
    subset in every process). An estimate that is not a finite number ``> 0`` (fewer than two
    evaluated points, or all values equal) means "no evidence" and becomes ``math.inf``: enhanced
    distances then equal plain distances.

    Example:
        >>> X = np.array([[0.0], [0.5]])
        >>> resolve_epsilon("auto", X, [np.array([0.8, 0.9]), np.array([0.4, 0.45])])
        1.0
        >>> resolve_epsilon(0.3, X, [])
        0.3
    """
    if not isinstance(epsilon, str):
        return float(epsilon)
    m = len(histories)
    if m < 2:
        return math.inf
    if isinstance(histories, np.ndarray) and histories.ndim == 2:
        V = np.asarray(histories, dtype=float)
    else:
        L = max(len(h) for h in histories)
        V = np.full((m, L), np.nan)
        for r, h in enumerate(histories):
            V[r, : len(h)] = np.asarray(h, dtype=float)
    Xa = np.asarray(X, dtype=float)
    if m > max_points:
        keep = np.linspace(0, m - 1, max_points).astype(int)
        Xa, V = Xa[keep], V[keep]
    est = estimate_lipschitz(Xa, V, percentile)
    return est if (math.isfinite(est) and est > 0) else math.inf

"""The formulas of k-center and Enhanced-KCenter (Bateni et al., Alg. 1, 4, Sec. 3.2): distances,
the enhancement factors and the enhanced distance, the tie rule and the first-center rule.

:mod:`uvp_plugins.adacent.center_distances` (the one k-center step) and
:mod:`uvp_plugins.adacent.kcenter` (its batch front ends) are built on these; the conventions
(ties, first pick, ``available`` masks, ``epsilon = inf``) are described in
:mod:`uvp_plugins.adacent.kcenter`.

Example:
    >>> import numpy as np
    >>> enhancement_factors(np.array([0.9, 0.45, np.nan]))    # eta_c = max v / v(c)
    array([ 1.,  2., nan])
    >>> d = np.array([[0.2, 0.2]])  # one candidate, two centers; the weaker one counts less
    >>> enhanced_distances(d, np.array([0.9, 0.45]), epsilon=2.0)  # min(0.2, 2 * 0.2 - 1 / 2)
    array([[ 0.2, -0.1]])
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "TIE_RTOL",
    "argmax_lowest",
    "pairwise_distances",
    "enhancement_factors",
    "enhanced_distances",
    "enhancement_shift",
    "covering_radius",
    "first_center",
]

#: scores within this relative distance of the maximum are ties (lowest index wins)
TIE_RTOL = 1e-12


def argmax_lowest(score: np.ndarray) -> int:
    """Index of the maximum of ``score``, ties (within ``TIE_RTOL`` relative) to the lowest index."""
    s = np.asarray(score, dtype=float)
    best = float(np.max(s))
    if not math.isfinite(best):
        return int(np.argmax(s))
    return int(np.argmax(s >= best - TIE_RTOL * max(1.0, abs(best))))


def _as_points(X: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(X, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_points, n_dims), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite coordinates")
    return arr


def _as_mask(available: np.ndarray | None, n: int) -> np.ndarray:
    if available is None:
        return np.ones(n, dtype=bool)
    mask = np.asarray(available)
    if mask.dtype != bool or mask.shape != (n,):
        raise ValueError(f"available must be a boolean mask of shape ({n},), got {mask.dtype} {mask.shape}")
    return mask.copy()


def _check_epsilon(epsilon: float) -> float:
    eps = float(epsilon)
    if not (eps > 0):  # also rejects NaN
        raise ValueError(f"epsilon must be > 0 (math.inf allowed: plain distances), got {epsilon!r}")
    return eps


def pairwise_distances(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Euclidean distances ``||X_i - C_j||_2`` as an ``(n, m)`` array."""
    Xa = _as_points(X, "X")
    Ca = _as_points(C, "C")
    if Xa.shape[1] != Ca.shape[1]:
        raise ValueError(f"X and C must have the same number of columns, got {Xa.shape[1]} and {Ca.shape[1]}")
    return _distances(Xa, Ca)


def _distances(Xa: np.ndarray, Ca: np.ndarray) -> np.ndarray:
    """``||x||^2 + ||c||^2 - 2 x.c`` evaluated in place; squared distances within rounding error
    of zero (``<= 1e-12 (||x||^2 + ||c||^2)``) are set to exactly 0, so coincident points have
    distance exactly 0 (the expansion alone leaves ~1e-8 there)."""
    xx = np.einsum("ij,ij->i", Xa, Xa)[:, None]
    cc = np.einsum("ij,ij->i", Ca, Ca)[None, :]
    sq = Xa @ Ca.T
    sq *= -2.0
    sq += xx
    sq += cc
    tol = (xx + cc) * 1e-12
    sq[sq <= tol] = 0.0
    np.sqrt(sq, out=sq)
    return sq


def enhancement_factors(values: np.ndarray) -> np.ndarray:
    """``eta_c = max_{c'} v(c') / v(c)`` (Alg. 4 line 5), for higher-is-better values ``v > 0``.

    NaN entries mean "no value yet": they get ``eta = NaN`` and are ignored in the maximum.

    Raises:
        ValueError: if a non-NaN value is not a finite number > 0.
    """
    v = np.asarray(values, dtype=float).reshape(-1)
    known = ~np.isnan(v)
    if np.any(~np.isfinite(v[known])) or np.any(v[known] <= 0):
        raise ValueError(
            "values must be finite and > 0 (higher is better) for the enhancement factors; "
            f"got min={np.min(v[known]) if known.any() else 'n/a'}"
        )
    eta = np.full(v.shape, np.nan)
    if known.any():
        eta[known] = np.max(v[known]) / v[known]
    return eta


def enhancement_shift(eta: np.ndarray, epsilon: float) -> np.ndarray:
    """``(eta_c - 1) / epsilon``, the shift of the adjusted distance ``eta_c d - (eta_c - 1)/eps``
    (Sec. 3.2); zero for ``epsilon = inf``."""
    eta = np.asarray(eta, dtype=float)
    return np.zeros_like(eta) if math.isinf(epsilon) else (eta - 1.0) / epsilon


def enhanced_distances(dist: np.ndarray, values: np.ndarray | None, epsilon: float) -> np.ndarray:
    """Enhanced distances ``d~(x, c) = min{d, eta_c d - (eta_c - 1)/epsilon}`` (Sec. 3.2, Alg. 4).

    Args:
        dist: plain distances, shape ``(n, m)`` (candidates x centers).
        values: one value per center (shape ``(m,)``, higher is better, > 0), ``NaN`` for a center
            without a value yet (it keeps its plain distance); ``None`` returns ``dist`` unchanged.
        epsilon: the Lipschitz constant of Assumption 1.2, ``> 0``; ``math.inf`` gives plain
            distances.

    The best center has ``eta = 1`` and keeps its plain distance; weaker centers (``eta > 1``) get
    a steeper, shifted distance, so their neighbourhoods count less (the term may be negative).
    """
    d = np.asarray(dist, dtype=float)
    if d.ndim != 2:
        raise ValueError(f"dist must be a 2-D array (n_candidates, n_centers), got shape {d.shape}")
    if values is None:
        return d.copy()
    eps = _check_epsilon(epsilon)
    eta = enhancement_factors(values)
    if eta.shape[0] != d.shape[1]:
        raise ValueError(f"values must have one entry per center ({d.shape[1]}), got {eta.shape[0]}")
    eta = np.where(np.isnan(eta), 1.0, eta)
    shift = enhancement_shift(eta, eps)
    return np.minimum(d, eta[None, :] * d - shift[None, :])


def first_center(candidates: np.ndarray, available: np.ndarray | None = None) -> int:
    """The first center when there is none: the available candidate nearest the centroid of the
    available candidates (ties to the lowest index)."""
    X = _as_points(candidates, "candidates")
    mask = _as_mask(available, X.shape[0])
    if not mask.any():
        raise ValueError("no available candidate to choose from")
    centroid = X[mask].mean(axis=0, keepdims=True)
    d = pairwise_distances(X, centroid)[:, 0]
    d[~mask] = np.inf
    return int(np.argmin(d))


def covering_radius(candidates: np.ndarray, centers: np.ndarray) -> float:
    """``max_x min_c ||x - c||``: the k-center radius of ``centers`` over ``candidates``."""
    X = _as_points(candidates, "candidates")
    C = _as_points(np.atleast_2d(np.asarray(centers, dtype=float)), "centers")
    if C.shape[0] == 0:
        raise ValueError("covering_radius needs at least one center")
    if X.shape[0] == 0:
        return 0.0
    return float(pairwise_distances(X, C).min(axis=1).max())

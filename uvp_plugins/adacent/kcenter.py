"""Greedy k-center (Alg. 1) and Enhanced-KCenter (Alg. 4) of Bateni et al.: the formulas.

Points are rows of 2-D arrays in the distance embedding (see :mod:`uvp_plugins.space`); the
metric is the Euclidean one, ``||x - c||_2``.

* :func:`greedy_kcenter` is KCENTER(k, C, X) (Alg. 1): the max-min (farthest-first) rule, seeded
  with existing centers ``C``.
* :func:`enhanced_distances` is the enhanced distance of Sec. 3.2 (Alg. 4 line 5)::

      d~(x, c) = min{ ||x - c||,  eta_c ||x - c|| - (eta_c - 1) / epsilon },
      eta_c    = max_{c'} v(c') / v(c)

  where ``v(c)`` is the latest (highest-budget) observed value of center ``c`` (``H_last``).
* :func:`next_enhanced_center` is one iteration of Enhanced-KCenter (Alg. 4 lines 4-7).

The choice itself (argmax of the min enhanced distance, ties, exclusion of candidates that
coincide with a center) is implemented once, in
:meth:`uvp_plugins.adacent.center_distances.CenterDistances.next_center`; :func:`greedy_kcenter`
and :func:`next_enhanced_center` are batch front ends to it.

Conventions shared by every function here:

* **Ties** go to the lowest candidate index; scores within ``TIE_RTOL`` (relative, ``1e-12``) of
  the maximum count as ties, so that rounding differences between equivalent ways of computing a
  distance (:func:`pairwise_distances`' matrix expansion, or one center at a time in
  :mod:`uvp_plugins.adacent.center_distances`) never change a choice on symmetric meshes.
* **First pick without any center**: the candidate closest to the centroid (mean) of the
  available candidates, ties to the lowest index. The paper leaves the first center of KCENTER
  open; the centroid rule is deterministic and does not depend on the order of the mesh (for a
  Sobol mesh of the unit cube it is the point nearest the cube's centre).
* ``available`` is a boolean mask over candidates; ``False`` excludes a candidate (e.g. already
  evaluated). Candidates already chosen as centers are never chosen again within one call.
* ``epsilon`` may be ``math.inf``: then ``(eta - 1) / epsilon = 0`` and, since ``eta >= 1``, the
  enhanced distance reduces to the plain one.
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
    "greedy_kcenter",
    "next_enhanced_center",
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


def greedy_kcenter(
    k: int,
    candidates: np.ndarray,
    centers: np.ndarray | None = None,
    *,
    available: np.ndarray | None = None,
    first: int | None = None,
) -> np.ndarray:
    """KCENTER(k, C, X) (Bateni et al., Alg. 1): indices of ``k`` new centers, farthest first.

    Each step picks ``argmax_x min_{c in C} ||x - c||`` over the available candidates not chosen
    yet (ties to the lowest index), then adds it to ``C``. Without existing ``centers`` the first
    pick is :func:`first_center`. Candidates at distance 0 from a center (duplicates) can still be
    picked once everything else is exhausted.

    Args:
        k: number of new centers, ``0 <= k <= number of available candidates``.
        candidates: ``(n, d)`` points.
        centers: ``(m, d)`` existing centers (coordinates, need not be candidates), or ``None``.
        available: boolean mask of candidates that may be chosen.
        first: index of the first pick when there are no existing centers (default: the
            :func:`first_center` rule; the authors' code draws it at random). Ignored otherwise.

    Returns:
        ``int64`` array of ``k`` candidate indices in the order they were chosen.
    """
    X = _as_points(candidates, "candidates")
    if isinstance(k, bool) or int(k) != k or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    k = int(k)
    mask = _as_mask(available, X.shape[0])
    if k > int(mask.sum()):
        raise ValueError(f"k={k} exceeds the number of available candidates ({int(mask.sum())})")
    if centers is not None and np.asarray(centers).size and np.atleast_2d(centers).shape[1] != X.shape[1]:
        raise ValueError(f"centers must have {X.shape[1]} columns, got shape {np.shape(centers)}")
    from uvp_plugins.adacent.center_distances import CenterDistances  # the one k-center step

    C = None if centers is None or np.asarray(centers).size == 0 else np.atleast_2d(centers)
    if first is not None and C is None and k > 0 and not (
        0 <= int(first) < X.shape[0] and mask[int(first)]
    ):
        raise ValueError(f"first must be the index of an available candidate, got {first!r}")
    step = CenterDistances(X)
    chosen_centers: dict[tuple[str, int], np.ndarray] = (
        {} if C is None else {("given", j): np.asarray(C[j], dtype=float) for j in range(C.shape[0])}
    )
    chosen: list[int] = []
    for _ in range(k):
        if not chosen_centers and first is not None:
            i = int(first)
        else:
            i = step.next_center(chosen_centers, None, math.inf, available=mask)
        chosen.append(i)
        mask[i] = False
        chosen_centers[("chosen", i)] = X[i]
    return np.asarray(chosen, dtype=np.int64)


def next_enhanced_center(
    candidates: np.ndarray,
    centers: np.ndarray,
    center_values: np.ndarray | None,
    epsilon: float,
    *,
    available: np.ndarray | None = None,
    first: int | None = None,
) -> int:
    """One iteration of Enhanced-KCenter (Bateni et al., Alg. 4 lines 4-7).

    Returns ``argmax_x min_c d~(x, c)`` over the available candidates (ties to the lowest index),
    where ``d~`` is :func:`enhanced_distances` with ``eta_c`` from ``center_values`` (the centers'
    ``H_last``). With no centers the pick is :func:`first_center`. Candidates coinciding with a
    center (distance 0) are skipped unless no other candidate is available.

    Args:
        candidates: ``(n, d)`` points.
        centers: ``(m, d)`` existing centers (``m`` may be 0).
        center_values: ``(m,)`` values, higher is better and > 0, NaN = not evaluated yet; ``None``
            means plain distances (then this is one step of :func:`greedy_kcenter`).
        epsilon: Lipschitz constant ``> 0`` (``math.inf``: plain distances).
        available: boolean mask of candidates that may be chosen.
        first: the pick when there are no centers (default: :func:`first_center`).
    """
    X = _as_points(candidates, "candidates")
    mask = _as_mask(available, X.shape[0])
    if not mask.any():
        raise ValueError("no available candidate to choose from")
    C = np.asarray(centers, dtype=float)
    if C.size == 0:
        if first is not None:
            if not (0 <= int(first) < X.shape[0] and mask[int(first)]):
                raise ValueError(f"first must be the index of an available candidate, got {first!r}")
            return int(first)
        return first_center(X, mask)
    C = _as_points(np.atleast_2d(C), "centers")
    if C.shape[1] != X.shape[1]:
        raise ValueError(f"centers must have {X.shape[1]} columns, got shape {C.shape}")
    if center_values is not None and np.asarray(center_values).reshape(-1).shape[0] != C.shape[0]:
        raise ValueError(
            f"center_values must have one entry per center ({C.shape[0]}), "
            f"got {np.asarray(center_values).reshape(-1).shape[0]}"
        )
    from uvp_plugins.adacent.center_distances import CenterDistances  # the one k-center step

    eps = _check_epsilon(epsilon) if center_values is not None else math.inf
    keyed = {j: C[j] for j in range(C.shape[0])}
    values = None
    if center_values is not None:
        v = np.asarray(center_values, dtype=float).reshape(-1)
        enhancement_factors(v)  # validates: finite and > 0 where known
        values = {j: float(v[j]) for j in range(v.shape[0])}
    return CenterDistances(X).next_center(keyed, values, eps, available=mask)


def covering_radius(candidates: np.ndarray, centers: np.ndarray) -> float:
    """``max_x min_c ||x - c||``: the k-center radius of ``centers`` over ``candidates``."""
    X = _as_points(candidates, "candidates")
    C = _as_points(np.atleast_2d(np.asarray(centers, dtype=float)), "centers")
    if C.shape[0] == 0:
        raise ValueError("covering_radius needs at least one center")
    if X.shape[0] == 0:
        return 0.0
    return float(pairwise_distances(X, C).min(axis=1).max())

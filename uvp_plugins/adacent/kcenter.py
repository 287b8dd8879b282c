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

The formulas (distances, ``eta_c``, the enhanced distance, ties, the first pick) are in
:mod:`uvp_plugins.adacent.enhanced_distance` (re-exported here); the choice itself (argmax of
the min enhanced distance, ties, exclusion of candidates that coincide with a center) is
implemented once, in
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

from uvp_plugins.adacent import enhanced_distance as _formulas
from uvp_plugins.adacent.center_distances import CenterDistances  # the one k-center step
from uvp_plugins.adacent.enhanced_distance import *  # noqa: F403 (the formulas, re-exported)
from uvp_plugins.adacent.enhanced_distance import (
    _as_mask,
    _as_points,
    _check_epsilon,
    enhancement_factors,
    first_center,
)

# the formulas are re-exported under the names their own module gives them
__all__ = ["greedy_kcenter", "next_enhanced_center"]
__all__ += _formulas.__all__


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
    eps = _check_epsilon(epsilon) if center_values is not None else math.inf
    keyed = {j: C[j] for j in range(C.shape[0])}
    values = None
    if center_values is not None:
        v = np.asarray(center_values, dtype=float).reshape(-1)
        enhancement_factors(v)  # validates: finite and > 0 where known
        values = {j: float(v[j]) for j in range(v.shape[0])}
    return CenterDistances(X).next_center(keyed, values, eps, available=mask)

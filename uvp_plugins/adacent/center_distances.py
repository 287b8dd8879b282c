"""Incremental candidate-to-center distances for repeated Enhanced-KCenter steps (Alg. 1, 4).

An online sampler takes one Enhanced-KCenter step (Bateni et al., Alg. 4 lines 4-7) per new
trial: ``argmax_x min_c d~(x, c)`` over a fixed candidate set ``X`` and the centers ``C`` =
earlier trials. Between two steps ``C`` gains a center or two, but the centers' values
``v(c)`` (hence ``eta_c``) and the Lipschitz estimate ``epsilon`` may change, so the enhanced
distances must be recomputed - the plain distances ``||x - c||`` need not.
:class:`CenterDistances` keeps one column of plain distances per center, keyed by the caller
(e.g. an Optuna trial id), computes a column only when a new key appears, and scores a step
from the stored columns:

    min_c d~(x, c) = min( min_c ||x - c||,  min_{c: eta_c > 1} (eta_c ||x - c|| - (eta_c - 1)/eps) )

(the two halves of the ``min`` in :func:`uvp_plugins.adacent.enhanced_distance.enhanced_distances`, split; a center
with ``eta_c = 1``, or without a value, contributes its plain distance only). A step then costs
about two passes over the ``(n, m)`` matrix instead of ``n m d`` distance arithmetic plus the
passes. The choice rules are those of :func:`uvp_plugins.adacent.kcenter.next_enhanced_center`:
ties go to the lowest candidate index (within :data:`uvp_plugins.adacent.enhanced_distance.TIE_RTOL`), a candidate coinciding with a center (distance exactly
0) is chosen only when nothing else is available, no center means
:func:`uvp_plugins.adacent.enhanced_distance.first_center`.

Each distance is ``sqrt(sum_k (x_k - c_k)^2)`` computed for one center at a time, so its bits do
not depend on when or together with which other centers it was computed: two processes that
reach the same centers in a different order make the same choices.

The matrix holds ``n_candidates x n_centers`` float64 entries; above ``max_entries`` the object
stops storing columns and recomputes them per step (same results, bounded memory).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from uvp_plugins.adacent.enhanced_distance import (
    TIE_RTOL,
    argmax_lowest,
    enhancement_factors,
    enhancement_shift,
    first_center,
)

__all__ = ["CenterDistances", "point_distances"]

#: default bound on stored distances (n_candidates x n_centers): 16 M float64 = 128 MiB
DEFAULT_MAX_ENTRIES = 1 << 24
#: rows of the (n, m) matrix processed at once (keeps temporaries in cache)
_CHUNK_ENTRIES = 1 << 18
#: centers with the largest eta used for the cheap upper bound of the scores
_BOUND_CENTERS = 32


def point_distances(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``||x - c||_2`` for every row ``x`` of ``X`` and row ``c`` of ``C``, shape ``(n, m)``.

    Each entry is ``sqrt(sum_k (x_k - c_k)^2)`` reduced over the coordinates of that pair only,
    so its bits do not depend on which other points are computed in the same call.
    """
    n, m = X.shape[0], C.shape[0]
    out = np.empty((n, m))
    rows = max(1, _CHUNK_ENTRIES // max(1, m * X.shape[1]))
    for s in range(0, n, rows):
        diff = X[s : s + rows, None, :] - C[None, :, :]
        np.multiply(diff, diff, out=diff)
        np.sqrt(diff.sum(axis=2), out=out[s : s + rows])
    return out


class CenterDistances:
    """Plain distances from ``candidates`` to keyed centers, stored column by column.

    Args:
        candidates: ``(n, d)`` candidate points (finite).
        max_entries: store at most this many distances (``n x`` stored centers); beyond it the
            columns are recomputed at every step.

    Example:
        >>> import numpy as np
        >>> cd = CenterDistances(np.array([[0.0], [0.5], [1.0]]))
        >>> cd.next_center({"a": np.array([0.0])}, None, math.inf)     # farthest from a
        2
    """

    def __init__(self, candidates: np.ndarray, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        X = np.asarray(candidates, dtype=float)
        if X.ndim != 2 or X.shape[0] < 1:
            raise ValueError(f"candidates must be a non-empty 2-D array, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("candidates must contain only finite coordinates")
        if isinstance(max_entries, bool) or int(max_entries) < 0:
            raise ValueError(f"max_entries must be an int >= 0, got {max_entries!r}")
        self._X = np.ascontiguousarray(X)
        self._max_entries = int(max_entries)
        self._clear()

    def _clear(self) -> None:
        n, d = self._X.shape
        self._columns: dict[Hashable, int] = {}  # key -> column
        self._D = np.empty((n, 0))  # (n, capacity); columns [0, m) in use
        self._C = np.empty((0, d))  # (capacity, d) the stored centers' points
        self._m = 0
        self._plain = np.full(n, np.inf)  # min over the stored columns
        self._nearest = np.full(n, -1, dtype=np.intp)  # column of that min (-1: none)

    def _set_columns(self, keys: list[Hashable], D: np.ndarray, C: np.ndarray) -> None:
        """Replace the stored columns (``D``: ``(n, len(keys))``, ``C``: their points)."""
        n = self._X.shape[0]
        self._columns = {k: i for i, k in enumerate(keys)}
        self._D, self._C, self._m = np.ascontiguousarray(D), np.ascontiguousarray(C), len(keys)
        if self._m:
            self._nearest = self._D.argmin(axis=1)  # ties: the earliest column
            self._plain = self._D[np.arange(n), self._nearest]
        else:
            self._plain = np.full(n, np.inf)
            self._nearest = np.full(n, -1, dtype=np.intp)

    @property
    def candidates(self) -> np.ndarray:
        return self._X

    @property
    def n_stored(self) -> int:
        """Number of stored center columns."""
        return self._m

    # ------------------------------------------------------------------ storage
    def _store(self, centers: Mapping[Any, np.ndarray]) -> bool:
        """Make the stored columns exactly those of ``centers`` (computing new ones); ``False``
        if they do not fit in ``max_entries`` (nothing is stored then)."""
        n, d = self._X.shape
        if n * len(centers) > self._max_entries:
            if self._m:
                self._clear()
            return False
        if len(self._columns) == len(centers) and all(k in self._columns for k in centers):
            return True
        if any(k not in centers for k in self._columns):
            # centers that left (e.g. a trial that failed): drop their columns
            keep = [k for k in self._columns if k in centers]
            cols = np.asarray([self._columns[k] for k in keep], dtype=np.intp)
            self._set_columns(keep, self._D[:, cols], self._C[cols])
        new = [k for k in centers if k not in self._columns]
        if not new:
            return True
        if self._m + len(new) > self._D.shape[1]:
            cap = max(16, 2 * (self._m + len(new)))
            D, C = np.empty((n, cap)), np.empty((cap, d))
            D[:, : self._m], C[: self._m] = self._D[:, : self._m], self._C[: self._m]
            self._D, self._C = D, C
        points = np.vstack([_as_row(centers[k], d) for k in new])
        block = point_distances(self._X, points)
        self._D[:, self._m : self._m + len(new)] = block
        self._C[self._m : self._m + len(new)] = points
        for j, k in enumerate(new):
            col = block[:, j]
            closer = col < self._plain  # strict: ties keep the earlier column
            self._plain[closer] = col[closer]
            self._nearest[closer] = self._m
            self._columns[k] = self._m
            self._m += 1
        return True

    def with_more_candidates(self, more: np.ndarray) -> CenterDistances:
        """A new object for the candidates ``vstack(candidates, more)`` that keeps the stored
        columns (only the distances of the new rows are computed); e.g. a grown mesh."""
        M = np.asarray(more, dtype=float)
        if M.ndim != 2 or M.shape[1] != self._X.shape[1] or not np.all(np.isfinite(M)):
            raise ValueError(f"more must be finite points with {self._X.shape[1]} columns")
        out = CenterDistances(np.vstack([self._X, M]), self._max_entries)
        if self._m and out._X.shape[0] * self._m <= self._max_entries:
            keys = [k for k, _ in sorted(self._columns.items(), key=lambda kv: kv[1])]
            C = self._C[: self._m]
            out._set_columns(keys, np.vstack([self._D[:, : self._m], point_distances(M, C)]), C)
        return out

    def _block(
        self, rows: np.ndarray, keys: Sequence[Any], centers: Mapping[Any, np.ndarray], stored: bool
    ) -> np.ndarray:
        """Plain distances of candidate ``rows`` to ``keys`` (columns in ``keys`` order)."""
        if stored:
            return self._D[rows, : self._m]
        d = self._X.shape[1]
        return point_distances(self._X[rows], np.vstack([_as_row(centers[k], d) for k in keys]))

    # -------------------------------------------------------------------- steps
    def next_center(
        self,
        centers: Mapping[Any, np.ndarray],
        values: Mapping[Any, float] | None,
        epsilon: float,
        *,
        available: np.ndarray | None = None,
        extra_centers: Sequence[np.ndarray] = (),
    ) -> int:
        """One Enhanced-KCenter step (Alg. 4 lines 4-7); plain greedy k-center (Alg. 1) if
        ``values`` is ``None``.

        The score of a candidate never exceeds its enhanced distance to its nearest center, so
        candidates are scored in decreasing order of that bound and the scan stops once no
        remaining candidate can reach the best score found (exact: the same choice as scoring
        every candidate).

        Args:
            centers: ``{key: point}`` of the current centers; a key seen before must keep its
                point (its stored column is reused).
            values: ``{key: v}`` with ``v > 0`` higher-is-better, NaN (or missing) = no value
                yet, which keeps the plain distance; ``None``: plain distances for all.
            epsilon: Lipschitz constant ``> 0`` (``math.inf``: plain distances).
            available: boolean mask of candidates that may be chosen (default: all).
            extra_centers: further centers without values (plain distances), not stored.

        Returns:
            the index of the chosen candidate.
        """
        X = self._X
        n = X.shape[0]
        mask = np.ones(n, dtype=bool) if available is None else np.asarray(available)
        if mask.dtype != bool or mask.shape != (n,):
            raise ValueError(f"available must be a boolean mask of shape ({n},)")
        if not mask.any():
            raise ValueError("no available candidate to choose from")
        extra = [_as_row(r, X.shape[1]) for r in extra_centers]
        if not centers and not extra:
            return first_center(X, mask)
        eps = float(epsilon)
        if not eps > 0:
            raise ValueError(f"epsilon must be > 0 (math.inf allowed: plain distances), got {epsilon!r}")
        stored = self._store(centers)
        keys: list[Any] = [None] * self._m if stored else list(centers)
        if stored:
            for k, i in self._columns.items():
                keys[i] = k
        idx = np.flatnonzero(mask)
        # distance to the nearest center (and its column), then to the extra centers too
        if stored:
            nearest_d = self._plain[idx]
            nearest = self._nearest[idx]
        else:
            nearest_d = np.full(idx.size, np.inf)
            nearest = np.full(idx.size, -1, dtype=np.intp)
            for s in range(0, idx.size, _chunk_rows(len(keys))):
                rows = idx[s : s + _chunk_rows(len(keys))]
                if keys:
                    block = self._block(rows, keys, centers, False)
                    nearest[s : s + rows.size] = block.argmin(axis=1)
                    nearest_d[s : s + rows.size] = block.min(axis=1)
        plain = nearest_d.copy()
        if extra:
            np.minimum(plain, point_distances(X[idx], np.vstack(extra)).min(axis=1), out=plain)
        # Alg. 4 ranges over X minus the centers; enhanced distances can be negative, so a
        # candidate coinciding with a center (distance 0) is kept only as a last resort.
        fresh = plain > 0
        if fresh.any():
            idx, plain, nearest, nearest_d = idx[fresh], plain[fresh], nearest[fresh], nearest_d[fresh]
        eta = np.ones(len(keys))
        if values is not None and keys:
            v = np.array([values.get(k, math.nan) for k in keys], dtype=float)
            eta = enhancement_factors(v)
            eta[np.isnan(eta)] = 1.0
        weighted = np.flatnonzero(eta > 1.0)
        if math.isinf(eps) or weighted.size == 0:
            return int(idx[argmax_lowest(plain)])
        eta_w = eta[weighted]
        shift_w = enhancement_shift(eta_w, eps)
        all_weighted = weighted.size == len(keys)
        # upper bound of each score: its enhanced distance to its nearest center and to the
        # _BOUND_CENTERS weighted centers with the largest eta (those that shrink most)
        bound = plain.copy()
        has = nearest >= 0
        eta_n = eta[nearest[has]]
        bound[has] = np.minimum(bound[has], eta_n * nearest_d[has] - enhancement_shift(eta_n, eps))
        if weighted.size > _BOUND_CENTERS:
            top = weighted[np.argsort(-eta_w, kind="stable")[:_BOUND_CENTERS]]
            for s in range(0, idx.size, _chunk_rows(top.size)):
                rows = idx[s : s + _chunk_rows(top.size)]
                sub = self._D[np.ix_(rows, top)] if stored else self._block(rows, [keys[j] for j in top], centers, False)
                t = sub * eta[top]
                t -= enhancement_shift(eta[top], eps)
                np.minimum(bound[s : s + rows.size], t.min(axis=1), out=bound[s : s + rows.size])
        order = np.argsort(-bound, kind="stable")
        score = np.full(idx.size, -np.inf)
        best = -np.inf
        start, size = 0, 64
        while start < order.size:
            sel = order[start : start + size]
            block = self._block(idx[sel], keys, centers, stored)
            w = block if all_weighted else block[:, weighted]
            t = w * eta_w
            t -= shift_w
            score[sel] = np.minimum(plain[sel], t.min(axis=1))
            best = max(best, float(score[sel].max()))
            start += sel.size
            size = min(2 * size, _chunk_rows(len(keys)))
            if start < order.size and bound[order[start]] < best - _tie_tol(best):
                break  # no remaining candidate can reach the best score (ties included)
        return int(idx[argmax_lowest(score)])


def _chunk_rows(m: int) -> int:
    return max(1, _CHUNK_ENTRIES // max(1, m))


def _tie_tol(best: float) -> float:
    return TIE_RTOL * max(1.0, abs(best))


def _as_row(point: np.ndarray, d: int) -> np.ndarray:
    row = np.asarray(point, dtype=float).reshape(-1)
    if row.shape[0] != d or not np.all(np.isfinite(row)):
        raise ValueError(f"a center must be {d} finite coordinates, got {np.shape(point)}")
    return row

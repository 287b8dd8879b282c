"""uvp_plugins.adacent.center_distances: incremental Enhanced-KCenter steps equal the batch functions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.adacent.center_distances import CenterDistances, point_distances
from uvp_plugins.adacent.kcenter import next_enhanced_center, pairwise_distances


def _instance(seed: int, grid: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, d, m = int(rng.integers(3, 120)), int(rng.integers(1, 5)), int(rng.integers(1, 40))
    X = rng.random((n, d))
    if grid:  # many exact ties, as on meshes of int/categorical parameters
        X = np.round(X * 3) / 3
    C = X[rng.integers(0, n, m)] if rng.random() < 0.5 else rng.random((m, d))
    values = rng.random(m) + 0.1
    values[rng.random(m) < 0.2] = np.nan
    return X, C, values


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    grid=st.booleans(),
    epsilon=st.sampled_from([math.inf, 0.3, 2.0, 25.0]),
    enhanced=st.booleans(),
    stored=st.booleans(),
)
def test_step_equals_next_enhanced_center(
    seed: int, grid: bool, epsilon: float, enhanced: bool, stored: bool
) -> None:
    X, C, values = _instance(seed, grid)
    rng = np.random.default_rng(seed + 1)
    available = rng.random(X.shape[0]) < 0.7
    available[rng.integers(0, X.shape[0])] = True
    cd = CenterDistances(X, max_entries=10**9 if stored else 0)
    m = C.shape[0]
    # reach the centers incrementally, with a center that later leaves (e.g. a failed trial)
    cd.next_center({"gone": rng.random(X.shape[1]), **{i: C[i] for i in range(m // 2)}}, None, math.inf)
    got = cd.next_center(
        {i: C[i] for i in range(m)},
        {i: values[i] for i in range(m)} if enhanced else None,
        epsilon,
        available=available,
    )
    expected = next_enhanced_center(X, C, values if enhanced else None, epsilon, available=available)
    assert got == expected


def test_extra_centers_count_with_plain_distances() -> None:
    X, C, values = _instance(7, grid=False)
    extra = [X[0], X[5]]
    cd = CenterDistances(X)
    got = cd.next_center(
        {i: C[i] for i in range(len(C))}, dict(enumerate(values)), 2.0, extra_centers=extra
    )
    all_centers = np.vstack([C, *extra])
    all_values = np.concatenate([values, [np.nan, np.nan]])
    assert got == next_enhanced_center(X, all_centers, all_values, 2.0)


def test_more_candidates_reuse_columns_and_match_a_fresh_object() -> None:
    rng = np.random.default_rng(3)
    X, more, C = rng.random((50, 3)), rng.random((30, 3)), rng.random((12, 3))
    values = rng.random(12) + 0.2
    cd = CenterDistances(X)
    cd.next_center(dict(enumerate(C)), None, math.inf)
    grown = cd.with_more_candidates(more)
    assert grown.n_stored == 12
    fresh = CenterDistances(np.vstack([X, more]))
    for eps in (math.inf, 1.0):
        a = grown.next_center(dict(enumerate(C)), dict(enumerate(values)), eps)
        b = fresh.next_center(dict(enumerate(C)), dict(enumerate(values)), eps)
        assert a == b


def test_point_distances_do_not_depend_on_batching() -> None:
    rng = np.random.default_rng(0)
    for d in (1, 5, 12, 30):
        X, C = rng.random((40, d)), rng.random((9, d))
        block = point_distances(X, C)
        for j in range(C.shape[0]):
            assert np.array_equal(block[:, j], point_distances(X, C[j : j + 1])[:, 0])
        np.testing.assert_allclose(block, pairwise_distances(X, C), atol=1e-12)
    assert point_distances(X, X[:1])[0, 0] == 0.0  # coincident points: exactly 0


def test_first_pick_without_centers_and_bad_input() -> None:
    X = np.array([[0.0], [0.4], [1.0]])
    cd = CenterDistances(X)
    assert cd.next_center({}, None, math.inf) == 1  # nearest the centroid, as first_center
    with pytest.raises(ValueError, match="available"):
        cd.next_center({}, None, math.inf, available=np.zeros(3, dtype=bool))
    with pytest.raises(ValueError, match="epsilon"):
        cd.next_center({"a": X[0]}, {"a": 1.0}, 0.0)
    with pytest.raises(ValueError, match="coordinates"):
        cd.next_center({"a": np.array([0.0, 1.0])}, None, math.inf)
    with pytest.raises(ValueError, match="candidates"):
        CenterDistances(np.empty((0, 2)))

"""Greedy k-center (Alg. 1), enhanced distances and Enhanced-KCenter (Alg. 4), Claim 3.6."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.adacent.kcenter import (
    covering_radius,
    enhanced_distances,
    enhancement_factors,
    first_center,
    greedy_kcenter,
    next_enhanced_center,
    pairwise_distances,
)

# unit square corners and its centre
SQUARE = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0.5]], dtype=float)


def test_pairwise_distances_hand_checked() -> None:
    D = pairwise_distances(SQUARE, SQUARE[[0, 3]])
    expected = np.array(
        [[0, math.sqrt(2)], [1, 1], [1, 1], [math.sqrt(2), 0], [math.sqrt(0.5), math.sqrt(0.5)]]
    )
    np.testing.assert_allclose(D, expected, atol=1e-12)
    with pytest.raises(ValueError, match="same number of columns"):
        pairwise_distances(SQUARE, np.zeros((1, 3)))
    with pytest.raises(ValueError, match="2-D"):
        pairwise_distances(np.zeros(3), SQUARE)


def test_greedy_kcenter_first_pick_then_farthest_with_ties_to_lowest_index() -> None:
    # first: nearest the centroid (the centre, index 4); then all corners tie at sqrt(.5) -> 0;
    # the remaining corners are still all at sqrt(.5) from the centre -> tie again -> 1.
    assert greedy_kcenter(3, SQUARE).tolist() == [4, 0, 1]
    # without the centre, from the corner nearest the centroid (tie -> 0) the farthest is (1, 1)
    assert greedy_kcenter(2, SQUARE[:4]).tolist() == [0, 3]
    assert first_center(SQUARE) == 4
    assert greedy_kcenter(0, SQUARE).tolist() == []


def test_greedy_kcenter_with_existing_centers_and_available_mask() -> None:
    # from (0,0): farthest is (1,1); then (1,0) and (0,1) tie at distance 1 -> lowest index 1
    assert greedy_kcenter(2, SQUARE, SQUARE[[0]]).tolist() == [3, 1]
    mask = np.array([True, True, True, False, True])
    assert greedy_kcenter(1, SQUARE, SQUARE[[0]], available=mask).tolist() == [1]
    # existing centers need not be candidates
    assert greedy_kcenter(1, SQUARE, np.array([[1.0, 1.0]])).tolist() == [0]
    # a given first pick is used only when there is no center
    assert greedy_kcenter(2, SQUARE, first=2).tolist() == [2, 1]
    assert greedy_kcenter(1, SQUARE, SQUARE[[0]], first=2).tolist() == [3]


def test_greedy_kcenter_validation() -> None:
    with pytest.raises(ValueError, match="k="):
        greedy_kcenter(6, SQUARE)
    with pytest.raises(ValueError, match="k must be"):
        greedy_kcenter(-1, SQUARE)
    with pytest.raises(ValueError, match="available"):
        greedy_kcenter(1, SQUARE, available=np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="first"):
        greedy_kcenter(1, SQUARE, first=9)
    with pytest.raises(ValueError, match="columns"):
        greedy_kcenter(1, SQUARE, np.zeros((1, 3)))


@settings(max_examples=25, deadline=None)
@given(
    pts=st.lists(
        st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=3, max_size=8, unique=True
    ),
    k=st.integers(1, 3),
)
def test_greedy_radius_is_a_2_approximation(pts: list[tuple[float, float]], k: int) -> None:
    X = np.array(pts)
    k = min(k, len(X))
    greedy = covering_radius(X, X[greedy_kcenter(k, X)])
    optimum = min(covering_radius(X, X[list(S)]) for S in itertools.combinations(range(len(X)), k))
    assert optimum <= greedy + 1e-12
    assert greedy <= 2 * optimum + 1e-9


def test_covering_radius() -> None:
    assert covering_radius(SQUARE, SQUARE[[4]]) == pytest.approx(math.sqrt(0.5))
    assert covering_radius(SQUARE, SQUARE) == 0.0
    with pytest.raises(ValueError):
        covering_radius(SQUARE, np.zeros((0, 2)))


def test_enhancement_factors() -> None:
    np.testing.assert_allclose(enhancement_factors(np.array([2.0, 1.0, 4.0])), [2.0, 4.0, 1.0])
    eta = enhancement_factors(np.array([2.0, np.nan]))
    assert eta[0] == 1.0 and np.isnan(eta[1])
    for bad in ([1.0, 0.0], [1.0, -2.0], [np.inf, 1.0]):
        with pytest.raises(ValueError, match="> 0"):
            enhancement_factors(np.array(bad))


def test_enhanced_distance_equals_the_formula() -> None:
    rng = np.random.default_rng(0)
    D = rng.random((7, 3)) * 2
    v = np.array([0.9, 0.6, 0.3])
    eps = 0.8
    out = enhanced_distances(D, v, eps)
    for j in range(3):
        eta = v.max() / v[j]
        np.testing.assert_allclose(out[:, j], np.minimum(D[:, j], eta * D[:, j] - (eta - 1) / eps))
    # the best center keeps plain distances; weaker ones never get larger distances
    np.testing.assert_allclose(out[:, 0], D[:, 0])
    assert np.all(out <= D)


def test_enhanced_distance_reduces_to_plain() -> None:
    D = np.random.default_rng(1).random((5, 4))
    np.testing.assert_allclose(enhanced_distances(D, np.full(4, 0.7), 0.5), D)  # equal values
    np.testing.assert_allclose(enhanced_distances(D, None, 0.5), D)
    np.testing.assert_allclose(enhanced_distances(D, np.array([1, 0.5, 0.2, 0.1]), math.inf), D)
    # NaN: that center keeps its plain distance, eta of the others ignores it
    v = np.array([np.nan, 0.5, 0.25, np.nan])
    out = enhanced_distances(D, v, 0.5)
    np.testing.assert_allclose(out[:, [0, 1, 3]], D[:, [0, 1, 3]])
    np.testing.assert_allclose(out[:, 2], np.minimum(D[:, 2], 2 * D[:, 2] - 1 / 0.5))
    with pytest.raises(ValueError, match="epsilon"):
        enhanced_distances(D, v, 0.0)
    with pytest.raises(ValueError, match="one entry per center"):
        enhanced_distances(D, np.ones(3), 1.0)


def test_next_enhanced_center() -> None:
    # plain values -> one greedy step
    assert next_enhanced_center(SQUARE, SQUARE[[0]], None, 1.0) == 3
    assert next_enhanced_center(SQUARE, SQUARE[[0]], np.array([0.5]), 1.0) == 3
    assert next_enhanced_center(SQUARE, np.zeros((0, 2)), None, 1.0) == 4
    # a weak center at (1,1) covers its side: the farthest from the strong (0,0) is then chosen
    # among points whose enhanced distance to (1,1) is large; (1,0) and (0,1) tie -> index 1
    idx = next_enhanced_center(SQUARE, SQUARE[[0, 3]], np.array([1.0, 0.1]), 2.0)
    assert idx == 1
    # candidates that coincide with centers are skipped although enhanced distances are < 0
    X = np.array([[0.0], [0.2], [1.0]])
    assert next_enhanced_center(X, X[[0, 2]], np.array([1.0, 0.01]), 0.1) == 1
    # with an available mask
    mask = np.array([True, False, True, False, True])
    assert next_enhanced_center(SQUARE, SQUARE[[0]], np.array([1.0]), 1.0, available=mask) == 2


# ------------------------------------------------------------------------- Claim 3.6
def _illustrative_instance(alpha: float, beta: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Sec. 3.2.1 / Fig. 1 with d = 1, r = alpha d, eps = beta / d, T = 1: the optimal blue point
    at x = 0 (value 1), a red region centred at x = d with value 1 - eps d and a green one at
    x = 2d with value (1 - eps d)^2, each a center and ring points at distance r (placed at
    (x, +-r): the distances sqrt(d^2 + r^2) of the paper's proof)."""
    d = 1.0
    r, eps = alpha * d, beta / d
    pts, vals = [(0.0, 0.0)], [1.0]
    for cx, v in ((d, 1 - eps * d), (2 * d, (1 - eps * d) ** 2)):
        pts += [(cx, 0.0), (cx, r), (cx, -r)]
        vals += [v, v, v]
    return np.array(pts), np.array(vals), eps


def _best_pair(X: np.ndarray, V: np.ndarray, eps: float, enhanced: bool) -> tuple[int, ...]:
    best: tuple[float, tuple[int, ...]] | None = None
    for S in itertools.combinations(range(len(X)), 2):
        rest = [i for i in range(len(X)) if i not in S]
        D = enhanced_distances(pairwise_distances(X[rest], X[list(S)]), V[list(S)] if enhanced else None, eps)
        radius = float(D.min(axis=1).max())
        if best is None or radius < best[0] - 1e-12:
            best = (radius, S)
    assert best is not None
    return best[1]


@pytest.mark.parametrize("alpha,beta", [(0.4, 0.4), (0.5, 0.5), (0.7, 0.7), (0.3, 0.6), (0.6, 0.3), (0.74, 0.74)])
def test_claim_3_6_enhanced_clustering_selects_the_optimum(alpha: float, beta: float) -> None:
    X, V, eps = _illustrative_instance(alpha, beta)
    assert 0 not in _best_pair(X, V, eps, enhanced=False)
    assert 0 in _best_pair(X, V, eps, enhanced=True)


def test_claim_3_6_greedy_enhanced_kcenter_probes_the_optimum() -> None:
    """The same instance (alpha = 0.6, beta = 0.3), greedy with k = 3: plain k-center picks the
    red center, a green ring point and the other green ring point; Enhanced-KCenter, once the
    green point's low value is known, probes the blue optimum instead."""
    X, V, eps = _illustrative_instance(0.6, 0.3)
    plain = greedy_kcenter(3, X).tolist()
    assert 0 not in plain
    centers = plain[:2]
    enhanced_pick = next_enhanced_center(X, X[centers], V[centers], eps, available=~np.isin(np.arange(len(X)), centers))
    assert enhanced_pick == 0

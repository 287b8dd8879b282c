"""Envelope, PRED (Alg. 6, Lemma 3.11), tail-fit and the epsilon estimate (Sec. 4.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.adacent.curves import (
    estimate_lipschitz,
    monotone_envelope,
    pairwise_lipschitz,
    pred_last_slope,
    tail_fit_bound,
)


def test_monotone_envelope_both_directions() -> None:
    np.testing.assert_array_equal(monotone_envelope([1, 3, 2, 4, 0]), [1, 3, 3, 4, 4])
    np.testing.assert_array_equal(monotone_envelope([3, 1, 2, 0.5], maximize=False), [3, 1, 1, 0.5])
    assert monotone_envelope([]).size == 0
    with pytest.raises(ValueError, match="1-D"):
        monotone_envelope(np.ones((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        monotone_envelope([1.0, math.nan])


def test_pred_last_slope_hand_checked() -> None:
    assert pred_last_slope([0.4], 10) == math.inf
    assert pred_last_slope([0.4], 10, maximize=False) == -math.inf
    # a2 + (a2 - a1)(T - t2) = 0.5 + 0.1 * 8
    assert pred_last_slope([0.4, 0.5], 10) == pytest.approx(1.3)
    # on the envelope: a drop is a zero slope
    assert pred_last_slope([0.4, 0.6, 0.5], 10) == pytest.approx(0.6)
    # minimisation: losses going down are extrapolated down
    assert pred_last_slope([3.0, 2.0], 10, maximize=False) == pytest.approx(2.0 - 8.0)
    # at or past T: the last value
    assert pred_last_slope([0.1, 0.2, 0.3], 3) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="non-empty"):
        pred_last_slope([], 5)
    with pytest.raises(ValueError, match="max_budget"):
        pred_last_slope([1.0, 2.0], 0)


@st.composite
def concave_curves(draw: st.DrawFn) -> tuple[np.ndarray, int]:
    """Random concave increasing curves (Assumption 3.10): positive, decreasing increments."""
    T = draw(st.integers(2, 40))
    incr = draw(st.lists(st.floats(0.0, 1.0), min_size=T - 1, max_size=T - 1))
    start = draw(st.floats(0.01, 1.0))
    steps = np.sort(np.asarray(incr))[::-1]
    return np.concatenate([[start], start + np.cumsum(steps)]), T


@settings(max_examples=100, deadline=None)
@given(curve=concave_curves())
def test_pred_is_optimistic_on_concave_curves(curve: tuple[np.ndarray, int]) -> None:
    """Lemma 3.11: PRED(LEARN(x, t)) >= A(x, T) for every t (also mirrored for losses)."""
    A, T = curve
    for t in range(1, T + 1):
        assert pred_last_slope(A[:t], T) >= A[-1] - 1e-9
        assert pred_last_slope(-A[:t], T, maximize=False) <= -A[-1] + 1e-9


def test_pred_is_not_optimistic_on_a_convex_curve() -> None:
    """The assumption matters: an accelerating curve is under-predicted."""
    A = np.array([0.1, 0.11, 0.13, 0.2, 0.5])
    assert pred_last_slope(A[:3], 5) < A[-1]


@pytest.mark.parametrize("t", [2, 3, 7, 20])
def test_tail_fit_extrapolates_a_straight_line_exactly(t: int) -> None:
    b = np.arange(1, t + 1)
    assert tail_fit_bound(0.2 + 0.01 * b, 50) == pytest.approx(0.2 + 0.01 * 50)
    assert tail_fit_bound(5.0 - 0.05 * b, 50, maximize=False) == pytest.approx(5.0 - 0.05 * 50)
    assert tail_fit_bound(0.2 + 0.01 * b, 50, fraction=1.0) == pytest.approx(0.7)


def test_tail_fit_uses_the_last_fraction_and_stays_optimistic() -> None:
    # steep start, flat tail: the last 30 % (3 of 10 points) are flat -> the last value
    h = np.array([0.1, 0.3, 0.5, 0.6, 0.65, 0.68, 0.7, 0.7, 0.7, 0.7])
    assert tail_fit_bound(h, 50) == pytest.approx(0.7)
    # a fall in the raw history never predicts below the best value seen
    assert tail_fit_bound([0.5, 0.9, 0.4, 0.3], 50) >= 0.9
    assert tail_fit_bound([0.5, 0.2, 0.6, 0.7], 50, maximize=False) <= 0.2
    assert tail_fit_bound([0.3], 50) == math.inf
    assert tail_fit_bound([0.3], 50, maximize=False) == -math.inf
    # two points: the same as PRED
    assert tail_fit_bound([0.3, 0.4], 50) == pytest.approx(pred_last_slope([0.3, 0.4], 50))
    with pytest.raises(ValueError, match="fraction"):
        tail_fit_bound([0.3, 0.4], 50, fraction=0.0)


@settings(max_examples=50, deadline=None)
@given(h=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=30), T=st.integers(1, 60))
def test_tail_fit_never_below_the_envelope(h: list[float], T: int) -> None:
    assert tail_fit_bound(h, T) >= max(h) - 1e-9
    assert tail_fit_bound(h, T, maximize=False) <= min(h) + 1e-9


def test_lipschitz_estimate_on_a_linear_function() -> None:
    """A(x) = 1 - s x on [0, 1]: the pairs with the best point x = 0 give exactly s
    (1 - A(x)/A(0) = s x), every pair gives s / A(x_j) >= s (x_j the better of the two)."""
    s = 0.6
    x = np.linspace(0.0, 1.0, 11)[:, None]
    v = 1 - s * x[:, 0]
    assert estimate_lipschitz(x, v, percentile=0.0) == pytest.approx(s)
    assert estimate_lipschitz(x[[0, 7]], v[[0, 7]]) == pytest.approx(s)
    eps = pairwise_lipschitz(x, v)
    assert eps.size == 55 and np.all(eps >= s - 1e-12) and np.all(eps <= s / v.min() + 1e-12)
    assert s <= estimate_lipschitz(x, v) <= s / v.min()
    # the assumption holds with the maximum estimate, for every pair and both orders
    e_max = estimate_lipschitz(x, v, percentile=100.0)
    dist = np.abs(x - x.T)
    assert np.all(v[:, None] / v[None, :] >= 1 - e_max * dist - 1e-12)


def test_lipschitz_estimate_over_budgets_and_degenerate_cases() -> None:
    X = np.array([[0.0], [0.5]])
    # ratios 1/2 at budget 1, 0.9 at budget 2: the min over shared budgets decides
    V = np.array([[0.5, 0.9, np.nan], [1.0, 1.0, 1.0]])
    assert estimate_lipschitz(X, V) == pytest.approx((1 - 0.5) / 0.5)
    assert estimate_lipschitz(X[:1], V[:1]) == math.inf  # fewer than two points
    assert estimate_lipschitz(np.zeros((2, 1)), np.array([1.0, 0.5])) == math.inf  # same point
    assert estimate_lipschitz(X, np.array([0.7, 0.7])) == 0.0  # equal values
    with pytest.raises(ValueError, match="> 0"):
        estimate_lipschitz(X, np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="percentile"):
        estimate_lipschitz(X, np.array([1.0, 0.5]), percentile=101)

"""uvp_plugins.adacent.histories: sparse, non-finite (step, value) reports -> dense histories."""

from __future__ import annotations

import math

import numpy as np

from uvp_plugins.adacent.curves import pred_last_slope
from uvp_plugins.adacent.histories import best_value, dense_history, value_at_depth


def test_dense_history_interpolates_and_drops_non_finite() -> None:
    h, last = dense_history({0: 0.1, 2: 0.3, 3: math.nan, 4: 0.4, 5: math.inf})
    np.testing.assert_allclose(h, [0.1, 0.2, 0.3, 0.35, 0.4])
    assert last == 4
    h, last = dense_history({1: math.nan})
    assert h.size == 0 and last == -1


def test_interpolated_last_slope_stays_optimistic_on_concave_curves() -> None:
    T = 30
    curve = {b: 1 - 0.8**b for b in range(1, T + 1)}
    for every in (1, 3, 5):
        reported = {b: v for b, v in curve.items() if b % every == 0 and b <= 12}
        h, last = dense_history(reported)
        pred = pred_last_slope(h, h.size + (T - last))
        assert pred >= curve[T]


def test_value_at_depth_is_the_envelope_or_the_latest_or_first() -> None:
    iv = {1: 0.2, 2: 0.5, 3: 0.4, 6: 0.9}
    assert value_at_depth(iv, 3) == 0.5
    assert value_at_depth(iv, 3, maximize=False) == 0.2
    assert value_at_depth({1: 0.2, 2: 0.3}, 10) == 0.3  # not reached: best so far
    assert value_at_depth({5: 0.7, 9: 0.8}, 2) == 0.7  # only later reports: the first one
    assert math.isnan(value_at_depth({1: math.nan}, 1))


def test_best_value() -> None:
    assert best_value([0.1, math.nan, 0.3, math.inf]) == 0.3
    assert best_value([0.1, 0.3], maximize=False) == 0.1
    assert math.isnan(best_value([]))

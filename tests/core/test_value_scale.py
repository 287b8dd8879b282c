"""uvp_plugins.adacent.value_scale: the positive, higher-is-better scale of the UVP ratios."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from uvp_plugins.adacent.kcenter import enhancement_factors
from uvp_plugins.adacent.value_scale import FLOOR, positive_scores

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def test_rule_1_positive_maximise_is_identity() -> None:
    assert positive_scores([0.5, 0.9, 0.7]).tolist() == [0.5, 0.9, 0.7]


def test_rule_2_positive_minimise_is_reciprocal_so_eta_is_loss_ratio() -> None:
    s = positive_scores([0.2, 0.1, 0.4], maximize=False)
    np.testing.assert_allclose(s, [5.0, 10.0, 2.5])
    np.testing.assert_allclose(enhancement_factors(s), [2.0, 1.0, 4.0])  # v_c / v_best


def test_rule_3_non_positive_values_affine_to_floor_one() -> None:
    np.testing.assert_allclose(positive_scores([-3.0, -1.0, -2.0]), [FLOOR, 1.0, (1 + FLOOR) / 2])
    # minimising with a zero loss: oriented -v, best (0.0) -> 1, worst -> FLOOR
    np.testing.assert_allclose(positive_scores([0.0, 2.0], maximize=False), [1.0, FLOOR])
    assert positive_scores([-1.0, -1.0]).tolist() == [1.0, 1.0]


def test_non_finite_values_become_nan_and_are_ignored() -> None:
    s = positive_scores([0.5, math.nan, math.inf, -math.inf, 0.9])
    assert s[0] == 0.5 and s[4] == 0.9 and np.isnan(s[1:4]).all()
    assert np.isnan(positive_scores([math.nan])).all()
    assert positive_scores([]).shape == (0,)


@given(st.lists(finite, min_size=1, max_size=20), st.booleans())
def test_scores_positive_and_order_preserving(values: list[float], maximize: bool) -> None:
    s = positive_scores(values, maximize)
    assert np.all(s > 0)
    v = np.asarray(values)
    for i in range(len(v)):
        for j in range(len(v)):
            better = v[i] > v[j] if maximize else v[i] < v[j]
            if better:
                assert s[i] >= s[j]
    # usable as enhancement factors: finite and >= 1
    eta = enhancement_factors(s)
    assert np.all(np.isfinite(eta)) and np.all(eta >= 1.0)


def test_tiny_positive_losses_do_not_overflow_the_ratios() -> None:
    # 1 / 2.2e-309 overflows to inf (found by hypothesis in CI): rule 3 takes over.
    s = positive_scores([2.225073858507203e-309], maximize=False)
    assert s.tolist() == [1.0]
    s = positive_scores([5e-324, 1e6])  # max / min overflows: rule 3, still order preserving
    np.testing.assert_allclose(s, [FLOOR, 1.0])
    eta = enhancement_factors(positive_scores([1e-300, 0.5, 1e6], maximize=False))
    assert np.all(np.isfinite(eta)) and eta.min() == 1.0

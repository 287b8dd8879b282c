"""The Gaussian-process surrogate of the sampler's exploitation step (numpy/scipy only)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import check_grad

from uvp_plugins.adacent.surrogate import GaussianProcess, expected_improvement


def _data(n: int = 40, d: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(4 * X[:, 0]) + (X[:, 1] - 0.5) ** 2
    return X, y


def test_the_likelihood_gradient_is_exact() -> None:
    X, y = _data()
    ys = (y - y.mean()) / y.std()
    sq = (X[:, None, :] - X[None, :, :]) ** 2
    gp = GaussianProcess()
    theta = np.array([-0.3, 0.4, 0.1, -4.0])
    f = lambda t: gp._neg_log_posterior(t, X, ys, sq)[0]  # noqa: E731
    g = lambda t: gp._neg_log_posterior(t, X, ys, sq)[1]  # noqa: E731
    assert check_grad(f, g, theta) < 1e-4 * max(1.0, float(np.abs(g(theta)).max()))


def test_posterior_interpolates_and_is_uncertain_far_from_data() -> None:
    X, y = _data(60)
    gp = GaussianProcess().fit(X, y)
    mean, std = gp.predict(X)
    assert np.max(np.abs(mean - y)) < 0.05 * (y.max() - y.min())
    _, far = gp.predict(np.array([[3.0, 3.0]]))
    assert far[0] > 5 * std.mean()
    test = np.random.default_rng(9).random((200, 2))
    truth = np.sin(4 * test[:, 0]) + (test[:, 1] - 0.5) ** 2
    pred, _ = gp.predict(test)
    assert np.corrcoef(pred, truth)[0, 1] > 0.95


def test_fit_is_deterministic_and_fixed_hyperparameters_are_reused() -> None:
    X, y = _data(30)
    a, b = GaussianProcess().fit(X, y), GaussianProcess().fit(X, y)
    assert a.theta is not None and np.array_equal(a.theta, b.theta)
    c = GaussianProcess().fit(X, y, theta=a.theta)
    assert np.array_equal(c.predict(X[:5])[0], a.predict(X[:5])[0])


def test_expected_improvement_closed_form() -> None:
    assert expected_improvement(np.array([1.0]), np.array([0.0]), 0.5)[0] == pytest.approx(0.5)
    # mean at the incumbent: EI = std * pdf(0)
    assert expected_improvement(np.array([0.0]), np.array([2.0]), 0.0)[0] == pytest.approx(
        2.0 / math.sqrt(2 * math.pi)
    )
    ei = expected_improvement(np.array([0.0, 0.0, 1.0]), np.array([0.1, 1.0, 0.1]), 0.5)
    assert ei[1] > ei[0] and ei[2] > ei[1]


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="X must be"):
        GaussianProcess().fit(np.zeros(3), np.zeros(3))
    with pytest.raises(RuntimeError, match="fit"):
        GaussianProcess().predict(np.zeros((1, 2)))

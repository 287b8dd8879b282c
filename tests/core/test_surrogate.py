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


@pytest.mark.parametrize("heteroscedastic", [False, True])
def test_the_likelihood_gradient_is_exact(heteroscedastic: bool) -> None:
    X, y = _data()
    ys = (y - y.mean()) / y.std()
    sq = (X[:, None, :] - X[None, :, :]) ** 2
    extra = np.linspace(0.0, 0.5, X.shape[0]) if heteroscedastic else np.zeros(X.shape[0])
    gp = GaussianProcess()
    theta = np.array([-0.3, 0.4, 0.1, -4.0])
    f = lambda t: gp._neg_log_posterior(t, X, ys, sq, extra)[0]  # noqa: E731
    g = lambda t: gp._neg_log_posterior(t, X, ys, sq, extra)[1]  # noqa: E731
    assert check_grad(f, g, theta) < 1e-4 * max(1.0, float(np.abs(g(theta)).max()))


def test_known_noise_makes_an_observation_count_less() -> None:
    X = np.array([[0.1], [0.5], [0.9]])
    y = np.array([0.0, 1.0, 0.0])
    theta = np.array([np.log(0.3), 0.0, np.log(1e-4)])
    exact = GaussianProcess().fit(X, y, theta=theta)
    rough = GaussianProcess().fit(X, y, theta=theta, noise=np.array([0.0, 5.0, 0.0]))
    m_exact, _ = exact.predict(np.array([[0.5]]))
    m_rough, _ = rough.predict(np.array([[0.5]]))
    assert m_exact[0] == pytest.approx(1.0, abs=1e-2) and m_rough[0] < 0.8
    with pytest.raises(ValueError, match="variances >= 0"):
        GaussianProcess().fit(X, y, noise=np.array([0.0, -1.0, 0.0]))


def test_log_expected_improvement_matches_the_closed_form_and_never_underflows() -> None:
    from uvp_plugins.adacent.surrogate import expected_improvement, log_expected_improvement

    mean = np.linspace(-3.0, 3.0, 61)
    std = np.full_like(mean, 0.7)
    assert np.allclose(np.exp(log_expected_improvement(mean, std, 0.5)),
                       expected_improvement(mean, std, 0.5), rtol=1e-9, atol=1e-300)
    far = log_expected_improvement(np.array([-40.0, -60.0]), np.array([1.0, 1.0]), 0.0)
    assert np.all(np.isfinite(far)) and far[0] > far[1]


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


def test_lengthscale_prior_is_named_and_changes_the_fit() -> None:
    """``lengthscale_prior`` picks a prior of ``LENGTHSCALE_PRIORS``; Hvarfner et al.'s (issue 17)
    centres the lengthscales higher, so on the same few points the fit is smoother."""
    with pytest.raises(ValueError, match="lengthscale_prior must be one of 'sqrt-d', 'hvarfner'; got 'flat'"):
        GaussianProcess(lengthscale_prior="flat")
    rng = np.random.default_rng(0)
    X = rng.random((12, 4))
    y = np.sin(6 * X[:, 0]) + X[:, 1]
    short = GaussianProcess().fit(X, y).theta
    long = GaussianProcess(lengthscale_prior="hvarfner").fit(X, y).theta
    assert short is not None and long is not None
    assert np.mean(long[:4]) > np.mean(short[:4])

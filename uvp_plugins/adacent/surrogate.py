"""A small Gaussian-process surrogate (numpy/scipy) for the sampler's exploitation step.

Gaussian-process regression with a Matern-5/2 kernel with one lengthscale per coordinate of the
distance embedding (the space :mod:`uvp_plugins.space` measures distances in), a constant mean
(the data are standardised) and Gaussian noise; hyperparameters by maximum a posteriori
(L-BFGS-B on the log marginal likelihood with analytic gradients, Rasmussen & Williams 2006,
Eq. 5.8-5.9) under the dimension-scaled log-normal lengthscale prior of Hvarfner et al. (2024,
"Vanilla Bayesian optimization performs great in high dimensions", the default of BoTorch and
Optuna's GPSampler family): ``log l ~ N(sqrt(2) + log(D)/2, sqrt(3))``. Expected improvement in
closed form (Jones et al. 1998).

The fit is deterministic (fixed start, no random restarts), so two processes that fit the same
data get the same model. Cost: ``O(n^3)`` per likelihood evaluation; callers cap ``n``.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((30, 2)); y = -((X - 0.3) ** 2).sum(axis=1)
    >>> gp = GaussianProcess().fit(X, y)
    >>> mean, std = gp.predict(np.array([[0.3, 0.3], [0.9, 0.9]]))
    >>> bool(mean[0] > mean[1])
    True
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.optimize import minimize
from scipy.special import ndtr

__all__ = ["GaussianProcess", "expected_improvement"]

_SQRT5 = math.sqrt(5.0)
#: bounds of the log hyperparameters (lengthscales, signal variance, noise variance)
_LOG_LS_BOUNDS = (math.log(1e-3), math.log(1e3))
_LOG_SIGNAL_BOUNDS = (math.log(1e-2), math.log(1e2))
_LOG_NOISE_BOUNDS = (math.log(1e-6), math.log(1.0))
#: prior on the log noise variance (standardised data): mostly small noise
_NOISE_PRIOR = (math.log(1e-3), 2.0)
#: prior on the log signal variance (standardised data)
_SIGNAL_PRIOR = (0.0, 1.0)
_JITTER = 1e-8


def _matern52(r: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``(1 + s + s^2/3) exp(-s)``, ``s = sqrt(5) r``; on temporaries in place (same operations
    in the same order as the plain expression, so the same values). With ``out=r``, ``r`` is
    overwritten (large arrays: fewer fresh pages to fault in)."""
    s = np.multiply(_SQRT5, r, out=out)
    res = 1.0 + s
    sq = s * s
    sq /= 3.0
    res += sq
    np.negative(s, out=s)
    np.exp(s, out=s)
    res *= s
    return res


class GaussianProcess:
    """GP regression, Matern-5/2 ARD kernel, MAP hyperparameters (see the module doc).

    Args:
        max_iter: L-BFGS-B iterations of the hyperparameter fit.
    """

    def __init__(self, max_iter: int = 60) -> None:
        self.max_iter = int(max_iter)
        self.theta: np.ndarray | None = None  # log lengthscales..., log signal, log noise
        self._X = np.empty((0, 0))
        self._y_mean = 0.0
        self._y_std = 1.0
        self._L = np.empty((0, 0))
        self._alpha = np.empty(0)

    # ------------------------------------------------------------ hyperparameters
    @staticmethod
    def _prior_ls(D: int) -> tuple[float, float]:
        return math.sqrt(2.0) + 0.5 * math.log(D), math.sqrt(3.0)

    def _initial(self, D: int) -> np.ndarray:
        mu, _ = self._prior_ls(D)
        return np.concatenate([np.full(D, mu), [_SIGNAL_PRIOR[0], _NOISE_PRIOR[0]]])

    def _neg_log_posterior(
        self, theta: np.ndarray, X: np.ndarray, y: np.ndarray, sq: np.ndarray
    ) -> tuple[float, np.ndarray]:
        n, D = X.shape
        ls = np.exp(theta[:D])
        signal, noise = math.exp(theta[D]), math.exp(theta[D + 1])
        scaled = sq / (ls * ls)[None, None, :]  # (n, n, D) squared differences / l^2
        r = np.sqrt(np.maximum(scaled.sum(axis=2), 0.0))
        base = _matern52(r)
        K = signal * base + (noise + _JITTER) * np.eye(n)
        try:
            L = cholesky(K, lower=True)
        except np.linalg.LinAlgError:
            return 1e25, np.zeros_like(theta)
        alpha = cho_solve((L, True), y)
        nll = 0.5 * float(y @ alpha) + float(np.log(np.diag(L)).sum()) + 0.5 * n * math.log(2 * math.pi)
        W = np.outer(alpha, alpha) - cho_solve((L, True), np.eye(n))  # alpha alpha^T - K^-1
        # dK/dlog l_d = signal * (5/3) (1 + sqrt5 r) exp(-sqrt5 r) * (x_d - x'_d)^2 / l_d^2
        common = signal * (5.0 / 3.0) * (1.0 + _SQRT5 * r) * np.exp(-_SQRT5 * r)
        grad = np.empty_like(theta)
        grad[:D] = -0.5 * np.einsum("ij,ijd->d", W * common, scaled)
        grad[D] = -0.5 * float(np.sum(W * (signal * base)))
        grad[D + 1] = -0.5 * float(np.trace(W)) * noise
        # log-normal priors (negative log densities up to constants)
        mu, sd = self._prior_ls(D)
        nlp = float(((theta[:D] - mu) ** 2).sum()) / (2 * sd * sd)
        grad[:D] += (theta[:D] - mu) / (sd * sd)
        for j, (m, s) in ((D, _SIGNAL_PRIOR), (D + 1, _NOISE_PRIOR)):
            nlp += (theta[j] - m) ** 2 / (2 * s * s)
            grad[j] += (theta[j] - m) / (s * s)
        return nll + nlp, grad

    # ------------------------------------------------------------------ fit
    def fit(self, X: np.ndarray, y: np.ndarray, theta: np.ndarray | None = None) -> GaussianProcess:
        """Fit to ``X`` (``(n, D)``) and ``y`` (``(n,)``, higher or lower - no direction here).
        With ``theta`` given, its hyperparameters are used as they are (no optimisation)."""
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        if X.ndim != 2 or y.shape != (X.shape[0],) or X.shape[0] < 1:
            raise ValueError(f"X must be (n, D) and y (n,), got {X.shape} and {y.shape}")
        n, D = X.shape
        self._y_mean = float(y.mean())
        self._y_std = float(y.std()) if n > 1 and y.std() > 0 else 1.0
        ys = (y - self._y_mean) / self._y_std
        if theta is None:
            sq = (X[:, None, :] - X[None, :, :]) ** 2
            bounds = [_LOG_LS_BOUNDS] * D + [_LOG_SIGNAL_BOUNDS, _LOG_NOISE_BOUNDS]
            res = minimize(
                self._neg_log_posterior,
                self._initial(D),
                args=(X, ys, sq),
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                options={"maxiter": self.max_iter},
            )
            theta = np.asarray(res.x, dtype=float)
        self.theta = np.asarray(theta, dtype=float)
        self._X = X
        K = self._kernel(X, X) + (math.exp(self.theta[D + 1]) + _JITTER) * np.eye(n)
        self._L = cholesky(K, lower=True)
        self._alpha = cho_solve((self._L, True), ys)
        return self

    def _kernel(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        assert self.theta is not None
        D = A.shape[1]
        ls = np.exp(self.theta[:D])
        a, b = A / ls, B / ls
        # (a*a).sum(1)[:, None] + (b*b).sum(1)[None, :] - 2 a b^T, then sqrt(max(., 0)), then
        # the kernel: in place on one (len(A), len(B)) array (same values, fewer fresh pages)
        cross = a @ b.T
        cross *= 2.0
        r = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :]
        r -= cross
        np.maximum(r, 0.0, out=r)
        np.sqrt(r, out=r)
        k = _matern52(r, out=cross)
        k *= math.exp(self.theta[D])
        return k

    def predict(self, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation (of the latent function) at ``Xs``."""
        Ks = self._cross(Xs)
        return self._mean(Ks), self._std(Ks)

    def _cross(self, Xs: np.ndarray) -> np.ndarray:
        if self.theta is None:
            raise RuntimeError("fit() first")
        return self._kernel(np.asarray(Xs, dtype=float), self._X)

    def _mean(self, Ks: np.ndarray) -> np.ndarray:
        return self._y_mean + self._y_std * (Ks @ self._alpha)

    def _std(self, Ks: np.ndarray) -> np.ndarray:
        assert self.theta is not None
        v = solve_triangular(self._L, Ks.T, lower=True)
        v *= v
        var = math.exp(self.theta[self._X.shape[1]]) - v.sum(axis=0)
        return self._y_std * np.sqrt(np.maximum(var, 1e-12))


def expected_improvement(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """``E[max(f - best, 0)]`` for ``f ~ N(mean, std^2)`` (maximisation)."""
    std = np.maximum(np.asarray(std, dtype=float), 1e-12)
    z = (np.asarray(mean, dtype=float) - best) / std
    pdf = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    return std * (z * ndtr(z) + pdf)

"""Tobit negative log-likelihood (Eggensperger et al., *Neural Model-based Optimization with
Right-Censored Observations*, Eq. 3 and Eq. 4) and its gradient.

For an observation ``y`` with predicted mean ``mu`` and standard deviation ``sigma`` and
``z = (y - mu) / sigma``:

* uncensored (``I = 0``): ``-log(phi(z) / sigma) = log(sigma) + z**2 / 2 + log(2 pi) / 2``
  (the Gaussian NLL of Eq. 3, including the ``1/sigma`` Jacobian of the density of ``y``);
* right-censored (``I = 1``, ``y`` is only a lower bound): ``-log(1 - Phi(z))``, evaluated as
  ``-log_ndtr(-z)`` so that it stays finite and accurate for ``z`` far in either tail.

With no censored observation the loss is exactly the Gaussian NLL. Everything is vectorised and
broadcasts (e.g. ``y`` of shape ``(n,)`` against ``mu`` of shape ``(members, n)``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import log_ndtr

__all__ = [
    "censor_at_cutoffs",
    "censor_nonfinite",
    "gaussian_nll",
    "inverse_mills_ratio",
    "tobit_nll",
    "tobit_nll_grad",
    "truncated_normal_mean",
]

_HALF_LOG_2PI = 0.5 * float(np.log(2.0 * np.pi))


def inverse_mills_ratio(z: ArrayLike) -> NDArray[np.float64]:
    """The hazard ``phi(z) / (1 - Phi(z))`` of the standard normal, computed in log space.

    It is the derivative of the censored term ``-log(1 - Phi(z))`` with respect to ``z`` and the
    shift of the mean of a normal truncated from below at ``z`` standard deviations.
    """
    z = np.asarray(z, dtype=float)
    return np.asarray(np.exp(-0.5 * z * z - _HALF_LOG_2PI - log_ndtr(-z)))


def _as_arrays(
    y: ArrayLike, mu: ArrayLike, sigma: ArrayLike, censored: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    y_ = np.asarray(y, dtype=float)
    mu_ = np.asarray(mu, dtype=float)
    sigma_ = np.asarray(sigma, dtype=float)
    if np.any(sigma_ <= 0):
        raise ValueError("sigma must be > 0 everywhere")
    if censored is None:
        c_ = np.zeros(np.shape(y_), dtype=bool)
    else:
        c_ = np.asarray(censored)
        if c_.dtype != bool:
            raise TypeError(f"censored must be a boolean array, got dtype {c_.dtype}")
    return y_, mu_, sigma_, c_


def tobit_nll(
    y: ArrayLike,
    mu: ArrayLike,
    sigma: ArrayLike,
    censored: ArrayLike | None = None,
    reduction: Literal["sum", "mean", "none"] = "sum",
) -> float | NDArray[np.float64]:
    """Tobit negative log-likelihood, Eq. 4 of the paper.

    Args:
        y: observed values; where ``censored`` is True, a lower bound of the true value.
        mu: predicted means (broadcastable against ``y``).
        sigma: predicted standard deviations (> 0, broadcastable against ``y``).
        censored: boolean flags ``I_i`` (True = right-censored); None means no censoring, which
            gives the Gaussian NLL of Eq. 3.
        reduction: ``"sum"`` (Eq. 4), ``"mean"`` or ``"none"`` (per-observation terms).
    """
    y_, mu_, sigma_, c_ = _as_arrays(y, mu, sigma, censored)
    z = (y_ - mu_) / sigma_
    exact = np.log(sigma_) + 0.5 * z * z + _HALF_LOG_2PI
    terms = np.where(c_, -log_ndtr(-z), exact)
    if reduction == "none":
        return np.asarray(terms)
    if reduction == "sum":
        return float(np.sum(terms))
    if reduction == "mean":
        return float(np.mean(terms))
    raise ValueError(f"reduction must be 'sum', 'mean' or 'none', got {reduction!r}")


def gaussian_nll(
    y: ArrayLike,
    mu: ArrayLike,
    sigma: ArrayLike,
    reduction: Literal["sum", "mean", "none"] = "sum",
) -> float | NDArray[np.float64]:
    """Gaussian negative log-likelihood (Eq. 3 with the ``log sigma`` term): Tobit without censoring."""
    return tobit_nll(y, mu, sigma, None, reduction=reduction)


def tobit_nll_grad(
    y: ArrayLike,
    mu: ArrayLike,
    sigma: ArrayLike,
    censored: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-observation gradients ``(dL/dmu, dL/dsigma)`` of :func:`tobit_nll` (``reduction="none"``).

    Uncensored: ``dL/dmu = -z / sigma``, ``dL/dsigma = (1 - z**2) / sigma``.
    Censored: with the hazard ``h = phi(z) / (1 - Phi(z))``, ``dL/dmu = -h / sigma`` and
    ``dL/dsigma = -h z / sigma``.
    """
    y_, mu_, sigma_, c_ = _as_arrays(y, mu, sigma, censored)
    z = (y_ - mu_) / sigma_
    inv = 1.0 / sigma_
    if np.any(c_):
        h = np.where(c_, inverse_mills_ratio(np.where(c_, z, 0.0)), 0.0)
        dmu = np.where(c_, -h * inv, -z * inv)
        dsigma = np.where(c_, -h * z * inv, (1.0 - z * z) * inv)
    else:
        dmu = -z * inv
        dsigma = (1.0 - z * z) * inv
    return np.asarray(dmu), np.asarray(dsigma)


def truncated_normal_mean(mu: ArrayLike, sigma: ArrayLike, lower: ArrayLike) -> NDArray[np.float64]:
    """``E[Y | Y > lower]`` for ``Y ~ N(mu, sigma**2)``: ``mu + sigma * h((lower - mu) / sigma)``.

    This is the imputation step of Schmee & Hahn (1979); the result is never below ``lower``.
    """
    mu_ = np.asarray(mu, dtype=float)
    sigma_ = np.asarray(sigma, dtype=float)
    lower_ = np.asarray(lower, dtype=float)
    alpha = (lower_ - mu_) / sigma_
    return np.asarray(np.maximum(mu_ + sigma_ * inverse_mills_ratio(alpha), lower_))


def censor_nonfinite(
    y: ArrayLike, censored: ArrayLike | None = None, cap: float | None = None
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Turn non-finite observations (e.g. a crash or timeout cost of ``inf``) into right-censored
    ones: their value becomes ``cap`` (default: the largest finite value, 0 if there is none) and
    their flag True. A capped run is at least as bad as the cap, so it is a lower bound there.

    ``NaN`` is treated like ``+inf``. Returns new arrays; the inputs are not modified.
    """
    y_ = np.array(y, dtype=float).reshape(-1)
    c_ = np.zeros(y_.shape[0], dtype=bool) if censored is None else np.array(censored, dtype=bool).reshape(-1)
    if c_.shape != y_.shape:
        raise ValueError(f"censored must have length {y_.shape[0]} (as y), got {c_.shape[0]}")
    bad = ~np.isfinite(y_)
    if bad.any():
        if cap is None:
            finite = y_[~bad]
            cap = float(finite.max()) if finite.size else 0.0
        elif not np.isfinite(cap):
            raise ValueError(f"cap must be finite, got {cap!r}")
        y_[bad] = cap
        c_[bad] = True
    return y_, c_


def censor_at_cutoffs(
    y: ArrayLike, cutoffs: ArrayLike, censored: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Right-censoring by per-run cutoffs (the paper's Eq. 2, ``c_i = min(kappa_i, c(lambda_i))``).

    A run stopped at its cutoff ``kappa_i`` reports a cost ``>= kappa_i`` (the cutoff itself, or
    e.g. ``cutoff + 1`` as in SMAC's capping example); all that is known is that its runtime
    exceeds ``kappa_i``. Such a row becomes ``(kappa_i, censored)``. Rows with a NaN or infinite
    cutoff (no cutoff recorded) and rows below their cutoff keep their value; ``censored`` flags
    already set (e.g. TIMEOUT runs) stay set.

    Example:
        >>> censor_at_cutoffs([1.0, 5.0, 6.0, 2.0], [4.0, 4.0, 5.0, float("nan")])
        (array([1., 4., 5., 2.]), array([False,  True,  True, False]))
    """
    y_ = np.array(y, dtype=float).reshape(-1)
    k_ = np.array(cutoffs, dtype=float).reshape(-1)
    if k_.shape != y_.shape:
        raise ValueError(f"cutoffs must have length {y_.shape[0]} (as y), got {k_.shape[0]}")
    c_ = np.zeros(y_.shape[0], dtype=bool) if censored is None else np.array(censored, dtype=bool).reshape(-1)
    if c_.shape != y_.shape:
        raise ValueError(f"censored must have length {y_.shape[0]} (as y), got {c_.shape[0]}")
    hit = np.isfinite(k_) & (y_ >= k_)
    y_[hit] = k_[hit]
    c_ |= hit
    return y_, c_

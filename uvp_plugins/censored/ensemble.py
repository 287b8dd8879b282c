"""Ensemble of Tobit-loss networks (Eggensperger et al., Eq. 4 and Eq. 5) with Thompson sampling.

Pre-processing (paper, "Implementation Details"): inputs are min-max scaled to ``[0, 1]`` by the
model itself (bounds learnt from the training inputs unless ``input_bounds`` is given), targets
are optionally log-transformed (``log_y=True``, for positive targets such as runtimes; the paper
models log runtimes) and then normalised to zero mean and unit variance over *all* observations,
censored ones included (their value is the censoring threshold). The censoring flags survive
both transformations because they are monotone.

Training deviates from the paper's PyTorch recipe (SGD with momentum, batch 16, 10 000 epochs)
to keep the per-iteration overhead of model-based optimisation small: full-batch (or
mini-batch above ``batch_size``) AdamW with a one-cycle learning-rate schedule peaking at
``lr = 1e-2`` (the paper's peak), weight decay ``1e-4`` and the paper's element-wise gradient
clipping, for a fixed number of parameter updates ``n_steps``.

State: :meth:`TobitEnsemble.state_dict` is the model as versioned JSON (format
:data:`STATE_FORMAT`, ``"uvp-tobit-ensemble/1"``: the constructor's parameters and, once fitted, the network weights
and the input/target scalings), restored by :meth:`TobitEnsemble.from_state_dict` to a model
whose predictions are bit for bit the same (the float32 weights survive the JSON round trip
exactly).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from uvp_plugins.censored.instances import marginal_over_instances, pair_rows
from uvp_plugins.censored.mlp import AdamW, MLPEnsembleNet, softplus
from uvp_plugins.censored.tobit import tobit_nll_grad
from uvp_plugins.contract import StateFormat

__all__ = ["TobitEnsemble"]

#: the state format (:mod:`uvp_plugins.contract`); version 1 is the only one written so far
STATE_FORMAT = StateFormat("uvp-tobit-ensemble", 1)


def _check_positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_positive_float(name: str, value: float, allow_zero: bool = False) -> float:
    v = float(value)
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite float {bound}, got {value!r}")
    return v


class TobitEnsemble:
    """Ensemble of MLPs with a mean and a softplus standard-deviation head, trained with the
    Tobit loss (Eq. 4) on right-censored data.

    A model of the core contract with persistent state (:class:`uvp_plugins.contract.Persistent`;
    it is fitted and asked for predictions, not driven by ask/tell): its state is
    :data:`STATE_FORMAT` (``"uvp-tobit-ensemble/1"``).

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(60, 2))
        >>> y = X.sum(axis=1) + 0.05 * rng.normal(size=60)
        >>> censored = y > 1.4                      # runs capped at 1.4
        >>> y = np.minimum(y, 1.4)                  # a lower bound where censored
        >>> model = TobitEnsemble(n_members=3, n_steps=200, seed=0).fit(X, y, censored)
        >>> mean, var = model.predict(X[:5])
        >>> mean.shape, var.shape
        ((5,), (5,))
        >>> import json
        >>> twin = TobitEnsemble.from_state_dict(json.loads(json.dumps(model.state_dict())))
        >>> bool(np.array_equal(twin.predict(X[:5])[0], mean))
        True

    Args:
        n_members: ensemble size ``M`` of Eq. 5 (paper: 5). With ``M = 1`` the variance is 0.
        hidden: hidden layer widths (paper: three tanh layers of 50 units).
        n_steps: number of AdamW parameter updates per fit.
        lr: peak learning rate of the one-cycle schedule.
        batch_size: full-batch training up to this many observations, mini-batches beyond.
        weight_decay: decoupled weight decay (paper: 1e-4).
        grad_clip: element-wise gradient clipping bound (paper: 0.1); None disables it.
        min_std: lower bound of the predicted standard deviation in normalised units.
        log_y: model ``log(y)`` (targets must be > 0). :meth:`predict` then returns the mean and
            variance of ``log(y)`` -- the modelled quantity, as Eq. 5 is defined on it -- and
            :meth:`predict_median` gives ``exp(mean)`` in the original units.
        loss: ``"tobit"`` (Eq. 4) or ``"gaussian"`` (Eq. 3: censored values treated as exact,
            the paper's baseline *I*).
        input_bounds: ``(lower, upper)`` arrays used to scale inputs to ``[0, 1]``; None learns
            them from the training inputs (constant columns map to 0).
        all_censored: what :meth:`fit` does when every observation is censored and
            ``loss="tobit"`` (the likelihood then has no finite maximum): ``"raise"`` a
            ValueError, or ``"gaussian"``: warn and fit the censoring values as exact.
        seed: seed of the initialisation and the mini-batch order; equal seeds give equal fits.
    """

    #: the format of :meth:`state_dict` (``"uvp-tobit-ensemble/1"``)
    STATE_FORMAT: ClassVar[StateFormat] = STATE_FORMAT

    def __init__(
        self,
        n_members: int = 5,
        *,
        hidden: Sequence[int] = (50, 50, 50),
        n_steps: int = 600,
        lr: float = 1e-2,
        batch_size: int = 128,
        weight_decay: float = 1e-4,
        grad_clip: float | None = 0.1,
        min_std: float = 1e-3,
        log_y: bool = False,
        loss: Literal["tobit", "gaussian"] = "tobit",
        input_bounds: tuple[ArrayLike, ArrayLike] | None = None,
        all_censored: Literal["raise", "gaussian"] = "raise",
        seed: int | None = 0,
    ) -> None:
        self.n_members = _check_positive_int("n_members", n_members)
        self.hidden = tuple(_check_positive_int("hidden", h) for h in hidden)
        self.n_steps = _check_positive_int("n_steps", n_steps)
        self.lr = _check_positive_float("lr", lr)
        self.batch_size = _check_positive_int("batch_size", batch_size)
        self.weight_decay = _check_positive_float("weight_decay", weight_decay, allow_zero=True)
        self.grad_clip = None if grad_clip is None else _check_positive_float("grad_clip", grad_clip)
        self.min_std = _check_positive_float("min_std", min_std)
        if not isinstance(log_y, (bool, np.bool_)):
            raise TypeError(f"log_y must be a bool, got {type(log_y).__name__}")
        self.log_y = bool(log_y)
        if loss not in ("tobit", "gaussian"):
            raise ValueError(f"loss must be 'tobit' or 'gaussian', got {loss!r}")
        self.loss = loss
        if all_censored not in ("raise", "gaussian"):
            raise ValueError(f"all_censored must be 'raise' or 'gaussian', got {all_censored!r}")
        self.all_censored = all_censored
        self.input_bounds = input_bounds
        self.seed = seed
        self._net: MLPEnsembleNet | None = None
        self._x_low: NDArray[np.float64] | None = None
        self._x_scale: NDArray[np.float64] | None = None
        self._y_mean = 0.0
        self._y_std = 1.0
        self.n_features_in_: int | None = None
        self.train_loss_: float | None = None

    # ------------------------------------------------------------------ validation
    def _check_X(self, X: ArrayLike, name: str = "X") -> NDArray[np.float64]:
        X_ = np.asarray(X, dtype=float)
        if X_.ndim != 2:
            raise ValueError(f"{name} must be a 2-d array (n_samples, n_features), got shape {X_.shape}")
        if not np.all(np.isfinite(X_)):
            raise ValueError(
                f"{name} contains NaN or inf; impute missing (e.g. inactive) inputs first"
            )
        if self.n_features_in_ is not None and X_.shape[1] != self.n_features_in_:
            raise ValueError(
                f"{name} has {X_.shape[1]} features but the model was fit on {self.n_features_in_}"
            )
        return X_

    @staticmethod
    def _check_y(y: ArrayLike, n: int) -> NDArray[np.float64]:
        y_ = np.asarray(y, dtype=float)
        if y_.ndim == 2 and y_.shape[1] == 1:
            y_ = y_[:, 0]
        if y_.ndim != 1 or y_.shape[0] != n:
            raise ValueError(f"y must be a 1-d array of length {n} (rows of X), got shape {y_.shape}")
        if not np.all(np.isfinite(y_)):
            raise ValueError("y contains NaN or inf; all targets must be finite")
        return y_

    @staticmethod
    def usable_for_log(y: ArrayLike, censored: ArrayLike) -> NDArray[np.bool_]:
        """Rows a ``log_y`` fit keeps: every uncensored row, which must be > 0 (else ValueError
        naming ``log_y``), and the censored rows with a bound > 0. A right-censored value <= 0
        says only "the runtime exceeds a value <= 0", which every runtime does: it carries no
        information and is dropped (e.g. SMAC's adaptive capping can hand a run a cutoff of 0)."""
        y_ = np.asarray(y, dtype=float)
        c = np.asarray(censored, dtype=bool)
        bad = (y_ <= 0) & ~c
        if bad.any():
            raise ValueError(
                f"y must be > 0 where not censored when log_y=True (log of a runtime); got "
                f"{y_[bad][0]!r} at row {int(np.argmax(bad))}. Use log_y=False for costs that "
                "can be <= 0"
            )
        return np.asarray((y_ > 0) | ~c)

    @staticmethod
    def _check_censored(censored: ArrayLike | None, n: int) -> NDArray[np.bool_]:
        if censored is None:
            return np.zeros(n, dtype=bool)
        c = np.asarray(censored)
        if c.ndim == 2 and c.shape[1] == 1:
            c = c[:, 0]
        if c.ndim != 1 or c.shape[0] != n:
            raise ValueError(
                f"censored must be a 1-d boolean array of length {n} (rows of X), got shape {c.shape}"
            )
        if c.dtype != bool:
            if c.size and not np.all(np.isin(c, (0, 1))):
                raise TypeError("censored must hold booleans (or 0/1)")
            c = c.astype(bool)
        return c

    # ------------------------------------------------------------------ fitting
    def fit(self, X: ArrayLike, y: ArrayLike, censored: ArrayLike | None = None) -> TobitEnsemble:
        """Train all members on ``(X, y, censored)``.

        Args:
            X: inputs, shape ``(n, d)``, finite.
            y: targets, shape ``(n,)``, finite; where ``censored`` is True, ``y`` is a lower
                bound of the true value (a right-censored observation). With ``log_y`` the
                uncensored targets must be ``> 0`` and censored rows with a bound ``<= 0`` are
                left out (:meth:`usable_for_log`).
            censored: boolean flags of length ``n``; None means nothing is censored.

        A single observation is allowed (targets are then only centred, not scaled, and every
        member predicts close to it). With ``loss="tobit"`` and every observation censored, see
        ``all_censored``.
        """
        self.n_features_in_ = None  # a refit may change the input dimension
        X_ = self._check_X(X)
        n = X_.shape[0]
        if n < 1:
            raise ValueError("fit needs at least one observation")
        y_ = self._check_y(y, n)
        c = self._check_censored(censored, n)
        if self.log_y:
            keep = self.usable_for_log(y_, c)
            if not keep.all():
                X_, y_, c = X_[keep], y_[keep], c[keep]
                n = X_.shape[0]
                if n < 1:
                    raise ValueError(
                        "fit needs at least one observation; with log_y=True every row was a "
                        "censored value <= 0, which carries no information"
                    )
        use_censoring = self.loss == "tobit"
        if use_censoring and c.all():
            if self.all_censored == "raise":
                raise ValueError(
                    "all observations are censored: the Tobit likelihood has no finite maximum; "
                    "pass all_censored='gaussian' to fit the censoring values as exact instead"
                )
            warnings.warn(
                "all observations are censored; fitting the censoring values as exact values",
                RuntimeWarning,
                stacklevel=2,
            )
            use_censoring = False
        flags = c if use_censoring else None

        t = np.log(y_) if self.log_y else y_
        self._y_mean = float(np.mean(t))
        std = float(np.std(t))
        self._y_std = std if std > 1e-12 else 1.0
        t = (t - self._y_mean) / self._y_std

        if self.input_bounds is None:
            low = X_.min(axis=0)
            span = X_.max(axis=0) - low
        else:
            low = np.asarray(self.input_bounds[0], dtype=float).reshape(-1)
            span = np.asarray(self.input_bounds[1], dtype=float).reshape(-1) - low
            if low.shape[0] != X_.shape[1] or span.shape[0] != X_.shape[1]:
                raise ValueError(
                    f"input_bounds must hold two arrays of length {X_.shape[1]} (features of X)"
                )
        self._x_low = low
        self._x_scale = np.where(span > 1e-12, 1.0 / np.where(span > 1e-12, span, 1.0), 0.0)
        self.n_features_in_ = X_.shape[1]
        Z = (X_ - low) * self._x_scale

        rng = np.random.default_rng(self.seed)
        net = MLPEnsembleNet(self.n_members, X_.shape[1], self.hidden, rng)
        self.train_loss_ = self._train(net, Z, t, flags, rng)
        self._net = net
        return self

    def _lr_at(self, step: int) -> float:
        """One-cycle schedule (Smith 2018): linear warm-up from lr/10 to lr over the first 10 %
        of the steps, then cosine decay to lr/100."""
        warm = max(1, self.n_steps // 10)
        if step < warm:
            return self.lr * (0.1 + 0.9 * step / warm)
        frac = (step - warm) / max(1, self.n_steps - warm)
        return self.lr * (0.01 + 0.99 * 0.5 * (1.0 + np.cos(np.pi * frac)))

    def _train(
        self,
        net: MLPEnsembleNet,
        Z: NDArray[np.float64],
        t: NDArray[np.float64],
        flags: NDArray[np.bool_] | None,
        rng: np.random.Generator,
    ) -> float:
        n = Z.shape[0]
        opt = AdamW(
            net.theta.size,
            weight_decay=self.weight_decay,
            clip=self.grad_clip,
            dtype=net.dtype.type,
        )
        full = n <= self.batch_size
        order = np.arange(n)
        pos = n
        dout = np.empty((net.n_members, min(n, self.batch_size), 2), dtype=net.dtype)
        loss = float("nan")
        for step in range(self.n_steps):
            if full:
                Zb, tb, cb = Z, t, flags
            else:
                if pos + self.batch_size > n:
                    order = rng.permutation(n)
                    pos = 0
                idx = order[pos : pos + self.batch_size]
                pos += self.batch_size
                Zb, tb = Z[idx], t[idx]
                cb = None if flags is None else flags[idx]
            out, acts = net.forward(Zb)
            mu = out[..., 0].astype(float)
            s = out[..., 1].astype(float)
            sigma = softplus(s) + self.min_std
            dmu, dsigma = tobit_nll_grad(tb, mu, sigma, cb)
            inv_n = 1.0 / Zb.shape[0]
            dout[..., 0] = dmu * inv_n
            dout[..., 1] = dsigma * net.scale_grad(s) * inv_n
            net.backward(Zb, acts, dout)
            opt.step(net.theta, net.grad, self._lr_at(step), net.decay_mask)
            if step == self.n_steps - 1:
                z = (tb - mu) / sigma
                loss = float(np.mean(np.log(sigma) + 0.5 * z * z)) if cb is None else float("nan")
        return loss

    # ------------------------------------------------------------------ state
    def _params(self) -> dict[str, Any]:
        bounds = None
        if self.input_bounds is not None:
            bounds = [np.asarray(b, dtype=float).reshape(-1).tolist() for b in self.input_bounds]
        return {
            "n_members": self.n_members,
            "hidden": list(self.hidden),
            "n_steps": self.n_steps,
            "lr": self.lr,
            "batch_size": self.batch_size,
            "weight_decay": self.weight_decay,
            "grad_clip": self.grad_clip,
            "min_std": self.min_std,
            "log_y": self.log_y,
            "loss": self.loss,
            "input_bounds": bounds,
            "all_censored": self.all_censored,
            "seed": self.seed,
        }

    def state_dict(self) -> dict[str, Any]:
        """The model as JSON-serialisable data: parameters, and the fit if there is one
        (format :data:`STATE_FORMAT`, ``"uvp-tobit-ensemble/1"``)."""
        fit: dict[str, Any] | None = None
        if self._net is not None and self._x_low is not None and self._x_scale is not None:
            fit = {
                "n_features": self.n_features_in_,
                "theta": [float(v) for v in self._net.theta],
                "x_low": self._x_low.tolist(),
                "x_scale": self._x_scale.tolist(),
                "y_mean": self._y_mean,
                "y_std": self._y_std,
                # NaN (a censored fit reports no plain loss) is stored as null: strict JSON
                "train_loss": (
                    None
                    if self.train_loss_ is None or not math.isfinite(self.train_loss_)
                    else self.train_loss_
                ),
            }
        return STATE_FORMAT.stamp({"params": self._params(), "fit": fit})

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> TobitEnsemble:
        """Rebuild a model from :meth:`state_dict` output; its predictions equal the saved
        model's. Every field is checked and named in the error if it is invalid."""
        if not isinstance(state, Mapping):
            raise TypeError(f"state must be a mapping (from state_dict()), got {type(state).__name__}")
        state = STATE_FORMAT.read(state)
        for key in ("params", "fit"):
            if key not in state:
                raise ValueError(f"state is missing {key!r}")
        params = dict(state["params"])
        if params.get("input_bounds") is not None:
            low, high = params["input_bounds"]
            params["input_bounds"] = (np.asarray(low, dtype=float), np.asarray(high, dtype=float))
        model = cls(**params)
        fit = state["fit"]
        if fit is None:
            return model
        if not isinstance(fit, dict):
            raise TypeError(f"state['fit'] must be a dict or None, got {type(fit).__name__}")
        for key in ("n_features", "theta", "x_low", "x_scale", "y_mean", "y_std"):
            if key not in fit:
                raise ValueError(f"state['fit'] is missing {key!r}")
        d = fit["n_features"]
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise ValueError(f"state['fit']['n_features'] must be an int >= 1, got {d!r}")
        net = MLPEnsembleNet(model.n_members, d, model.hidden, np.random.default_rng(0))
        theta = np.asarray(fit["theta"], dtype=float)
        if theta.shape != net.theta.shape or not np.all(np.isfinite(theta)):
            raise ValueError(f"state['fit']['theta'] must hold {net.theta.size} finite weights "
                             f"(n_members={model.n_members}, hidden={list(model.hidden)}, "
                             f"{d} inputs), got {theta.size} values")
        net.theta[...] = theta
        for key in ("x_low", "x_scale"):
            arr = np.asarray(fit[key], dtype=float)
            if arr.shape != (d,) or not np.all(np.isfinite(arr)):
                raise ValueError(f"state['fit'][{key!r}] must be {d} finite floats, got {fit[key]!r}")
        for key in ("y_mean", "y_std"):
            v = fit[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"state['fit'][{key!r}] must be a finite float, got {v!r}")
        if not fit["y_std"] > 0:
            raise ValueError(f"state['fit']['y_std'] must be > 0, got {fit['y_std']!r}")
        model._net = net
        model._x_low = np.asarray(fit["x_low"], dtype=float)
        model._x_scale = np.asarray(fit["x_scale"], dtype=float)
        model._y_mean = float(fit["y_mean"])
        model._y_std = float(fit["y_std"])
        model.n_features_in_ = d
        loss = fit.get("train_loss")
        model.train_loss_ = None if loss is None else float(loss)
        return model

    # ------------------------------------------------------------------ prediction
    def _forward(self, X: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self._net is None or self._x_low is None or self._x_scale is None:
            raise RuntimeError("TobitEnsemble is not fitted; call fit(X, y, censored) first")
        X_ = self._check_X(X)
        out, _ = self._net.forward((X_ - self._x_low) * self._x_scale)
        out = out.astype(float)
        mu = out[..., 0] * self._y_std + self._y_mean
        sigma = (softplus(out[..., 1]) + self.min_std) * self._y_std
        return mu, sigma

    def predict_members(self, X: ArrayLike) -> NDArray[np.float64]:
        """Each member's predicted mean, shape ``(M, n)``, in the modelled scale (``log y`` with
        ``log_y``), un-normalised."""
        return self._forward(X)[0]

    def predict_members_over_instances(
        self, configs: ArrayLike, features: ArrayLike, *, max_rows: int = 65536
    ) -> NDArray[np.float64]:
        """Each member's mean over instances, shape ``(M, n_configs)``, in the modelled scale.

        The model's inputs are ``[configuration, instance features]`` (algorithm configuration
        across instances); each configuration row of ``configs`` is combined with every row of
        ``features`` (:func:`~uvp_plugins.censored.instances.pair_rows`) and the member's
        predictions are reduced with
        :func:`~uvp_plugins.censored.instances.marginal_over_instances`: the log of the mean
        runtime with ``log_y``, the plain mean otherwise. The rows are evaluated in chunks of at
        most ``max_rows``. Eq. 5 over these marginal means gives the ensemble's mean and variance
        of the cost over instances; a Thompson sample of that cost is one member's row.
        """
        C = np.asarray(configs, dtype=float)
        F = np.asarray(features, dtype=float)
        if C.ndim != 2 or F.ndim != 2 or F.shape[0] < 1:
            raise ValueError(
                "configs and features must be 2-d with at least one instance row, got shapes "
                f"{C.shape} and {F.shape}"
            )
        if self.n_features_in_ is not None and C.shape[1] + F.shape[1] != self.n_features_in_:
            raise ValueError(
                f"configs ({C.shape[1]} columns) and features ({F.shape[1]} columns) must add up "
                f"to the {self.n_features_in_} inputs the model was fit on"
            )
        k = F.shape[0]
        step = max(1, int(max_rows) // k)
        out = np.empty((self.n_members, C.shape[0]))
        for start in range(0, C.shape[0], step):
            block = C[start : start + step]
            mu = self.predict_members(pair_rows(block, F))
            out[:, start : start + block.shape[0]] = marginal_over_instances(
                mu.reshape(self.n_members, block.shape[0], k), log_y=self.log_y
            )
        return out

    def predict(self, X: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Eq. 5: the ensemble mean and the variance of the members' means, each of shape
        ``(n,)``, in the modelled scale (``log y`` when ``log_y``; otherwise ``y``), i.e. after
        undoing the target normalisation. The members' aleatoric noise is *not* included (the
        paper models the true function value); see :meth:`predict_noise` for it."""
        mu = self.predict_members(X)
        return mu.mean(axis=0), mu.var(axis=0)

    def predict_noise(self, X: ArrayLike) -> NDArray[np.float64]:
        """Mean over members of the predicted aleatoric variance ``sigma**2`` (modelled scale)."""
        _, sigma = self._forward(X)
        return np.asarray((sigma * sigma).mean(axis=0))

    def predict_median(self, X: ArrayLike) -> NDArray[np.float64]:
        """The prediction in the original units of ``y``: ``exp(mean)`` with ``log_y`` (the median
        of a log-normal), the mean itself otherwise."""
        mean, _ = self.predict(X)
        return np.exp(mean) if self.log_y else mean

    def draw_member(self, rng: np.random.Generator) -> int:
        """Index of a uniformly drawn member (ensemble sampling, Lu & Van Roy 2017)."""
        return int(rng.integers(self.n_members))

    def sample_thompson(self, X: ArrayLike, rng: np.random.Generator) -> NDArray[np.float64]:
        """One Thompson sample of the objective at ``X``: the mean function of one member drawn
        uniformly with ``rng`` (modelled scale, shape ``(n,)``).

        Which variant: the paper trains *one fresh network per iteration* and uses its mean as the
        sample, because in regions with only censored data the members are merely constrained to
        predict above the threshold, so the ensemble variance there is arbitrary and
        variance-based acquisition functions over-explore; a single network's mean is a proper
        function draw (random initialisation = the posterior draw) and costs one network instead
        of M. That variant is ``TobitEnsemble(n_members=1, seed=<new seed each iteration>)``, and
        this method then returns that network's mean. With ``M > 1`` the method falls back to
        ensemble sampling (a member drawn per call); to evaluate *one* function on several
        batches, draw the index once with :meth:`draw_member` and index :meth:`predict_members`.
        """
        return self.predict_members(X)[self.draw_member(rng)]

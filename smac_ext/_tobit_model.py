"""SMAC3 surrogate model: the Tobit-loss neural ensemble of Eggensperger et al. (Eq. 4, Eq. 5).

:class:`TobitEnsembleModel` is a SMAC ``AbstractModel`` that only translates SMAC's data to the
core :class:`uvp_plugins.censored.TobitEnsemble`:

* **Inputs.** SMAC hands over configuration vectors (numeric hyperparameters in ``[0, 1]``,
  categoricals as choice indices, inactive conditional hyperparameters as NaN) followed by the
  instance features. The model one-hot encodes categoricals, scales ordinals to ``[0, 1]`` and,
  for every conditional hyperparameter, adds an *active* indicator column and imputes an inactive
  value with 0.5 (an inactive categorical is all zeros), so every network input lies in
  ``[0, 1]``. Constants are dropped.
* **Instances.** With ``Scenario(instances=..., instance_features=...)`` (algorithm
  configuration) one input row is ``[configuration, instance features]``: the network models the
  runtime of a configuration on an instance (features of any width; as SMAC's models, more than
  ``pca_components`` features are min-max scaled and reduced by PCA once there are enough rows).
  Features are scaled to ``[0, 1]`` over *all* the scenario's instances, so instances not run
  yet are not extrapolations. Where SMAC asks about configurations alone -- the acquisition
  maximiser, ``predict_marginalized`` -- the model answers for the cost over instances, the mean
  runtime over the scenario's instances (:meth:`uvp_plugins.censored.TobitEnsemble.
  predict_members_over_instances`; with ``log_y`` the log of that mean, as SMAC's log-forest
  marginalises). Instances *without* features: the model sees configurations only and fits the
  differences between instances as noise, like SMAC's own models then do; it logs this once (give
  ``instance_features``, e.g. one-hot instance ids, to model them).
* **Censoring flags.** SMAC's ``ConfigSelector`` calls ``model.train(X, Y)`` with whatever the
  run-history encoder returns. :class:`smac_ext.CensoredRunHistoryEncoder` returns ``Y`` with two
  columns, the cost and the censoring flag (1 = TIMEOUT, the cost is a lower bound); the model
  strips the second column. This keeps SMAC untouched and the flags travel with the very rows they
  describe. With SMAC's own encoders ``Y`` has one column and nothing is censored (timeouts are
  then fitted as exact values -- the paper's baseline *I*).
* **Targets.** Non-finite costs (e.g. ``crash_cost = inf`` of a run killed at
  ``trial_walltime_limit``) are treated as censored at the largest finite cost
  (:func:`uvp_plugins.censored.censor_nonfinite`). With ``log_y=True`` the uncensored costs must
  be > 0 (a censored bound <= 0, e.g. from a cutoff of 0, carries no information and is left
  out) and predictions are in log space (SMAC's convention for ``log_y`` models, as expected by
  ``EI(log=True)``); a scenario whose ``crash_cost`` is <= 0 is refused at construction. If every
  observation is censored the model warns and fits the censoring values as exact (the Tobit
  likelihood has no finite maximum then).
* **Thompson sampling.** Every call of ``train`` draws a fresh seed from the model's seeded RNG,
  so each SMAC iteration trains freshly initialised networks. :meth:`sample_functions` returns the
  mean function of one member chosen at training time (redrawn by
  :meth:`draw_thompson_member`); with ``n_members=1`` (the paper's setting, used by
  :func:`smac_ext.tobit_facade_kwargs`) that is "a single network trained from scratch in each
  iteration". The sample is a deterministic function between two trainings, so SMAC's local
  search can optimise it; for configurations alone it is that member's cost over instances.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from ConfigSpace import (
    CategoricalHyperparameter,
    ConfigurationSpace,
    Constant,
    OrdinalHyperparameter,
)
from smac.model.abstract_model import AbstractModel
from smac.scenario import Scenario

from uvp_plugins.censored import TobitEnsemble, censor_nonfinite

__all__ = ["TobitEnsembleModel", "check_log_y_scenario"]

logger = logging.getLogger(__name__)


class _InputEncoder:
    """SMAC configuration vectors -> network inputs in ``[0, 1]`` (see module docstring)."""

    def __init__(self, configspace: ConfigurationSpace) -> None:
        self.n_hps = len(list(configspace.values()))
        self._scaled: dict[int, tuple[float, float]] = {}
        # (column, kind, info, conditional); kind in {"num", "cat", "ord", "skip"}
        self.specs: list[tuple[int, str, float, bool]] = []
        width = 0
        for idx, hp in enumerate(configspace.values()):
            conditional = len(configspace.parents_of[hp.name]) > 0
            if isinstance(hp, Constant):
                kind, info = "skip", 0.0
            elif isinstance(hp, CategoricalHyperparameter):
                kind, info = "cat", float(len(hp.choices))
                width += len(hp.choices)
            elif isinstance(hp, OrdinalHyperparameter):
                kind, info = "ord", float(max(1, len(hp.sequence) - 1))
                width += 1
            else:
                kind, info = "num", 0.0
                width += 1
                lower = getattr(hp, "lower_vectorized", 0.0)
                upper = getattr(hp, "upper_vectorized", 1.0)
                if float(lower) != 0.0 or float(upper) != 1.0:  # normal / beta priors
                    kind = "scaled"
                    self._scaled[idx] = (float(lower), float(upper) - float(lower))
            if conditional:
                width += 1
            self.specs.append((idx, kind, info, conditional))
        self.width = width

    def __call__(self, X: np.ndarray) -> np.ndarray:
        n = X.shape[0]
        out = np.zeros((n, self.width + X.shape[1] - self.n_hps))
        col = 0
        for idx, kind, info, conditional in self.specs:
            v = X[:, idx]
            active = np.isfinite(v)
            if kind == "skip":
                pass
            elif kind == "cat":
                k = int(info)
                codes = np.where(active, v, -1).astype(int)
                rows = np.nonzero((codes >= 0) & (codes < k))[0]
                out[rows, col + codes[rows]] = 1.0
                col += k
            else:
                if kind == "ord":
                    val = v / info
                elif kind == "scaled":
                    low, span = self._scaled[idx]
                    val = (v - low) / span if span > 0 else np.zeros_like(v)
                else:
                    val = v
                out[:, col] = np.where(active, val, 0.5)
                col += 1
            if conditional:
                out[:, col] = active
                col += 1
        if X.shape[1] > self.n_hps:
            feats = X[:, self.n_hps :]
            out[:, col:] = np.nan_to_num(feats, nan=0.0, posinf=0.0, neginf=0.0)
        return out


def check_log_y_scenario(scenario: Scenario, log_y: bool) -> None:
    """Refuse, before the first trial, a scenario whose costs cannot all be logged: with
    ``log_y=True`` a finite ``crash_cost <= 0`` would be a cost <= 0 (``inf``, the default, is
    censored instead)."""
    if not log_y:
        return
    crash = scenario.crash_cost
    costs = crash if isinstance(crash, list) else [crash]
    for c in costs:
        if np.isfinite(c) and float(c) <= 0:
            raise ValueError(
                f"log_y=True models log(cost) but Scenario(crash_cost={c!r}) is <= 0; use a "
                "crash_cost > 0 (or the default inf) or log_y=False"
            )


class TobitEnsembleModel(AbstractModel):
    """Tobit-loss MLP ensemble as a SMAC surrogate (Eggensperger et al., Eq. 4 and Eq. 5).

    Example:
        >>> from ConfigSpace import ConfigurationSpace
        >>> from smac import HyperparameterOptimizationFacade, Scenario
        >>> from smac_ext import tobit_facade_kwargs
        >>> cs = ConfigurationSpace({"x": (0.0, 1.0)})
        >>> scenario = Scenario(cs, n_trials=20, deterministic=True)
        >>> smac = HyperparameterOptimizationFacade(
        ...     scenario, lambda config, seed=0: 1.0 + config["x"], **tobit_facade_kwargs(scenario)
        ... )  # doctest: +SKIP

    Args:
        configspace: a SMAC ``Scenario`` (its configuration space, instance features and seed are
            used) or a ``ConfigurationSpace`` alone (e.g. one arm of a MaxUCB intensifier).
        n_members: ensemble size M (paper: 5 for the regression study; Thompson sampling trains
            a single network per iteration, ``n_members=1``). ``predict`` returns the Eq. 5
            variance, which is 0 for ``M = 1``: use ``M >= 2`` with EI/UCB acquisitions.
        seed: seed of the model's RNG (default: the scenario's seed, else 0).
        log_y: model the log of the cost (runtimes; costs must be > 0). Predictions are then in
            log space, as for SMAC's own ``log_y`` random forest.
        instance_features: as for SMAC's models (taken from the scenario if one is passed).
        pca_components: as for SMAC's models.
        ensemble_kwargs: further :class:`uvp_plugins.censored.TobitEnsemble` parameters
            (``hidden``, ``n_steps``, ``lr``, ``batch_size``, ``weight_decay``, ``loss``...).
    """

    def __init__(
        self,
        configspace: ConfigurationSpace | Scenario,
        *,
        n_members: int = 5,
        seed: int | None = None,
        log_y: bool = False,
        instance_features: dict[str, list[int | float]] | None = None,
        pca_components: int | None = 7,
        **ensemble_kwargs: Any,
    ) -> None:
        if isinstance(configspace, Scenario):
            scenario = configspace
            cs = scenario.configspace
            if instance_features is None:
                instance_features = scenario.instance_features
            if seed is None:
                seed = scenario.seed
            check_log_y_scenario(scenario, log_y)
            if scenario.instances and not instance_features:
                logger.info(
                    "the scenario has %d instances but no instance features: the Tobit model "
                    "sees configurations only and fits the differences between instances as "
                    "noise; pass Scenario(instance_features=...) (e.g. one-hot instance ids) to "
                    "model them",
                    len(scenario.instances),
                )
        elif isinstance(configspace, ConfigurationSpace):
            cs = configspace
        else:
            raise TypeError(
                "configspace must be a smac Scenario or a ConfigSpace ConfigurationSpace, "
                f"got {type(configspace).__name__}"
            )
        if seed is None:
            seed = 0
        forbidden = {"seed", "log_y", "n_members", "input_bounds", "all_censored"}
        clash = forbidden & set(ensemble_kwargs)
        if clash:
            raise TypeError(f"unexpected ensemble_kwargs {sorted(clash)} (set by the model itself)")
        # validate every core parameter now, at construction
        TobitEnsemble(n_members=n_members, log_y=log_y, seed=0, **ensemble_kwargs)
        super().__init__(
            configspace=cs,
            instance_features=instance_features,
            pca_components=pca_components,
            seed=int(seed),
        )
        self._n_members = int(n_members)
        self._log_y = bool(log_y)
        self._ensemble_kwargs = dict(ensemble_kwargs)
        self._encoder = _InputEncoder(cs)
        self._ensemble: TobitEnsemble | None = None
        #: the scenario's instances' features as the network sees them (after PCA if applied)
        self._instance_matrix: np.ndarray | None = None
        self._ts_member = 0
        self._warned_no_flags = False
        #: censoring flags of the last training set (for inspection and tests)
        self.last_censored: np.ndarray = np.zeros(0, dtype=bool)
        #: costs of the last training set after :func:`censor_nonfinite`
        self.last_y: np.ndarray = np.zeros(0)

    @property
    def meta(self) -> dict[str, Any]:  # noqa: D102
        meta = super().meta
        meta.update(
            {
                "n_members": self._n_members,
                "log_y": self._log_y,
                "ensemble_kwargs": dict(self._ensemble_kwargs),
            }
        )
        return meta

    @property
    def ensemble(self) -> TobitEnsemble | None:
        """The core ensemble fitted by the last ``train`` call (None before)."""
        return self._ensemble

    def _encode(self, X: np.ndarray) -> np.ndarray:
        return self._encoder(np.asarray(X, dtype=float))

    @staticmethod
    def split_targets(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """``(costs, censoring flags or None)`` from the encoder's ``Y`` (1 or 2 columns)."""
        Y = np.asarray(Y, dtype=float)
        if Y.ndim == 1:
            return Y, None
        if Y.shape[1] == 1:
            return Y[:, 0], None
        if Y.shape[1] == 2:
            return Y[:, 0], Y[:, 1] > 0.5
        raise ValueError(
            f"Y must have 1 column (costs) or 2 (costs, censoring flags), got {Y.shape[1]}"
        )

    def _train(self, X: np.ndarray, Y: np.ndarray) -> TobitEnsembleModel:
        y, flags = self.split_targets(Y)
        if flags is None and not self._warned_no_flags:
            logger.info(
                "TobitEnsembleModel got no censoring flags (1-column Y); use "
                "smac_ext.CensoredRunHistoryEncoder so TIMEOUT runs are treated as censored"
            )
            self._warned_no_flags = True
        y, censored = censor_nonfinite(y, flags)
        self.last_y, self.last_censored = y, censored
        Z = self._encode(X)
        width = self._encoder.width
        low, high = np.zeros(Z.shape[1]), np.ones(Z.shape[1])  # configurations: in [0, 1]
        self._instance_matrix = self._features_as_trained()
        if self._instance_matrix is not None:  # features: scaled over all instances
            F = np.vstack((self._instance_matrix, Z[:, width:]))
            low[width:], high[width:] = F.min(axis=0), F.max(axis=0)
        elif Z.shape[1] > width:  # features of unknown instances: learnt from the rows
            low[width:], high[width:] = Z[:, width:].min(axis=0), Z[:, width:].max(axis=0)
        bounds = (low, high)
        fresh_seed = int(self._rng.randint(0, 2**31 - 1))
        ensemble = TobitEnsemble(
            n_members=self._n_members,
            log_y=self._log_y,
            seed=fresh_seed,
            input_bounds=bounds,
            all_censored="gaussian",
            **self._ensemble_kwargs,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ensemble.fit(Z, y, censored)
        for w in caught:
            logger.warning(str(w.message))
        self._ensemble = ensemble
        self.draw_thompson_member()
        return self

    def _features_as_trained(self) -> np.ndarray | None:
        """The scenario's instance features transformed as in the last ``train`` (SMAC's min-max
        scaling and PCA when ``_apply_pca``), one row per instance; None without features."""
        if self._n_features == 0 or not self._instance_features:
            return None
        F = np.asarray(list(self._instance_features.values()), dtype=float).reshape(
            len(self._instance_features), self._n_features
        )
        if self._apply_pca:
            F = self._pca.transform(np.nan_to_num(self._scaler.transform(F)))
        return np.nan_to_num(F, nan=0.0, posinf=0.0, neginf=0.0)

    def _members_over_instances(self, X: np.ndarray) -> np.ndarray:
        """Each member's cost over the scenario's instances for configuration rows ``X``
        (``n_hps`` columns), shape ``(M, n)``, in the modelled scale."""
        assert self._ensemble is not None and self._instance_matrix is not None
        configs = self._encode(X)
        return self._ensemble.predict_members_over_instances(configs, self._instance_matrix)

    def predict_marginalized(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance (Eq. 5) of the cost over the scenario's instances for configuration
        rows ``X`` (``n_hps`` columns, no features), each of shape ``(n, 1)``; without instance
        features the plain prediction. With ``log_y`` in log space: the log of the mean runtime
        over instances per member, then Eq. 5 over the members."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self._n_hps:
            raise ValueError(
                f"X must have shape (n, {self._n_hps}) (configurations without instance "
                f"features) for predict_marginalized, got {X.shape}"
            )
        if self._ensemble is None:
            raise RuntimeError("TobitEnsembleModel is not trained yet")
        if self._instance_matrix is None:
            mean, var = self.predict(X)
            assert var is not None
            return mean, np.maximum(np.nan_to_num(var, nan=self._var_threshold), self._var_threshold)
        members = self._members_over_instances(X)
        mean = members.mean(axis=0).reshape(-1, 1)
        var = np.maximum(members.var(axis=0), self._var_threshold).reshape(-1, 1)
        return mean, var

    def draw_thompson_member(self) -> int:
        """Choose (with the model's RNG) which member :meth:`sample_functions` uses until the next
        call; always 0 with ``n_members=1``. Returns the index."""
        self._ts_member = int(self._rng.randint(0, self._n_members)) if self._n_members > 1 else 0
        return self._ts_member

    def _predict(
        self,
        X: np.ndarray,
        covariance_type: str | None = "diagonal",
    ) -> tuple[np.ndarray, np.ndarray | None]:
        if covariance_type not in (None, "diagonal", "std"):
            raise ValueError(
                f"covariance_type must be None, 'diagonal' or 'std' for this model, got {covariance_type!r}"
            )
        if self._ensemble is None:
            raise RuntimeError("TobitEnsembleModel is not trained yet")
        mean, var = self._ensemble.predict(self._encode(X))
        mean = mean.reshape(-1, 1)
        if covariance_type is None:
            return mean, None
        var = np.maximum(var, self._var_threshold).reshape(-1, 1)
        if covariance_type == "std":
            return mean, np.sqrt(var)
        return mean, var

    def sample_functions(self, X_test: np.ndarray, n_funcs: int = 1) -> np.ndarray:
        """Thompson sample(s) of the objective at ``X_test``, shape ``(n, n_funcs)``.

        Column 0 is the mean function of the member chosen at training time (see
        :meth:`draw_thompson_member`); further columns use the following members cyclically.
        SMAC's ``TS`` acquisition function calls this with ``n_funcs=1``. ``X_test`` holds
        configurations (``n_hps`` columns: the sample is the member's cost over the scenario's
        instances) or configurations with instance features (the member's cost on that instance).
        """
        if self._ensemble is None:
            raise RuntimeError("TobitEnsembleModel is not trained yet")
        X_test = np.asarray(X_test, dtype=float)
        full = self._n_hps + self._n_features
        if X_test.ndim != 2 or X_test.shape[1] not in (self._n_hps, full):
            widths = f"{self._n_hps}" if full == self._n_hps else f"{self._n_hps} or {full}"
            raise ValueError(
                f"X_test must have shape (n, {widths}) (configurations"
                + ("" if full == self._n_hps else ", optionally followed by instance features")
                + f"), got {X_test.shape}"
            )
        if X_test.shape[1] == self._n_hps and self._instance_matrix is not None:
            members = self._members_over_instances(X_test)
        else:
            if self._apply_pca and X_test.shape[1] == full:
                feats = self._pca.transform(
                    np.nan_to_num(self._scaler.transform(X_test[:, -self._n_features :]))
                )
                X_test = np.hstack((X_test[:, : self._n_hps], feats))
            members = self._ensemble.predict_members(self._encode(X_test))
        idx: Sequence[int] = [(self._ts_member + k) % self._n_members for k in range(n_funcs)]
        return np.asarray(members[list(idx)].T)

"""Thompson-sampling acquisition for :class:`smac_ext.TobitEnsembleModel` and the one-line
facade wiring of the paper's procedure (Eggensperger et al., "Integration into Model-Based
Optimization": Tobit-loss network, one freshly trained network per iteration, Thompson sampling).

Why not SMAC's own ``TS``: it also calls ``model.sample_functions`` and would work, but its
documentation restricts it to random-search maximisation because its fallback draws independent
per-point samples. Our model's sample is one network's mean function, fixed between two trainings,
so SMAC's default local + random search maximiser is valid; :class:`TobitThompsonSampling` states
that contract and checks the model provides it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from ConfigSpace import ConfigurationSpace
from smac.acquisition.function.abstract_acquisition_function import AbstractAcquisitionFunction
from smac.main.config_selector import ConfigSelector
from smac.model.abstract_model import AbstractModel
from smac.runner.abstract_runner import StatusType
from smac.scenario import Scenario

from smac_ext._censored_encoder import CensoredRunHistoryEncoder
from smac_ext._cutoff_recorder import CutoffRecorder
from smac_ext._tobit_model import TobitEnsembleModel

__all__ = ["TobitThompsonSampling", "tobit_arm_factories", "tobit_facade_kwargs"]


class TobitThompsonSampling(AbstractAcquisitionFunction):
    """Acquisition value ``-f(x)`` for the Thompson sample ``f`` drawn by the model at training
    time (SMAC maximises acquisition values and minimises cost).

    Needs a model with ``sample_functions(X, n_funcs=1)`` returning a function that stays fixed
    until the next training (:class:`TobitEnsembleModel`). ``update`` (called by SMAC right after
    each training) keeps that draw; :meth:`redraw` picks another member of an ensemble.
    """

    @property
    def name(self) -> str:  # noqa: D102
        return "Thompson Sampling (Tobit ensemble)"

    def update(self, model: AbstractModel, **kwargs: Any) -> None:  # noqa: D102
        if not callable(getattr(model, "sample_functions", None)):
            raise TypeError(
                "TobitThompsonSampling needs a model with sample_functions(X, n_funcs), e.g. "
                f"smac_ext.TobitEnsembleModel; got {type(model).__name__}"
            )
        super().update(model, **kwargs)

    def redraw(self) -> None:
        """Ask the model for another Thompson draw (another member) without retraining."""
        draw = getattr(self._model, "draw_thompson_member", None)
        if callable(draw):
            draw()

    def _compute(self, X: np.ndarray) -> np.ndarray:
        if self._model is None:
            raise RuntimeError("TobitThompsonSampling has no model yet; SMAC calls update() first")
        if X.ndim == 1:
            X = X[np.newaxis, :]
        sample = self._model.sample_functions(X, n_funcs=1)  # type: ignore[attr-defined]
        return -np.asarray(sample, dtype=float).reshape(-1, 1)


def tobit_facade_kwargs(
    scenario: Scenario,
    *,
    n_members: int = 1,
    log_y: bool = True,
    seed: int | None = None,
    censored_states: Iterable[StatusType] = (StatusType.TIMEOUT,),
    timeout_cost: float | None = None,
    retrain_after: int = 1,
    **ensemble_kwargs: Any,
) -> dict[str, Any]:
    """Keyword arguments for a SMAC facade running the paper's procedure.

    ``HyperparameterOptimizationFacade(scenario, f, **tobit_facade_kwargs(scenario))``, or for
    algorithm configuration across instances with SMAC 2.4's adaptive capping
    ``AlgorithmConfigurationFacade(Scenario(cs, instances=..., instance_features=...,
    adaptive_capping=True, runtime_cutoff=...), f, **tobit_facade_kwargs(scenario))``, uses

    * ``model``: :class:`TobitEnsembleModel` with ``n_members=1`` (one network trained from
      scratch, with a fresh seed, at every SMAC iteration = the Thompson draw) and ``log_y=True``
      (runtimes are modelled in log space; costs must then be > 0 -- pass ``log_y=False`` for
      costs that can be <= 0);
    * ``runhistory_encoder``: :class:`CensoredRunHistoryEncoder` (TIMEOUT runs are right-censored
      at their cost; non-finite costs at ``timeout_cost`` or the scenario's walltime limit);
    * ``acquisition_function``: :class:`TobitThompsonSampling`;
    * ``config_selector``: SMAC's ``ConfigSelector`` with ``retrain_after=1``, so every proposal
      comes from a freshly trained network (the paper's "train a network from scratch in each
      iteration"). SMAC's default (8) would take the 8 best points of *one* Thompson sample,
      which cluster around that sample's minimum;
    * ``callbacks``: ``[CutoffRecorder(log_y=log_y)]``, which keeps each run's cutoff with its
      result so that runs stopped by adaptive capping are censored, and refuses a cost <= 0 with
      ``log_y`` when SMAC is told it. To add callbacks of your own, merge the lists:
      ``kw = tobit_facade_kwargs(s); Facade(s, f, callbacks=[mine, *kw.pop("callbacks")], **kw)``.

    Other facade components (initial design, intensifier, acquisition maximiser, random
    interleaving) stay the facade's defaults. ``ensemble_kwargs`` go to
    :class:`uvp_plugins.censored.TobitEnsemble` (e.g. ``n_steps``, ``hidden``). With ``log_y`` a
    scenario with a finite ``crash_cost <= 0`` is refused here, before the first trial.
    """
    model = TobitEnsembleModel(
        scenario, n_members=n_members, log_y=log_y, seed=seed, **ensemble_kwargs
    )
    encoder_states = tuple(censored_states)
    encoder = CensoredRunHistoryEncoder(
        scenario, censored_states=encoder_states, timeout_cost=timeout_cost
    )
    if isinstance(retrain_after, bool) or not isinstance(retrain_after, int) or retrain_after < 1:
        raise ValueError(f"retrain_after must be an integer >= 1, got {retrain_after!r}")
    return {
        "model": model,
        "runhistory_encoder": encoder,
        "acquisition_function": TobitThompsonSampling(),
        "config_selector": ConfigSelector(scenario, retrain_after=retrain_after),
        "callbacks": [CutoffRecorder(log_y=log_y, censored_states=tuple(encoder_states))],
    }


def tobit_arm_factories(
    *,
    n_members: int = 1,
    log_y: bool = True,
    censored_states: Iterable[StatusType] = (StatusType.TIMEOUT,),
    timeout_cost: float | None = None,
    **ensemble_kwargs: Any,
) -> dict[str, Any]:
    """Per-arm factories for :class:`smac_ext.MaxUCBIntensifier` (one Tobit model per arm):
    ``MaxUCBIntensifier(scenario, **tobit_arm_factories())`` builds, for every arm scenario,
    the components of :func:`tobit_facade_kwargs` (``model_factory``,
    ``runhistory_encoder_factory``, ``acquisition_function_factory``)."""
    # validate now rather than at the first pull of an arm
    TobitEnsembleModel(
        ConfigurationSpace({"x": (0.0, 1.0)}), n_members=n_members, log_y=log_y, **ensemble_kwargs
    )
    states = tuple(censored_states)

    def model_factory(arm_scenario: Scenario) -> TobitEnsembleModel:
        return TobitEnsembleModel(
            arm_scenario, n_members=n_members, log_y=log_y, **ensemble_kwargs
        )

    def encoder_factory(arm_scenario: Scenario) -> CensoredRunHistoryEncoder:
        return CensoredRunHistoryEncoder(
            arm_scenario, censored_states=states, timeout_cost=timeout_cost
        )

    def acquisition_factory(arm_scenario: Scenario) -> TobitThompsonSampling:
        return TobitThompsonSampling()

    return {
        "model_factory": model_factory,
        "runhistory_encoder_factory": encoder_factory,
        "acquisition_function_factory": acquisition_factory,
    }

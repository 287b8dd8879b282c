"""SMAC intensifier for CASH: MaxUCB picks the model class, each class runs its own SMAC HPO.

Implements the two-level CASH approach of Balef, Vernade & Eggensperger (*Put CASH on Bandits: A
Max K-Armed Problem for Automated Machine Learning*, 2025): a max-K-armed bandit (MaxUCB,
Alg. 1; burn-in Alg. E.1) chooses which model class (arm) gets the next HPO step, and every arm
runs model-based HPO on its own subspace. The bandit -- the policy choosing among the available
arms, the crash rule, its JSON state -- is the framework-free core object
:class:`uvp_plugins.bandits.CashBandit`; this module only translates SMAC's events into it
(an asked trial is ``bandit.ask()``, a told result ``bandit.tell(arm, cost)`` or
``bandit.fail(arm)``, an arm whose HPO has nothing new ``bandit.retire(arm, "exhausted")``).

How it plugs into SMAC. :class:`MaxUCBIntensifier` is an ``AbstractIntensifier``, given to the
facade the user already calls::

    smac = HyperparameterOptimizationFacade(scenario, train,
                                            intensifier=MaxUCBIntensifier(scenario))
    incumbent = smac.optimize()           # or smac.ask() / smac.tell(info, value)

* The scenario's ConfigSpace is a CASH space: its top-level categorical (detected, or named by
  ``selector=``) selects the model class; it is split into one subspace per value with
  :func:`smac_ext.split_cash_space`. Arm ``i`` is the categorical's ``i``-th choice.
* Every arm owns a SMAC ``ConfigSelector`` wired exactly as a facade wires its own (initial
  design, run-history encoder, surrogate model, acquisition function and maximiser, random
  design), all built on the arm's subspace from an arm ``Scenario`` (the user's scenario with
  ``configspace`` replaced by the subspace), and its own ``RunHistory`` view holding the trials of
  that arm only (configurations mapped into the subspace). Defaults are the components of
  ``facade`` (``HyperparameterOptimizationFacade``: random forest, log-scaled encoder, EI,
  local-and-sorted random search, 20 % random configurations); any of them can be replaced by a
  factory ``f(arm_scenario) -> component``, e.g. ``model_factory=lambda s: TobitEnsembleModel(s)``.
  The retraining frequency and retry settings are those of the facade's own config selector.
* The facade's own model, acquisition function/maximiser, initial design and random design
  are built on the joint space and are *not* used to choose trials (the arms use the factories
  above); from the facade's config selector the arms take ``retrain_after``,
  ``max_new_config_tries``, ``min_trials`` and the callbacks (whose
  ``on_next_configurations_*`` hooks then see arm-subspace configurations).
* The arm's initial design evaluates the arm's default configuration first (Alg. 1, line 3:
  "evaluating default configuration"; the subspace's default, i.e. the hyperparameters'
  ``default_value``), then ``n_initial`` Sobol configurations (default 0: the arm's model-based
  proposals start right after its default; the paper's App. D uses ``50 / (K - 1)``,
  :func:`uvp_plugins.bandits.paper_design_size`), then model-based proposals.
* The bandit's defaults (:class:`uvp_plugins.bandits.CashSettings`, shared with the Optuna
  adapter) were chosen on declared tuning tasks of the paper's six-class YAHPO benchmark
  (``docs/results/cash_yahpo6.md``): MaxUCB with ``alpha = 1`` and an exploration floor of
  ``2 ln t`` pulls per arm. Rewards are min-max scaled over all arms, so an arm whose first
  results were the worst seen comes back only when its bonus alone beats the leader,
  ``alpha ln t > n``: with the paper's ``alpha = 0.5`` three unlucky configurations kept an arm
  out of a 200-trial run (``t > 403``; the paper's Table D.6 also finds larger alpha better at
  T = 200 on YaHPOGym). The floor keeps pulling every arm until it has ``2 ln t`` results
  (about 11 by ``t = 200``) whatever its rewards, so an arm whose HPO starts in a bad region
  gets results enough for its own model to leave it. Random per-arm designs were the costliest choice
  on the tuning tasks (six designs of 11 configurations are a third of 200 trials): each arm
  models from its default on.
* ``__iter__`` asks the bandit for an arm, asks that arm's selector for a configuration, maps it
  into the joint space (a ``Configuration`` of ``scenario.configspace`` with the selector set)
  and yields a ``TrialInfo`` with one seed (the scenario's first seed; every configuration is
  evaluated once). Incumbents, the trajectory, the run history and ``intensifier.json`` are
  SMAC's own, in the joint space.
* Results are credited in the intensifier's run-history callback (``on_tell_end``), to the arm
  given by the *told configuration's selector value*, so results that arrive out of order
  (parallel workers, ask/tell) or configurations the user tells without asking are credited to
  the right arm.

Crashed trials and non-finite costs. Only trials with status ``SUCCESS`` and a finite cost are
credited to the bandit (``bandit.tell(arm, cost)``). Every other result (``CRASHED``,
``TIMEOUT``, ``MEMORYOUT``, ``ABORT``, ..., or a ``SUCCESS`` with a NaN/inf cost) is a failure
(``bandit.fail(arm)``): it releases the pull and is never a reward. It stays in SMAC's run history; it enters
the arm's run-history view (and so the arm's surrogate, which treats it as SMAC's would) only if
its cost is finite, e.g. ``CRASHED`` with a finite ``scenario.crash_cost``: SMAC's encoders turn
an infinite cost (the default ``crash_cost = inf``) into a NaN target on which SMAC's random
forest fails, in combined search as well. Set a finite ``crash_cost`` to let the arms' models
learn where crashes happen; either way a crashed configuration is never proposed again. An arm
whose last ``max_consecutive_crashes`` results were all uncredited is retired (reason
``"crashed"``, no more pulls; the core's crash rule), so an arm that always fails cannot absorb
the whole budget.

Arms without hyperparameters and exhausted arms. A selector value with no conditional children
is an arm with an empty subspace: it has exactly one configuration, which is evaluated on its
first pull. As the intensifier evaluates every configuration once (one seed), a further pull
cannot produce a new observation, so the arm is then marked *exhausted* and is no longer pulled;
its observation keeps counting in the bandit statistics and the incumbent. The same happens to
any arm whose selector cannot produce a configuration that is not yet in the run history (a
small finite subspace fully evaluated). The bandit chooses among the available arms only: the
policy's own rule restricted to them (a burn-in slot of a retired arm is skipped; the
round-robin arm with the fewest pulls while some available arm has no observation, else the
largest index ``U_i``), see :class:`uvp_plugins.bandits.CashBandit`. When no arm is available,
the iterator stops (``optimize`` ends; ``ask`` raises ``StopIteration``).

Restarts. ``get_state``/``set_state`` carry the bandit's JSON state (the policy's observations,
pending pulls and burn-in, the retired arms, the crash streaks); SMAC stores it in
``intensifier.json`` after every ``tell`` (replaced atomically: a kill never leaves half a
file). Restarting SMAC on the same output directory therefore continues with the same arm
statistics; the arms' run-history views and surrogates are rebuilt
from the restored run history. Trials that were running when the previous process stopped (a
killed driver with parallel workers: SMAC's ``runhistory.json`` lists them as ``RUNNING``) are
submitted again before anything new, their pulls pending, so no trial is lost or stays
``RUNNING`` forever; a successful result that reached ``runhistory.json`` but not
``intensifier.json`` (a kill between SMAC's two writes) is credited at the restart. Pending pulls
without a running trial are released.

Not supported (``ValueError`` at construction): multi-objective scenarios, instances, adaptive
capping. Budgets are not used (``uses_budgets`` is False).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

import numpy as np
from ConfigSpace import Configuration
from smac.acquisition.function.abstract_acquisition_function import AbstractAcquisitionFunction
from smac.acquisition.maximizer.abstract_acquisition_maximizer import (
    AbstractAcquisitionMaximizer,
)
from smac.callback.callback import Callback
from smac.facade.abstract_facade import AbstractFacade
from smac.facade.hyperparameter_optimization_facade import HyperparameterOptimizationFacade
from smac.initial_design.abstract_initial_design import AbstractInitialDesign
from smac.intensifier.abstract_intensifier import AbstractIntensifier
from smac.main.config_selector import ConfigSelector
from smac.main.exceptions import ConfigurationSpaceExhaustedException
from smac.model.abstract_model import AbstractModel
from smac.random_design.abstract_random_design import AbstractRandomDesign
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runhistory.encoder.abstract_encoder import AbstractRunHistoryEncoder
from smac.runhistory.enumerations import StatusType
from smac.runhistory.runhistory import RunHistory
from smac.scenario import Scenario

from smac_ext._atomic import AtomicSaveMixin, repair_output_directory
from smac_ext._cash_space import CashSpace, split_cash_space
from smac_ext._scenario import check_intensifier_scenario
from uvp_plugins.bandits import CASH_DESIGN, CASH_FLOOR, CashBandit, CashSettings, IndexPolicy

__all__ = ["MaxUCBIntensifier"]

logger = logging.getLogger(__name__)

Factory = Callable[[Scenario], Any]

def _finite(cost: Any) -> bool:
    """True for a finite scalar cost."""
    return isinstance(cost, (int, float, np.integer, np.floating)) and math.isfinite(float(cost))


def _name_of(obj: Any) -> str | None:
    if obj is None:
        return None
    return str(getattr(obj, "__qualname__", None) or type(obj).__qualname__)


class _DefaultFirstDesign(AbstractInitialDesign):
    """An arm's initial design: its default configuration first, then ``inner``'s configurations."""

    def __init__(self, scenario: Scenario, inner: AbstractInitialDesign | None) -> None:
        super().__init__(scenario, n_configs=0, additional_configs=[])
        self._inner = inner

    @property
    def meta(self) -> dict[str, Any]:  # noqa: D102
        return {"name": type(self).__name__, "inner": None if self._inner is None else self._inner.meta}

    def _select_configurations(self) -> list[Configuration]:
        return []

    def select_configurations(self) -> list[Configuration]:  # noqa: D102
        default = self._configspace.get_default_configuration()
        default.origin = "Initial Design: Default configuration"
        configs = [default]
        if self._inner is not None:
            configs += [c for c in self._inner.select_configurations() if c != default]
        return configs


@dataclasses.dataclass
class _ArmHPO:
    """One arm's model-based HPO: a SMAC ConfigSelector on the arm subspace and its generator."""

    selector: ConfigSelector
    generator: Iterator[Configuration] | None = None


class MaxUCBIntensifier(AtomicSaveMixin, AbstractIntensifier):
    """Two-level CASH in SMAC: MaxUCB chooses the model class, per-class SMAC HPO the config.

    See the module docstring for the wiring, crash handling, empty/exhausted arms and restarts.

    Args:
        scenario: the SMAC scenario; ``scenario.configspace`` must be a CASH space.
        alpha: exploration parameter ``alpha >= 0`` of MaxUCB (``None``: the CASH default 1;
            the paper's is 0.5) or of ``"UCB"`` / ``"QuantileUCB"`` (``None``: their 0.5).
        burn_in: burn-in rounds ``C >= 0`` (Alg. E.1; 0 = Alg. 1), or ``"design"`` (also
            ``"initial_design"``, its earlier name): ``C = 1 + n_initial``, the size of every
            arm's initial design (its default plus the Sobol configurations), so the bandit
            judges arms only on their model-based proposals (measured on YAHPO in
            ``docs/results/smac_maxucb.md``; needs the built-in initial design, not
            ``initial_design_factory``).
        selector: name of the top-level categorical (detected if ``None``).
        policy: the bandit policy of :mod:`uvp_plugins.bandits` (``"MaxUCB"``; ``"UCB"``,
            ``"QuantileUCB"``, ``"RoundRobin"`` are the paper's baselines on the same per-arm HPO).
        n_initial: Sobol configurations in each arm's initial design after its default
            configuration (``None``: 0, :data:`uvp_plugins.bandits.CASH_DESIGN`; before issue
            30 the default was ``floor(n_trials / (4 K)) - 1``).
        min_pulls: each arm's first results observed before the index decides (``>= 1``, or
            ``"design"``: ``1 + n_initial``).
        floor: exploration floor ``c >= 0``: an arm below ``c ln t`` pulls is pulled first
            (default 2; 0: none, as in Alg. 1).
        max_consecutive_crashes: drop an arm after this many uncredited results in a row
            (``None``: never).
        facade: facade class whose ``get_*`` methods build the per-arm components by default.
        model_factory: optional ``f(arm_scenario) -> model`` replacing the facade's default for
            every arm (``arm_scenario.configspace`` is the arm subspace); the same holds for the
            five factories below.
        acquisition_function_factory: optional ``f(arm_scenario) -> acquisition function``.
        acquisition_maximizer_factory: optional ``f(arm_scenario) -> acquisition maximizer``.
        runhistory_encoder_factory: optional ``f(arm_scenario) -> runhistory encoder``.
        random_design_factory: optional ``f(arm_scenario) -> random design``.
        initial_design_factory: optional ``f(arm_scenario) -> initial design``; it is always
            preceded by the arm's default configuration.
        max_incumbents: as in SMAC's intensifiers (multi-objective only; kept for the contract).
        seed: the intensifier's seed (default: ``scenario.seed``), used for the trial seed.

    Example:
        >>> from smac import HyperparameterOptimizationFacade, Scenario
        >>> intensifier = MaxUCBIntensifier(scenario)                   # doctest: +SKIP
        >>> smac = HyperparameterOptimizationFacade(scenario, train,
        ...                                         intensifier=intensifier)  # doctest: +SKIP
        >>> incumbent = smac.optimize()                                  # doctest: +SKIP
        >>> intensifier.pulls                                            # doctest: +SKIP
        {'svc': 12, 'rf': 9, 'nb': 1}
    """

    def __init__(
        self,
        scenario: Scenario,
        alpha: float | None = None,
        burn_in: int | Literal["design", "initial_design"] = 0,
        *,
        selector: str | None = None,
        policy: str = "MaxUCB",
        n_initial: int | None = None,
        min_pulls: int | Literal["design"] = 1,
        floor: float = CASH_FLOOR,
        max_consecutive_crashes: int | None = 5,
        facade: type[AbstractFacade] = HyperparameterOptimizationFacade,
        model_factory: Callable[[Scenario], AbstractModel] | None = None,
        acquisition_function_factory: Callable[[Scenario], AbstractAcquisitionFunction]
        | None = None,
        acquisition_maximizer_factory: Callable[[Scenario], AbstractAcquisitionMaximizer]
        | None = None,
        runhistory_encoder_factory: Callable[[Scenario], AbstractRunHistoryEncoder] | None = None,
        random_design_factory: Callable[[Scenario], AbstractRandomDesign] | None = None,
        initial_design_factory: Callable[[Scenario], AbstractInitialDesign] | None = None,
        max_incumbents: int = 10,
        seed: int | None = None,
    ) -> None:
        check_intensifier_scenario("MaxUCBIntensifier", scenario, "does not support instances")
        if scenario.adaptive_capping:
            raise ValueError("MaxUCBIntensifier does not support adaptive capping "
                             "(scenario.adaptive_capping must be False)")
        if n_initial is not None and (isinstance(n_initial, bool) or not isinstance(n_initial, int)
                                      or not 0 <= n_initial < scenario.n_trials):
            raise ValueError("n_initial must be None or an int in [0, scenario.n_trials - 1] "
                             f"= [0, {scenario.n_trials - 1}], got {n_initial!r}")
        if burn_in == "initial_design":  # the name of earlier versions
            burn_in = "design"
        if initial_design_factory is not None and "design" in (burn_in, min_pulls):
            raise ValueError("burn_in='design' and min_pulls='design' are sized from the built-in "
                             "per-arm initial design (1 + n_initial); with initial_design_factory "
                             "give them as ints")
        # every rule of the bandit (which policies take alpha, burn-in, design sizes) is the
        # core's: the settings validate themselves with its messages
        self._settings = CashSettings(policy=policy, alpha=alpha, burn_in=burn_in,
                                      min_pulls=min_pulls, floor=floor,
                                      design=CASH_DESIGN if n_initial is None else n_initial,
                                      max_consecutive_crashes=max_consecutive_crashes)
        if not (isinstance(facade, type) and issubclass(facade, AbstractFacade)):
            raise TypeError(f"facade must be a SMAC facade class, got {facade!r}")

        self._cash: CashSpace = split_cash_space(scenario.configspace, selector)
        self._scenario_n_trials = int(scenario.n_trials)
        self._n_initial = self._settings.design_size(self._cash.n_arms, self._scenario_n_trials)
        self._new_bandit()  # fails early if the settings do not fit the arms
        self._facade = facade
        self._factories: dict[str, Factory | None] = {
            "model": model_factory,
            "acquisition_function": acquisition_function_factory,
            "acquisition_maximizer": acquisition_maximizer_factory,
            "runhistory_encoder": runhistory_encoder_factory,
            "random_design": random_design_factory,
            "initial_design": initial_design_factory,
        }
        if scenario.name is not None and repair_output_directory(scenario.output_directory):
            logger.warning("restored the last complete optimization.json in %s (the previous "
                           "process was killed while SMAC wrote it)", scenario.output_directory)
        # one Scenario per arm: the user's scenario on the arm subspace (never saved)
        self._arm_scenarios = [
            dataclasses.replace(scenario, configspace=sub) for sub in self._cash.subspaces
        ]
        super().__init__(
            scenario=scenario,
            n_seeds=None,
            max_config_calls=1,
            max_incumbents=max_incumbents,
            seed=seed,
        )

    # ------------------------------------------------------------------ contract
    @property
    def uses_seeds(self) -> bool:
        """True: every trial gets a seed (the same one for all trials, as in SMAC's intensifier
        with ``deterministic=True``)."""
        return True

    @property
    def uses_budgets(self) -> bool:
        """False: CASH trials are full evaluations."""
        return False

    @property
    def uses_instances(self) -> bool:
        """False: instances are not supported."""
        return False

    @property
    def uses_cutoffs(self) -> bool:
        """True iff the scenario sets a ``runtime_cutoff`` (passed to the target as ``cutoff``)."""
        return self._scenario.runtime_cutoff is not None

    @property
    def meta(self) -> dict[str, Any]:
        """JSON-friendly description (part of SMAC's run name hash; deterministic)."""
        meta = super().meta
        meta.update(
            {
                **self._settings.to_dict(),
                "selector": self._cash.selector,
                "arms": [str(a) for a in self._cash.arms],
                "n_initial": self._n_initial,
                "facade": self._facade.__name__,
                "factories": {k: _name_of(f) for k, f in self._factories.items()},
            }
        )
        return meta

    # --------------------------------------------------------------- public facts
    @property
    def cash_space(self) -> CashSpace:
        """The split CASH space (selector, arms, subspaces, joint <-> arm maps)."""
        return self._cash

    @property
    def bandit(self) -> CashBandit:
        """The core bandit (policy, retired arms, crash streaks; ``get_state`` saves its state)."""
        return self._bandit

    @property
    def policy(self) -> IndexPolicy:
        """The core bandit's index policy (observations, pending pulls, indices)."""
        return self._bandit.policy

    @property
    def pulls(self) -> dict[Any, int]:
        """Credited observations per arm value (crashed trials excluded)."""
        return {a: n for a, n in zip(self._cash.arms, self._bandit.n_pulls, strict=True)}

    @property
    def unavailable_arms(self) -> dict[Any, str]:
        """Arms no longer pulled, with the reason (``"exhausted"`` or ``"crashed"``)."""
        return {self._cash.arms[i]: r for i, r in self._bandit.retired.items()}

    def arm_of(self, config: Mapping[str, Any]) -> int:
        """The arm index of a joint configuration (from its selector value)."""
        return self._cash.arm_index(config)

    # ---------------------------------------------------------------- state
    def _new_bandit(self) -> CashBandit:
        return CashBandit.from_settings(self._cash.n_arms, self._settings, self._scenario_n_trials)

    def reset(self) -> None:
        """Reset SMAC's bookkeeping, the bandit and the arms' HPO views."""
        super().reset()
        k = self._cash.n_arms
        self._bandit: CashBandit = self._new_bandit()
        self._arm_rh: list[RunHistory] = [RunHistory() for _ in range(k)]
        self._arm_hpo: list[_ArmHPO | None] = [None] * k

    def get_state(self) -> dict[str, Any]:
        """JSON state: the CASH space's selector and arms, and the bandit's state."""
        return {
            "selector": self._cash.selector,
            "arms": [str(a) for a in self._cash.arms],
            "bandit": self._bandit.state_dict(),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`get_state` output (e.g. from ``intensifier.json`` on a restart).

        Also reads the layout written before the bandit moved into the core (``policy``,
        ``unavailable``, ``crash_streak`` at the top level), so older output directories continue.

        Raises:
            ValueError: the state belongs to another CASH space (selector or arms differ) or
                another policy, or a field of the bandit state is invalid (named in the error).
        """
        if not state:
            return
        arms = [str(a) for a in self._cash.arms]
        if state.get("selector") != self._cash.selector or state.get("arms") != arms:
            raise ValueError(
                f"intensifier state is for selector {state.get('selector')!r} with arms "
                f"{state.get('arms')}, not {self._cash.selector!r} with arms {arms}"
            )
        if "bandit" in state:
            bandit = CashBandit.from_state_dict(state["bandit"])
        else:  # the layout of uvp-plugins before CashBandit: the bandit's version 1
            bandit = CashBandit.from_state_dict({
                "format": f"{CashBandit.STATE_FORMAT.name}/1",
                "max_consecutive_crashes": self._settings.max_consecutive_crashes,
                "policy": state["policy"],
                "retired": [r if r else None for r in state["unavailable"]],
                "crash_streak": state["crash_streak"],
            })
        policy = bandit.policy
        if policy.kind != self._settings.policy:
            raise ValueError(f"intensifier state holds policy {policy.kind!r}, "
                             f"not {self._settings.policy!r}")
        self._bandit = bandit

    # ------------------------------------------------------------- results
    def get_callback(self) -> Callback:
        """SMAC's run-history callback (incumbent update) plus crediting the bandit."""
        intensifier = self

        class _MaxUCBCallback(Callback):
            def on_tell_end(self, smbo: Any, info: TrialInfo, value: TrialValue) -> None:
                arm = intensifier._cash.arm_index(info.config)  # ValueError for foreign configs
                intensifier.update_incumbents(info.config)
                intensifier._on_result(arm, info, value)

        return _MaxUCBCallback()

    def _mirror(self, arm: int, info: TrialInfo, value: TrialValue) -> None:
        """Add a finished trial to the arm's run-history view (config mapped to the subspace)."""
        _, arm_config = self._cash.to_arm(info.config)
        arm_config.origin = info.config.origin
        self._arm_rh[arm].add(
            config=arm_config,
            cost=value.cost,
            time=value.time,
            cpu_time=value.cpu_time,
            status=value.status,
            instance=info.instance,
            seed=info.seed,
            budget=info.budget,
            starttime=value.starttime,
            endtime=value.endtime,
            additional_info=value.additional_info,
            force_update=True,
        )

    def _on_result(self, arm: int, info: TrialInfo, value: TrialValue) -> None:
        """Credit a told trial to ``arm``, the arm of its selector value (module docstring)."""
        cost: Any = value.cost
        finite = _finite(cost)
        if value.status != StatusType.RUNNING and finite:
            self._mirror(arm, info, value)
        if value.status == StatusType.SUCCESS and finite:
            self._bandit.tell(arm, float(cost))
            return
        was_available = self._bandit.available[arm]
        self._bandit.fail(arm)
        streak = self._bandit.crash_streak[arm]
        logger.info(
            "trial of arm %r not credited (status %s, cost %r); %d uncredited in a row",
            self._cash.arms[arm], StatusType(value.status).name, cost, streak,
        )
        if was_available and not self._bandit.available[arm]:
            logger.warning("arm %r dropped after %d uncredited results in a row",
                           self._cash.arms[arm], streak)

    # -------------------------------------------------------------- per-arm HPO
    def _component(self, kind: str, arm_scenario: Scenario) -> Any:
        factory = self._factories[kind]
        if factory is not None:
            return factory(arm_scenario)
        return getattr(self._facade, f"get_{kind}")(arm_scenario)

    def _build_arm_hpo(self, arm: int) -> _ArmHPO:
        """Wire one arm's ConfigSelector the way ``AbstractFacade._update_dependencies`` does."""
        arm_scenario = self._arm_scenarios[arm]
        arm_scenario.configspace.seed(self._scenario.seed + arm)
        template = self._config_selector
        selector = ConfigSelector(
            arm_scenario,
            retrain_after=template._retrain_after if template is not None else 8,
            max_new_config_tries=template._max_new_config_tries if template is not None else 16,
            min_trials=template._min_trials if template is not None else 1,
        )
        model = self._component("model", arm_scenario)
        acquisition_function = self._component("acquisition_function", arm_scenario)
        maximizer = self._component("acquisition_maximizer", arm_scenario)
        encoder = self._component("runhistory_encoder", arm_scenario)
        random_design = self._component("random_design", arm_scenario)
        if self._factories["initial_design"] is not None:
            inner: AbstractInitialDesign | None = self._component("initial_design", arm_scenario)
        elif self._n_initial > 0:
            get_design: Any = self._facade.get_initial_design
            inner = get_design(arm_scenario, n_configs=self._n_initial)
        else:
            inner = None
        encoder.runhistory = self._arm_rh[arm]
        acquisition_function.model = model
        maximizer.acquisition_function = acquisition_function
        callbacks = template._callbacks if template is not None else []
        selector._set_components(
            initial_design=_DefaultFirstDesign(arm_scenario, inner),
            runhistory=self._arm_rh[arm],
            runhistory_encoder=encoder,
            model=model,
            acquisition_maximizer=maximizer,
            acquisition_function=acquisition_function,
            random_design=random_design,
            callbacks=callbacks,
        )
        return _ArmHPO(selector)

    def _sync_views(self) -> list[TrialInfo]:
        """Rebuild the arms' run-history views from SMAC's run history (e.g. after a restart)
        and reconcile the bandit with it; returns the trials to submit again.

        At the first ask of a process every ``RUNNING`` trial of the run history is one that
        was running when an earlier process stopped (SMAC saves the run history with the
        running trials at every ``tell``; nothing in this process has asked yet): its result
        will never arrive, so it is submitted again (module docstring, *Restarts*). A successful
        result that reached ``runhistory.json`` but not ``intensifier.json`` (the process was
        killed between SMAC's two writes) is credited now.
        """
        rh = self.runhistory
        self._arm_rh = [RunHistory() for _ in range(self._cash.n_arms)]
        self._arm_hpo = [None] * self._cash.n_arms
        running = [0] * self._cash.n_arms
        successes: list[list[float]] = [[] for _ in range(self._cash.n_arms)]
        for key in rh:
            value = rh[key]
            config = rh.get_config(key.config_id)
            arm = self._cash.arm_index(config)
            if value.status == StatusType.RUNNING:
                running[arm] += 1
                continue
            if not _finite(value.cost):
                continue
            if value.status == StatusType.SUCCESS:
                successes[arm].append(float(value.cost))  # type: ignore[arg-type]
            info = TrialInfo(config, instance=key.instance, seed=key.seed, budget=key.budget)
            self._mirror(arm, info, value)
        # results in the run history but not in intensifier.json are credited; pending pulls
        # follow the running trials (the core's rule, CashBandit.reconcile)
        for arm, loss in self._bandit.reconcile(successes, running):
            logger.info("crediting a result of arm %r found in the run history only (%r)",
                        self._cash.arms[arm], loss)
        for arm in range(self._cash.n_arms):
            if self._cash.is_empty(arm) and self._arm_rh[arm].get_configs():
                self._bandit.retire(arm, "exhausted")
        return [
            dataclasses.replace(info, additional_info=self._trial_extra())
            for info in rh.get_running_trials()
        ]

    def _next_arm_config(self, arm: int) -> Configuration | None:
        """A configuration of arm ``arm`` not yet in SMAC's run history, or None (exhausted)."""
        rh = self.runhistory
        if self._cash.is_empty(arm):
            config = self._cash.to_joint(arm, {}, origin="Arm without hyperparameters")
            return None if rh.has_config(config) else config
        hpo = self._arm_hpo[arm]
        if hpo is None:
            hpo = self._arm_hpo[arm] = self._build_arm_hpo(arm)
        if hpo.generator is None:
            hpo.generator = iter(hpo.selector)
        tries = 0
        max_tries = max(16, hpo.selector._max_new_config_tries)
        while tries < max_tries:
            try:
                arm_config = next(hpo.generator)
            except (StopIteration, ConfigurationSpaceExhaustedException):
                return None
            origin = f"MaxUCB arm {self._cash.arms[arm]!s}: {arm_config.origin}"
            config = self._cash.to_joint(arm, arm_config, origin=origin)
            if not rh.has_config(config):
                return config
            tries += 1
        return None

    def _trial_extra(self) -> dict[str, Any]:
        cutoff = self._scenario.runtime_cutoff
        return {"cutoff": float(cutoff)} if cutoff is not None else {}

    def __iter__(self) -> Iterator[TrialInfo]:
        """Yield trials forever: MaxUCB picks the arm, the arm's HPO the configuration."""
        self.__post_init__()
        stale = self._sync_views()
        if stale:
            logger.info("re-submitting %d trial(s) that were running when the previous process "
                        "stopped", len(stale))
        yield from stale
        while True:
            arm = self._bandit.ask()
            if arm is None:
                logger.warning("MaxUCBIntensifier: every arm is exhausted or dropped; stopping")
                return
            config = self._next_arm_config(arm)
            if config is None:
                self._bandit.release(arm)
                self._bandit.retire(arm, "exhausted")
                logger.info("arm %r is exhausted", self._cash.arms[arm])
                continue
            key = self.get_instance_seed_keys_of_interest()[0]
            yield TrialInfo(config=config, instance=key.instance, seed=key.seed,
                            additional_info=self._trial_extra())

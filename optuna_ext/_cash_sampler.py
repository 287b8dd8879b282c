"""MaxUCBCashSampler: MaxUCB picks the model class of every trial, each class has its own sampler.

Two-level CASH of Balef, Vernade & Eggensperger (*Put CASH on Bandits: A Max K-Armed Problem for
Automated Machine Learning*, 2025) in Optuna's own idiom: the objective is written as Optuna users
write CASH - ``trial.suggest_categorical("model", [...])``, then that model's parameters - and a
max-K-armed bandit (MaxUCB, Alg. 1; burn-in Alg. E.1) chooses the value of that categorical, while
each model class runs its own HPO with its own Optuna sampler that sees only that class's trials.

The bandit is the framework-free core object :class:`uvp_plugins.bandits.CashBandit`; this module
only translates Optuna's trials into it. Every decision is derived from the storage (the trials'
parameters, values, states and system attributes), never from state held in the sampler object.
"""

from __future__ import annotations

import copy
import logging
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler, TPESampler
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_ext._claims import CLAIMED, WON, Proposal, claim
from optuna_ext._sampler import _stable_seed, base_seed
from uvp_plugins.bandits import CASH_DESIGN, CASH_FLOOR, CashBandit, CashSettings, PullRecord
from uvp_plugins.space import range_centre
from uvp_plugins.validation import check_seed

if TYPE_CHECKING:
    from optuna.storages import BaseStorage

__all__ = ["MaxUCBCashSampler", "ATTR_PULL"]

logger = logging.getLogger(__name__)

#: a trial's pull: the claim record ``{"params": {"selector": name, "arm": i, "burn_in_slot": s},
#: "state": ...}`` written (with :func:`optuna_ext._claims.claim`) before the class is returned
ATTR_PULL = "uvp:cash:pull"
_SLOT = "burn_in_slot"
#: trial contexts kept per process (trials whose ``after_trial`` never came are dropped first)
_MAX_CONTEXTS = 1024

ClassSamplers = Mapping[Any, BaseSampler] | Callable[[Any], BaseSampler]


def _slot_key(params: Mapping[str, Any]) -> tuple[str, int]:
    """Claim key of a pull: its burn-in slot (``TypeError`` for a pull after the burn-in, which
    claims nothing; ``KeyError`` for a trial's ordinary parameters)."""
    return (_SLOT, int(params[_SLOT]))


def _pull_record(t: FrozenTrial) -> Mapping[str, Any] | None:
    """The pull a trial made (its record claimed or won), or ``None``."""
    record = t.system_attrs.get(ATTR_PULL)
    if isinstance(record, Mapping) and record.get("state") in (CLAIMED, WON):
        params = record.get("params")
        if isinstance(params, Mapping):
            return params
    return None


def _arm_of(t: FrozenTrial, selector: str, dist: CategoricalDistribution) -> int | None:
    """The class (index into ``dist.choices``) a trial belongs to, or ``None``.

    Its selector parameter if it has one (whoever set it: this sampler, ``enqueue_trial``, a
    retried trial); else the pull recorded for it (a worker that chose the class and has not yet
    stored the parameter); else, for a running trial, an enqueued (fixed) selector value.

    Raises:
        ValueError: the trial's selector value is not one of ``dist.choices``.
    """
    if selector in t.params:
        return int(dist.to_internal_repr(t.params[selector]))
    pull = _pull_record(t)
    if pull is not None and pull.get("selector") == selector:
        arm = pull.get("arm")
        if isinstance(arm, int) and not isinstance(arm, bool) and 0 <= arm < len(dist.choices):
            return arm
    if t.state == TrialState.RUNNING:
        fixed = t.system_attrs.get("fixed_params") or {}
        if isinstance(fixed, Mapping) and selector in fixed:
            return int(dist.to_internal_repr(fixed[selector]))
    return None


def _burn_in_slot(t: FrozenTrial, arm: int) -> int | None:
    """The burn-in slot of a trial's pull (Alg. E.1), or ``None``."""
    pull = _pull_record(t)
    if pull is None or pull.get("arm") != arm:
        return None
    slot = pull.get(_SLOT)
    return slot if isinstance(slot, int) and not isinstance(slot, bool) else None


def _loss(t: FrozenTrial, minimize: bool) -> float | None:
    """The bandit's loss (lower is better) of a finished trial, or ``None`` if it has none: only a
    COMPLETE trial with a finite value has one (a pruned trial's last intermediate value is not
    a final loss)."""
    if t.state != TrialState.COMPLETE or not t.values:
        return None
    value = float(t.values[0])
    if not math.isfinite(value):
        return None
    return value if minimize else -value


class _ClassStudy(Study):
    """The study as one model class's sampler sees it: only the trials of that class.

    Built-in samplers read trials through ``study._get_trials`` / ``get_trials`` (TPE, GP,
    CMA-ES, QMC, the search-space helpers), so filtering there is enough; ``best_trial`` is the
    class's best. Writes (system attributes of the trial being sampled) go to the real storage.
    """

    def __init__(
        self, study: Study, sampler: BaseSampler, belongs: Callable[[FrozenTrial], bool]
    ) -> None:
        # Study.__init__ is not called: it would look the study up in the storage again; the
        # attributes Study's methods read are copied from the study being sampled.
        self.study_name = study.study_name
        self._study_id = study._study_id
        self._storage = study._storage
        self._directions = list(study.directions)
        self.sampler = sampler
        self.pruner = study.pruner
        self._thread_local = type(study._thread_local)()
        self._stop_flag = False
        self._parent = study
        self._belongs = belongs

    def _get_trials(
        self,
        deepcopy: bool = True,
        states: Container[TrialState] | None = None,
        use_cache: bool = False,
    ) -> list[FrozenTrial]:
        trials = self._parent._get_trials(deepcopy=False, states=states, use_cache=use_cache)
        mine = [t for t in trials if self._belongs(t)]
        return copy.deepcopy(mine) if deepcopy else mine

    def get_trials(
        self, deepcopy: bool = True, states: Container[TrialState] | None = None
    ) -> list[FrozenTrial]:
        return self._get_trials(deepcopy=deepcopy, states=states)

    def _get_best_trial(self, deepcopy: bool) -> FrozenTrial:
        complete = [
            t for t in self._get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.values
        ]
        if not complete:
            raise ValueError("No trials of this model class are completed yet.")
        sign = 1.0 if self.direction == StudyDirection.MINIMIZE else -1.0
        best = min(complete, key=lambda t: (sign * float(t.values[0]), t.number))
        return copy.deepcopy(best) if deepcopy else best

    def stop(self) -> None:
        self._parent.stop()


@dataclass
class _Lane:
    """One sampler sampling one trial on one view of the study, with its relative sampling done
    once per trial (at the lane's first parameter), as Optuna does it for a study's sampler."""

    sampler: BaseSampler
    study: Study
    relative: bool = True
    space: dict[str, BaseDistribution] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    #: the class's default configuration when this trial is its first (else None): every
    #: parameter takes its default, the sampler is not asked
    defaults: Mapping[str, Any] | None = None

    def sample(
        self, trial: FrozenTrial, name: str, dist: BaseDistribution, exclude: Iterable[str]
    ) -> Any:
        if self.defaults is not None:
            return _default_value(name, dist, self.defaults)
        if self.space is None and not self.relative:
            self.space = {}
        if self.space is None:
            skip = set(exclude) | set(trial.params)
            space = self.sampler.infer_relative_search_space(self.study, trial)
            self.space = {n: d for n, d in space.items() if n not in skip}
            if self.space:
                self.params = dict(self.sampler.sample_relative(self.study, trial, self.space))
        if name in self.params and self.space.get(name) == dist:  # type: ignore[union-attr]
            value = self.params[name]
            try:
                if dist._contains(dist.to_internal_repr(value)):
                    return value
            except ValueError:
                pass
        return self.sampler.sample_independent(self.study, trial, name, dist)


def _default_value(name: str, dist: BaseDistribution, given: Mapping[str, Any]) -> Any:
    """A parameter's value in its class's default configuration: the value ``given`` for it,
    else the centre of its distribution (:func:`uvp_plugins.space.range_centre`, ConfigSpace's
    rule for a hyperparameter without a default; a categorical's first choice)."""
    if name in given:
        value = given[name]
        try:
            ok = dist._contains(dist.to_internal_repr(value))
        except (ValueError, TypeError):
            ok = False
        if not ok:
            raise ValueError(f"class_defaults gives {name}={value!r}, which is not a value of its "
                             f"distribution {dist!r}")
        return value
    if isinstance(dist, CategoricalDistribution):
        return dist.choices[0]
    if isinstance(dist, (FloatDistribution, IntDistribution)):
        return range_centre(dist.low, dist.high, log=dist.log,
                            integer=isinstance(dist, IntDistribution), step=dist.step)
    raise TypeError(f"parameter {name!r}: no default value for a {type(dist).__name__}")


@dataclass
class _TrialContext:
    """What this process knows about a trial it is sampling (never needed to decide anything
    that another process could not decide from the storage)."""

    arm: int | None = None
    selector: str | None = None
    dist: CategoricalDistribution | None = None
    looked_up: bool = False
    lanes: dict[Any, _Lane] = field(default_factory=dict)


class MaxUCBCashSampler(BaseSampler):
    """CASH in Optuna: MaxUCB chooses the model class, each class has its own Optuna sampler.

    Implements the two-level CASH approach of Balef, Vernade & Eggensperger (*Put CASH on
    Bandits*, 2025): a max-K-armed bandit picks which model class (arm) the next trial trains,
    and every class runs its own hyperparameter optimisation. Write the objective as for any
    Optuna sampler - the model class first, with ``trial.suggest_categorical``, then that
    class's (conditional) parameters - and pass this sampler to :func:`optuna.create_study`.

    **The class of a trial.** The *selector* is the categorical parameter that names the model
    class: ``selector="model"``, or, with ``selector=None``, the first categorical parameter the
    sampler is asked to sample in the study (pass the name when the objective suggests another
    categorical, e.g. a preprocessing choice, before the model). When the objective suggests the
    selector, the bandit (:class:`uvp_plugins.bandits.CashBandit` with MaxUCB, Alg. 1) chooses its
    value among the categorical's choices (arm ``i`` = the ``i``-th choice):
    one pull per class first (round robin in choice order), then the class with the largest
    ``max_j r_ij + (alpha ln t / n_i)^2`` on rewards ``r = -loss`` min-max scaled to
    ``(0.01, 0.99)`` over every credited trial of every class, ``t`` = credited trials + running
    pulls + 1, ties to the first choice (:mod:`uvp_plugins.bandits.policies`); a class with
    fewer than ``floor * ln t`` pulls is chosen first (the exploration floor). ``burn_in=C``
    makes the first ``C K`` pulls round robin with their results not credited (Alg. E.1);
    ``min_pulls=m`` observes every class's first ``m`` results before the index decides.
    A value the objective did not get from this sampler (``enqueue_trial``, a retried trial) is
    that trial's class all the same. The choices must be distinct as Optuna stores them
    (``1``, ``True`` and ``1.0`` are one value to Optuna): equal-valued choices are refused.

    **Defaults, and why** (chosen on declared tuning tasks of the paper's six-class YAHPO
    benchmark, ``docs/results/cash_yahpo6.md``; every rule lives in
    :class:`uvp_plugins.bandits.CashSettings`):

    * *Each class starts with its default configuration* (Alg. 1, line 3: "evaluating default
      configuration"; App. D): its first trial takes the values ``class_defaults`` gives for
      it, every other parameter the centre of its distribution (the middle of the range, on
      the log scale if ``log``; a categorical's first choice: ConfigSpace's default, so the
      SMAC intensifier's classes start from the same configuration). Library defaults are often
      near the best; ``default_first=False`` lets the class's sampler choose the first trial.
    * ``alpha = 1`` and an exploration floor of ``2 ln t`` pulls. Rewards are min-max scaled
      over all classes, so a class whose first results were the worst seen has a scaled maximum
      near 0 and comes back only when its bonus alone beats the leader: ``alpha ln t > n``.
      With the paper's ``alpha = 0.5`` and three pulls that is ``t > 403``: three unlucky draws
      locked a class out of a 200-trial study (issue 30, a YAHPO task where xgboost got 3 of 200
      trials and ended 0.19 above what joint TPE found; the paper's sensitivity study also finds
      larger alpha better at T = 200 on YAHPO, Table D.6). The floor keeps pulling every class
      until it has ``2 ln t`` trials (about 11 by ``t = 200``) whatever its rewards, so a class
      whose HPO starts in a bad region (xgboost's default booster on that task) has trials
      enough for its own model to leave it (with ``ln t`` it still did not in 3 of 10 seeds).
    * *Each class's sampler* is Optuna's univariate TPE (``multivariate=False``), the model one
      joint ``TPESampler`` applies to each class's parameters, so on a class's parameters it is
      at least as strong as the joint sampler while seeing only that class's trials; it models
      from the class's default on (``design=0``: ``n_startup_trials = 1``): random start-up
      configurations per class cost a sixth of the budget each on six classes before any model
      is used, and were the costliest choice on the tuning tasks (Optuna 5's multivariate TPE,
      the earlier default, was weaker still).

    **Each class's sampler.** Every parameter the objective suggests after the selector is
    sampled by the class's own sampler on a view of the study that holds only that class's
    trials (its ``get_trials``, ``best_trial`` and the search-space helpers see nothing else),
    with Optuna's relative sampling done once per trial at the class's first parameter, as
    Optuna does for a study's sampler. Default: ``TPESampler(multivariate=False,
    n_startup_trials=1 + design)``, one per class and trial, seeded from ``(seed, class, index
    of the trial in its class)``, so a class's HPO proposes the same whatever the other classes
    did in between, and a restarted or parallel run samples what an uninterrupted one would
    from the same trials. ``class_samplers`` replaces it: a mapping ``{class value: sampler}``
    (classes left out get the default) or a factory ``f(class value) -> sampler`` (called once
    per class and study in each process); the class's first trial is its default configuration
    all the same. Parameters suggested *before* the selector (shared by all classes) are
    sampled by ``shared_sampler`` (default: TPE with Optuna's defaults, seeded from ``(seed,
    trial number)``) on the whole study, each on its own (``sample_independent``); in a study
    that never suggests a categorical, ``shared_sampler`` samples every parameter, relative
    sampling included (the sampler then behaves like TPE).

    **Losses.** The bandit minimises a loss: the trial's value for ``direction="minimize"``, its
    negative for ``"maximize"``. Only a COMPLETE trial with a finite value is credited to its
    class. A FAILED trial, a PRUNED trial (its last intermediate value is not a final loss) and a
    COMPLETE trial with an infinite value are never credited; each is a failure of its class
    (:meth:`CashBandit.fail <uvp_plugins.bandits.CashBandit.fail>`), and a class whose last
    ``max_consecutive_crashes`` finished trials were all failures is no longer chosen - else a
    class that always fails or is always pruned would get every pull (its count never grows).
    A class without hyperparameters (the objective suggests nothing but the selector for it) is
    chosen until it has one COMPLETE trial and then no longer (its only configuration has been
    evaluated); its result keeps counting. If every class is out, the bandit's rule over all
    classes decides (logged as a warning). A class's sampler still sees all its trials, failed
    or pruned ones included, as it would in a study of its own.

    **Storage is the state.** The bandit is rebuilt from the study's trials at every choice: each
    trial's class (its selector parameter, or the pull it recorded), its state and value; results
    are credited to the class of their trial whenever they arrive; running trials are pending
    pulls (Alg. 1's parallel rule in :mod:`uvp_plugins.bandits.policies`); failures count in the
    order trials finished. So ``n_jobs > 1`` (a lock serialises the choice within a process),
    several processes on one storage (SQLite or PostgreSQL through ``RDBStorage``,
    ``JournalStorage``, ``GrpcStorageProxy``) and restarts from the storage continue the same
    bandit: the same seed and the same results give the same class sequence. A trial records its
    pull (``"uvp:cash:pull"`` system attribute) before the class is returned, so workers see each
    other's pulls at once. During the burn-in, the round-robin slot a trial takes is claimed with
    the protocol of :mod:`optuna_ext._claims` (write, read back, a fixed rule decides), so two
    simultaneous workers never take one slot and the first ``C K`` pulls are exactly the
    burn-in. Two workers that choose at the same moment after the burn-in may both choose the
    same class: each result is credited to its own trial's class. A worker killed mid-trial
    leaves a RUNNING trial, a pending pull until the storage's heartbeat fails it (a failure of
    its class); ``RetryHeartbeatStaleTrialCallback``'s retry re-runs it with the same class
    (and, during the burn-in, the same slot).

    Example:

        .. code-block:: python

            import math

            import optuna
            from optuna_ext import MaxUCBCashSampler

            def objective(trial):
                model = trial.suggest_categorical("model", ["svc", "knn", "naive_bayes"])
                if model == "svc":
                    c = trial.suggest_float("svc_c", 1e-2, 1e3, log=True)
                    return abs(math.log10(c) - 1) / 10        # best: C = 10, loss 0
                if model == "knn":
                    k = trial.suggest_int("knn_k", 1, 30)
                    return 0.05 + abs(k - 5) / 30
                return 0.2                                    # no hyperparameters

            sampler = MaxUCBCashSampler(seed=0)
            study = optuna.create_study(sampler=sampler)
            study.optimize(objective, n_trials=40)
            print(study.best_params, sampler.pulls(study))

    Args:
        selector: name of the categorical parameter that selects the model class, or ``None``
            to use the first categorical parameter the sampler is asked to sample.
        alpha: exploration parameter ``alpha >= 0`` of MaxUCB (``None``: the CASH default, 1;
            the paper's is 0.5) or of ``"UCB"`` / ``"QuantileUCB"`` (``None``: their 0.5).
        burn_in: burn-in rounds ``C >= 0`` (Alg. E.1; 0 = plain Alg. 1), or ``"design"``
            (``1 + design``).
        min_pulls: each class's first results observed before the index decides (``>= 1``, or
            ``"design"``: ``1 + design``).
        floor: exploration floor ``c >= 0``: a class below ``c ln t`` pulls is chosen first
            (default 2; 0: none, as in Alg. 1).
        design: random configurations each class's default TPE draws after the class's
            default before it models (``n_startup_trials - 1``; default 0); ``None``: the
            paper's ``50 / (K - 1)`` (App. D).
        class_defaults: ``{class value: {parameter name: value}}``, each class's default
            configuration (its first trial); parameters left out take the centre of their
            distribution.
        default_first: evaluate each class's default configuration first (Alg. 1, line 3).
        class_samplers: the sampler of each model class: a mapping ``{class value: sampler}`` or
            a factory ``f(class value) -> sampler``; ``None``: univariate TPE per class.
        shared_sampler: the sampler of parameters suggested before the selector (``None``: TPE).
        policy: the bandit policy of :mod:`uvp_plugins.bandits` (``"MaxUCB"``; ``"UCB"``,
            ``"QuantileUCB"``, ``"RoundRobin"`` are the paper's baselines).
        max_consecutive_crashes: no longer choose a class after this many failed or pruned
            trials in a row (an int ``>= 1``; ``None``: never).
        seed: seed of the default samplers (an int ``>= 0``; ``None``: drawn at random).

    Raises:
        ValueError / TypeError: a setting outside its range (named, with the accepted range, at
            construction); at the selector's first suggestion, choices that Optuna stores as
            equal, or a key of ``class_samplers`` / ``class_defaults`` that is not a choice.
    """

    def __init__(
        self,
        selector: str | None = None,
        *,
        alpha: float | None = None,
        burn_in: int | str = 0,
        min_pulls: int | str = 1,
        floor: float = CASH_FLOOR,
        design: int | None = CASH_DESIGN,
        class_defaults: Mapping[Any, Mapping[str, Any]] | None = None,
        default_first: bool = True,
        class_samplers: ClassSamplers | None = None,
        shared_sampler: BaseSampler | None = None,
        policy: str = "MaxUCB",
        max_consecutive_crashes: int | None = 5,
        seed: int | None = None,
    ) -> None:
        if selector is not None and (not isinstance(selector, str) or not selector):
            raise TypeError(f"selector must be a non-empty str (the name of the categorical "
                            f"parameter that selects the model class) or None, got {selector!r}")
        self._selector = selector
        # every rule of the bandit (which policies take alpha, burn-in, design sizes) is the
        # core's: the settings validate themselves with its messages
        self._settings = CashSettings(policy=policy, alpha=alpha, burn_in=burn_in,
                                      min_pulls=min_pulls, floor=floor, design=design,
                                      max_consecutive_crashes=max_consecutive_crashes)
        if not isinstance(default_first, bool):
            raise TypeError(f"default_first must be a bool, got {default_first!r}")
        self._default_first = default_first
        self._class_defaults = self._check_class_defaults(class_defaults)
        self._class_samplers = self._check_class_samplers(class_samplers)
        if shared_sampler is not None and not isinstance(shared_sampler, BaseSampler):
            raise TypeError("shared_sampler must be an optuna.samplers.BaseSampler or None, got "
                            f"{type(shared_sampler).__name__}")
        self._shared_sampler = shared_sampler
        self._seed = check_seed("seed", seed, allow_none=True)
        self._base_seed = base_seed(self._seed)
        self._init_process_state()

    # ------------------------------------------------------------------ plumbing
    @staticmethod
    def _check_class_defaults(class_defaults: Any) -> dict[Any, dict[str, Any]]:
        if class_defaults is None:
            return {}
        if not isinstance(class_defaults, Mapping):
            raise TypeError("class_defaults must be a mapping {class value: {parameter name: "
                            f"value}} or None, got {type(class_defaults).__name__}")
        out = {}
        for key, params in class_defaults.items():
            if not isinstance(params, Mapping) or not all(isinstance(n, str) for n in params):
                raise TypeError(f"class_defaults[{key!r}] must be a mapping {{parameter name: "
                                f"value}}, got {params!r}")
            out[key] = dict(params)
        return out

    @staticmethod
    def _check_class_samplers(class_samplers: Any) -> ClassSamplers | None:
        if class_samplers is None:
            return None
        if isinstance(class_samplers, BaseSampler):
            raise TypeError(
                "class_samplers must be a mapping {class value: sampler} or a factory "
                f"f(class value) -> sampler, got a {type(class_samplers).__name__} instance (one "
                "sampler object cannot serve every class: pass e.g. "
                f"lambda value: optuna.samplers.{type(class_samplers).__name__}(...))"
            )
        if isinstance(class_samplers, Mapping):
            for key, sampler in class_samplers.items():
                if not isinstance(sampler, BaseSampler):
                    raise TypeError(f"class_samplers[{key!r}] must be an optuna.samplers."
                                    f"BaseSampler, got {type(sampler).__name__}")
            return dict(class_samplers)
        if callable(class_samplers):
            return class_samplers  # type: ignore[no-any-return]
        raise TypeError("class_samplers must be a mapping {class value: sampler}, a factory "
                        f"f(class value) -> sampler, or None; got {type(class_samplers).__name__}")

    def _init_process_state(self) -> None:
        self._lock = threading.RLock()
        self._contexts: OrderedDict[tuple[int, int, int], _TrialContext] = OrderedDict()
        # detected selector names and factory-built samplers, per storage and study
        self._per_study: weakref.WeakKeyDictionary[BaseStorage, dict[int, dict[Any, Any]]] = (
            weakref.WeakKeyDictionary()
        )
        self._warned_all_out: set[tuple[int, int]] = set()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_lock", "_contexts", "_per_study", "_warned_all_out"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_process_state()

    def reseed_rng(self) -> None:
        # The default samplers are seeded per trial from (seed, class, trial number); only an
        # unseeded sampler draws a new base seed. Samplers given by the user are reseeded as
        # Optuna reseeds a study's sampler.
        if self._seed is None:
            self._base_seed = base_seed(self._seed)
        with self._lock:
            own = [s for entry in self._per_study.values() for d in entry.values()
                   for k, s in d.items() if isinstance(k, tuple) and k[0] == "factory"]
        given = list(self._class_samplers.values()) if isinstance(self._class_samplers, Mapping) else []
        for sampler in (*own, *given, self._shared_sampler):
            if sampler is not None:
                sampler.reseed_rng()

    def _study_memo(self, study: Study) -> dict[Any, Any]:
        """This process's memo for a study (detected selector, factory-built samplers)."""
        try:
            per_storage = self._per_study.setdefault(study._storage, {})
        except TypeError:  # a storage without weak references: nothing is remembered
            return {}
        return per_storage.setdefault(study._study_id, {})

    def _check_single_objective(self, study: Study) -> None:
        if study._is_multi_objective():
            raise ValueError(
                "MaxUCBCashSampler supports single-objective studies only (the bandit credits one "
                f"loss per trial); this study has {len(study.directions)} objectives"
            )

    # ------------------------------------------------------------------ trials
    def _context(self, study: Study, trial: FrozenTrial) -> _TrialContext:
        key = (id(study._storage), study._study_id, trial._trial_id)
        with self._lock:
            ctx = self._contexts.get(key)
            if ctx is None:
                ctx = self._contexts[key] = _TrialContext()
                while len(self._contexts) > _MAX_CONTEXTS:
                    self._contexts.popitem(last=False)
            return ctx

    def _known_selector(self, study: Study) -> str | None:
        """The selector's name if this process knows it (given, or detected earlier)."""
        if self._selector is not None:
            return self._selector
        return self._study_memo(study).get("selector")

    def _recorded_selector(self, trials: Iterable[FrozenTrial]) -> str | None:
        """The selector another trial recorded with its pull (the lowest-numbered one)."""
        for t in sorted(trials, key=lambda t: t.number):
            pull = _pull_record(t)
            if pull is not None and isinstance(pull.get("selector"), str):
                return str(pull["selector"])
        return None

    def _selector_name(self, study: Study, ctx: _TrialContext) -> str | None:
        """The selector's name: given, detected in this process, or recorded in the storage
        (looked up once per trial while unknown)."""
        name = self._known_selector(study)
        if name is None and not ctx.looked_up:
            ctx.looked_up = True
            name = self._recorded_selector(
                study._storage.get_all_trials(study._study_id, deepcopy=False)
            )
            if name is not None:
                self._study_memo(study)["selector"] = name
        return name

    # ------------------------------------------------------------------ the bandit
    def _rebuild(
        self,
        trials: Iterable[FrozenTrial],
        selector: str,
        dist: CategoricalDistribution,
        minimize: bool,
        skip_trial_id: int | None = None,
    ) -> CashBandit:
        """The bandit as the storage says: every trial with a class is a pull of it, translated
        into a :class:`~uvp_plugins.bandits.PullRecord` (its state, loss, finish time, burn-in
        slot, and whether it was a COMPLETE trial that suggested nothing but the selector: an
        exhausted class) and replayed by :meth:`CashBandit.rebuild
        <uvp_plugins.bandits.CashBandit.rebuild>` in the core's one order."""
        records: list[PullRecord] = []
        burn_in = self._settings.policy_kwargs(len(dist.choices))["burn_in"]
        for t in trials:
            if t._trial_id == skip_trial_id:
                continue
            try:
                arm = _arm_of(t, selector, dist)
            except ValueError:
                value = t.params.get(selector, (t.system_attrs.get("fixed_params") or {}).get(selector))
                raise ValueError(
                    f"trial {t.number} has {selector}={value!r}, which is not one of the "
                    f"selector's choices {list(dist.choices)}; the model classes of a study "
                    "are fixed (start a new study to change them)"
                ) from None
            if arm is None or not (t.state == TrialState.RUNNING or t.state.is_finished()):
                continue
            slot = _burn_in_slot(t, arm) if burn_in else None
            if t.state == TrialState.RUNNING:
                records.append(PullRecord(arm, "running", number=t.number, burn_in_slot=slot))
                continue
            loss = _loss(t, minimize)
            done = t.datetime_complete.timestamp() if t.datetime_complete is not None else None
            records.append(PullRecord(
                arm, "failed" if loss is None else "complete", loss=loss, finished=done,
                number=t.number, burn_in_slot=slot,
                exhausted=t.state == TrialState.COMPLETE and list(t.params) == [selector],
            ))
        return CashBandit.rebuild(len(dist.choices), records, self._settings)

    def _choose_arm(
        self, study: Study, trial: FrozenTrial, selector: str, dist: CategoricalDistribution
    ) -> int:
        """Ask the bandit rebuilt from the storage; record the pull (a burn-in slot is claimed)."""
        storage, study_id = study._storage, study._study_id
        minimize = study.direction == StudyDirection.MINIMIZE

        def choose() -> Proposal:  # a fresh read and choice per claim attempt
            trials = storage.get_all_trials(study_id, deepcopy=False)
            bandit = self._rebuild(trials, selector, dist, minimize, skip_trial_id=trial._trial_id)
            arm = bandit.ask()
            if arm is None:
                arm = bandit.policy.select()
                key = (id(storage), study_id)
                if key not in self._warned_all_out:
                    self._warned_all_out.add(key)
                    logger.warning("MaxUCBCashSampler: every model class is out (%s); the "
                                   "bandit's rule over all classes decides from now on",
                                   {dist.choices[i]: r for i, r in bandit.retired.items()})
            slot = bandit.last_burn_in_slot
            record = {"selector": selector, "arm": arm, _SLOT: slot}
            return Proposal(record, exclusive=slot is not None)

        with self._lock:
            record = claim(study, trial, choose, key=_slot_key, attr=ATTR_PULL)
        return int(record["arm"])

    # ------------------------------------------------------------ samplers of the lanes
    def _default_sampler(self, trial: FrozenTrial, lane: Any) -> BaseSampler:
        return TPESampler(seed=_stable_seed(self._base_seed, trial.number, repr(lane)))

    def _class_sampler(
        self, study: Study, trial: FrozenTrial, arm: int, value: Any, index: int, n_classes: int
    ) -> BaseSampler:
        given = self._class_samplers
        if isinstance(given, Mapping):
            for key, sampler in given.items():
                if self._same_choice(key, value):
                    return sampler
        elif given is not None:
            memo = self._study_memo(study)
            with self._lock:
                built = memo.get(("factory", arm))
                if built is None:
                    built = given(value)
                    if not isinstance(built, BaseSampler):
                        raise TypeError(f"class_samplers({value!r}) must return an optuna."
                                        f"samplers.BaseSampler, got {type(built).__name__}")
                    memo[("factory", arm)] = built
            return built  # type: ignore[no-any-return]
        return self._default_class_sampler(arm, index, n_classes)

    def _default_class_sampler(self, arm: int, index: int, n_classes: int) -> BaseSampler:
        """A class's default sampler for its ``index``-th trial (class docstring, *Each class's
        sampler*): univariate TPE that starts modelling after the class's default and ``design``
        random configurations, seeded from ``(seed, class, index)``."""
        design = self._settings.design_size(n_classes)
        return TPESampler(seed=_stable_seed(self._base_seed, "class", arm, index),
                          multivariate=False, n_startup_trials=1 + design)

    @staticmethod
    def _same_choice(a: Any, b: Any) -> bool:
        return bool(type(a) is type(b) and a == b) or (
            isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
        )

    def _check_class_keys(self, selector: str, dist: CategoricalDistribution) -> None:
        """The selector's choices are distinct as Optuna stores them, and every key of
        ``class_samplers`` / ``class_defaults`` is one of them.

        Optuna stores a categorical value as its index ``choices.index(value)``, found with
        ``==``: of choices that compare equal (``1``, ``True`` and ``1.0``; ``0``, ``False`` and
        ``0.0``) it stores every one as the first, so a trial of the later class would come
        back from the storage as a trial of the earlier one, and its result would be credited
        to the wrong class (or, for the chosen class, never): refused, naming them.
        """
        choices = list(dist.choices)
        for j, later in enumerate(choices):
            first = int(dist.to_internal_repr(later))
            if first != j:
                raise ValueError(
                    f"the selector {selector!r} has the choices {choices[first]!r} (position "
                    f"{first}) and {later!r} (position {j}), which Optuna stores as the same value "
                    "(its CategoricalDistribution finds a value's index with ==, and "
                    f"{choices[first]!r} == {later!r}): a trial of {later!r} would be read back as "
                    f"one of {choices[first]!r}. Give the model classes distinct values, e.g. "
                    "strings"
                )
        given: list[tuple[str, Iterable[Any]]] = [("class_defaults", self._class_defaults)]
        if isinstance(self._class_samplers, Mapping):
            given.append(("class_samplers", self._class_samplers))
        for what, keys in given:
            for key in keys:
                if not any(self._same_choice(key, c) for c in choices):
                    raise ValueError(
                        f"{what} has the key {key!r}, which is not a choice of the selector "
                        f"{selector!r}; its choices are {choices}"
                    )

    def _class_lane(self, study: Study, trial: FrozenTrial, ctx: _TrialContext) -> _Lane:
        assert ctx.arm is not None and ctx.selector is not None and ctx.dist is not None
        lane = ctx.lanes.get(("class", ctx.arm))
        if lane is None:
            arm, selector, dist = ctx.arm, ctx.selector, ctx.dist

            def belongs(t: FrozenTrial) -> bool:
                try:
                    return _arm_of(t, selector, dist) == arm
                except ValueError:
                    return False

            # the trial's place in its class: how many trials of the class came before it
            earlier = [t for t in study._storage.get_all_trials(study._study_id, deepcopy=False)
                       if t.number < trial.number and belongs(t)]
            index = len(earlier)
            value = dist.choices[arm]
            sampler = self._class_sampler(study, trial, arm, value, index, len(dist.choices))
            lane = _Lane(sampler, _ClassStudy(study, sampler, belongs))
            if self._default_first and index == 0:
                lane.defaults = self._defaults_of(value)
            sampler.before_trial(lane.study, trial)
            ctx.lanes[("class", arm)] = lane
        return lane

    def _defaults_of(self, value: Any) -> dict[str, Any]:
        for key, params in self._class_defaults.items():
            if self._same_choice(key, value):
                return params
        return {}

    def _shared_lane(
        self, study: Study, trial: FrozenTrial, ctx: _TrialContext, cash: bool
    ) -> _Lane:
        """The lane of parameters without a class: relative sampling only in a study without a
        selector (in a CASH study the intersection of all trials' parameters can hold one
        class's parameters while only that class has finished trials)."""
        lane = ctx.lanes.get("shared")
        if lane is None:
            sampler = self._shared_sampler or self._default_sampler(trial, "shared")
            lane = ctx.lanes["shared"] = _Lane(sampler, study, relative=not cash)
            sampler.before_trial(study, trial)
        return lane

    # ------------------------------------------------------------------ Optuna API
    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        # The class of a trial is chosen when the selector is suggested, so nothing is sampled
        # before it: each class's relative sampling runs at its first parameter (_Lane.sample).
        self._check_single_objective(study)
        return {}

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        self._check_single_objective(study)
        # Optuna passes the empty space inferred above; a direct call with a space samples its
        # parameters in order, as the objective's suggest calls would.
        return {name: self.sample_independent(study, trial, name, dist)
                for name, dist in search_space.items()}

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        self._check_single_objective(study)
        ctx = self._context(study, trial)
        selector = ctx.selector or self._selector_name(study, ctx)
        if ctx.arm is None and (
            param_name == selector
            or (selector is None and isinstance(param_distribution, CategoricalDistribution))
        ):
            return self._sample_selector(study, trial, ctx, param_name, param_distribution)
        if param_name == selector and ctx.arm is not None:
            assert ctx.dist is not None
            return ctx.dist.choices[ctx.arm]
        if ctx.arm is None and selector is not None and selector in trial.params:
            # the selector came from elsewhere (enqueue_trial, a retried trial): its class
            dist = trial.distributions[selector]
            if isinstance(dist, CategoricalDistribution):
                ctx.arm, ctx.selector, ctx.dist = _arm_of(trial, selector, dist), selector, dist
        if ctx.arm is not None:
            lane = self._class_lane(study, trial, ctx)
            return lane.sample(trial, param_name, param_distribution, exclude=(ctx.selector or "",))
        lane = self._shared_lane(study, trial, ctx, cash=selector is not None)
        return lane.sample(trial, param_name, param_distribution, exclude=())

    def _sample_selector(
        self,
        study: Study,
        trial: FrozenTrial,
        ctx: _TrialContext,
        name: str,
        dist: BaseDistribution,
    ) -> Any:
        if not isinstance(dist, CategoricalDistribution):
            raise ValueError(
                f"the selector {name!r} must be suggested with trial.suggest_categorical (its "
                f"choices are the model classes), got a {type(dist).__name__}"
            )
        self._check_class_keys(name, dist)
        if self._selector is None:
            self._study_memo(study).setdefault("selector", name)
        ctx.arm = self._choose_arm(study, trial, name, dist)
        ctx.selector, ctx.dist = name, dist
        return dist.choices[ctx.arm]

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        # The class of the trial is not known yet: each lane's sampler gets before_trial when
        # the trial first needs it.
        pass

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        key = (id(study._storage), study._study_id, trial._trial_id)
        with self._lock:
            ctx = self._contexts.pop(key, None)
        if ctx is not None:
            for lane in ctx.lanes.values():
                lane.sampler.after_trial(lane.study, trial, state, values)
        if (
            self._selector is not None
            and state == TrialState.COMPLETE
            and trial.params
            and self._selector not in trial.params
        ):
            trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
            if not any(self._selector in t.params for t in trials):
                raise ValueError(
                    f"selector={self._selector!r} is not a parameter of this study: trial "
                    f"{trial.number} completed with the parameters {sorted(trial.params)}. Pass "
                    "the name of the categorical parameter that selects the model class, or "
                    "selector=None to use the first categorical parameter the objective suggests"
                )

    # ------------------------------------------------------------------ inspection
    def _selector_of_study(
        self, study: Study
    ) -> tuple[list[FrozenTrial], str, CategoricalDistribution]:
        trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
        selector = self._known_selector(study) or self._recorded_selector(trials)
        if selector is not None:
            for t in reversed(trials):
                dist = t.distributions.get(selector)
                if isinstance(dist, CategoricalDistribution):
                    return trials, selector, dist
        raise ValueError("no trial of this study has suggested the selector "
                         f"{selector or '(not detected yet)'!r} yet")

    def bandit(self, study: Study) -> CashBandit:
        """The bandit as the study's storage says now (running trials are pending pulls); arm
        ``i`` is the selector's ``i``-th choice.

        Raises:
            ValueError: no trial of the study has suggested the selector yet.
        """
        trials, selector, dist = self._selector_of_study(study)
        return self._rebuild(trials, selector, dist, study.direction == StudyDirection.MINIMIZE)

    def pulls(self, study: Study) -> dict[Any, int]:
        """Credited trials per model class (failed, pruned and burn-in trials not counted).

        Raises:
            ValueError: no trial of the study has suggested the selector yet.
        """
        trials, selector, dist = self._selector_of_study(study)
        bandit = self._rebuild(trials, selector, dist, study.direction == StudyDirection.MINIMIZE)
        return dict(zip(dist.choices, bandit.n_pulls, strict=True))

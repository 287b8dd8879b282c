"""EnhancedAdaCentSampler: Enhanced-KCenter center selection (Bateni et al., Alg. 4, 8) for Optuna.

The sampler is an event translator: each call reads the study's trials from storage, tells them to
the core object :class:`uvp_plugins.adacent.online.OnlineEnhancedAdaCent` (one per process, search
space and study, kept as a cache) and asks it for the next configuration. Decisions never depend on
the cache: a new process that tells the same trials makes the same choice.
"""

from __future__ import annotations

import binascii
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.pruners import HyperbandPruner
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace, intersection_search_space
from optuna.study import StudyDirection
from optuna.trial import TrialState

from optuna_ext._claims import HoldingsCache, claim
from optuna_ext._claims import Proposal as Claim
from optuna_ext._space import OptunaSpace
from uvp_plugins.adacent.guidance import Guidance
from uvp_plugins.adacent.online import OnlineEnhancedAdaCent
from uvp_plugins.adacent.pred import DELTA, check_delta, check_max_resource
from uvp_plugins.validation import check_bool, check_float, check_int, check_seed

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution
    from optuna.pruners import BasePruner
    from optuna.study import Study
    from optuna.trial import FrozenTrial

__all__ = ["EnhancedAdaCentSampler"]

#: trial system attributes written by the sampler (shared through the storage)
ATTR_CANDIDATE = "uvp:candidate"
ATTR_PARAMS = "uvp:params"
ATTR_MESH = "uvp:mesh"

#: the default exploitation settings (chosen on lcbench tasks 1-17; docs/results/optuna.md)
DEFAULT_GUIDANCE = Guidance()
#: Optuna trial states -> the core's trial statuses
_STATUS = {
    TrialState.COMPLETE: "complete",
    TrialState.PRUNED: "pruned",
    TrialState.FAIL: "failed",
    TrialState.RUNNING: "running",
    TrialState.WAITING: "running",
}


def _check_candidates(candidates: object) -> list[dict[str, Any]] | np.ndarray | None:
    """Validate user candidates at construction (shape and keys; values are checked per space)."""
    if candidates is None:
        return None
    if isinstance(candidates, np.ndarray) or (
        isinstance(candidates, Sequence)
        and len(candidates) > 0
        and not isinstance(candidates[0], Mapping)
    ):
        arr = np.asarray(candidates, dtype=float)
        if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
            raise ValueError(
                "candidates given as an array must have shape (n_candidates, n_params) with unit "
                f"coordinates in [0, 1]; got shape {arr.shape}"
            )
        if not np.all(np.isfinite(arr)) or arr.min() < 0.0 or arr.max() > 1.0:
            raise ValueError("candidates given as an array must hold unit coordinates in [0, 1]")
        return arr
    if not isinstance(candidates, Sequence) or isinstance(candidates, (str, bytes)):
        raise TypeError(
            "candidates must be a sequence of {param_name: value} mappings or a 2-D array of unit "
            f"coordinates, got {type(candidates).__name__}"
        )
    if len(candidates) == 0:
        raise ValueError("candidates must not be empty")
    out = [dict(c) for c in candidates]
    keys = set(out[0])
    if not keys or not all(isinstance(k, str) for k in keys):
        raise ValueError("candidate mappings must have non-empty string keys (parameter names)")
    for i, c in enumerate(out):
        if set(c) != keys:
            raise ValueError(
                f"candidate {i} has keys {sorted(c)}, expected the same keys as candidate 0: "
                f"{sorted(keys)}"
            )
    return out


def _stable_seed(*parts: object) -> int:
    """A 32-bit seed derived deterministically from ``parts`` (same in every process)."""
    ints = [p if isinstance(p, int) else binascii.crc32(str(p).encode()) for p in parts]
    return int(np.random.SeedSequence([abs(int(i)) for i in ints]).generate_state(1)[0])


def base_seed(seed: int | None) -> int:
    """A sampler's base seed: ``seed``, or a fresh random 32-bit one for ``seed=None``."""
    if seed is not None:
        return seed
    return int(np.random.SeedSequence().generate_state(1)[0])


def pruner_max_resource(pruner: BasePruner) -> int | None:
    """``T`` as the study's pruner knows it: a public int ``max_resource`` (our
    :class:`~optuna_ext.PredPruner` and :class:`~optuna_ext.IterativeDeepeningHyperbandPruner`),
    or :class:`~optuna.pruners.HyperbandPruner`'s when it is an int.

    The one place that reads a private attribute of Optuna: ``HyperbandPruner`` has no public
    accessor for its ``max_resource`` (Optuna 5.0: ``HyperbandPruner._max_resource``, an int or
    ``"auto"``); if a later Optuna renames it, this returns ``None`` and the sampler infers ``T``
    from the complete trials instead.
    """
    public = getattr(pruner, "max_resource", None)
    if isinstance(public, int) and not isinstance(public, bool) and public >= 2:
        return public
    if isinstance(pruner, HyperbandPruner):
        value = getattr(pruner, "_max_resource", None)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 2:
            return value
    return None


class EnhancedAdaCentSampler(BaseSampler):
    """Enhanced-AdaCent's center selection, which then concentrates where the trials' values say
    the optimum is.

    **Default: coverage, then exploitation.** The first trials are the next centers of
    Enhanced-KCenter over a mesh of the search space (the paper, below). Once ``guidance.n_init``
    (10) trials have a value at the exploration depth, each new trial is the candidate with the
    largest expected improvement of a Gaussian process fitted to *every* trial's value at the
    depth - pruned trials included, so the model learns from what the pruner saved - among the
    free mesh candidates and candidates around the best configurations
    (:mod:`uvp_plugins.adacent.guidance`). ``guidance=None`` gives the paper's sampler
    (Enhanced-KCenter at every trial). With :class:`~optuna_ext.PredPruner` (default
    ``n_probes="auto"``) those first ``guidance.n_init`` trials are probes, pruned at the depth,
    so the first trial trained further is already the model's choice.

    **The paper's center selection.**

    Implements the center selection of Enhanced-AdaCent (Bateni et al., *Budget Allocation for
    Unknown Value Functions in a Lipschitz Space*, Alg. 8 line 4 = Enhanced-KCenter, Alg. 4) and,
    with ``enhanced=False``, of AdaCent (Alg. 7 line 4 = greedy KCENTER, Alg. 1):

    * the candidate set ``X`` is a mesh of the study's relative search space (default
      ``n_candidates`` scrambled Sobol points, :meth:`uvp_plugins.space.SearchSpace.sobol_mesh`,
      as in the authors' code), or the user's ``candidates``;
    * the centers ``C`` are all earlier trials of the study that are COMPLETE, PRUNED, RUNNING or
      WAITING (enqueued) with values for the whole relative search space (FAILED trials are
      not centers, as in Optuna's samplers, but their candidate is not handed out again while
      another candidate is free);
    * each center's value ``H_last`` is its value at the exploration depth ``floor(delta T)``
      (the best reported intermediate value up to that step; its best value so far if it has not
      reached it; its final value if it reported none; no value yet = plain distance); values are
      mapped to a positive, higher-is-better scale by :func:`uvp_plugins.adacent.value_scale.positive_scores`
      (maximize & positive: unchanged; minimize & positive: ``1/v``; otherwise affine to
      ``[0.1, 1]``);
    * the next trial is ``argmax_x min_c d~(x, c)`` over the candidates no trial has taken
      (ties to the lowest index), with the enhanced distance of Sec. 3.2 and ``epsilon`` from the
      95th percentile of the pairwise estimates of Sec. 4.1 over the finished trials' learning
      curves (``epsilon="auto"``, :func:`uvp_plugins.adacent.curves.resolve_epsilon`: at most 200
      trials, evenly spaced by trial number; ``math.inf`` if there is no evidence yet, which gives
      plain distances);
    * once every candidate is taken, a default Sobol mesh doubles: the next ``n`` points of the
      same scrambled Sobol sequence join it (earlier candidates keep their indices), up to
      ``64 * n_candidates`` points and as long as that adds new configurations (it cannot on a
      small discrete space). When it cannot grow, or with user ``candidates``, all candidates
      are eligible again (configurations are then repeated).

    Every decision is taken by the framework-free core object
    :class:`uvp_plugins.adacent.online.OnlineEnhancedAdaCent`; this class only translates Optuna's
    trials (read from storage) into it and writes the choice back.

    **Cost per trial.** Each process caches what it derived from storage - the distances from
    every candidate to every earlier trial (one column per trial, computed once; at most 16 M
    entries, beyond that they are recomputed), the finished trials' values - so a trial costs a
    pass over the cached ``n_candidates x n_trials`` distances for the few candidates whose
    upper bound can still win (:class:`uvp_plugins.adacent.center_distances.CenterDistances`), plus
    reading the trials from storage as every Optuna sampler does.

    Pair it with :class:`~optuna_ext.PredPruner` to get Enhanced-AdaCent's pruning; it works with
    any pruner (also inside :class:`~optuna.pruners.HyperbandPruner`'s bracket view, since it
    reads the whole study from storage).

    **Parallel and distributed use.** The sampler keeps no decision state in the Python object.
    The mesh is a deterministic function of ``seed`` (or, if ``seed`` is ``None``, of the study
    name), the search space, ``n_candidates`` and the configurations already taken, and the
    surrogate of the default guidance a deterministic function of the trials, so every process
    makes the same choice from the same trials; the caches above never change a decision. The
    configuration a trial takes is written to its system attributes (``"uvp:candidate"``,
    ``"uvp:params"``, ``"uvp:mesh"``, ``"uvp:claim"``) before the trial's parameters are
    returned, so other workers see it at once; RUNNING trials are centers, and a RUNNING trial
    with a lower number that has not chosen its parameters yet reserves the candidate it will
    take. Simultaneous workers never get the same configuration while a free one remains: the
    claim protocol of :mod:`optuna_ext._claims` (write, read back, a deterministic rule on
    which claimant chooses again) is safe on every Optuna storage without transactions.
    Threads (``n_jobs > 1``) share the sampler; a lock serialises the choice. A new process with
    the same ``seed`` on the same storage continues the same sequence. A worker that crashed
    before choosing leaves a RUNNING trial that keeps reserving one candidate; let Optuna fail
    such stale trials (``heartbeat_interval`` of ``RDBStorage``/``JournalStorage``).

    **First trials and other parameters.** The relative search space is the intersection of the
    distributions of finished trials (``optuna.search_space.intersection_search_space`` with
    pruned trials included), without single-valued distributions; until a trial has finished it
    is empty and parameters are sampled independently, uniformly (``RandomSampler``) with a seed
    derived from ``(seed, trial number, parameter name)``. Parameters outside the relative search
    space (conditional or dynamic-range ones, or not covered by user ``candidates``) are sampled
    the same way. Enqueued parameters (:meth:`optuna.study.Study.enqueue_trial`) are honoured by
    Optuna; the sampler treats an enqueued trial as a center and, for a partly enqueued trial,
    chooses the remaining parameters with the enqueued ones fixed.

    Example:

        .. code-block:: python

            import math

            import optuna
            from optuna_ext import EnhancedAdaCentSampler, PredPruner

            def objective(trial):
                lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
                units = trial.suggest_int("units", 16, 128)
                acc = 0.0
                for epoch in range(1, 21):
                    acc = (1 - abs(math.log10(lr) + 2) / 3) * (1 - 0.8 ** epoch) * units / 128
                    trial.report(acc, epoch)
                    if trial.should_prune():
                        raise optuna.TrialPruned()
                return acc

            study = optuna.create_study(direction="maximize",
                                        sampler=EnhancedAdaCentSampler(seed=0),
                                        pruner=PredPruner(max_resource=20))
            study.optimize(objective, n_trials=30)

    Args:
        candidates: optional finite candidate set: a sequence of ``{param_name: value}`` mappings
            (all with the same keys, values inside the study's distributions), or an array of
            shape ``(n, n_params)`` of unit coordinates in ``[0, 1]`` whose columns follow the
            relative search space's parameters sorted by name (:mod:`uvp_plugins.space` unit
            encoding). Default: a Sobol mesh.
        n_candidates: size of the default Sobol mesh (before deduplication), an int ``>= 1``.
        epsilon: the Lipschitz constant of Assumption 1.2 (``> 0``), or ``"auto"`` to estimate it
            from the trials at every call (Sec. 4.1, 95th percentile).
        delta: exploration fraction in ``(0, 1)``: values are read at step ``floor(delta T)``.
        max_resource: ``T``; default: the study's :class:`PredPruner`'s or
            :class:`~optuna.pruners.HyperbandPruner`'s ``max_resource``, else the largest step a
            complete trial reported (else the latest value of each trial is used).
        enhanced: ``True`` for Enhanced-KCenter (Alg. 4), ``False`` for plain greedy k-center
            (AdaCent, Alg. 1/7).
        seed: seed of the mesh and of the independent sampling (an int ``>= 0``, or ``None``:
            the mesh seed is derived from the study name).
        guidance: the exploitation settings (:class:`uvp_plugins.adacent.guidance.Guidance`;
            default ``Guidance()``), or ``None`` for the paper-faithful sampler (Enhanced-KCenter
            at every trial, Bateni et al. Alg. 8).
    """

    def __init__(
        self,
        candidates: Sequence[Mapping[str, Any]] | np.ndarray | None = None,
        n_candidates: int = 1000,
        epsilon: float | str = "auto",
        delta: float = DELTA,
        max_resource: int | None = None,
        enhanced: bool = True,
        seed: int | None = None,
        guidance: Guidance | None = DEFAULT_GUIDANCE,
    ) -> None:
        if guidance is not None and not isinstance(guidance, Guidance):
            raise TypeError(
                f"guidance must be a uvp_plugins.adacent.guidance.Guidance or None, got {guidance!r}"
            )
        self._guidance = guidance
        self._candidates = _check_candidates(candidates)
        self._n_candidates = check_int("n_candidates", n_candidates, low=1)
        if isinstance(epsilon, str):
            if epsilon != "auto":
                raise ValueError(f"epsilon must be a float > 0 or 'auto', got {epsilon!r}")
            self._epsilon: float | str = epsilon
        else:
            self._epsilon = check_float("epsilon", epsilon, low=0.0, low_open=True, allow_inf=True)
        self._delta = check_delta(delta)
        self._max_resource = None if max_resource is None else check_max_resource(max_resource)
        self._enhanced = check_bool("enhanced", enhanced)
        self._seed = check_seed("seed", seed, allow_none=True)
        self._base_seed = base_seed(self._seed)
        self._lock = threading.Lock()
        # per-process caches, pure functions of storage (see _engine)
        self._cache: weakref.WeakKeyDictionary[Any, dict[int, dict[Any, Any]]] = (
            weakref.WeakKeyDictionary()
        )
        self._space_cache: weakref.WeakKeyDictionary[Any, dict[int, IntersectionSearchSpace]] = (
            weakref.WeakKeyDictionary()
        )

    # ----------------------------------------------------------------- plumbing
    @property
    def guidance(self) -> Guidance | None:
        """The exploitation step's settings (``None``: the paper-faithful sampler)."""
        return self._guidance

    @property
    def uvp_guidance(self) -> Guidance | None:
        """The same, under the name :class:`~optuna_ext.PredPruner` reads to size its probe
        phase (``optuna_ext._pruner.SAMPLER_GUIDANCE_ATTR``: no import between the two)."""
        return self._guidance

    def __getstate__(self) -> dict[str, Any]:
        # the lock and the per-process caches (pure functions of storage) are not pickled: a
        # pickled study, or a sampler sent to a spawned process, rebuilds them
        state = self.__dict__.copy()
        for name in ("_lock", "_cache", "_space_cache"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._cache = weakref.WeakKeyDictionary()
        self._space_cache = weakref.WeakKeyDictionary()

    def reseed_rng(self) -> None:
        # Independent samples are keyed by (seed, trial number, name), so parallel copies never
        # repeat each other; only an unseeded sampler draws a fresh base seed.
        if self._seed is None:
            self._base_seed = base_seed(self._seed)

    def _mesh_seed(self, study: Study) -> int:
        if self._seed is not None:
            return self._seed
        return _stable_seed(study.study_name)

    def _study_cache(self, study: Study) -> dict[Any, Any] | None:
        """This process's cache for ``study``: a pure function of what storage says, never needed
        to reproduce a decision. ``None`` for a storage without weak references."""
        try:
            per_storage = self._cache.setdefault(study._storage, {})
        except TypeError:
            return None
        return per_storage.setdefault(study._study_id, {})

    def _new_engine(self, study: Study, osp: OptunaSpace) -> OnlineEnhancedAdaCent:
        candidates: list[dict[str, Any]] | None = None
        if isinstance(self._candidates, list):
            candidates = [osp.to_config({n: c[n] for n in osp.names}) for c in self._candidates]
        elif isinstance(self._candidates, np.ndarray):
            if self._candidates.shape[1] != len(osp):
                raise ValueError(
                    f"candidates array has {self._candidates.shape[1]} columns but the "
                    f"relative search space has {len(osp)} parameters {osp.names}"
                )
            candidates = osp.space.from_unit(self._candidates)
        return OnlineEnhancedAdaCent(
            osp.space,
            maximize=study.direction == StudyDirection.MAXIMIZE,
            candidates=candidates,
            n_candidates=self._n_candidates,
            epsilon=self._epsilon,
            delta=self._delta,
            max_resource=self._max_resource or pruner_max_resource(study.pruner),
            enhanced=self._enhanced,
            seed=self._mesh_seed(study),
            guidance=self._guidance,
        )

    def _engine(self, study: Study, osp: OptunaSpace) -> tuple[OnlineEnhancedAdaCent, set[int]]:
        """The core object for this study and relative search space, and the ids of the
        finished trials already told to it (per process; rebuilt when the space changes)."""
        cache = self._study_cache(study)
        key = ("engine", osp.key(), study.direction)
        if cache is not None and key in cache:
            return cache[key]  # type: ignore[no-any-return]
        entry: tuple[OnlineEnhancedAdaCent, set[int]] = (self._new_engine(study, osp), set())
        if cache is not None:
            cache[key] = entry
        return entry

    def _holdings(self, study: Study, osp: OptunaSpace) -> HoldingsCache | None:
        """What the study's finished trials hold, per relative search space (the claim key
        depends on it)."""
        cache = self._study_cache(study)
        if cache is None:
            return None
        found: HoldingsCache = cache.setdefault(("holdings", osp.key()), HoldingsCache())
        return found

    # ---------------------------------------------------------------- trials
    def _center_params(self, t: FrozenTrial, osp: OptunaSpace) -> dict[str, Any] | None:
        merged: dict[str, Any] = {}
        merged.update(t.system_attrs.get(ATTR_PARAMS, {}) or {})
        if not t.state.is_finished():
            merged.update(t.system_attrs.get("fixed_params", {}) or {})
        for name, value in t.params.items():
            if name in osp.distributions and t.distributions.get(name) == osp.distributions[name]:
                merged[name] = value
        if any(n not in merged for n in osp.names):
            return None
        params = {n: merged[n] for n in osp.names}
        try:
            osp.to_config(params)
        except (KeyError, ValueError, TypeError):
            return None
        return params

    def _tell(
        self, engine: OnlineEnhancedAdaCent, t: FrozenTrial, config: dict[str, Any]
    ) -> None:
        final = None
        if t.state == TrialState.COMPLETE and t.values:
            final = float(t.values[0])
        engine.tell(
            t._trial_id,
            config,
            status=_STATUS[t.state],
            curve=t.intermediate_values,
            final=final,
            number=t.number,
        )

    def _sync(
        self, study: Study, trial: FrozenTrial, osp: OptunaSpace
    ) -> tuple[OnlineEnhancedAdaCent, int]:
        """Tell the core what storage says now; returns it and the number of pending workers
        (lower-numbered RUNNING trials that have not chosen parameters yet). Finished trials
        never change: each is told once per process."""
        engine, told = self._engine(study, osp)
        engine.forget(trial._trial_id)
        pending = 0
        for t in study._storage.get_all_trials(study._study_id, deepcopy=False):
            if t._trial_id in told or t.number == trial.number:
                continue
            if t.state.is_finished():
                told.add(t._trial_id)
            elif t.state not in (TrialState.RUNNING, TrialState.WAITING):
                continue
            params = self._center_params(t, osp)
            if params is None:
                if (
                    t.state == TrialState.RUNNING
                    and t.number < trial.number
                    and not t.params
                    and ATTR_PARAMS not in t.system_attrs
                    and "fixed_params" not in t.system_attrs
                ):
                    pending += 1
                engine.forget(t._trial_id)
                continue
            self._tell(engine, t, osp.to_config(params))
        return engine, pending

    # ------------------------------------------------------------ Optuna API
    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        self._raise_error_if_multi_objective(study)
        with self._lock:
            try:
                per_storage = self._space_cache.setdefault(study._storage, {})
                calc = per_storage.setdefault(
                    study._study_id, IntersectionSearchSpace(include_pruned=True)
                )
                space = calc.calculate(study)
            except TypeError:  # storage without weak references: recompute every time
                trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
                space = intersection_search_space(trials, include_pruned=True)
        space = {n: d for n, d in space.items() if not d.single()}
        if isinstance(self._candidates, list) and space:
            keys = set(self._candidates[0])
            unknown = sorted(keys - set(space))
            if unknown:
                raise ValueError(
                    f"candidates name parameters {unknown} that are not in the study's search "
                    f"space {sorted(space)} (candidates must use the study's parameter names)"
                )
            space = {n: d for n, d in space.items() if n in keys}
        return space

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        self._raise_error_if_multi_objective(study)
        if not search_space:
            return {}
        osp = OptunaSpace(dict(sorted(search_space.items())))
        fixed = {
            n: v for n, v in (trial.system_attrs.get("fixed_params") or {}).items()
            if n in osp.distributions
        }
        try:
            fixed_cfg = {n: osp.encode_value(n, v) for n, v in fixed.items()}
        except (ValueError, TypeError):
            fixed_cfg = {}

        def choose() -> Claim:  # a fresh proposal per claim attempt (optuna_ext._claims)
            engine, pending = self._sync(study, trial, osp)
            proposal = engine.ask(pending=pending, fixed=fixed_cfg)
            params = osp.from_config(proposal.config)
            attrs = {ATTR_CANDIDATE: proposal.candidate, ATTR_MESH: proposal.mesh, ATTR_PARAMS: params}
            return Claim(params, attrs, exclusive=proposal.free)

        # write the choice, read the study back, keep it or choose again (optuna_ext._claims):
        # no two trials hold one configuration while a free one exists, on every storage
        with self._lock:
            return claim(study, trial, choose, key=osp.params_key, cache=self._holdings(study, osp))

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        self._raise_error_if_multi_objective(study)
        seed = _stable_seed(self._base_seed, trial.number, param_name)
        return RandomSampler(seed=seed).sample_independent(
            study, trial, param_name, param_distribution
        )

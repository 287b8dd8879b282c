"""EnhancedAdaCentSampler: Enhanced-KCenter center selection (Bateni et al., Alg. 4, 8) for Optuna."""

from __future__ import annotations

import binascii
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from optuna.pruners import HyperbandPruner
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace, intersection_search_space
from optuna.study import StudyDirection
from optuna.trial import TrialState

from optuna_ext._pruner import PredPruner, _check_delta, _check_max_resource
from optuna_ext._space import OptunaSpace
from uvp_plugins.curves import estimate_lipschitz
from uvp_plugins.histories import value_at_depth
from uvp_plugins.kcenter import greedy_kcenter, next_enhanced_center
from uvp_plugins.space import config_key
from uvp_plugins.value_scale import positive_scores

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution
    from optuna.study import Study
    from optuna.trial import FrozenTrial

__all__ = ["EnhancedAdaCentSampler"]

#: trial system attributes written by the sampler (shared through the storage)
ATTR_CANDIDATE = "uvp:candidate"
ATTR_PARAMS = "uvp:params"
ATTR_MESH = "uvp:mesh"

_CENTER_STATES = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING, TrialState.WAITING)
_MESH_CACHE_SIZE = 8
_MAX_CLAIM_ATTEMPTS = 3
#: epsilon="auto" is estimated from at most this many valued centers (evenly spaced by number)
_MAX_EPSILON_CENTERS = 200


class _TrialEntry(NamedTuple):
    key: tuple[Any, ...] | None
    row: np.ndarray | None
    value: float


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


class EnhancedAdaCentSampler(BaseSampler):
    """Each new trial is the next center of Enhanced-KCenter over a mesh of the search space.

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
      mapped to a positive, higher-is-better scale by :func:`uvp_plugins.value_scale.positive_scores`
      (maximize & positive: unchanged; minimize & positive: ``1/v``; otherwise affine to
      ``[0.1, 1]``);
    * the next trial is ``argmax_x min_c d~(x, c)`` over the candidates no trial has taken
      (once all are taken, over all candidates; ties to the lowest index), with
      the enhanced distance of Sec. 3.2 and ``epsilon`` from the 95th percentile of the pairwise
      estimates of Sec. 4.1 over the centers' values (``epsilon="auto"``; at most 200 centers,
      evenly spaced by trial number; ``math.inf`` if there is no evidence yet, which gives plain
      distances).

    Pair it with :class:`~optuna_ext.PredPruner` to get Enhanced-AdaCent's pruning; it works with
    any pruner (also inside :class:`~optuna.pruners.HyperbandPruner`'s bracket view, since it
    reads the whole study from storage).

    **Parallel and distributed use.** The sampler keeps no decision state in the Python object.
    The mesh is a deterministic function of ``seed`` (or, if ``seed`` is ``None``, of the study
    name), the search space and ``n_candidates``, so every process builds the same mesh. The
    candidate a trial takes is written to its system attributes (``"uvp:candidate"``,
    ``"uvp:params"``, ``"uvp:mesh"``) before the trial's parameters are returned, so other workers
    see it at once; RUNNING trials are centers, and a RUNNING trial with a lower number that has
    not chosen its parameters yet reserves the candidate it will take, which keeps simultaneous
    workers apart (after writing its choice a worker re-reads the storage and, if a
    lower-numbered running trial claimed the same configuration meanwhile, chooses again).
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
        seed: seed of the mesh and of the independent sampling.
    """

    def __init__(
        self,
        candidates: Sequence[Mapping[str, Any]] | np.ndarray | None = None,
        n_candidates: int = 1000,
        epsilon: float | str = "auto",
        delta: float = 0.1,
        max_resource: int | None = None,
        enhanced: bool = True,
        seed: int | None = None,
    ) -> None:
        self._candidates = _check_candidates(candidates)
        if isinstance(n_candidates, bool) or not isinstance(n_candidates, (int, np.integer)) or (
            n_candidates < 1
        ):
            raise ValueError(f"n_candidates must be an int >= 1, got {n_candidates!r}")
        self._n_candidates = int(n_candidates)
        if isinstance(epsilon, str):
            if epsilon != "auto":
                raise ValueError(f"epsilon must be a float > 0 or 'auto', got {epsilon!r}")
        elif isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not epsilon > 0:
            raise ValueError(f"epsilon must be a float > 0 or 'auto', got {epsilon!r}")
        self._epsilon = epsilon
        self._delta = _check_delta(delta)
        self._max_resource = None if max_resource is None else _check_max_resource(max_resource)
        if not isinstance(enhanced, bool):
            raise TypeError(f"enhanced must be a bool, got {enhanced!r}")
        self._enhanced = enhanced
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"seed must be an int or None, got {seed!r}")
        self._seed = None if seed is None else int(seed)
        self._base_seed = self._draw_base_seed()
        self._lock = threading.Lock()
        self._trial_cache: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], _TrialEntry]] = (
            weakref.WeakKeyDictionary()
        )
        self._space_cache: weakref.WeakKeyDictionary[Any, dict[int, IntersectionSearchSpace]] = (
            weakref.WeakKeyDictionary()
        )
        self._mesh_cache: OrderedDict[tuple[Any, ...], tuple[list[dict[str, Any]], np.ndarray]] = (
            OrderedDict()
        )

    # ----------------------------------------------------------------- plumbing
    def _draw_base_seed(self) -> int:
        if self._seed is not None:
            return self._seed
        return int(np.random.SeedSequence().generate_state(1)[0])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        state["_mesh_cache"] = OrderedDict()
        state["_trial_cache"] = weakref.WeakKeyDictionary()
        state["_space_cache"] = weakref.WeakKeyDictionary()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def reseed_rng(self) -> None:
        # Independent samples are keyed by (seed, trial number, name), so parallel copies never
        # repeat each other; only an unseeded sampler draws a fresh base seed.
        if self._seed is None:
            self._base_seed = self._draw_base_seed()

    def _mesh_seed(self, study: Study) -> int:
        if self._seed is not None:
            return self._seed
        return _stable_seed(study.study_name)

    def _max_resource_of(self, study: Study, trials: Sequence[FrozenTrial]) -> int | None:
        if self._max_resource is not None:
            return self._max_resource
        pruner = study.pruner
        if isinstance(pruner, PredPruner):
            return pruner.max_resource
        if isinstance(pruner, HyperbandPruner) and isinstance(pruner._max_resource, int):
            return pruner._max_resource
        steps = [t.last_step for t in trials if t.state == TrialState.COMPLETE and t.last_step]
        return max(steps) if steps else None

    # ------------------------------------------------------------- candidates
    def _mesh(self, osp: OptunaSpace, study: Study) -> tuple[list[dict[str, Any]], np.ndarray, str]:
        """``(configs, embedding, key)`` of the candidate set for this space."""
        if isinstance(self._candidates, list):
            configs = [osp.to_config({n: c[n] for n in osp.names}) for c in self._candidates]
            return configs, osp.space.embed(configs), "user"
        seed = self._mesh_seed(study)
        key = (osp.key(), seed, self._n_candidates)
        cached = self._mesh_cache.get(key)
        if cached is None:
            if isinstance(self._candidates, np.ndarray):
                if self._candidates.shape[1] != len(osp):
                    raise ValueError(
                        f"candidates array has {self._candidates.shape[1]} columns but the "
                        f"relative search space has {len(osp)} parameters {osp.names}"
                    )
                configs = osp.space.from_unit(self._candidates)
                cached = (configs, osp.space.embed(configs))
            else:
                cached = osp.space.sobol_mesh(self._n_candidates, seed=seed)
            self._mesh_cache[key] = cached
            while len(self._mesh_cache) > _MESH_CACHE_SIZE:
                self._mesh_cache.popitem(last=False)
        mesh_key = "user" if isinstance(self._candidates, np.ndarray) else f"sobol:{seed}:{self._n_candidates}"
        return cached[0], cached[1], mesh_key

    # ---------------------------------------------------------------- centers
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

    def _describe(
        self, t: FrozenTrial, osp: OptunaSpace, depth: int | None, maximize: bool
    ) -> _TrialEntry:
        """A trial as a center: its configuration key, embedding row and value at the depth."""
        params = self._center_params(t, osp)
        if params is None:
            return _TrialEntry(None, None, math.nan)
        config = osp.to_config(params)
        row = osp.space.embed([config])[0]
        if t.intermediate_values:
            d = depth if depth is not None else max(t.intermediate_values)
            value = value_at_depth(t.intermediate_values, d, maximize)
        elif t.state == TrialState.COMPLETE and t.values:
            value = float(t.values[0])
        else:
            value = math.nan
        return _TrialEntry(config_key(config, osp.names), row, value)

    def _entry(
        self, study: Study, t: FrozenTrial, osp: OptunaSpace, depth: int | None, maximize: bool
    ) -> _TrialEntry:
        # Finished trials never change: their derived entries are cached per storage object
        # (a pure cache of what storage says; nothing here is needed to reproduce a decision).
        if not t.state.is_finished():
            return self._describe(t, osp, depth, maximize)
        try:
            per_storage = self._trial_cache.setdefault(study._storage, {})
        except TypeError:  # storage without weak references: no caching
            return self._describe(t, osp, depth, maximize)
        key = (study._study_id, t._trial_id, osp.key(), depth, maximize)
        entry = per_storage.get(key)
        if entry is None:
            entry = self._describe(t, osp, depth, maximize)
            per_storage[key] = entry
        return entry

    def _centers(
        self, study: Study, trial: FrozenTrial, osp: OptunaSpace, trials: Sequence[FrozenTrial]
    ) -> tuple[np.ndarray, np.ndarray, set[tuple[Any, ...]], int]:
        """Center embeddings, their raw values at the exploration depth, the configuration keys
        of all trials that took a candidate (centers and FAILED trials: failed trials are not
        centers, but their candidates count as handed out), and the number of pending workers
        (lower-numbered RUNNING trials that have not chosen parameters yet)."""
        maximize = study.direction == StudyDirection.MAXIMIZE
        T = self._max_resource_of(study, trials)
        depth = math.floor(self._delta * T) if T is not None else None
        rows: list[np.ndarray] = []
        values: list[float] = []
        taken: set[tuple[Any, ...]] = set()
        pending = 0
        for t in trials:
            if t.number == trial.number or (
                t.state not in _CENTER_STATES and t.state != TrialState.FAIL
            ):
                continue
            entry = self._entry(study, t, osp, depth, maximize)
            if entry.key is None or entry.row is None:
                if (
                    t.state == TrialState.RUNNING
                    and t.number < trial.number
                    and not t.params
                    and ATTR_PARAMS not in t.system_attrs
                    and "fixed_params" not in t.system_attrs
                ):
                    pending += 1
                continue
            taken.add(entry.key)
            if t.state == TrialState.FAIL:
                continue
            rows.append(entry.row)
            values.append(entry.value)
        centers = np.vstack(rows) if rows else np.empty((0, osp.space.embedding_dim))
        return centers, np.asarray(values, dtype=float), taken, pending

    def _epsilon_for(self, centers: np.ndarray, scores: np.ndarray) -> float:
        if not isinstance(self._epsilon, str):
            return float(self._epsilon)
        known = np.flatnonzero(~np.isnan(scores))
        if known.size > _MAX_EPSILON_CENTERS:
            known = known[np.linspace(0, known.size - 1, _MAX_EPSILON_CENTERS).astype(int)]
        eps = estimate_lipschitz(centers[known], scores[known]) if known.size >= 2 else math.inf
        return eps if eps > 0 else math.inf

    def _pick(
        self, Z: np.ndarray, centers: np.ndarray, scores: np.ndarray | None, eps: float,
        available: np.ndarray | None,
    ) -> int:
        """Index (into ``Z``) of the next center among the available candidates."""
        # pass only the available rows to the core (same result, ties still to the lowest index)
        idx = np.arange(Z.shape[0]) if available is None else np.flatnonzero(available)
        if not self._enhanced or scores is None or centers.shape[0] == 0:
            return int(idx[greedy_kcenter(1, Z[idx], centers)[0]])
        return int(idx[next_enhanced_center(Z[idx], centers, scores, eps)])

    def _choose(
        self,
        study: Study,
        trial: FrozenTrial,
        osp: OptunaSpace,
        configs: list[dict[str, Any]],
        Z: np.ndarray,
    ) -> tuple[int, bool]:
        """Index of the next center from a fresh storage snapshot, and whether other trials
        were running (then another worker may choose at the same time)."""
        trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
        concurrent = any(
            t.state == TrialState.RUNNING and t.number != trial.number for t in trials
        )
        centers, raw, taken, pending = self._centers(study, trial, osp, trials)
        maximize = study.direction == StudyDirection.MAXIMIZE
        scores = positive_scores(raw, maximize) if raw.size else raw
        # a candidate is taken when some trial has exactly its configuration (exact match:
        # floating-point distances of equal points are not exactly 0)
        available: np.ndarray | None = np.array(
            [config_key(c, osp.names) not in taken for c in configs], dtype=bool
        )
        if available is not None and not available.any():
            available = None
        has_values = bool(scores.size) and bool(np.any(~np.isnan(scores)))
        eps = self._epsilon_for(centers, scores) if (self._enhanced and has_values) else math.inf
        vals = scores if has_values else None
        # lower-numbered workers that have not chosen yet reserve the centers they will take
        for _ in range(pending):
            if available is not None and available.sum() <= 1:
                break
            j = self._pick(Z, centers, vals, eps, available)
            centers = np.vstack([centers, Z[j : j + 1]])
            if vals is not None:
                vals = np.append(vals, np.nan)
            if available is None:
                available = np.ones(Z.shape[0], dtype=bool)
            available[j] = False
        return self._pick(Z, centers, vals, eps, available), concurrent

    def _claimed_by_lower(
        self, study: Study, trial: FrozenTrial, osp: OptunaSpace, config: dict[str, Any]
    ) -> bool:
        key = config_key(config, osp.names)
        for t in study._storage.get_all_trials(study._study_id, deepcopy=False):
            if t.number >= trial.number or t.state != TrialState.RUNNING:
                continue
            params = self._center_params(t, osp)
            if params is not None and config_key(osp.to_config(params), osp.names) == key:
                return True
        return False

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
        with self._lock:
            configs, Z, mesh_key = self._mesh(osp, study)
            fixed = {
                n: v for n, v in (trial.system_attrs.get("fixed_params") or {}).items()
                if n in osp.distributions
            }
            if fixed:
                try:
                    fixed_cfg = {n: osp.encode_value(n, v) for n, v in fixed.items()}
                except (ValueError, TypeError):
                    fixed_cfg = {}
                if fixed_cfg:
                    configs = [{**c, **fixed_cfg} for c in configs]
                    Z = osp.space.embed(configs)
            storage = study._storage
            for _attempt in range(_MAX_CLAIM_ATTEMPTS):
                i, concurrent = self._choose(study, trial, osp, configs, Z)
                params = osp.from_config(configs[i])
                storage.set_trial_system_attr(trial._trial_id, ATTR_CANDIDATE, int(i))
                storage.set_trial_system_attr(trial._trial_id, ATTR_MESH, mesh_key)
                storage.set_trial_system_attr(trial._trial_id, ATTR_PARAMS, params)
                # Write, then re-read: if a lower-numbered running trial claimed the same
                # configuration meanwhile (another process), it keeps it and we choose again.
                if not concurrent or not self._claimed_by_lower(study, trial, osp, configs[i]):
                    break
        return params

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

"""EnhancedAdaCentSampler: Enhanced-KCenter center selection (Bateni et al., Alg. 4, 8) for Optuna."""

from __future__ import annotations

import binascii
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.pruners import HyperbandPruner
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace, intersection_search_space
from optuna.study import StudyDirection
from optuna.trial import TrialState

from optuna_ext._claims import Proposal, claim
from optuna_ext._pruner import PredPruner, _check_delta, _check_max_resource
from optuna_ext._sampler_state import Centers, FinishedCenters, Mesh, TrialEntry
from optuna_ext._space import OptunaSpace
from uvp_plugins.adacent.curves import estimate_lipschitz
from uvp_plugins.adacent.histories import value_at_depth
from uvp_plugins.adacent.value_scale import positive_scores
from uvp_plugins.space import config_key

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution
    from optuna.study import Study
    from optuna.trial import FrozenTrial

__all__ = ["EnhancedAdaCentSampler"]

#: trial system attributes written by the sampler (shared through the storage)
ATTR_CANDIDATE = "uvp:candidate"
ATTR_PARAMS = "uvp:params"
ATTR_MESH = "uvp:mesh"

_MESH_CACHE_SIZE = 8
#: a default Sobol mesh doubles at most this many times when all its candidates are taken
_MAX_MESH_DOUBLINGS = 6
#: epsilon="auto" is estimated from at most this many valued centers (evenly spaced by number)
_MAX_EPSILON_CENTERS = 200


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
      mapped to a positive, higher-is-better scale by :func:`uvp_plugins.adacent.value_scale.positive_scores`
      (maximize & positive: unchanged; minimize & positive: ``1/v``; otherwise affine to
      ``[0.1, 1]``);
    * the next trial is ``argmax_x min_c d~(x, c)`` over the candidates no trial has taken
      (ties to the lowest index), with the enhanced distance of Sec. 3.2 and ``epsilon`` from the
      95th percentile of the pairwise estimates of Sec. 4.1 over the centers' values
      (``epsilon="auto"``; at most 200 centers, evenly spaced by trial number; ``math.inf`` if
      there is no evidence yet, which gives plain distances);
    * once every candidate is taken, a default Sobol mesh doubles: the next ``n`` points of the
      same scrambled Sobol sequence join it (earlier candidates keep their indices), up to
      ``64 * n_candidates`` points and as long as that adds new configurations (it cannot on a
      small discrete space). When it cannot grow, or with user ``candidates``, all candidates
      are eligible again (configurations are then repeated).

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
    name), the search space, ``n_candidates`` and the configurations already taken, so every
    process builds the same mesh; the caches above never change a decision. The
    candidate a trial takes is written to its system attributes (``"uvp:candidate"``,
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
        # per-process caches, pure functions of storage (see _study_cache)
        self._cache: weakref.WeakKeyDictionary[Any, dict[int, dict[Any, Any]]] = (
            weakref.WeakKeyDictionary()
        )
        self._space_cache: weakref.WeakKeyDictionary[Any, dict[int, IntersectionSearchSpace]] = (
            weakref.WeakKeyDictionary()
        )

    # ----------------------------------------------------------------- plumbing
    def _draw_base_seed(self) -> int:
        if self._seed is not None:
            return self._seed
        return int(np.random.SeedSequence().generate_state(1)[0])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        state["_cache"] = weakref.WeakKeyDictionary()
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

    def _max_resource_of(self, study: Study, max_complete_step: int | None) -> int | None:
        """``T``: ours, the study's PredPruner's or HyperbandPruner's, else the largest step a
        complete trial reported (``None`` if none)."""
        if self._max_resource is not None:
            return self._max_resource
        pruner = study.pruner
        if isinstance(pruner, PredPruner):
            return pruner.max_resource
        if isinstance(pruner, HyperbandPruner) and isinstance(pruner._max_resource, int):
            return pruner._max_resource
        return max_complete_step

    # ------------------------------------------------------------- candidates
    def _study_cache(self, study: Study) -> dict[Any, Any] | None:
        """This process's cache for ``study`` (meshes, trial entries, mesh levels): a pure
        function of what storage says, never needed to reproduce a decision. ``None`` for a
        storage without weak references (then nothing is cached)."""
        try:
            per_storage = self._cache.setdefault(study._storage, {})
        except TypeError:
            return None
        return per_storage.setdefault(study._study_id, {})

    def _build_mesh(
        self, osp: OptunaSpace, study: Study, level: int, fixed_cfg: Mapping[str, Any]
    ) -> Mesh:
        if isinstance(self._candidates, list):
            configs = [osp.to_config({n: c[n] for n in osp.names}) for c in self._candidates]
            mesh_key = "user"
        elif isinstance(self._candidates, np.ndarray):
            if self._candidates.shape[1] != len(osp):
                raise ValueError(
                    f"candidates array has {self._candidates.shape[1]} columns but the "
                    f"relative search space has {len(osp)} parameters {osp.names}"
                )
            configs = osp.space.from_unit(self._candidates)
            mesh_key = "user"
        else:
            seed = self._mesh_seed(study)
            n = self._n_candidates << level
            configs, _ = osp.space.sobol_mesh(n, seed=seed)
            mesh_key = f"sobol:{seed}:{n}"
        if fixed_cfg:
            configs = [{**c, **fixed_cfg} for c in configs]
        return Mesh(configs, osp.space.embed(configs), osp.names, mesh_key)

    def _mesh(
        self,
        osp: OptunaSpace,
        study: Study,
        level: int,
        fixed_cfg: Mapping[str, Any],
        cache: dict[Any, Any] | None,
    ) -> Mesh:
        """The candidate set at a mesh level (``n_candidates * 2**level`` Sobol points)."""
        if cache is None:
            return self._build_mesh(osp, study, level, fixed_cfg)
        meshes: OrderedDict[Any, Mesh] = cache.setdefault("meshes", OrderedDict())
        key = (osp.key(), level, tuple(sorted(fixed_cfg.items(), key=lambda kv: kv[0])))
        mesh = meshes.get(key)
        if mesh is None:
            mesh = self._build_mesh(osp, study, level, fixed_cfg)
            smaller = meshes.get((key[0], level - 1, key[2]))
            if smaller is not None:  # a doubled Sobol mesh: keep the computed distances
                mesh = smaller.grown(mesh.configs, mesh.Z, mesh.key)
            meshes[key] = mesh
            while len(meshes) > _MESH_CACHE_SIZE:
                meshes.popitem(last=False)
        else:
            meshes.move_to_end(key)
        return mesh

    def _mesh_with_free_candidates(
        self,
        osp: OptunaSpace,
        study: Study,
        fixed_cfg: Mapping[str, Any],
        taken: set[tuple[Any, ...]],
        cache: dict[Any, Any] | None,
    ) -> tuple[Mesh, np.ndarray | None]:
        """The smallest mesh level with a candidate no trial has taken, and its availability
        mask (``None`` if every candidate is taken and the mesh cannot grow).

        A default Sobol mesh doubles - the next points of the same scrambled sequence, so the
        earlier candidates stay - whenever all its candidates are taken, up to
        ``2**_MAX_MESH_DOUBLINGS`` times ``n_candidates`` and as long as doubling adds new
        configurations (it cannot on a small discrete space). The level only depends on the
        taken configurations, so every process finds the same one; the per-process cache only
        remembers where the search may start (taken configurations never become free again).
        """
        fixed_key = tuple(sorted(fixed_cfg.items(), key=lambda kv: kv[0]))
        level_key = ("level", osp.key(), fixed_key)
        level = cache.get(level_key, 0) if cache is not None else 0
        mesh = self._mesh(osp, study, level, fixed_cfg, cache)
        available = mesh.available(taken)
        while not available.any():
            if self._candidates is not None or level >= _MAX_MESH_DOUBLINGS:
                return mesh, None
            bigger = self._mesh(osp, study, level + 1, fixed_cfg, cache)
            if len(bigger.configs) <= len(mesh.configs):
                return mesh, None
            level, mesh = level + 1, bigger
            available = mesh.available(taken)
            if cache is not None:
                cache[level_key] = level
        return mesh, available

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
    ) -> TrialEntry:
        """A trial as a center: its configuration key, embedding row and value at the depth."""
        params = self._center_params(t, osp)
        if params is None:
            return TrialEntry(None, None, math.nan)
        config = osp.to_config(params)
        row = osp.space.embed([config])[0]
        if t.intermediate_values:
            d = depth if depth is not None else max(t.intermediate_values)
            value = value_at_depth(t.intermediate_values, d, maximize)
        elif t.state == TrialState.COMPLETE and t.values:
            value = float(t.values[0])
        else:
            value = math.nan
        return TrialEntry(config_key(config, osp.names), row, value)

    def _centers(
        self,
        study: Study,
        trial: FrozenTrial,
        osp: OptunaSpace,
        trials: Sequence[FrozenTrial],
        cache: dict[Any, Any] | None,
    ) -> tuple[Centers, bool]:
        """The centers (rows by trial id, raw values at the exploration depth), the
        configuration keys of all trials that took a candidate (centers and FAILED trials:
        failed trials are not centers, but their candidates count as handed out), the number
        of pending workers (lower-numbered RUNNING trials that have not chosen parameters yet),
        and whether another trial is running.

        Finished trials never change, so their contribution is accumulated once per process
        (``FinishedCenters``, a cache of what storage says); only the unfinished trials are
        read at every call.
        """
        maximize = study.direction == StudyDirection.MAXIMIZE
        acc: FinishedCenters = (
            cache.setdefault(("finished", osp.key(), maximize), FinishedCenters())
            if cache is not None
            else FinishedCenters()
        )
        seen = acc.seen
        new_finished: list[FrozenTrial] = []
        unfinished: list[FrozenTrial] = []
        for t in trials:
            if t._trial_id in seen:
                continue
            if t.state.is_finished():
                new_finished.append(t)
            elif t.number != trial.number:
                unfinished.append(t)
        acc.add_trials(new_finished)
        T = self._max_resource_of(study, acc.max_complete_step)
        depth = math.floor(self._delta * T) if T is not None else None
        acc.update(depth, lambda t: self._describe(t, osp, depth, maximize))
        out = Centers(dict(acc.rows), list(acc.ids), list(acc.raw), list(acc.numbers), set(acc.taken), 0)
        concurrent = False
        for t in unfinished:
            if t.state == TrialState.RUNNING:
                concurrent = True
            elif t.state != TrialState.WAITING:
                continue
            entry = self._describe(t, osp, depth, maximize)
            if entry.key is None or entry.row is None:
                if (
                    t.state == TrialState.RUNNING
                    and t.number < trial.number
                    and not t.params
                    and ATTR_PARAMS not in t.system_attrs
                    and "fixed_params" not in t.system_attrs
                ):
                    out.pending += 1
                continue
            out.taken.add(entry.key)
            out.rows[t._trial_id] = entry.row
            out.ids.append(t._trial_id)
            out.raw.append(entry.value)
            out.numbers.append(t.number)
        return out, concurrent

    def _epsilon_for(self, centers: Centers, scores: np.ndarray) -> float:
        if not isinstance(self._epsilon, str):
            return float(self._epsilon)
        known = np.flatnonzero(~np.isnan(scores))
        if known.size > _MAX_EPSILON_CENTERS:
            # evenly spaced by trial number (the same subset in every process)
            known = known[np.argsort(np.asarray(centers.numbers)[known], kind="stable")]
            known = known[np.linspace(0, known.size - 1, _MAX_EPSILON_CENTERS).astype(int)]
        if known.size < 2:
            return math.inf
        X = np.vstack([centers.rows[centers.ids[i]] for i in known])
        eps = estimate_lipschitz(X, scores[known])
        return eps if eps > 0 else math.inf

    def _choose(
        self,
        study: Study,
        trial: FrozenTrial,
        osp: OptunaSpace,
        fixed_cfg: Mapping[str, Any],
    ) -> tuple[Mesh, int, bool]:
        """The mesh and index of the next center from a fresh storage snapshot, and whether
        other trials were running (then another worker may choose at the same time)."""
        cache = self._study_cache(study)
        trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
        centers, concurrent = self._centers(study, trial, osp, trials, cache)
        # a candidate is taken when some trial has exactly its configuration (exact match:
        # floating-point distances of equal points are not exactly 0)
        mesh, available = self._mesh_with_free_candidates(osp, study, fixed_cfg, centers.taken, cache)
        maximize = study.direction == StudyDirection.MAXIMIZE
        raw = np.asarray(centers.raw, dtype=float)
        scores = positive_scores(raw, maximize) if raw.size else raw
        has_values = bool(scores.size) and bool(np.any(~np.isnan(scores)))
        eps = self._epsilon_for(centers, scores) if (self._enhanced and has_values) else math.inf
        values = (
            dict(zip(centers.ids, scores.tolist(), strict=True))
            if (self._enhanced and has_values)
            else None
        )
        # lower-numbered workers that have not chosen yet reserve the centers they will take
        reserved: list[np.ndarray] = []
        for _ in range(centers.pending):
            if available is not None and available.sum() <= 1:
                break
            j = mesh.distances.next_center(
                centers.rows, values, eps, available=available, extra_centers=reserved
            )
            reserved.append(mesh.Z[j])
            if available is None:
                available = np.ones(len(mesh.configs), dtype=bool)
            available[j] = False
        i = mesh.distances.next_center(
            centers.rows, values, eps, available=available, extra_centers=reserved
        )
        return mesh, i, concurrent

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

        def choose() -> Proposal:  # a fresh proposal per claim attempt (optuna_ext._claims)
            mesh, i, _ = self._choose(study, trial, osp, fixed_cfg)
            params = osp.from_config(mesh.configs[i])
            attrs = {ATTR_CANDIDATE: int(i), ATTR_MESH: mesh.key, ATTR_PARAMS: params}
            return Proposal(params, attrs, exclusive=mesh.is_free(i))

        with self._lock:
            return claim(study, trial, choose, key=osp.params_key)

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

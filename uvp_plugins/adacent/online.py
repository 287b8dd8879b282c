"""Enhanced-AdaCent's center selection as one online object with ask/tell and JSON state.

Bateni et al., *Budget Allocation for Unknown Value Functions in a Lipschitz Space*: every new
configuration Enhanced-AdaCent evaluates is the next center of Enhanced-KCenter (Alg. 4) over a
finite candidate set ``X`` (Sec. 4's mesh), with every configuration evaluated so far as a center
whose distance is reshaped by its value (Alg. 8 line 4; Alg. 7 line 4 with plain distances for
AdaCent). :class:`OnlineEnhancedAdaCent` takes that step one configuration at a time:

* :meth:`~OnlineEnhancedAdaCent.tell` records a trial - its configuration, the values it reported
  per step (its learning curve), its final value and its status (running, complete, pruned,
  failed) - or replaces what was recorded for it;
* :meth:`~OnlineEnhancedAdaCent.ask` returns the next configuration;
* :meth:`~OnlineEnhancedAdaCent.state_dict` / :meth:`~OnlineEnhancedAdaCent.from_state_dict`:
  the parameters and the told trials as versioned JSON (format :data:`STATE_FORMAT`,
  ``"uvp-online-adacent/1"``).

Every adapter and the offline allocators drive this object: Optuna's sampler (which re-tells the
trials it reads from storage), Ray Tune's searcher (which tells results as they arrive) and
:func:`uvp_plugins.adacent.allocators.enhanced_adacent` (which tells the histories it paid for).

**One decision (documented choices).**

* *Candidates*: a scrambled Sobol mesh of ``n_candidates`` points of the search space
  (:class:`~uvp_plugins.adacent.mesh.MeshLadder`; once every candidate is taken it doubles with the
  next points of the same sequence, at most 64-fold) or a given candidate set. A candidate is
  *taken* when some trial (failed ones included) has exactly its configuration; taken candidates
  are not proposed again while another is free.
* *Centers*: every trial that is not failed.
* *Center values*: ``center_value="depth"`` (default, the online rule): the value at the
  exploration depth ``floor(delta T)`` (best finite value reported at a step ``<= depth``; its best
  value so far if it has not reached the depth; its final value if it reported no step) - one
  budget, so every center is compared at the same depth; ``"last"``: ``H_last`` of Alg. 4, the best
  value at the deepest step reported (the offline allocators). Values are mapped to the positive,
  higher-is-better scale of the ratios by :func:`~uvp_plugins.adacent.value_scale.positive_scores`.
* *epsilon*: a given float, or ``"auto"``: :func:`~uvp_plugins.adacent.curves.resolve_epsilon`
  over the finished trials' curves (Sec. 4.1; at most 200 trials, evenly spaced in trial order).
* *The step*: ``argmax_x min_c d~(x, c)`` over the free candidates, ties to the lowest index
  (:meth:`~uvp_plugins.adacent.center_distances.CenterDistances.next_center`); without any center,
  ``first`` or the candidate nearest the centroid. With ``pending=k`` the object first takes ``k``
  steps for workers that asked before this one and have not told their choice yet, and avoids
  those candidates.
* *T* (``max_resource``): given, else the largest step a complete trial reported (else every
  trial's best value so far is its value).

* *Guidance* (optional, :mod:`uvp_plugins.adacent.guidance`): once enough trials have a value at
  the depth, a surrogate fitted to those values (complete and pruned trials alike) chooses among
  the free candidates and candidates around the best configurations - the extension that makes
  later centers concentrate where the evidence says the optimum is.

Everything :meth:`ask` returns is a pure function of what was told (and the constructor's
arguments): two objects told the same trials propose the same configuration, which is what makes
several processes on one Optuna storage, or a restarted process, agree.

Example:
    >>> from uvp_plugins.space import FloatParam, SearchSpace
    >>> space = SearchSpace([FloatParam("x", 0.0, 1.0), FloatParam("y", 0.0, 1.0)])
    >>> ea = OnlineEnhancedAdaCent(space, n_candidates=64, max_resource=10, seed=0)
    >>> for t in range(5):
    ...     p = ea.ask()
    ...     acc = 1.0 - abs(p.config["x"] - 0.3) - abs(p.config["y"] - 0.7)
    ...     ea.tell(t, p.config, status="complete", curve={b: acc * b / 10 for b in range(1, 11)})
    >>> len(ea.trials), ea.ask().source
    (5, 'mesh')
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from uvp_plugins.adacent.curves import EPSILON_PERCENTILE, MAX_EPSILON_POINTS, resolve_epsilon
from uvp_plugins.adacent.guidance import (
    Guidance,
    GuidedModel,
    local_candidate_points,
    local_count,
)
from uvp_plugins.adacent.histories import finite_observations, value_at_depth
from uvp_plugins.adacent.mesh import CandidateMesh, MeshLadder
from uvp_plugins.adacent.pred import DELTA, check_delta, check_max_resource
from uvp_plugins.adacent.scores import rank_scores
from uvp_plugins.adacent.targets import final_targets
from uvp_plugins.adacent.value_scale import positive_scores
from uvp_plugins.blas import single_thread_blas
from uvp_plugins.contract import StateFormat
from uvp_plugins.space import SearchSpace, config_key
from uvp_plugins.validation import check_bool, check_choice, check_float, check_int, check_seed

__all__ = ["OnlineEnhancedAdaCent", "Proposal", "STATUSES", "CENTER_VALUES", "check_epsilon"]

#: trial statuses :meth:`OnlineEnhancedAdaCent.tell` accepts
STATUSES = ("running", "complete", "pruned", "failed")
#: how a center's value is read from its curve: at the exploration depth, or its last value
CENTER_VALUES = ("depth", "last")
_FINISHED = ("complete", "pruned", "failed")
#: the state format (:mod:`uvp_plugins.contract`); version 1 is the only one written so far
#: (states saved before ``params["guidance"]`` existed read as ``guidance=None``)
STATE_FORMAT = StateFormat("uvp-online-adacent", 1)


@dataclass(frozen=True)
class Proposal:
    """What :meth:`OnlineEnhancedAdaCent.ask` proposes.

    Attributes:
        config: the configuration (parameter name -> value of the search space).
        candidate: its index in the candidate mesh (``-1`` if it is not a mesh point).
        mesh: the name of the mesh (e.g. ``"sobol:<seed>:<n>"``) or of the candidate source.
        source: ``"mesh"`` (a candidate of the mesh) or the name of another candidate source.
        free: no told trial had this configuration (``False`` only when every candidate was
            taken and configurations repeat).
    """

    config: dict[str, Any]
    candidate: int
    mesh: str
    source: str = "mesh"
    free: bool = True


@dataclass
class _Trial:
    config: dict[str, Any]
    ckey: tuple[Any, ...]
    row: np.ndarray
    status: str
    number: int
    curve: dict[int, float] = field(default_factory=dict)
    final: float | None = None
    #: ``(depth, value)`` of the last :meth:`OnlineEnhancedAdaCent._center_value` (a trial's
    #: record is replaced, not changed, on every tell, so the memo never goes stale)
    memo: tuple[int | None, float] | None = None

    @property
    def stamp(self) -> tuple[int, str, int, float | None]:
        """What the surrogate's hyperparameter fit reads of this trial (changes with it)."""
        return (self.number, self.status, len(self.curve), self.final)


class OnlineEnhancedAdaCent:
    """Online Enhanced-KCenter center selection (Bateni et al., Alg. 4 inside Alg. 8), ask/tell.

    An ask/tell object of the core contract (:class:`uvp_plugins.contract.AskTell`): its state
    is :data:`STATE_FORMAT` (``"uvp-online-adacent/1"``).

    Args:
        space: the search space (:class:`~uvp_plugins.space.SearchSpace`); ``None`` only with
            ``candidate_array``.
        maximize: ``True`` if higher values are better.
        candidates: optional finite candidate set (configurations of ``space``); default: a Sobol
            mesh of ``n_candidates`` points.
        candidate_array: optional candidates as embedded points (rows; candidate ``i`` is the
            configuration ``{"index": i}``), for the offline allocators.
        n_candidates: size of the default Sobol mesh, an int ``>= 1``.
        epsilon: the Lipschitz constant of Assumption 1.2 (``> 0``), or ``"auto"`` (Sec. 4.1).
        epsilon_percentile: percentile of the pairwise estimates for ``"auto"`` (Sec. 4.1: 95).
        delta: exploration fraction in ``(0, 1)``: center values are read at ``floor(delta T)``.
        max_resource: ``T`` (int ``>= 2``) or ``None`` (inferred from complete trials).
        enhanced: ``True`` for Enhanced-KCenter (Alg. 4), ``False`` for greedy k-center (Alg. 1).
        center_value: ``"depth"`` or ``"last"`` (see the module doc).
        seed: seed of the Sobol mesh (an int ``>= 0``).
        first: index of the first candidate when there is no center (default: nearest the
            candidates' centroid).
        guidance: exploitation settings (:class:`~uvp_plugins.adacent.guidance.Guidance`): after
            ``n_init`` valued trials the next configuration maximises the expected improvement of
            a surrogate of the values at the depth; ``None`` (default here): the paper's
            Enhanced-KCenter step at every trial.
    """

    #: the format of :meth:`state_dict` (``"uvp-online-adacent/1"``)
    STATE_FORMAT: ClassVar[StateFormat] = STATE_FORMAT

    def __init__(
        self,
        space: SearchSpace | None = None,
        *,
        maximize: bool = True,
        candidates: Sequence[Mapping[str, Any]] | None = None,
        candidate_array: np.ndarray | None = None,
        n_candidates: int = 1000,
        epsilon: float | str = "auto",
        epsilon_percentile: float = EPSILON_PERCENTILE,
        delta: float = DELTA,
        max_resource: int | None = None,
        enhanced: bool = True,
        center_value: str = "depth",
        seed: int = 0,
        first: int | None = None,
        guidance: Guidance | None = None,
    ) -> None:
        if guidance is not None and not isinstance(guidance, Guidance):
            raise TypeError(f"guidance must be a Guidance or None, got {guidance!r}")
        self.guidance = guidance
        self._model = GuidedModel(guidance) if guidance is not None else None
        self.maximize = check_bool("maximize", maximize)
        self.n_candidates = check_int("n_candidates", n_candidates, low=1)
        self.epsilon = check_epsilon(epsilon)
        self.epsilon_percentile = check_float("epsilon_percentile", epsilon_percentile, 0.0, 100.0)
        self.delta = check_delta(delta)
        self.max_resource = None if max_resource is None else check_max_resource(max_resource)
        self.enhanced = check_bool("enhanced", enhanced)
        self.center_value = check_choice("center_value", center_value, CENTER_VALUES)
        self.seed: int = check_seed("seed", seed)  # type: ignore[assignment]
        self.first = None if first is None else check_int("first", first, low=0)
        self.space = space
        self._user: list[dict[str, Any]] | None
        if candidate_array is not None:
            if space is not None or candidates is not None:
                raise ValueError("give candidate_array alone (without space or candidates)")
            Z = np.asarray(candidate_array, dtype=float)
            if Z.ndim != 2 or Z.shape[0] < 1 or not np.all(np.isfinite(Z)):
                raise ValueError(
                    f"candidate_array must be a non-empty 2-D array of finite points, got shape {Z.shape}"
                )
            self._ladder = MeshLadder.from_array(Z)
            self._names = ["index"]
            self._user = [{"index": i} for i in range(Z.shape[0])]
        else:
            if space is None:
                raise ValueError("space is required (or give candidate_array)")
            self._names = space.names
            if candidates is not None:
                self._user = [space_config(space, c) for c in candidates]
                if not self._user:
                    raise ValueError("candidates must not be empty")
                self._ladder = MeshLadder.fixed(self._user, space)
            else:
                self._user = None
                self._ladder = MeshLadder.sobol(space, self.n_candidates, self.seed)
        self._embed = self._ladder.embed
        self._candidates_given = candidates is not None or candidate_array is not None
        self._trials: dict[Hashable, _Trial] = {}
        self._inferred_T: tuple[int] | None = None
        self._next_number = 0
        self._eps_cache: tuple[tuple[Any, ...], float] | None = None
        #: keys of the told trials' configurations, with how many trials hold each
        self._taken_keys: set[tuple[Any, ...]] = set()
        self._key_counts: dict[tuple[Any, ...], int] = {}
        #: the epsilon of the last enhanced step (``nan`` before one, or for plain k-center)
        self.last_epsilon = math.nan

    # ------------------------------------------------------------------ facts
    @property
    def trials(self) -> dict[Hashable, dict[str, Any]]:
        """What was told, by key: configuration, status, curve, final value, number (copies)."""
        return {
            k: {
                "config": dict(t.config),
                "status": t.status,
                "curve": dict(t.curve),
                "final": t.final,
                "number": t.number,
            }
            for k, t in self._trials.items()
        }

    def depth(self) -> int | None:
        """The exploration depth ``floor(delta T)`` (``None`` while ``T`` is unknown)."""
        T = self.resolved_max_resource()
        return None if T is None else int(math.floor(self.delta * T))

    def resolved_max_resource(self) -> int | None:
        """``T``: the given ``max_resource``, else the largest step a complete trial reported."""
        if self.max_resource is not None:
            return self.max_resource
        if self._inferred_T is None:  # recomputed after a tell or forget
            steps = [max(t.curve) for t in self._trials.values() if t.status == "complete" and t.curve]
            self._inferred_T = (max(steps) if steps else 0,)
        top = self._inferred_T[0]
        return top if top >= 1 else None

    # ------------------------------------------------------------------ tell
    def tell(
        self,
        key: Hashable,
        config: Mapping[str, Any],
        *,
        status: str = "running",
        curve: Mapping[int, float] | None = None,
        final: float | None = None,
        number: int | None = None,
    ) -> None:
        """Record (or replace) trial ``key``.

        Args:
            key: the caller's id of the trial (hashable; JSON-able for :meth:`state_dict`).
            config: its configuration (a configuration of the search space).
            status: one of ``"running"``, ``"complete"``, ``"pruned"``, ``"failed"``.
            curve: ``{step: value}`` reported so far (non-finite values are ignored).
            final: the final value of a complete trial (used when it reported no step).
            number: the trial's position in the order of trials (default: order of first tell);
                decides which trials ``epsilon="auto"`` uses when there are many.
        """
        check_choice("status", status, STATUSES)
        cfg = self._config(config)
        old = self._trials.get(key)
        if number is None:
            number = old.number if old is not None else self._next_number
        else:
            number = check_int("number", number, low=0)
        self._next_number = max(self._next_number, number + 1)
        points = {}
        if curve:
            steps, values = finite_observations(curve)
            points = {int(s): float(v) for s, v in zip(steps.tolist(), values.tolist(), strict=True)}
        fin = None if final is None or not math.isfinite(float(final)) else float(final)
        row = old.row if old is not None and old.config == cfg else self._embed([cfg])[0]
        ckey = old.ckey if old is not None and old.config == cfg else config_key(cfg, self._names)
        if old is not None:
            self._release(old.ckey)
        self._trials[key] = _Trial(cfg, ckey, row, status, number, points, fin)
        self._inferred_T = None
        self._key_counts[ckey] = self._key_counts.get(ckey, 0) + 1
        self._taken_keys.add(ckey)

    def forget(self, key: Hashable) -> None:
        """Drop trial ``key`` (unknown keys are ignored)."""
        old = self._trials.pop(key, None)
        if old is not None:
            self._release(old.ckey)
            self._inferred_T = None

    def _release(self, ckey: tuple[Any, ...]) -> None:
        n = self._key_counts[ckey] - 1
        if n:
            self._key_counts[ckey] = n
        else:
            del self._key_counts[ckey]
            self._taken_keys.discard(ckey)

    def _config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        if self.space is None:
            idx = check_int("config['index']", dict(config).get("index"), 0, len(self._user or []) - 1)
            return {"index": idx}
        return space_config(self.space, config)

    # ------------------------------------------------------------------- ask
    def ask(
        self,
        *,
        pending: int = 0,
        fixed: Mapping[str, Any] | None = None,
        key: Hashable | None = None,
    ) -> Proposal:
        """The next configuration.

        Args:
            pending: number of workers that asked before this call and have not told their
                choice yet (their steps are taken first and their candidates avoided).
            fixed: parameter values that are fixed for this trial (e.g. enqueued by the user);
                the candidates take these values.
            key: if given, the proposal is told right away as a running trial under ``key``.

        The step's linear algebra runs with one BLAS thread (:mod:`uvp_plugins.blas`: at these
        matrix sizes more threads cost time, 16.0 vs 9.7 ms per trial at 1000 trials on 2 cores).
        """
        pending = check_int("pending", pending, low=0)
        with single_thread_blas():
            return self._ask(pending, fixed, key)

    def _ask(self, pending: int, fixed: Mapping[str, Any] | None, key: Hashable | None) -> Proposal:
        fixed_cfg = self._fixed(fixed)
        taken = self._taken()
        mesh, available = self._ladder.free_mesh(taken, fixed_cfg)
        # the centers: every non-failed trial (keys and records as two lists: no per-trial
        # tuples, which at thousands of trials cost more in garbage collection than in use)
        keys = [k for k, t in self._trials.items() if t.status != "failed"]
        centers = [self._trials[k] for k in keys]
        depth = self.depth()
        raw = np.array([self._center_value(t, depth) for t in centers], dtype=float)
        rows = {k: t.row for k, t in zip(keys, centers, strict=True)}
        # the centers' scores and epsilon only for Enhanced-KCenter steps (an expected-improvement
        # step does not read them), computed at most once per ask
        scores = functools.cache(lambda: self._scores(keys, centers, raw))

        model = self._update_model(centers, raw)
        reserved: list[np.ndarray] = []
        for r in range(pending):
            if available is not None and available.sum() <= 1:
                break
            config, j, source = self._pick(
                mesh, available, rows, scores, reserved, model, taken, fixed_cfg, r + 1
            )
            reserved.append(self._embed([config])[0])
            taken = taken | {config_key(config, self._names)}
            if j >= 0:
                if available is None:
                    available = np.ones(len(mesh.configs), dtype=bool)
                available[j] = False
        config, i, source = self._pick(
            mesh, available, rows, scores, reserved, model, taken, fixed_cfg, 0
        )
        free = config_key(config, self._names) not in self._taken()
        proposal = Proposal(dict(config), int(i), mesh.key if i >= 0 else source, source, free)
        if key is not None:
            self.tell(key, proposal.config, status="running")
        return proposal

    def _pick(
        self,
        mesh: CandidateMesh,
        available: np.ndarray | None,
        rows: dict[Hashable, np.ndarray],
        scores: Callable[[], tuple[dict[Hashable, float] | None, float]],
        reserved: list[np.ndarray],
        model: GuidedModel | None,
        taken: set[tuple[Any, ...]],
        fixed_cfg: Mapping[str, Any],
        round_: int,
    ) -> tuple[dict[str, Any], int, str]:
        """One step: Enhanced-KCenter over the free mesh candidates (Alg. 4), or, with guidance
        and enough evidence, the expected-improvement choice of :mod:`~uvp_plugins.adacent.guidance`."""
        if not rows and not reserved and self.first is not None:
            i = self.first if (available is None or available[self.first]) else None
            if i is None:
                i = mesh.distances.next_center({}, None, math.inf, available=available)
            return mesh.configs[i], int(i), "mesh"
        if model is not None and not model.guidance.coverage_step(len(self._trials) + round_):
            return self._guided_pick(mesh, available, model, taken, fixed_cfg, round_)
        g = self.guidance
        if g is not None and g.kcenter_max_dim and mesh.Z.shape[1] > g.kcenter_max_dim:
            free = np.flatnonzero(available) if available is not None else np.arange(len(mesh.configs))
            i = int(free[0]) if free.size else 0  # the next free Sobol point, in order
            return mesh.configs[i], i, "mesh"
        values, eps = scores()
        i = mesh.distances.next_center(rows, values, eps, available=available, extra_centers=reserved)
        return mesh.configs[i], int(i), "mesh"

    # -------------------------------------------------------------- guidance
    def _update_model(self, centers: list[_Trial], raw: np.ndarray) -> GuidedModel | None:
        """Fit the guidance surrogate to every center's (non-failed trial's) value at the depth
        ``raw`` (None without guidance, without a search space, or before ``n_init`` valued
        trials)."""
        if self._model is None or self.space is None:
            return None
        T = self.resolved_max_resource()
        evidence = [(t.curve, t.status, t.final) for t in centers]
        calibrated = False  # Guidance(targets="depth"): the issue-17 targets throughout
        if self._model.guidance.targets == "final":
            targets, variances, calibrated = final_targets(evidence, T, self.delta, self.maximize)
        if not calibrated:  # no complete trial yet: every trial's value at the depth (issue 17)
            sign = 1.0 if self.maximize else -1.0
            targets = sign * raw
        valued = np.flatnonzero(np.isfinite(targets))
        if not valued.size:
            return None
        trials = [centers[i] for i in valued.tolist()]

        def fit_data(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """Targets of the trials ``idx`` (positions among ``trials``) from them alone."""
            sub = [evidence[valued[i]] for i in idx.tolist()]
            m, v, cal = final_targets(sub, T, self.delta, self.maximize)
            if not cal:
                return rank_scores(np.where(np.isfinite(m), m, np.nanmin(m))), np.zeros(len(sub))
            ok = np.isfinite(m)
            return np.where(ok, m, np.nanmin(m)), np.where(ok, v, 1.0)

        ok = self._model.update(
            np.array([t.row for t in trials], dtype=float),
            targets[valued],
            np.array([t.number for t in trials]),
            [t.config for t in trials],
            noise=variances[valued] if calibrated else None,
            fit_data=fit_data if calibrated else None,
            fingerprint=[t.stamp for t in trials],
        )
        return self._model if ok else None

    def _guided_pick(
        self,
        mesh: CandidateMesh,
        available: np.ndarray | None,
        model: GuidedModel,
        taken: set[tuple[Any, ...]],
        fixed_cfg: Mapping[str, Any],
        round_: int,
    ) -> tuple[dict[str, Any], int, str]:
        """The candidate with the largest expected improvement among the free mesh candidates
        and the local candidates around the best configurations (module doc of
        :mod:`uvp_plugins.adacent.guidance`)."""
        g = model.guidance
        assert self.space is not None
        idx = np.flatnonzero(available) if available is not None else np.arange(len(mesh.configs))
        rng = np.random.default_rng([self.seed, len(self._trials), round_])
        n_local = 0 if self._candidates_given else local_count(g, len(self.space))
        near, near_Z = local_candidate_points(
            self.space, model.top, n_local, g.local_scales, rng, g.bounds, g.mix_share
        )
        if fixed_cfg:
            near = [{**c, **fixed_cfg} for c in near]
        seen = set(taken)
        local: list[dict[str, Any]] = []
        kept: list[int] = []
        for j, c in enumerate(near):
            k = config_key(c, self._names)
            if k not in seen:
                seen.add(k)
                local.append(c)
                kept.append(j)
        if local:
            local_Z = self._embed(local) if fixed_cfg else near_Z[kept]
            Z = np.vstack([mesh.Z[idx], local_Z])
        else:
            Z = mesh.Z[idx]
        if Z.shape[0] == 0:  # nothing free: fall back to the mesh (configurations repeat)
            i = mesh.distances.next_center({}, None, math.inf)
            return mesh.configs[i], int(i), "mesh"
        # plain argmax: EI values can be far below 1 everywhere, so kcenter's absolute tie
        # tolerance would turn them all into ties (exact ties go to the lowest index here too)
        j = int(np.argmax(model.acquisition(Z)))
        if j < idx.size:
            return mesh.configs[int(idx[j])], int(idx[j]), "mesh"
        return local[j - idx.size], -1, "local"

    def _fixed(self, fixed: Mapping[str, Any] | None) -> dict[str, Any]:
        if not fixed:
            return {}
        if self.space is None:
            raise ValueError("fixed parameters need a search space")
        out: dict[str, Any] = {}
        for name, value in fixed.items():
            out[name] = self.space[name].validate(value)
        return out

    def _taken(self) -> set[tuple[Any, ...]]:
        """Keys of every told trial's configuration (kept up to date by tell and forget; the
        caller must not change the set)."""
        return self._taken_keys

    # --------------------------------------------------------------- centers
    def _center_value(self, t: _Trial, depth: int | None) -> float:
        """A center's value (module doc: *Center values*), remembered per trial and depth."""
        if t.memo is not None and t.memo[0] == depth:
            return t.memo[1]
        if t.curve:
            if self.center_value == "last" or depth is None:
                v = value_at_depth(t.curve, max(t.curve), self.maximize)
            else:
                v = value_at_depth(t.curve, depth, self.maximize)
        elif t.status == "complete" and t.final is not None:
            v = t.final
        else:
            v = math.nan
        t.memo = (depth, v)
        return v

    def _scores(
        self, keys: list[Hashable], centers: list[_Trial], raw: np.ndarray
    ) -> tuple[dict[Hashable, float] | None, float]:
        """The centers' (non-failed trials', by key) scores from their values ``raw``, and
        epsilon (also kept as ``last_epsilon``)."""
        if not self.enhanced or not centers:
            return None, math.inf
        if not np.any(np.isfinite(raw)):
            return None, math.inf
        scores = positive_scores(raw, self.maximize)
        values = dict(zip(keys, scores.tolist(), strict=True))
        self.last_epsilon = self._epsilon(centers)
        return values, self.last_epsilon

    def _epsilon(self, centers: list[_Trial]) -> float:
        """:func:`resolve_epsilon` over the finished, valued centers' curves, in trial order."""
        if not isinstance(self.epsilon, str):
            return float(self.epsilon)
        done = sorted(
            (t for t in centers if t.status in _FINISHED and (t.curve or t.final is not None)),
            key=lambda t: t.number,
        )
        if len(done) < 2:
            return math.inf
        if len(done) > MAX_EPSILON_POINTS:  # evenly spaced in trial order (same in every process)
            done = [done[i] for i in np.linspace(0, len(done) - 1, MAX_EPSILON_POINTS).astype(int)]
        ident = (tuple(t.number for t in done), tuple(len(t.curve) for t in done))
        if self._eps_cache is not None and self._eps_cache[0] == ident:
            return self._eps_cache[1]
        steps = sorted({s for t in done for s in t.curve})
        col = {s: j for j, s in enumerate(steps)}
        V = np.full((len(done), max(1, len(steps))), np.nan)
        for r, t in enumerate(done):
            if t.curve:
                V[r, [col[s] for s in t.curve]] = list(t.curve.values())
            elif t.final is not None:
                V[r, 0] = t.final
        # one scale for every value (the ratios of Sec. 4.1 need positive, higher-is-better values)
        finite = np.isfinite(V)
        V[finite] = positive_scores(V[finite], self.maximize)
        X = np.array([t.row for t in done], dtype=float)
        eps = resolve_epsilon("auto", X, V, self.epsilon_percentile)
        self._eps_cache = (ident, eps)
        return eps

    # ------------------------------------------------------------ persistence
    def state_dict(self) -> dict[str, Any]:
        """Parameters and the told trials as plain data (JSON-serialisable when the keys and
        configuration values are), format :data:`STATE_FORMAT` (``"uvp-online-adacent/1"``).
        The candidate mesh is not stored: it is rebuilt from the parameters (Sobol with the same
        seed) or from the stored user candidates."""
        return STATE_FORMAT.stamp({
            "params": {
                "maximize": self.maximize,
                "n_candidates": self.n_candidates,
                "epsilon": self.epsilon,
                "epsilon_percentile": self.epsilon_percentile,
                "delta": self.delta,
                "max_resource": self.max_resource,
                "enhanced": self.enhanced,
                "center_value": self.center_value,
                "seed": self.seed,
                "first": self.first,
                "guidance": None if self.guidance is None else self.guidance.to_dict(),
            },
            "candidates": None if not self._candidates_given else self._user,
            "trials": [
                {
                    "key": k,
                    "config": t.config,
                    "status": t.status,
                    "curve": [[s, v] for s, v in sorted(t.curve.items())],
                    "final": t.final,
                    "number": t.number,
                }
                for k, t in self._trials.items()
            ],
        })

    @classmethod
    def from_state_dict(
        cls,
        state: Mapping[str, Any],
        space: SearchSpace | None = None,
        candidate_array: np.ndarray | None = None,
    ) -> OnlineEnhancedAdaCent:
        """Rebuild from :meth:`state_dict` with the same ``space`` (or ``candidate_array``);
        a state of another format is a ``ValueError`` naming ``"uvp-online-adacent/1"``."""
        state = STATE_FORMAT.read(state)
        params = dict(state["params"])
        if params.get("guidance") is not None:
            params["guidance"] = Guidance.from_dict(params["guidance"])
        kwargs: dict[str, Any] = {}
        if candidate_array is not None:
            kwargs["candidate_array"] = candidate_array
        else:
            kwargs["space"] = space
            if state.get("candidates") is not None:
                kwargs["candidates"] = state["candidates"]
        obj = cls(**kwargs, **params)
        for d in state["trials"]:
            key = tuple(d["key"]) if isinstance(d["key"], list) else d["key"]
            obj.tell(
                key,
                d["config"],
                status=d["status"],
                curve={int(s): float(v) for s, v in d["curve"]},
                final=d["final"],
                number=int(d["number"]),
            )
        return obj


def check_epsilon(epsilon: Any) -> float | str:
    """``epsilon``: the Lipschitz constant of Assumption 1.2, a float ``> 0`` (``inf`` allowed:
    plain distances), or ``"auto"`` (estimated from the trials, Sec. 4.1)."""
    if isinstance(epsilon, str):
        return check_choice("epsilon", epsilon, ("auto",))
    return check_float("epsilon", epsilon, low=0.0, low_open=True, allow_inf=True)


def space_config(space: SearchSpace, config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` restricted to ``space``'s parameters, each value validated (ints as int,
    floats as float, categoricals as the stored choice)."""
    try:
        return {p.name: p.validate(config[p.name]) for p in space.params}
    except KeyError as exc:
        raise KeyError(f"configuration lacks parameter {exc.args[0]!r} of the search space") from None


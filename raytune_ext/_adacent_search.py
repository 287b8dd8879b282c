"""EnhancedAdaCentSearch: Enhanced-AdaCent's center selection as a Ray Tune ``Searcher``.

The searcher is an event translator over the same core object as
:class:`optuna_ext.EnhancedAdaCentSampler`:
:class:`uvp_plugins.adacent.online.OnlineEnhancedAdaCent` (Bateni et al., *Budget Allocation for
Unknown Value Functions in a Lipschitz Space*, Alg. 4 inside Alg. 8). Ray's events map to the
core's ``ask``/``tell``; the search space is translated by :mod:`raytune_ext._ray_space`.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from ray.tune.search import UNDEFINED_METRIC_MODE, UNDEFINED_SEARCH_SPACE, Searcher

from raytune_ext._journal import save_checkpoint_json
from raytune_ext._ray_space import RaySpace
from raytune_ext._search_properties import check_step_attr
from uvp_plugins.adacent.guidance import Guidance
from uvp_plugins.adacent.online import OnlineEnhancedAdaCent, check_epsilon
from uvp_plugins.adacent.pred import DELTA, check_delta
from uvp_plugins.contract import StateFormat
from uvp_plugins.validation import (
    check_bool,
    check_choice,
    check_int,
    check_reported_number,
    check_reported_step,
    check_seed,
)

__all__ = ["EnhancedAdaCentSearch"]

#: the format of the searcher's checkpoint (:mod:`uvp_plugins.contract`); version 1 is the
#: only one written so far
STATE_FORMAT = StateFormat("uvp-ray-adacent-search", 1)
_MODES = ("min", "max")


class EnhancedAdaCentSearch(Searcher):
    """Enhanced-AdaCent's center selection (Bateni et al., *Budget Allocation for Unknown Value
    Functions in a Lipschitz Space*, Alg. 8 line 4 = Enhanced-KCenter, Alg. 4) as a Ray Tune
    searcher, followed - with the default ``guidance`` - by expected-improvement steps where the
    trials' values say the optimum is.

    Every decision is taken by the framework-free core object
    :class:`uvp_plugins.adacent.online.OnlineEnhancedAdaCent`, the same one
    :class:`optuna_ext.EnhancedAdaCentSampler` drives: given the same seed, search space and
    results, both propose the same configurations. This class only translates Ray's events:

    * ``suggest(trial_id)`` asks the core and tells the choice at once as a *running* trial, so
      concurrent trials are centers and never receive the same configuration while a free
      candidate remains;
    * ``on_trial_result`` adds ``result[metric]`` at step ``result[time_attr]`` to the trial's
      learning curve (results without the metric or the step, or with a non-finite value, are
      skipped; a metric that is not a number or a step that is not an int ``>= 0`` raises a
      ``TypeError``/``ValueError`` naming the key and the trial, at the first such result); the
      core reads each center's value at the exploration depth ``floor(delta * max_t)``;
    * ``on_trial_complete``: a trial that ended at ``max_t`` (or, without ``max_t``, any trial
      that ended normally) is *complete* with ``result[metric]`` as its final value; one that
      ended before ``max_t`` (stopped by a scheduler) is *pruned*, its curve kept; an errored
      trial is *failed*: no longer a center, its configuration not proposed again while a free
      one remains, its curve never used; a trial removed before it reported anything releases
      its configuration;
    * ``save``/``restore`` write and read the core's JSON state (plus the trials still running),
      so ``Tuner.restore`` continues the same sequence.

    Pair it with :class:`~raytune_ext.PredStoppingScheduler` ``(max_t=..., n_probes=10)``: the
    first ten trials (``guidance.n_init``, :func:`uvp_plugins.adacent.pred.probes_for`) stop at
    the exploration depth, so the first trial trained further is the model's choice - the
    pairing Optuna's ``PredPruner`` makes by itself with our sampler. A Ray scheduler is not told
    the searcher, so the scheduler's own default stays ``n_probes=0``.

    The search space comes from ``space`` or from the Tuner's ``param_space``
    (:mod:`raytune_ext._ray_space`: ``tune.uniform``, ``quniform``, ``loguniform``, ``randint``,
    ``qrandint``, ``lograndint``, ``choice``; other domains are rejected naming the parameter),
    its parameters sorted by their ``"/"``-joined names. Constants in ``param_space`` are passed
    through by Ray. ``tune.sample_from`` in a ``Tuner``'s ``param_space`` is not searched: Ray
    replaces it by a placeholder before the searcher sees the space and evaluates it for each
    trial from the values the searcher chose (e.g. ``tune.sample_from(lambda spec: 2 *
    spec.config.x)``); in ``space=`` or ``tune.run(config=...)`` it is rejected like the other
    domains.

    Example (quiet, on a local 2-CPU cluster on 127.0.0.1):

        .. code-block:: python

            import os
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # before Ray: 127.0.0.1 only
            os.environ["TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"] = "1"  # no result files
            os.environ["RAY_AIR_NEW_OUTPUT"] = "0"  # no experiment table
            import tempfile
            import ray
            from ray import tune
            from raytune_ext import EnhancedAdaCentSearch

            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR")

            def trainable(config):
                for epoch in range(1, 11):
                    acc = (1 - abs(config["x"] - 0.3)) * (1 - 0.7 ** epoch)
                    tune.report({"acc": acc})

            tuner = tune.Tuner(
                trainable,
                param_space={"x": tune.uniform(0.0, 1.0), "units": tune.randint(16, 129)},
                tune_config=tune.TuneConfig(
                    metric="acc", mode="max", num_samples=12, max_concurrent_trials=2,
                    search_alg=EnhancedAdaCentSearch(max_t=10, seed=0), reuse_actors=True,
                ),
                run_config=tune.RunConfig(storage_path=tempfile.mkdtemp(), verbose=0),
            )
            print(tuner.fit().get_best_result().config)
            ray.shutdown()

    Args:
        space: optional Ray Tune search space (dict of ``tune.*`` domains); default: the
            Tuner's ``param_space``.
        metric: the result key to optimise (default: ``TuneConfig(metric=...)``).
        mode: ``"min"`` or ``"max"`` (default: ``TuneConfig(mode=...)``).
        time_attr: the result key that counts training steps (integer values), as in Ray's
            schedulers; default ``"training_iteration"`` (Ray's times in seconds,
            ``"time_total_s"`` and the like, are refused).
        max_t: ``T``, the largest step a trial reports (an int ``>= 2``); values are compared at
            ``floor(delta * max_t)``. Default ``None``: the largest step a complete trial
            reported. Give it when a scheduler stops trials early: Ray tells a searcher the
            same way about a stopped and a finished trial, so only ``max_t`` tells them apart
            (stopped ones are *pruned*, as in Optuna).
        points_to_evaluate: configurations to try first (complete, or partial: the missing
            parameters are chosen by the searcher with the given ones fixed).
        n_candidates: size of the Sobol mesh of candidates, an int ``>= 1``.
        epsilon: the Lipschitz constant of Assumption 1.2 (``> 0``), or ``"auto"`` (Sec. 4.1).
        delta: exploration fraction in ``(0, 1)``.
        enhanced: ``True`` for Enhanced-KCenter (Alg. 4), ``False`` for greedy k-center (Alg. 1).
        seed: seed of the mesh and of the guidance (an int ``>= 0``; ``None``: a random seed,
            drawn once and kept in checkpoints).
        guidance: exploitation settings (:class:`uvp_plugins.adacent.guidance.Guidance`; default
            ``Guidance()``, as the Optuna sampler), or ``None`` for the paper's sampler.
    """

    #: the format of its checkpoint (``save``/``restore``)
    STATE_FORMAT: ClassVar[StateFormat] = STATE_FORMAT

    def __init__(
        self,
        space: Mapping[str, Any] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        *,
        time_attr: str = "training_iteration",
        max_t: int | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        n_candidates: int = 1000,
        epsilon: float | str = "auto",
        delta: float = DELTA,
        enhanced: bool = True,
        seed: int | None = None,
        guidance: Guidance | None = Guidance(),
    ) -> None:
        if metric is not None and (not isinstance(metric, str) or not metric):
            raise TypeError(f"metric must be a non-empty str or None, got {metric!r}")
        if mode is not None:
            check_choice("mode", mode, _MODES)
        if not isinstance(time_attr, str) or not time_attr:
            raise TypeError(f"time_attr must be a non-empty str, got {time_attr!r}")
        check_step_attr(time_attr, type(self).__name__)
        if guidance is not None and not isinstance(guidance, Guidance):
            raise TypeError(
                f"guidance must be a uvp_plugins.adacent.guidance.Guidance or None, got {guidance!r}"
            )
        self._time_attr = time_attr
        self._max_t = None if max_t is None else check_int("max_t", max_t, low=2)
        self._n_candidates = check_int("n_candidates", n_candidates, low=1)
        self._epsilon = check_epsilon(epsilon)
        self._delta = check_delta(delta)
        self._enhanced = check_bool("enhanced", enhanced)
        seed = check_seed("seed", seed, allow_none=True)
        self._seed: int = (
            int(np.random.SeedSequence().generate_state(1)[0]) if seed is None else seed
        )
        self._guidance = guidance
        if points_to_evaluate is not None and (
            isinstance(points_to_evaluate, (str, bytes, Mapping))
            or not isinstance(points_to_evaluate, Sequence)
            or not all(isinstance(p, Mapping) for p in points_to_evaluate)
        ):
            raise TypeError(
                "points_to_evaluate must be a list of configuration dicts, got "
                f"{points_to_evaluate!r}"
            )
        self._points: list[dict[str, Any]] = [dict(p) for p in points_to_evaluate or []]
        super().__init__(metric=metric, mode=mode)
        self._rspace: RaySpace | None = None
        self._engine: OnlineEnhancedAdaCent | None = None
        self._pending_state: dict[str, Any] | None = None  # restored before the space was known
        #: trials suggested and not finished: trial id -> learning curve {step: value}
        self._live: dict[str, dict[int, float]] = {}
        self._configs: dict[str, dict[str, Any]] = {}
        self._own_space = space is not None  # given here (else: Ray's param_space or a checkpoint)
        if space is not None:
            self._set_space(space)

    # ----------------------------------------------------------------- plumbing
    def _set_space(self, space: Mapping[str, Any]) -> None:
        rspace = RaySpace(space)
        if self._points:
            try:
                for p in self._points:
                    rspace.to_core(p, partial=True)
            except (KeyError, ValueError, TypeError) as exc:
                raise ValueError(f"points_to_evaluate: {exc}") from None
        self._rspace = rspace
        self._engine = None

    def _new_engine(self) -> OnlineEnhancedAdaCent:
        assert self._rspace is not None and self._mode is not None
        return OnlineEnhancedAdaCent(
            self._rspace.space,
            maximize=self._mode == "max",
            n_candidates=self._n_candidates,
            epsilon=self._epsilon,
            delta=self._delta,
            max_resource=self._max_t,
            enhanced=self._enhanced,
            seed=self._seed,
            guidance=self._guidance,
        )

    def _core(self) -> OnlineEnhancedAdaCent:
        """The core object (built once the space, metric and mode are known)."""
        if self._rspace is None:
            raise RuntimeError(UNDEFINED_SEARCH_SPACE.format(cls=type(self).__name__, space="space"))
        if not self._metric or not self._mode:
            raise RuntimeError(
                UNDEFINED_METRIC_MODE.format(cls=type(self).__name__, metric=self._metric, mode=self._mode)
            )
        if self._engine is None:
            self._engine = self._new_engine()
            if self._pending_state is not None:
                state, self._pending_state = self._pending_state, None
                self._load(state)
        return self._engine

    def _ready(self) -> OnlineEnhancedAdaCent | None:
        """The core object if the space, metric and mode are known (restored state applied)."""
        if self._rspace is None or not self._metric or not self._mode:
            return None
        return self._core()

    # ------------------------------------------------------------ Ray Tune API
    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        if mode is not None:
            check_choice("mode", mode, _MODES)
        if self._rspace is not None and self._own_space:
            # space given to the searcher: keep it, refuse the config's (Ray's convention)
            self._metric = self._metric or metric
            self._mode = self._mode or mode
            return False
        if self._rspace is None:
            self._set_space(config)
        elif RaySpace(config).to_json() != self._rspace.to_json():  # restored from a checkpoint
            raise ValueError(
                "param_space differs from the search space of the restored searcher state: "
                f"{RaySpace(config).space} != {self._rspace.space}"
            )
        if metric:
            self._metric = metric
        if mode:
            self._mode = mode
        self._ready()  # a restored state is applied now (Tuner.restore restores before this)
        return True

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        engine = self._core()
        assert self._rspace is not None
        if self._points:
            fixed = self._rspace.to_core(self._points.pop(0), partial=True)
            if len(fixed) == len(self._rspace.names):
                config = fixed
                engine.tell(trial_id, config, status="running")
            else:
                config = engine.ask(fixed=fixed, key=trial_id).config
        else:
            config = engine.ask(key=trial_id).config
        self._live[trial_id] = {}
        self._configs[trial_id] = dict(config)
        return self._rspace.to_ray(config)

    def _known(self, engine: OnlineEnhancedAdaCent, trial_id: str) -> bool:
        """Whether ``trial_id`` is a trial of this search that is running; an errored trial that
        Ray restarts (``resume_errored``, ``max_failures``) reports again: it runs again."""
        if trial_id in self._live:
            return True
        told = engine.trials.get(trial_id)
        if told is None or told["status"] != "failed":
            return False
        self._live[trial_id] = dict(told["curve"])
        self._configs[trial_id] = told["config"]
        return True

    def _observe(
        self, trial_id: str, curve: dict[int, float], result: Mapping[str, Any] | None
    ) -> tuple[bool, float | None]:
        """Add ``result``'s value at its step to ``curve``; returns whether the result has a
        finite value, and the value. A metric or step of the wrong type is an error naming the
        key, the trial and the accepted type."""
        metric = self._metric
        if not result or metric is None or metric not in result:
            return False, None
        where = f"trial {trial_id}"
        value = check_reported_number(metric, result[metric], where)
        step = result.get(self._time_attr)
        s = None if step is None else check_reported_step(self._time_attr, step, where)
        if not math.isfinite(value):
            return False, None
        if s is not None:
            curve[s] = value
        return True, value

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        engine = self._ready()
        if engine is None or not self._known(engine, trial_id):
            return
        if self._observe(trial_id, self._live[trial_id], result)[0]:
            engine.tell(
                trial_id, self._configs[trial_id], status="running", curve=self._live[trial_id]
            )

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        engine = self._ready()
        if engine is None or not self._known(engine, trial_id):
            return
        curve = self._live.pop(trial_id)
        config = self._configs.pop(trial_id)
        if error:
            engine.tell(trial_id, config, status="failed", curve=curve)
            return
        valued, value = self._observe(trial_id, curve, result)
        if not valued and not curve:  # removed before it reported anything: nothing to learn
            engine.forget(trial_id)
            return
        pruned = self._max_t is not None and bool(curve) and max(curve) < self._max_t
        engine.tell(
            trial_id,
            config,
            status="pruned" if pruned else "complete",
            curve=curve,
            final=None if pruned else value,
        )

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """Tell a configuration evaluated outside this search (Ray's ``Searcher`` API):
        ``intermediate_values[i]`` is its value at step ``i + 1``."""
        engine = self._core()
        assert self._rspace is not None
        config = self._rspace.to_core(parameters)
        curve = {i + 1: float(v) for i, v in enumerate(intermediate_values or [])}
        status = "failed" if error else "pruned" if pruned else "complete"
        key = f"uvp:evaluated:{uuid.uuid4().hex}"
        engine.tell(key, config, status=status, curve=curve, final=None if pruned else value)

    # ------------------------------------------------------------ persistence
    def __getstate__(self) -> dict[str, Any]:
        """Pickled (Ray pickles searchers into ``tuner.pkl`` and to workers) with the core
        object as its JSON state; the object is rebuilt on first use."""
        state = self.__dict__.copy()
        if self._engine is not None:
            state["_pending_state"] = self._state()
            state["_engine"] = None
        return state

    def _state(self) -> dict[str, Any]:
        if self._engine is None and self._pending_state is not None:
            return self._pending_state
        return STATE_FORMAT.stamp({
            "space": None if self._rspace is None else self._rspace.to_json(),
            "metric": self._metric,
            "mode": self._mode,
            "seed": self._seed,
            "points_to_evaluate": self._points,
            "live": {t: [[s, v] for s, v in sorted(c.items())] for t, c in self._live.items()},
            "engine": None if self._engine is None else self._engine.state_dict(),
        })

    def save(self, checkpoint_path: str) -> None:
        """Write the searcher's state as JSON to ``checkpoint_path`` (atomically)."""
        save_checkpoint_json(checkpoint_path, self._state())

    def restore(self, checkpoint_path: str) -> None:
        """Read the state :meth:`save` wrote; the search continues where it stopped."""
        with open(checkpoint_path, encoding="utf-8") as f:
            state = json.load(f)
        try:
            state = STATE_FORMAT.read(state)
        except ValueError as exc:
            raise ValueError(
                f"{checkpoint_path!r} is not an EnhancedAdaCentSearch checkpoint: {exc}"
            ) from None
        self._metric = self._metric or state["metric"]
        self._mode = self._mode or state["mode"]
        self._seed = int(state["seed"])
        self._points = [dict(p) for p in state["points_to_evaluate"]]
        if state["space"] is not None:
            saved = RaySpace.from_json(state["space"])
            if self._rspace is None:  # Tuner.restore without param_space: the saved space
                self._rspace = saved
            elif saved.to_json() != self._rspace.to_json():
                raise ValueError(
                    f"the checkpoint {checkpoint_path!r} was saved for another search space: "
                    f"{saved.names} ({saved.space}); this searcher: {self._rspace.space}"
                )
        self._engine = None
        self._pending_state = state
        self._ready()

    def _load(self, state: dict[str, Any]) -> None:
        assert self._rspace is not None
        if state["engine"] is not None:
            self._engine = OnlineEnhancedAdaCent.from_state_dict(state["engine"], self._rspace.space)
        trials = self._engine.trials if self._engine is not None else {}
        self._live = {t: {int(s): float(v) for s, v in c} for t, c in state["live"].items()}
        self._configs = {t: trials[t]["config"] for t in self._live if t in trials}
        self._live = {t: c for t, c in self._live.items() if t in self._configs}

"""Ray Tune methods of ``uvp-bench``: ID-HB through our scheduler, and Ray's own HyperBand and ASHA.

* ``ray-idhb``: :class:`raytune_ext.IterativeDeepeningHyperBandScheduler` (efficient variant,
  ``eta = 3``) with ``max_t = [R0, eta R0]``, ``R0 = T // eta`` (the ID-HB protocol of
  :func:`~uvp_plugins.bench.idhb_compare.idhb_protocol`): Hyperband at ``R0``, then deepened within
  the same run, trials continuing from their checkpoints;
* ``ray-hyperband``: Ray's ``HyperBandScheduler(max_t=T, reduction_factor=3)``;
* ``ray-asha``: Ray's ``ASHAScheduler(max_t=T, grace_period=1, reduction_factor=3)``;
* ``ray-pred``: :class:`raytune_ext.PredStoppingScheduler` (``max_t=T``, ``delta=0.1``, tail fit),
  the Pred stopping rule of AdaCent / Enhanced-AdaCent, asynchronous per trial;
* ``ray-median``: Ray's ``MedianStoppingRule(time_attr="training_iteration", grace_period=1)``
  (Ray's learning-curve-free stopping rule, the peer of ``ray-pred``);
* ``ray-eadacent-pred``: :class:`raytune_ext.EnhancedAdaCentSearch` (``max_t=T``, default
  guidance) choosing the configurations, under ``PredStoppingScheduler(max_t=T, n_probes=10)``
  (the searcher's ``guidance.n_init``, :func:`~uvp_plugins.adacent.pred.probes_for`): the
  Optuna sampler + pruner pair of ``optuna-eadacent-pred`` in Ray's idiom, probe phase
  included; ``ray-eadacent-pred-noprobe`` the same with ``n_probes=0`` (before 2026-11-26).

The asynchronous methods (``ray-asha``, ``ray-pred``, ``ray-median``) draw the same
configurations for a seed (random search), run two trials at a time and stop when the total
budget ``B`` of iterations is spent: they are compared at equal total iterations; so does
``ray-eadacent-pred``, whose searcher chooses each configuration when Ray asks for a trial.

Every Ray trial trains one configuration epoch by epoch, reporting ``{"value":
problem.evaluate(config, epoch)}`` with a checkpoint per epoch (paused trials resume from it).
The problem goes to the workers through ``tune.with_parameters`` (a YAHPO surrogate pickles as
its data folder and reopens its ONNX session once per worker process); for problems whose curves
are cheap the raw curves of configurations drawn up front are computed on the driver instead and
shipped as an array.
The harness ledger is charged on the driver in a ``ray.tune.Callback.on_trial_result``:
``ctx.evaluate(trial_id, config, result["training_iteration"])`` (continuation: a trial pays only
the epochs it trains). When the budget is used up the callback catches ``BudgetExhausted`` and a
``Stopper`` ends the experiment (``stop_all``). Configurations are drawn up front with
``problem.space.sample(n, ctx.rng(...))`` and handed to the trials by index
(``tune.grid_search``), so a seed gives the same configurations to every Ray method. Each trial
uses one CPU; a local cluster ``ray.init(num_cpus=2)`` is started if none is running (and shut
down afterwards), so at most two trials train at once.

Ray runs quietly (:func:`quiet_local_ray`): Ray Tune's default CSV/JSON/TensorBoard logger
callbacks are off (``TUNE_DISABLE_AUTO_CALLBACK_LOGGERS=1``; the harness reads nothing from them,
and tensorboardX's writer threads outlived the temporary storage directory and printed tracebacks
at exit), the console output is the legacy engine, silent at ``verbose=0``
(``RAY_AIR_NEW_OUTPUT=0``; the default engine prints the experiment box at every verbosity), and
the ``ray`` / ``ray.tune`` loggers are at ERROR for the run. Everything is restored afterwards.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from uvp_plugins.adacent.guidance import Guidance
from uvp_plugins.adacent.pred import probes_for
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.idhb_compare import idhb_protocol
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import register_method

__all__ = [
    "run_ray_method",
    "problem_trainable",
    "ray_idhb",
    "quiet_local_ray",
    "QUIET_TUNE_ENV",
    "KEEP_CLUSTER_ENV",
]

ETA = 3

#: Ray Tune's documented switches for a quiet ``tune.run``: no default CSV/JSON/TensorBoard logger
#: callbacks, and the legacy console output (silent at ``verbose=0``).
QUIET_TUNE_ENV = {"TUNE_DISABLE_AUTO_CALLBACK_LOGGERS": "1", "RAY_AIR_NEW_OUTPUT": "0"}
#: loggers held at ERROR while the harness drives Ray (their warnings are about the log files and
#: result fetching the harness does not use, or about slow callbacks on a busy machine)
_QUIET_LOGGERS = ("ray", "ray.tune")


#: set in the environment of the harness's worker processes (:mod:`uvp_plugins.bench.runner`):
#: a worker runs several runs one after the other, so its local Ray cluster is kept for the next
#: Ray run instead of being started anew for each (Ray shuts it down when the worker exits)
KEEP_CLUSTER_ENV = "UVP_BENCH_KEEP_RAY"


@contextlib.contextmanager
def quiet_local_ray(num_cpus: int = 2) -> Iterator[bool]:
    """Quiet Ray for the ``with`` block; starts a local cluster if none is running.

    Sets :data:`QUIET_TUNE_ENV` and the ``ray`` / ``ray.tune`` loggers to ERROR, starts
    ``ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)`` on 127.0.0.1
    (the trial actors' BLAS/OpenMP threads: this process's thread limit divided by ``num_cpus``,
    at least 1) only when Ray is not initialised (shut down at exit, except in a harness worker:
    :data:`KEEP_CLUSTER_ENV`), and restores the environment and the logger levels at exit.
    Yields whether it started the cluster. Errors (failed trials, Ray errors) stay visible.
    """
    import ray

    saved_env = {k: os.environ.get(k) for k in QUIET_TUNE_ENV}
    loggers = [logging.getLogger(name) for name in _QUIET_LOGGERS]
    saved_levels = [lg.level for lg in loggers]
    started = False
    os.environ.update(QUIET_TUNE_ENV)
    try:
        if not ray.is_initialized():
            _loopback_only()
            from uvp_plugins.bench.threads import THREAD_ENV_VARS, available_cores, resolve_threads

            # every trial actor gets this process's thread budget divided by the trials that
            # run at once (num_cpus), so that trials x threads <= cores
            budget = min(resolve_threads(1), available_cores())
            per_trial = str(max(1, budget // max(1, int(num_cpus))))
            ray.init(
                # a new local cluster, never one found through RAY_ADDRESS or /tmp/ray (Ray
                # refuses num_cpus when it connects to an existing cluster)
                address="local",
                num_cpus=num_cpus,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,  # ray.init sets the "ray" logger to this level
                runtime_env={"env_vars": dict.fromkeys(THREAD_ENV_VARS, per_trial)},
            )
            started = True
        for lg in loggers:
            lg.setLevel(logging.ERROR)
        yield started
    finally:
        try:
            if started and not os.environ.get(KEEP_CLUSTER_ENV):
                ray.shutdown()
        finally:
            for lg, level in zip(loggers, saved_levels, strict=True):
                lg.setLevel(level)
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def _loopback_only() -> None:
    """Make the local cluster bind and advertise 127.0.0.1 only: Ray's single-machine mode
    (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, its default on macOS/Windows). Ray reads the
    variable when it is imported; if it already was, the constant it derived is set alike."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


def problem_trainable(
    config: Mapping[str, Any],
    problem: Problem | None,
    configs: Sequence[Mapping[str, Any]] | None,
    curves: np.ndarray | None,
    max_budget: int,
) -> None:
    """Function trainable: trains configuration ``config["idx"]`` epoch by epoch from its
    checkpoint, reporting ``value = problem.evaluate(config, epoch)`` (or the precomputed curve),
    ``epoch`` and ``first`` (the first epoch this training segment ran: > 1 after a resume)."""
    idx = int(config["idx"])
    if curves is not None:
        _train(lambda epoch: float(curves[idx, epoch - 1]), max_budget)
    else:
        assert problem is not None and configs is not None
        _train(lambda epoch: float(problem.evaluate(configs[idx], epoch)), max_budget)


def searched_trainable(config: Mapping[str, Any], problem: Problem, max_budget: int) -> None:
    """Function trainable for a searcher's configurations: ``config`` holds the problem's
    parameters (:func:`raytune_ext._ray_space.ray_param_space`); reports as
    :func:`problem_trainable` does."""
    params = {name: config[name] for name in problem.space.names}
    _train(lambda epoch: float(problem.evaluate(params, epoch)), max_budget)


def _train(value_at: Callable[[int], float], max_budget: int) -> None:
    """Report ``value_at(epoch)`` for the epochs after the trial's checkpoint, one checkpoint
    per epoch."""
    from ray import tune
    from ray.tune import Checkpoint

    start = 0
    ckpt = tune.get_checkpoint()
    if ckpt is not None:
        with ckpt.as_directory() as d, open(os.path.join(d, "epoch.json")) as fh:
            start = int(json.load(fh)["epoch"])
    for epoch in range(start + 1, max_budget + 1):
        value = value_at(epoch)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "epoch.json"), "w") as fh:
                json.dump({"epoch": epoch}, fh)
            tune.report(
                {"value": value, "epoch": epoch, "first": start + 1},
                checkpoint=Checkpoint.from_directory(d),
            )


def _no_trial_progress_lines() -> Any:
    """A Ray Tune trial-progress callback that prints nothing.

    Without one, ``tune.run`` adds its own ``TrialProgressCallback``, which prints
    "Trial ... completed. Last result: " for every trial that completes without a new result,
    whatever ``verbose`` says (Ray 2.60) — every finished trial of a resumed experiment. The
    harness reports progress itself (:mod:`uvp_plugins.bench.progress`); failed trials are still
    reported."""
    from ray.tune.progress_reporter import TrialProgressCallback

    class Silent(TrialProgressCallback):  # type: ignore[misc]
        def on_trial_result(self, *args: Any, **kwargs: Any) -> None:
            pass

        def on_trial_complete(self, *args: Any, **kwargs: Any) -> None:
            pass

    return Silent()


def run_ray_method(
    ctx: RunContext,
    make_scheduler: Callable[[], Any],
    num_samples: int,
    tag: str,
    continue_to: int | None = None,
    make_searcher: Callable[[], Any] | None = None,
) -> Any:
    """Spend ``ctx``'s budget with ``tune.run`` under the scheduler from ``make_scheduler``.

    Returns the scheduler (for inspection). ``num_samples`` configurations are drawn up front,
    or - with ``make_searcher`` - chosen one trial at a time by that Ray Tune searcher over the
    problem's space (``ray_param_space``; the problem goes to the workers). With
    ``continue_to`` (an ``IterativeDeepeningHyperBandScheduler`` run only), the finished
    experiment is then continued to ``max_t=continue_to`` with
    :func:`raytune_ext.resume_with_larger_budget` (a second ``tune.run`` on the same
    experiment), charged to the same ledger; ``ctx.notes["first_run_spent"]`` records what the
    first run spent.
    """
    from ray import tune
    from ray.tune import Callback, Stopper

    problem = ctx.problem
    configs = [] if make_searcher is not None else problem.space.sample(num_samples, ctx.rng(7919))

    # Shared flag: the stopper is pickled into Ray's experiment state, so it must not hold ctx.
    flag = {"exhausted": False}

    class ChargeLedger(Callback):
        """Charges every reported epoch to the harness ledger (continuation)."""

        def on_trial_result(
            self, iteration: int, trials: list, trial: Any, result: dict, **info: Any
        ) -> None:
            if flag["exhausted"]:
                return
            if configs:
                cfg = configs[int(trial.config["idx"])]
            else:  # a searcher's configuration
                cfg = {name: trial.config[name] for name in problem.space.names}
            try:
                ctx.evaluate(f"{tag}{trial.trial_id}", cfg, int(result["training_iteration"]))
            except BudgetExhausted:
                flag["exhausted"] = True

    class StopWhenExhausted(Stopper):
        def __init__(self, state: dict[str, bool]) -> None:
            self.state = state

        def __call__(self, trial_id: str, result: dict) -> bool:
            return self.state["exhausted"]

        def stop_all(self) -> bool:
            return self.state["exhausted"]

    if make_searcher is not None:
        trainable, run_config = _searched_trials(problem, make_searcher, num_samples)
    else:
        trainable, run_config = _drawn_trials(problem, configs)

    scheduler = make_scheduler()
    common: dict[str, Any] = {
        "stop": StopWhenExhausted(flag),
        "callbacks": [ChargeLedger(), _no_trial_progress_lines()],
        "resources_per_trial": {"cpu": 1},
        "reuse_actors": True,
        "raise_on_failed_trial": False,
        "verbose": 0,
    }
    with quiet_local_ray(), tempfile.TemporaryDirectory(
        prefix="uvp-bench-ray-", ignore_cleanup_errors=True
    ) as storage:
        analysis = tune.run(
            trainable,
            scheduler=scheduler,
            metric="value",
            mode=ctx.direction,
            storage_path=storage,
            name=f"{tag}seed{ctx.seed}",
            **run_config,
            **common,
        )
        if continue_to is not None and not flag["exhausted"]:
            from raytune_ext import resume_with_larger_budget

            ctx.notes["first_run_spent"] = ctx.ledger.spent
            resume_with_larger_budget(analysis.experiment_path, trainable, max_t=continue_to, **common)
    return scheduler


def _drawn_trials(problem: Problem, configs: list[dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
    """The trainable and ``tune.run`` arguments for configurations drawn up front (one trial
    per configuration, by index)."""
    from ray import tune

    if problem.curve_is_cheap:
        # surrogates: the raw curves are computed here (one batched query per configuration)
        # and shipped as numbers; the values are problem.evaluate's
        curves: np.ndarray | None = np.array(
            [problem.curve(c, problem.max_budget) for c in configs], dtype=float
        )
        shipped: tuple[Any, Any] = (None, None)
    else:  # real training: the problem object goes to the workers (must pickle)
        curves = None
        shipped = (problem, configs)
    trainable = tune.with_parameters(
        problem_trainable,
        problem=shipped[0],
        configs=shipped[1],
        curves=curves,
        max_budget=problem.max_budget,
    )
    return trainable, {"config": {"idx": tune.grid_search(list(range(len(configs))))}}


def _searched_trials(
    problem: Problem, make_searcher: Callable[[], Any], num_samples: int
) -> tuple[Any, dict[str, Any]]:
    """The trainable and ``tune.run`` arguments for a searcher choosing up to ``num_samples``
    configurations of the problem's space (the problem goes to the workers: it must pickle)."""
    from ray import tune

    from raytune_ext._ray_space import ray_param_space

    trainable = tune.with_parameters(searched_trainable, problem=problem, max_budget=problem.max_budget)
    return trainable, {
        "config": ray_param_space(problem.space),
        "search_alg": make_searcher(),
        "num_samples": num_samples,
    }


def _n_native(ctx: RunContext) -> int:
    """Enough configurations for Ray's own schedulers to spend the budget (capped)."""
    return int(min(1000, ctx.total_budget // max(1, ctx.problem.min_budget) + 1))


@register_method(
    "ray-idhb",
    "Ray Tune + IterativeDeepeningHyperBandScheduler (eID, eta=3, max_t=[T//3, 3*(T//3)])",
    requires=("ray",),
    kind="ours",
)
def run_ray_idhb(ctx: RunContext) -> None:
    ray_idhb(ctx)


def ray_idhb(ctx: RunContext) -> Any:
    """``ray-idhb``; returns the scheduler (its core holds the ID-HB state)."""
    from raytune_ext import IterativeDeepeningHyperBandScheduler

    r0, r1 = idhb_protocol(ctx.max_budget, ETA, ctx.problem.min_budget)
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(
        [r0, r1], ETA, ctx.problem.min_budget
    )
    return run_ray_method(
        ctx,
        lambda: IterativeDeepeningHyperBandScheduler(
            max_t=[r0, r1],
            reduction_factor=ETA,
            variant="efficient",
            min_t=ctx.problem.min_budget,
            seed=ctx.seed,
        ),
        n,
        "ray-idhb-",
    )


def _plain_hyperband(ctx: RunContext, max_t: int, tag: str, continue_to: int | None = None) -> None:
    """Hyperband at ``max_t`` with our scheduler (no deepening ladder), configurations for
    ``continue_to`` (or ``max_t``), optionally continued with ``resume_with_larger_budget``."""
    from raytune_ext import IterativeDeepeningHyperBandScheduler

    min_t = ctx.problem.min_budget
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(continue_to or max_t, ETA, min_t)
    run_ray_method(
        ctx,
        lambda: IterativeDeepeningHyperBandScheduler(
            max_t=max_t, reduction_factor=ETA, min_t=min_t, seed=ctx.seed
        ),
        n,
        tag,
        continue_to=continue_to,
    )


@register_method(
    "ray-idhb-resume",
    "Ray Tune + IterativeDeepeningHyperBandScheduler: Hyperband at R = T//3 to the end, then "
    "resume_with_larger_budget to eta*R",
    requires=("ray",),
    kind="ours",
)
def run_ray_idhb_resume(ctx: RunContext) -> None:
    r0, r1 = idhb_protocol(ctx.max_budget, ETA, ctx.problem.min_budget)
    _plain_hyperband(ctx, r0, "ray-idhb-resume-", continue_to=r1)


@register_method(
    "ray-hyperband-fresh",
    "Ray Tune + IterativeDeepeningHyperBandScheduler(max_t=eta*R): a fresh Hyperband at eta*R, "
    "what starting over costs (the baseline of ray-idhb-resume)",
    requires=("ray",),
)
def run_ray_hyperband_fresh(ctx: RunContext) -> None:
    _, r1 = idhb_protocol(ctx.max_budget, ETA, ctx.problem.min_budget)
    _plain_hyperband(ctx, r1, "ray-hb-fresh-")


@register_method("ray-hyperband", "Ray Tune HyperBandScheduler (max_t=T, eta=3)", requires=("ray",))
def run_ray_hyperband(ctx: RunContext) -> None:
    from ray.tune.schedulers import HyperBandScheduler

    run_ray_method(
        ctx,
        lambda: HyperBandScheduler(max_t=ctx.max_budget, reduction_factor=ETA),
        _n_native(ctx),
        "ray-hb-",
    )


@register_method(
    "ray-asha", "Ray Tune ASHAScheduler (max_t=T, grace_period=1, eta=3)", requires=("ray",)
)
def run_ray_asha(ctx: RunContext) -> None:
    from ray.tune.schedulers import ASHAScheduler

    run_ray_method(
        ctx,
        lambda: ASHAScheduler(
            max_t=ctx.max_budget, grace_period=ctx.problem.min_budget, reduction_factor=ETA
        ),
        _n_native(ctx),
        "ray-asha-",
    )


@register_method(
    "ray-pred",
    "Ray Tune + PredStoppingScheduler (Pred rule of Enhanced-AdaCent, max_t=T, delta=0.1, tail fit)",
    requires=("ray",),
    kind="ours",
)
def run_ray_pred(ctx: RunContext) -> None:
    ray_pred(ctx)


def ray_pred(ctx: RunContext) -> Any:
    """``ray-pred``; returns the scheduler (its core rule holds the observed curves)."""
    from raytune_ext import PredStoppingScheduler

    return run_ray_method(
        ctx, lambda: PredStoppingScheduler(max_t=ctx.max_budget), _n_native(ctx), "ray-pred-"
    )


@register_method(
    "ray-median",
    "Ray Tune MedianStoppingRule (time_attr=training_iteration, grace_period=1)",
    requires=("ray",),
)
def run_ray_median(ctx: RunContext) -> None:
    from ray.tune.schedulers import MedianStoppingRule

    run_ray_method(
        ctx,
        lambda: MedianStoppingRule(
            time_attr="training_iteration", grace_period=ctx.problem.min_budget
        ),
        _n_native(ctx),
        "ray-median-",
    )


@register_method(
    "ray-eadacent-pred",
    "Ray Tune + EnhancedAdaCentSearch (default guidance, max_t=T) + PredStoppingScheduler "
    "(max_t=T, n_probes=10): the Optuna sampler + pruner pair as Ray searcher + scheduler",
    requires=("ray",),
    kind="ours",
)
def run_ray_eadacent_pred(ctx: RunContext) -> None:
    _ray_eadacent_pred(ctx, probes_for(Guidance()), "ray-eadacent-pred-")


@register_method(
    "ray-eadacent-pred-noprobe",
    "ray-eadacent-pred with PredStoppingScheduler(n_probes=0): no probe phase (before 2026-11-26)",
    requires=("ray",),
    kind="ours",
)
def run_ray_eadacent_pred_noprobe(ctx: RunContext) -> None:
    _ray_eadacent_pred(ctx, 0, "ray-eadacent-pred-noprobe-")


def _ray_eadacent_pred(ctx: RunContext, n_probes: int, name: str) -> None:
    from raytune_ext import EnhancedAdaCentSearch, PredStoppingScheduler

    run_ray_method(
        ctx,
        lambda: PredStoppingScheduler(max_t=ctx.max_budget, n_probes=n_probes),
        _n_native(ctx),
        name,
        make_searcher=lambda: EnhancedAdaCentSearch(max_t=ctx.max_budget, seed=ctx.seed),
    )

"""Helpers of the Ray ID-HB tests: a tiny checkpointing trainable, a result recorder, an offline
replay of the core.

The recorder, the replay and the comparison of evaluations are the generic ones of
:mod:`uvp_plugins.bench.idhb_ray` (``uvp-bench idhb-ray``), specialised to the configurations
``{"x": ...}`` and the curves :func:`loss_of` of these tests."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ray
from ray import tune
from ray.tune import Checkpoint

from uvp_plugins.bench.idhb_ray import (  # shared with uvp-bench idhb-ray
    ResultRecorder,
    evaluations,
    ray_config_order,
    replay_core,
)
from uvp_plugins.bench.stress_ray import stress_grid, stress_loss
from uvp_plugins.hyperband import IterativeDeepeningHyperband

__all__ = [
    "Recorder",
    "evaluations",
    "grid",
    "loss_of",
    "make_trainable",
    "ray_x_order",
    "replay",
]

if __name__ != "__main__":  # tests import this module; Ray workers cannot: ship it by value
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


#: the deterministic crossing learning curves and the scrambled grid of the stress scenario
loss_of = stress_loss
grid = stress_grid


def make_trainable(
    fail_x: Iterable[float] = (), fail_from: int = 2, step: int = 1, checkpoints: bool = True
) -> Callable[[dict], None]:
    """A function trainable reporting ``loss`` per iteration with a checkpoint every iteration.

    Reports ``first`` (the first iteration this actor trained, > 1 after a restore), ``it``,
    ``step = it * step`` and ``node`` (the Ray node it runs on). Configurations with ``x`` in
    ``fail_x`` raise at iteration ``fail_from``. ``checkpoints=False``: reports no checkpoint (a
    paused trial then starts again from iteration 1). Nested so that Ray pickles it by value.
    """
    failing = {round(float(v), 9) for v in fail_x}

    def trainable(config: dict) -> None:
        start = 0
        ckpt = tune.get_checkpoint()
        if ckpt is not None:
            with ckpt.as_directory() as d, open(os.path.join(d, "state.json")) as fh:
                start = int(json.load(fh)["it"])
        x = float(config["x"])
        for it in range(start + 1, 10_000):
            if round(x, 9) in failing and it >= fail_from:
                raise RuntimeError(f"trial with x={x} fails at iteration {it}")
            metrics = {
                "loss": loss_of(x, it),
                "first": start + 1,
                "it": it,
                "step": it * step,
                "node": ray.get_runtime_context().get_node_id(),
            }
            if not checkpoints:
                tune.report(metrics)
                continue
            with tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "state.json"), "w") as fh:
                    json.dump({"it": it}, fh)
                tune.report(metrics, checkpoint=Checkpoint.from_directory(d))

    return trainable


class Recorder(ResultRecorder):
    """Driver-side log of every result: (trial_id, x, it, first)."""

    def __init__(self) -> None:
        super().__init__(config_key="x", it_key="it", first_key="first")


def replay(
    xs: Sequence[float],
    ladder: Sequence[int],
    eta: int,
    variant: str,
    min_budget: int = 1,
    budget_to_it: Callable[[int], float] = float,
    fail_x: Iterable[float] = (),
    fail_from: int = 2,
) -> IterativeDeepeningHyperband:
    """The core run offline on the same configurations (in Ray's trial order) and results."""
    failing = {round(float(v), 9) for v in fail_x}

    def evaluate(config: dict, budget: int) -> float | None:
        x, t = config["x"], budget_to_it(budget)
        if round(x, 9) in failing and t >= fail_from:
            return None  # the trial errors: core.fail
        return loss_of(x, t)

    return replay_core(
        [{"x": x} for x in xs], ladder, eta, variant, evaluate, mode="min", min_budget=min_budget
    )


def ray_x_order(
    hb: IterativeDeepeningHyperband, trials: Sequence[Any]
) -> tuple[list[float], Callable[[Any], float]]:
    """x of the Ray core's configurations in config-id order (empty slots skipped), and a mapper
    from the Ray core's configs ({"trial_id": ...}) to x."""
    return ray_config_order(hb, trials, lambda t: float(t.config["x"]))


def run_and_summarise(
    max_t: Sequence[int], storage: str, name: str, reuse_actors: bool = True
) -> dict[str, Any]:
    """One ID-HB experiment on the connected Ray cluster (one CPU per trial) over ``grid(n)``,
    summarised as plain data: every evaluation of the core as ``[x, rung, value]``, its ledger
    and incumbent, the Ray nodes each configuration trained on, the number of results.
    ``reuse_actors=False`` gives every trial start its own actor (placed on a node with a free
    CPU), so that short trials cannot all run on one reused actor of one node."""
    from raytune_ext import IterativeDeepeningHyperBandScheduler

    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(list(max_t), 3)
    sched = IterativeDeepeningHyperBandScheduler(
        metric="loss", mode="min", max_t=list(max_t), reduction_factor=3
    )
    rec = Recorder()
    placed: dict[str, set[str]] = {}

    class NodeLog(tune.Callback):
        def on_trial_result(
            self, iteration: int, trials: list, trial: Any, result: dict, **info: Any
        ) -> None:
            placed.setdefault(trial.trial_id, set()).add(result["node"])

    analysis = tune.run(
        make_trainable(),
        config={"x": tune.grid_search(grid(n))},
        scheduler=sched,
        storage_path=storage,
        name=name,
        verbose=0,
        reuse_actors=reuse_actors,
        resources_per_trial={"cpu": 1},
        callbacks=[rec, NodeLog()],
    )
    hb = sched.core
    assert hb is not None and hb.incumbent is not None
    x_of = {t.trial_id: float(t.config["x"]) for t in analysis.trials}
    return {
        "finished": sched.finished,
        "evaluations": sorted(
            [x_of[hb.config(cid)["trial_id"]], rung, v] for (cid, rung), v in hb.results.items()
        ),
        "ledger": hb.ledger.to_dict(),
        "incumbent_x": x_of[hb.incumbent.config["trial_id"]],
        "trial_nodes": {str(x_of[tid]): sorted(nodes) for tid, nodes in placed.items()},
        "results": len(rec.rows),
        "statuses": sorted({t.status for t in analysis.trials}),
    }

"""Issue 32 with real Ray (local 2-CPU cluster): what the Ray plugins refuse, and when.

A concurrency cap ID-HB cannot run under (it hung), metrics and progress counters of the wrong
type (a Python error naming neither the key nor the trial, or silently ignored), a probe phase
that stops every trial, and what ``tune.sample_from`` does with ``EnhancedAdaCentSearch``."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import pytest
import ray.cloudpickle
from idhb_ray_helpers import grid, make_trainable
from ray import tune
from ray.tune import Callback

from raytune_ext import (
    EnhancedAdaCentSearch,
    IterativeDeepeningHyperBandScheduler,
    PredStoppingScheduler,
)

pytestmark = pytest.mark.ray

if __name__ in sys.modules:  # Ray workers cannot import this module: ship it by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class RowLog(Callback):
    """Appends every result the driver delivered (after the scheduler and the searcher) to a
    file: none means the first result was refused."""

    def __init__(self, path: str) -> None:
        self.path = path

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any):
        with open(self.path, "a") as fh:
            fh.write(json.dumps([trial.trial_id, result["training_iteration"]]) + "\n")


def rows_in(path: str) -> int:
    return sum(1 for _ in open(path)) if os.path.exists(path) else 0


def marking(start_dir: str) -> Callable[[dict], None]:
    """A trainable that only leaves a marker file that it started."""

    def trainable(config: dict) -> None:
        open(os.path.join(start_dir, f"started-{config['x']}"), "w").close()
        for it in range(1, 4):
            tune.report({"loss": float(config["x"]) / it})

    return trainable


@pytest.mark.timeout(120)  # before issue 32 the first case never returned
def test_concurrency_cap_below_what_idhb_holds_is_refused_before_any_trial_runs(
    ray_cluster: str, tmp_path
) -> None:
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(9, 3)
    starts = tmp_path / "starts"
    starts.mkdir()
    with pytest.raises(ValueError) as info:
        tune.Tuner(
            marking(str(starts)),
            param_space={"x": tune.grid_search(grid(n))},
            tune_config=tune.TuneConfig(
                metric="loss",
                mode="min",
                max_concurrent_trials=2,
                scheduler=IterativeDeepeningHyperBandScheduler(max_t=9),
            ),
            run_config=tune.RunConfig(storage_path=str(tmp_path), name="cap", verbose=0),
        ).fit()
    message = str(info.value)
    for part in (
        "cannot run with max_concurrent_trials=2",  # what
        "Ray creates a new trial only when one of 2 live trials has ended",  # why
        "PAUSED at their rung",
        "its first rung alone needs 9 trials at once and this run uses 17",
        "tune.with_resources(trainable, {'cpu': k})",  # the alternative
        "max_concurrent_trials >= 17",
    ):
        assert part in message, message
    assert not os.listdir(starts)  # refused before any trial ran

    # a Searcher, which Ray wraps in a ConcurrencyLimiter, is refused alike
    with pytest.raises(ValueError, match="cannot run with max_concurrent_trials=3"):
        tune.run(
            marking(str(starts)),
            config={"x": tune.uniform(0.0, 1.0)},
            search_alg=EnhancedAdaCentSearch(seed=0),
            max_concurrent_trials=3,
            num_samples=n,
            scheduler=IterativeDeepeningHyperBandScheduler(max_t=9),
            metric="loss",
            mode="min",
            storage_path=str(tmp_path),
            name="cap-searcher",
            verbose=0,
        )
    assert not os.listdir(starts)

    # a cap that covers every trial ID-HB uses runs: HB(3, 3) uses 3 + 2 configurations
    n3 = IterativeDeepeningHyperBandScheduler.num_samples_needed(3, 3)
    results = tune.Tuner(
        make_trainable(),
        param_space={"x": tune.grid_search(grid(n3))},
        tune_config=tune.TuneConfig(
            metric="loss",
            mode="min",
            max_concurrent_trials=n3,
            scheduler=IterativeDeepeningHyperBandScheduler(max_t=3),
            reuse_actors=True,
        ),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="cap-ok", verbose=0),
    ).fit()
    assert not results.errors and len(results) == n3 == 5


def reporting(key: str, bad: Any) -> Callable[[dict], None]:
    """Reports ``loss`` and ``step`` per iteration, ``result[key] = bad`` from the first."""

    def trainable(config: dict) -> None:
        for it in range(1, 4):
            result: dict[str, Any] = {"loss": float(config["x"]) / it, "step": it}
            result[key] = bad
            tune.report(result)

    return trainable


@pytest.mark.parametrize(
    ("plugin", "key", "bad", "error"),
    [
        ("idhb", "loss", "bad", "must be a real number \\(int or float\\), got 'bad' \\(str\\)"),
        ("idhb", "step", "one", "must be a finite real number >= 0 \\(its progress\\), got 'one'"),
        ("pred", "loss", "bad", "must be a real number \\(int or float\\), got 'bad' \\(str\\)"),
        ("pred", "step", 1.5, "must be an int >= 0 \\(a step counter\\), got 1.5"),
        ("adacent", "loss", "bad", "must be a real number \\(int or float\\), got 'bad' \\(str\\)"),
        ("adacent", "step", "1", "must be an int >= 0 \\(a step counter\\), got '1' \\(str\\)"),
    ],
)
def test_a_bad_metric_or_step_is_refused_at_the_first_result(
    ray_cluster: str, tmp_path, plugin: str, key: str, bad: Any, error: str
) -> None:
    """The first result whose metric is not a number (or whose step / progress is not one the
    plugin can count) stops the run with an error naming the key, the trial and the accepted
    type: no result gets past the plugin."""
    rows = str(tmp_path / "rows.jsonl")
    kwargs: dict[str, Any] = {}
    if plugin == "idhb":
        kwargs["scheduler"] = IterativeDeepeningHyperBandScheduler(time_attr="step", max_t=3)
    elif plugin == "pred":
        kwargs["scheduler"] = PredStoppingScheduler(time_attr="step", max_t=3)
    else:
        kwargs["search_alg"] = EnhancedAdaCentSearch(time_attr="step", max_t=3, seed=0)
    space = {"x": tune.uniform(0.1, 1.0)} if plugin == "adacent" else {"x": tune.grid_search([0.5])}
    with pytest.raises(Exception) as info:
        tune.Tuner(
            reporting(key, bad),
            param_space=space,
            tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=1, **kwargs),
            run_config=tune.RunConfig(
                storage_path=str(tmp_path), name="bad", verbose=0, callbacks=[RowLog(rows)]
            ),
        ).fit()
    message = str(info.value)
    assert re.search(rf"result\['{key}'\] of trial \w+ {error}", message), message
    assert rows_in(rows) == 0  # refused at the first result


def test_n_probes_that_would_stop_every_trial_is_refused(ray_cluster: str, tmp_path) -> None:
    starts = tmp_path / "starts"
    starts.mkdir()
    with pytest.raises(ValueError) as info:
        tune.Tuner(
            marking(str(starts)),
            param_space={"x": tune.grid_search([0.1, 0.2, 0.3, 0.4])},
            tune_config=tune.TuneConfig(
                metric="loss",
                mode="min",
                scheduler=PredStoppingScheduler(max_t=3, delta=0.4, n_probes=4),
            ),
            run_config=tune.RunConfig(storage_path=str(tmp_path), name="probes", verbose=0),
        ).fit()
    assert str(info.value).startswith(
        "n_probes=4 must be < the number of trials (4): every trial would be a probe and stop "
        "at the exploration depth (step 1), none would train to 3; use n_probes <= 3"
    ), info.value
    assert not os.listdir(starts)


def test_sample_from_is_evaluated_by_ray_in_param_space_and_refused_in_space(
    ray_cluster: str, tmp_path
) -> None:
    """What the EnhancedAdaCentSearch docstring says: in a Tuner's param_space, Ray evaluates
    tune.sample_from for each trial from the values the searcher chose (the docstring said it
    was refused); given to the searcher as its space it is refused naming the parameter."""

    def trainable(config: dict) -> None:
        tune.report({"loss": (config["x"] - 0.3) ** 2, "y": config["y"]})

    results = tune.Tuner(
        trainable,
        param_space={"x": tune.uniform(0.0, 1.0), "y": tune.sample_from(lambda s: 2 * s.config.x)},
        tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=3, search_alg=EnhancedAdaCentSearch(seed=0)
        ),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="sample_from", verbose=0),
    ).fit()
    assert not results.errors and len(results) == 3
    assert len({r.config["x"] for r in results}) == 3
    for r in results:
        assert r.config["y"] == r.metrics["y"] == 2 * r.config["x"]
    with pytest.raises(ValueError, match="parameter 'y': unsupported Ray search domain Function"):
        EnhancedAdaCentSearch({"x": tune.uniform(0.0, 1.0), "y": tune.sample_from(lambda s: 1)})
    with pytest.raises(ValueError, match="counts integer steps: time_attr='time_total_s'"):
        EnhancedAdaCentSearch(time_attr="time_total_s")

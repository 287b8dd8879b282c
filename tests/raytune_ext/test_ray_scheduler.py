"""IterativeDeepeningHyperBandScheduler on a real local Ray cluster: decisions equal the core's,
deepening within one run, checkpoint continuation, errors, time_attr, bad input."""

from __future__ import annotations

import logging
import os
from collections import Counter

import pytest
from idhb_ray_helpers import (
    Recorder,
    evaluations,
    grid,
    loss_of,
    make_trainable,
    ray_x_order,
    replay,
)
from ray import tune

from raytune_ext import IterativeDeepeningHyperBandScheduler

pytestmark = pytest.mark.ray


def _segments_continue(rows: list[tuple[str, float, int, int]]) -> None:
    """Every training segment of a trial starts right after the last iteration it reported:
    a paused/promoted trial resumes from its checkpoint, never from iteration 0."""
    top: dict[str, int] = {}
    for tid, _x, it, first in rows:
        if tid in top and it == first:  # first result of a resumed segment
            assert first == top[tid] + 1, (tid, first, top[tid])
        assert it == top.get(tid, 0) + 1 or it == first, (tid, it, top.get(tid))
        top[tid] = max(top.get(tid, 0), it)


def test_deepening_within_one_run_matches_core(ray_cluster: str, tmp_path) -> None:
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed([3, 9], 3)
    assert n == 17  # one Hyperband at R=9, eta=3: 9 + 5 + 3 configurations
    sched = IterativeDeepeningHyperBandScheduler(
        metric="loss", mode="min", max_t=[3, 9], reduction_factor=3, variant="efficient"
    )
    rec = Recorder()
    analysis = tune.run(
        make_trainable(),
        config={"x": tune.grid_search(grid(n))},
        scheduler=sched,
        storage_path=str(tmp_path),
        name="deepen",
        verbose=0,
        reuse_actors=True,
        callbacks=[rec],
    )
    hb = sched.core
    assert sched.finished and hb.finished and hb.max_budget == 9 and hb.n_deepenings == 1
    xs, x_of = ray_x_order(hb, analysis.trials)
    offline = replay(xs, [3, 9], 3, "efficient")
    assert evaluations(hb, x_of) == evaluations(offline, lambda c: c["x"])
    assert hb.ledger == offline.ledger
    assert x_of(hb.incumbent.config) == offline.incumbent.config["x"]
    assert sched.best_trial_id == hb.incumbent.config["trial_id"]
    # Ray trained exactly the core's continuation cost: nothing retrained from scratch.
    assert sched.consumed == hb.ledger.continuation
    assert sum(1 for _ in rec.rows) == hb.ledger.continuation
    _segments_continue(rec.rows)
    assert any(first > 1 for *_, first in rec.rows)  # promotions resumed from checkpoints
    assert all(t.status == "TERMINATED" for t in analysis.trials)
    # Ray's per-trial history holds every result, also of trials paused and resumed (Ray's
    # loggers replaced it by an older stored copy on every restart; 14 of 49 trials lost rows)
    reported = Counter(tid for tid, *_ in rec.rows)
    frames = analysis.trial_dataframes
    assert {t.trial_id: len(frames[t.trial_id]) for t in analysis.trials} == {
        t.trial_id: reported[t.trial_id] for t in analysis.trials
    }
    text = sched.debug_string()
    assert "bracket 2" in text and "full-charge=" in text and "r=9" in text


def test_erroring_trials_leave_their_brackets_custom_time_attr(ray_cluster: str, tmp_path) -> None:
    """time_attr="step" (10 per iteration) with min_t=10, max_t=90: rungs at steps 10/30/90.
    Trials of the best configurations raise at iteration 2: they leave their brackets (core.fail)
    and the run still completes with the decisions of the core given the same failures."""
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(90, 3, min_t=10)
    xs_grid = grid(n)
    # Ray adds trials in grid order and the core fills brackets in that order: trials 0-8 start
    # bracket 0 (rung at step 10), 9-13 bracket 1 (step 30), 14-16 bracket 2 (step 90). Fail the
    # best of bracket 0 at step 10 (promoted, fails on its way to 30) and one trial each of
    # brackets 1 and 2 (fail during their first job).
    fail_x = [min(xs_grid[:9], key=lambda x: loss_of(x, 1)), xs_grid[10], xs_grid[15]]
    sched = IterativeDeepeningHyperBandScheduler(
        time_attr="step",
        metric="loss",
        mode="min",
        max_t=90,
        min_t=10,
        reduction_factor=3,
        variant="discarding",
    )
    rec = Recorder()
    analysis = tune.run(
        make_trainable(fail_x=fail_x, fail_from=2, step=10),
        config={"x": tune.grid_search(xs_grid)},
        scheduler=sched,
        storage_path=str(tmp_path),
        name="errors",
        verbose=0,
        reuse_actors=True,
        raise_on_failed_trial=False,
        callbacks=[rec],
    )
    hb = sched.core
    assert sched.finished and hb.finished
    assert [r.budget for r in hb.schedule.brackets[0].rungs] == [10, 30, 90]
    errored = {t.trial_id for t in analysis.trials if t.status == "ERROR"}
    assert errored and {
        float(t.config["x"]) for t in analysis.trials if t.trial_id in errored
    } <= set(fail_x)
    assert hb.ledger.n_failures == len(errored) == 3
    xs, x_of = ray_x_order(hb, analysis.trials)
    offline = replay(
        xs,
        [90],
        3,
        "discarding",
        min_budget=10,
        budget_to_it=lambda b: b / 10,
        fail_x=fail_x,
        fail_from=2,
    )
    assert evaluations(hb, x_of) == evaluations(offline, lambda c: c["x"])
    assert hb.ledger == offline.ledger
    assert x_of(hb.incumbent.config) not in fail_x
    assert x_of(hb.incumbent.config) == offline.incumbent.config["x"]
    _segments_continue([r for r in rec.rows if r[0] not in errored])


def test_missing_metric_and_mode_are_clear_errors(ray_cluster: str, tmp_path, monkeypatch) -> None:
    # Ray's own strict check would fire first; disable it to reach the scheduler's check.
    monkeypatch.setenv("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    sched = IterativeDeepeningHyperBandScheduler(metric="accuracy", mode="max", max_t=3)
    with pytest.raises(Exception, match="metric 'accuracy' is missing from the result"):
        tune.run(
            make_trainable(),
            config={"x": tune.grid_search(grid(5))},
            scheduler=sched,
            storage_path=str(tmp_path),
            name="nometric",
            verbose=0,
        )
    with pytest.raises(Exception, match="needs `metric` and `mode`"):
        tune.run(
            make_trainable(),
            config={"x": tune.grid_search(grid(2))},
            scheduler=IterativeDeepeningHyperBandScheduler(max_t=3),
            storage_path=str(tmp_path),
            name="nomode",
            verbose=0,
        )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"max_t": 2, "reduction_factor": 3}, ValueError, "max_t must be >= reduction_factor=3"),
        ({"reduction_factor": 1}, ValueError, "reduction_factor must be an int >= 2"),
        ({"reduction_factor": 2.5}, ValueError, "reduction_factor must be an int >= 2"),
        ({"reduction_factor": float("nan")}, ValueError, "reduction_factor must be an int >= 2"),
        ({"max_t": float("nan")}, ValueError, "max_t must be an int >= 1, got nan"),
        ({"seed": -1}, ValueError, "seed must be an int >= 0, got -1"),
        ({"seed": 1.5}, TypeError, "seed must be an int >= 0"),
        ({"fsync": "yes"}, TypeError, "fsync must be a bool"),
        ({"reduction_factor": "3"}, TypeError, "reduction_factor must be an int >= 2"),
        ({"variant": "fast"}, ValueError, "variant must be one of"),
        ({"max_t": [9, 18], "reduction_factor": 3}, ValueError, "powers of reduction_factor=3"),
        ({"max_t": [9, 9], "reduction_factor": 3}, ValueError, "powers of reduction_factor=3"),
        ({"max_t": []}, ValueError, "max_t must not be empty"),
        ({"max_t": 9.5}, ValueError, "max_t must be an int >= 1, got 9.5"),
        ({"mode": "up"}, ValueError, "mode must be one of 'min', 'max'; got 'up'"),
        ({"min_t": 0}, ValueError, "min_t must be an int >= 1"),
        (
            {"max_t": 20, "min_t": 10},
            ValueError,
            "max_t must be >= reduction_factor \\* min_t = 30",
        ),
        ({"time_attr": ""}, TypeError, "time_attr must be a non-empty str"),
    ],
)
def test_bad_input_is_refused_at_construction(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        IterativeDeepeningHyperBandScheduler(**kwargs)


def test_num_samples_needed_is_one_hyperband_at_the_final_budget() -> None:
    sched = IterativeDeepeningHyperBandScheduler(max_t=[9, 81], reduction_factor=3)
    assert sched.max_t_ladder == [9, 27, 81]  # the core's deepening_ladder
    # one Hyperband at R=16, eta=2: n_s = ceil(5 * 2**s / (s + 1)) for s = 4..0
    assert (
        IterativeDeepeningHyperBandScheduler.num_samples_needed([4, 16], 2) == 16 + 10 + 7 + 5 + 5
    )
    assert IterativeDeepeningHyperBandScheduler.num_samples_needed(90, 3, min_t=10) == 9 + 5 + 3


class _Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


def _capture(*names: str) -> tuple[_Captured, list[logging.Logger]]:
    handler = _Captured()
    loggers = [logging.getLogger(n) for n in names]
    for lg in loggers:
        lg.addHandler(handler)
    return handler, loggers


def test_tuner_fit_with_trials_that_never_start(ray_cluster: str, tmp_path) -> None:
    """Issue 19, item 3: num_samples for a later deepening to 9 (17 trials) but max_t=3 (5 are
    used): Tuner.fit() crashed with 'Should not access `trial_fs_path` without setting
    `trial_dir_name`' and tune.run warned 'Failed to fetch metrics' for every unused trial."""
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(9, 3)
    handler, loggers = _capture("ray.tune.analysis.experiment_analysis", "ray.tune")
    try:
        results = tune.Tuner(
            make_trainable(),
            param_space={"x": tune.grid_search(grid(n))},
            tune_config=tune.TuneConfig(
                scheduler=IterativeDeepeningHyperBandScheduler(max_t=3, reduction_factor=3),
                metric="loss",
                mode="min",
                reuse_actors=True,
            ),
            run_config=tune.RunConfig(storage_path=str(tmp_path), name="tuner", verbose=0),
        ).fit()
    finally:
        for lg in loggers:
            lg.removeHandler(handler)
    assert len(results) == n and not results.errors
    trained = [results[i] for i in range(n) if "loss" in results[i].metrics]
    assert len(trained) == 5  # HB(3, 3): 3 + 2 configurations
    best = results.get_best_result()
    offline = replay([float(r.config["x"]) for r in trained], [3], 3, "efficient")
    assert best.config["x"] == offline.incumbent.config["x"]
    for i in range(n):  # every trial, started or not, is a complete Ray result
        assert results[i].path and os.path.isdir(results[i].path)
    assert not any("Failed to fetch metrics" in m for m in handler.messages), handler.messages


def test_trainable_without_checkpoints_retrains_with_one_warning(ray_cluster: str, tmp_path) -> None:
    """Issue 19, item 6: a trainable that reports no checkpoint restarts paused trials from
    iteration 1. Documented behaviour: the decisions stay ID-HB's (a rung result is taken when
    the trial reaches the rung budget again), Ray trains more than the continuation ledger, and
    the scheduler logs one warning naming the trial and the fix."""
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(9, 3)
    sched = IterativeDeepeningHyperBandScheduler(
        metric="loss", mode="min", max_t=9, reduction_factor=3
    )
    rec = Recorder()
    handler, loggers = _capture("raytune_ext._scheduler")
    try:
        analysis = tune.run(
            make_trainable(checkpoints=False),
            config={"x": tune.grid_search(grid(n))},
            scheduler=sched,
            storage_path=str(tmp_path),
            name="nockpt",
            verbose=0,
            reuse_actors=True,
            callbacks=[rec],
        )
    finally:
        for lg in loggers:
            lg.removeHandler(handler)
    hb = sched.core
    assert hb is not None and sched.finished
    xs, x_of = ray_x_order(hb, analysis.trials)
    offline = replay(xs, [9], 3, "efficient")
    assert evaluations(hb, x_of) == evaluations(offline, lambda c: c["x"])
    # retrained from iteration 1: more than the continuation ledger, at most the full charge
    # (a trial promoted while it runs continues without a pause)
    assert hb.ledger.continuation < len(rec.rows) <= hb.ledger.full_charge
    warnings = [m for m in handler.messages if "retrains it" in m]
    assert len(warnings) == 1, handler.messages
    assert "tune.report(metrics, checkpoint=...)" in warnings[0]
    assert "tune.get_checkpoint()" in warnings[0]

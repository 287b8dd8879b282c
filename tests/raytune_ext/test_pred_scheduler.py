"""PredStoppingScheduler with real Ray (local 2-CPU cluster): its stops are the core
PredStoppingRule replayed on the results Ray delivered, with concurrent trials, metric/mode from
TuneConfig, NaN metrics, bad input, save/restore and Tuner.restore after an interrupted run."""

from __future__ import annotations

import doctest
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable

import pytest
import ray
import ray.cloudpickle
from ray import tune
from ray.tune import Callback, Checkpoint

import raytune_ext._pred_scheduler as pred_scheduler_module
import raytune_ext._search_properties as search_properties_module
from raytune_ext import PRED_STATE_FILE_NAME, PredStoppingScheduler
from raytune_ext._journal import Journal
from uvp_plugins.adacent.pred import PredStoppingRule

pytestmark = pytest.mark.ray

if __name__ in sys.modules:  # Ray workers cannot import this module: ship it by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

T = 12
NAN_X = -1.0  # this configuration reports NaN at every step


def loss_of(x: float, it: int) -> float:
    """Decreasing learning curves whose final values are ordered by ``|x - 0.3|``."""
    if x == NAN_X:
        return math.nan
    return (x - 0.3) ** 2 + 0.6 * 0.75**it


def make_trainable(
    fail_dir: str | None = None, fail_at: int = 3, meet_dir: str | None = None
) -> Callable[[dict], None]:
    """Reports ``loss`` with a checkpoint per iteration. With ``fail_dir``, configurations with
    ``x != 0.3`` raise once at iteration ``fail_at`` (a marker file remembers the failure).
    With ``meet_dir``, a trial reports its first result only once two trials have started (up
    to 60 s): the first trial cannot finish before the second one's worker is up, so trials
    really run at once on a 2-CPU cluster (without it, a cold cluster ran them one by one). A
    trial that waited in vain leaves an ``alone-`` marker: none means two trials ran at once."""

    def trainable(config: dict) -> None:
        if meet_dir is not None:
            open(os.path.join(meet_dir, f"started-{config['x']}"), "w").close()
            deadline = time.monotonic() + 60
            while len(started_in(meet_dir)) < 2:
                if time.monotonic() > deadline:
                    open(os.path.join(meet_dir, f"alone-{config['x']}"), "w").close()
                    break
                time.sleep(0.05)
        start = 0
        ckpt = tune.get_checkpoint()
        if ckpt is not None:
            with ckpt.as_directory() as d, open(os.path.join(d, "it.json")) as fh:
                start = int(json.load(fh)["it"])
        x = float(config["x"])
        for it in range(start + 1, T + 1):
            if fail_dir is not None and x != 0.3 and it == fail_at:
                marker = os.path.join(fail_dir, f"failed-{x}")
                if not os.path.exists(marker):
                    open(marker, "w").close()
                    raise RuntimeError(f"x={x} fails once at iteration {it}")
            with tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "it.json"), "w") as fh:
                    json.dump({"it": it}, fh)
                tune.report({"loss": loss_of(x, it)}, checkpoint=Checkpoint.from_directory(d))

    return trainable


def started_in(meet_dir: str | os.PathLike) -> list[str]:
    """The ``started-`` markers that trials left in ``meet_dir``."""
    return [name for name in os.listdir(meet_dir) if name.startswith("started-")]


class FileRecorder(Callback):
    """Appends (trial_id, training_iteration, loss) of every result, in Ray's order, to a file
    (a file, because Tuner.restore unpickles its own copy of the callbacks)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def on_trial_result(self, iteration: int, trials: list, trial, result: dict, **info) -> None:
        with open(self.path, "a") as fh:
            row = [trial.trial_id, result["training_iteration"], result["loss"]]
            fh.write(json.dumps(row) + "\n")


def read_rows(path: str) -> list[tuple[str, int, float]]:
    with open(path) as fh:
        return [(t, int(s), float(v)) for t, s, v in map(json.loads, fh)]


def replay(
    rows: Iterable[tuple[str, int, float]], delta: float, mode: str, n_probes: int
) -> dict[str, int]:
    """The stops of the core rule fed the same results in the same order."""
    rule = PredStoppingRule(T, delta, mode=mode, n_probes=n_probes)
    stopped: dict[str, int] = {}
    for tid, step, value in rows:
        rule.observe(tid, step, value)
        if step < T and rule.decide(tid):
            stopped[tid] = step
    return stopped


def final_iterations(results) -> dict[str, int]:
    return {r.metrics["trial_id"]: int(r.metrics["training_iteration"]) for r in results}


def test_concurrent_trials_stop_as_the_core_rule_and_state_round_trips(
    ray_cluster: str, tmp_path
) -> None:
    xs = [0.3, 0.9, NAN_X, 0.25, 0.6, 0.0, 0.32, 0.45]
    rows_file = str(tmp_path / "rows.jsonl")
    meet_dir = tmp_path / "meet"
    meet_dir.mkdir()
    # metric and mode from TuneConfig; three probes (of eight trials) stopped at the depth,
    # step 3, then Pred and the cut
    sched = PredStoppingScheduler(max_t=T, delta=0.25, n_probes=3)
    tuner = tune.Tuner(
        make_trainable(meet_dir=str(meet_dir)),
        param_space={"x": tune.grid_search(xs)},
        tune_config=tune.TuneConfig(metric="loss", mode="min", scheduler=sched),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path), name="exp", verbose=0, callbacks=[FileRecorder(rows_file)]
        ),
    )
    results = tuner.fit()
    assert not results.errors
    rows = read_rows(rows_file)
    expected = replay(rows, 0.25, "min", 3)
    assert sched.stopped_trials == expected
    assert sched.rule.mode == "min"
    # Ray's own records agree: a stopped trial ends at its stop step, the others at max_t.
    finals = final_iterations(results)
    assert finals == {tid: expected.get(tid, T) for tid in finals}
    assert 3 <= len(expected) < len(xs)  # the test exercises both outcomes
    nan_trial = next(r.metrics["trial_id"] for r in results if r.config["x"] == NAN_X)
    assert expected[nan_trial] == 3  # no finite value at the exploration depth: diverged
    # Trials really ran at once (2 CPUs): the first trial was still before its first result
    # when the second one started (no trial waited in vain at the meeting point). Whether their
    # results interleave in Ray's order is up to timing (probes stop after 3 quick steps).
    assert len(started_in(meet_dir)) == len(xs)
    assert not [name for name in os.listdir(meet_dir) if name.startswith("alone-")]
    assert os.path.isfile(os.path.join(results.experiment_path, PRED_STATE_FILE_NAME))

    # save / restore: the same JSON state and the same decisions
    path = str(tmp_path / "pred.json")
    sched.save(path)
    clone = PredStoppingScheduler(metric="loss", mode="min", max_t=T, delta=0.25, n_probes=3)
    clone.restore(path)
    assert clone.state_dict() == sched.state_dict()
    assert clone.stopped_trials == expected
    for tid in finals:
        assert clone.rule.decide(tid) == sched.rule.decide(tid)
    with pytest.raises(ValueError, match="delta=0.25 vs 0.2"):
        PredStoppingScheduler(metric="loss", mode="min", max_t=T, delta=0.2, n_probes=3).restore(path)
    with pytest.raises(ValueError, match="max_resource=12 vs 13"):
        PredStoppingScheduler(metric="loss", mode="min", max_t=13, delta=0.25, n_probes=3).restore(path)
    # the predictor must match the saved one (the default changed on 2026-11-26: a state saved
    # with the tail fit resumes only with predictor="tail")
    assert sched.rule.predictor == "last_slope"
    with pytest.raises(ValueError, match="predictor='last_slope' vs 'tail'"):
        PredStoppingScheduler(metric="loss", mode="min", max_t=T, predictor="tail").restore(path)
    # so must the cut (the median cut is the default since 2026-11-26; a state saved with Pred
    # alone - also one saved before the cut existed - resumes only with keep_fraction=None)
    assert sched.rule.keep_fraction == 0.5
    with pytest.raises(ValueError, match="keep_fraction=0.5 vs None"):
        PredStoppingScheduler(metric="loss", mode="min", max_t=T, keep_fraction=None).restore(path)
    with open(path, encoding="utf-8") as f:
        old_state = json.load(f)
    del old_state["rule"]["params"]["keep_fraction"]
    del old_state["rule"]["params"]["n_probes"]
    old_path = str(tmp_path / "pred-before-the-cut.json")
    with open(old_path, "w") as f:
        json.dump(old_state, f)
    with pytest.raises(ValueError, match="keep_fraction=None vs 0.5, n_probes=0 vs 3"):
        PredStoppingScheduler(metric="loss", mode="min", max_t=T, delta=0.25, n_probes=3).restore(old_path)
    alone = PredStoppingScheduler(
        metric="loss", mode="min", max_t=T, delta=0.25, keep_fraction=None
    )
    alone.restore(old_path)  # a state from before the probe phase: n_probes=0, the default
    assert alone.rule.keep_fraction is None and alone.rule.n_probes == 0
    # and the probe phase: a state saved with probes resumes only with the same n_probes
    assert sched.rule.n_probes == 3
    with pytest.raises(ValueError, match="n_probes=3 vs 0"):
        PredStoppingScheduler(metric="loss", mode="min", max_t=T, delta=0.25).restore(path)


def test_tuner_restore_continues_with_the_same_rule_state(ray_cluster: str, tmp_path) -> None:
    xs = [0.3, 0.9, 0.0, 0.6, 0.5]
    delta = 0.25  # never stops before step 3: the weak trials reach their failure
    rows_file = str(tmp_path / "rows.jsonl")
    fail_dir = tmp_path / "fail"
    fail_dir.mkdir()
    trainable = make_trainable(str(fail_dir))
    tuner = tune.Tuner(
        trainable,
        param_space={"x": tune.grid_search(xs)},
        tune_config=tune.TuneConfig(
            # two probes, then Pred and the cut decide: stops after the restore are Pred's
            scheduler=PredStoppingScheduler(
                metric="loss", mode="min", max_t=T, delta=delta, n_probes=2
            )
        ),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path), name="exp", verbose=0, callbacks=[FileRecorder(rows_file)]
        ),
    )
    first = tuner.fit()
    assert len(first.errors) == 4  # the interrupted trials: errored after two results
    first_rows = read_rows(rows_file)
    n_first = len(first_rows)

    restored = tune.Tuner.restore(first.experiment_path, trainable=trainable, resume_errored=True)
    results = restored.fit()
    assert not results.errors
    rows = read_rows(rows_file)
    second_rows = rows[n_first:]
    assert second_rows and min(step for _, step, _ in second_rows) == 3  # from the checkpoints
    expected = replay(rows, delta, "min", 2)
    finals = final_iterations(results)
    assert finals == {tid: expected.get(tid, T) for tid in finals}
    assert any(step >= 3 for step in expected.values())  # stops taken after the restore
    # A scheduler that forgot the first run would decide otherwise on the same results.
    assert replay(second_rows, delta, "min", 2) != expected
    # The journal holds every result of both runs.
    state_file = os.path.join(first.experiment_path, PRED_STATE_FILE_NAME)
    snapshot, records = Journal(state_file).load()
    observed = [r[1:4] for r in records if r[0] == "o"]  # trial, step, value
    for trial, _last, points in snapshot["rule"]["trials"]:
        observed += [[trial, s, v] for s, v in points]
    assert sorted(map(tuple, observed)) == sorted(
        (t, s, v) for t, s, v in rows
    )  # nothing lost, nothing twice


def test_trial_stopped_before_a_killed_driver_stays_stopped(ray_cluster: str, tmp_path) -> None:
    """Issue 32, items 2 and 3: the driver (a process on a Ray cluster of its own) is killed with
    SIGKILL by its pid right after the scheduler stopped a trial, before Ray's experiment
    snapshot (every 10 s) knew; the experiment is resumed with Tuner.restore in another Ray
    session. The stopped trial stayed in Ray's snapshot as unfinished and was run again from
    its older checkpoint (or from scratch), its result going backwards; the rows the killed
    driver had received were missing from the history. Now: every trial stopped before the
    kill stays stopped with the result it was stopped with, every trial ends at max_t or at the
    step the scheduler's journal says it stopped it, every row a driver received is in the
    history exactly once and each trial's last history row is its Result.metrics."""
    from uvp_plugins.bench.stress_ray import pred_kill_resume

    out = pred_kill_resume(ray_cluster, str(tmp_path), kill_after=12, cluster="new")
    assert out["stopped_before_kill"] >= 1, out
    assert out["stopped_rerun"] == 0 and out["wrong_final"] == 0, out
    assert out["rows_before_kill"] >= 12 and out["unrestored_rows"] == 0, out
    assert out["lost_rows"] == 0 and out["extra_rows"] == 0, out
    assert out["dataframe_disagrees"] == 0 and out["epochs_redone_seen"] == 0, out


def test_missing_metric_or_mode_is_a_clear_error(ray_cluster: str, tmp_path) -> None:
    with pytest.raises(Exception, match="needs `metric` and `mode`"):
        tune.run(
            make_trainable(),
            config={"x": tune.grid_search([0.1])},
            scheduler=PredStoppingScheduler(metric="loss", max_t=T),
            storage_path=str(tmp_path),
            name="nomode",
            verbose=0,
        )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, TypeError, "max_t .* is required"),
        ({"max_t": 1}, ValueError, "max_t must be"),
        ({"max_t": 2.5}, ValueError, "max_t must be an int >= 2"),
        ({"max_t": 10, "delta": 0.0}, ValueError, "delta"),
        ({"max_t": 10, "delta": 1.0}, ValueError, "delta"),
        ({"max_t": 10, "predictor": "median"}, ValueError, "predictor"),
        ({"max_t": 10, "fraction": 0.0}, ValueError, "fraction"),
        ({"max_t": 10, "keep_fraction": 0.0}, ValueError, "keep_fraction"),
        ({"max_t": 10, "keep_fraction": 2}, ValueError, "keep_fraction"),
        ({"max_t": 10, "n_probes": -1}, ValueError, "n_probes must be an int >= 0"),
        ({"max_t": 10, "n_probes": 2.5}, ValueError, "n_probes"),
        ({"max_t": 10, "mode": "avg"}, ValueError, "mode"),
        ({"max_t": 10, "time_attr": ""}, TypeError, "time_attr"),
        ({"max_t": 10, "metric": 3}, TypeError, "metric"),
        ({"max_t": 10, "fsync": 1}, TypeError, "fsync"),
        (
            {"max_t": 10, "time_attr": "time_total_s"},
            ValueError,
            "counts integer steps: time_attr='time_total_s' is a time in seconds",
        ),
    ],
)
def test_bad_arguments_name_the_argument(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        PredStoppingScheduler(**kwargs)


def test_set_search_properties_follows_ray() -> None:
    sched = PredStoppingScheduler(max_t=10)
    assert sched.set_search_properties("acc", "max") and sched.metric == "acc"
    assert sched.rule.mode == "max"
    assert not PredStoppingScheduler(metric="a", max_t=10).set_search_properties("b", None)
    only_mode = PredStoppingScheduler(max_t=10)
    assert only_mode.set_search_properties(None, "min") and only_mode.metric == "_metric"
    with pytest.raises(ValueError, match="mode"):
        PredStoppingScheduler(max_t=10).set_search_properties("a", "avg")


def test_docstring_examples_run(ray_cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The example switches Ray Tune's logger callbacks off in os.environ: restored afterwards
    # (later tests read Ray's result logs).
    for name in ("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "RAY_AIR_NEW_OUTPUT"):
        # setenv records the value to restore (also "unset"); the example starts without it
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    result = doctest.testmod(pred_scheduler_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0
    result = doctest.testmod(search_properties_module)
    assert result.attempted == 4 and result.failed == 0
    assert os.environ["TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"] == "1"  # (restored at teardown)

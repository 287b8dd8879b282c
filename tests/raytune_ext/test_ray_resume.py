"""Continuing a Ray experiment with a larger max_t through ``resume_with_larger_budget``: after a
finished run and after a driver killed mid-run; earlier evaluations are reused and trials
continue from their checkpoints."""

from __future__ import annotations

import os

import pytest
from idhb_ray_helpers import Recorder, evaluations, grid, make_trainable, ray_x_order, replay
from ray import tune

from raytune_ext import (
    STATE_FILE_NAME,
    IterativeDeepeningHyperBandScheduler,
    resume_with_larger_budget,
    scheduler_for_resume,
)
from raytune_ext._journal import Journal
from raytune_ext._run_state import RunState
from uvp_plugins.bench.stress_ray import ray_kill_resume
from uvp_plugins.hyperband import IterativeDeepeningHyperband

pytestmark = pytest.mark.ray


def test_resume_finished_run_with_larger_budget(ray_cluster: str, tmp_path) -> None:
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(9, 3)
    first = IterativeDeepeningHyperBandScheduler(
        metric="loss", mode="min", max_t=3, reduction_factor=3, variant="preserving"
    )
    rec = Recorder()
    analysis = tune.run(
        make_trainable(),
        config={"x": tune.grid_search(grid(n))},
        scheduler=first,
        storage_path=str(tmp_path),
        name="exp",
        verbose=0,
        reuse_actors=True,
        callbacks=[rec],
    )
    path = analysis.experiment_path
    assert os.path.isfile(os.path.join(path, STATE_FILE_NAME))
    assert first.finished and first.core.max_budget == 3
    assert saved_state(path)["dead"] == []  # trials stopped at the end stay reusable
    rows_first = list(rec.rows)
    cost_first = first.core.ledger.continuation
    used_first = {tid for tid, *_ in rows_first}
    assert len(used_first) == 5 < n  # HB(3, 3) uses 3 + 2 configurations; the rest never ran

    # Bad requests are refused before Ray is touched (Ray would otherwise restart the run).
    with pytest.raises(ValueError, match="powers of reduction_factor=3"):
        scheduler_for_resume(path, max_t=6)
    with pytest.raises(ValueError, match="below the saved experiment's current R=3"):
        scheduler_for_resume(path, max_t=1)
    with pytest.raises(FileNotFoundError, match="no IterativeDeepeningHyperBandScheduler state"):
        scheduler_for_resume(tmp_path, max_t=9)

    analysis2 = resume_with_larger_budget(
        path, make_trainable(), max_t=9, reuse_actors=True, callbacks=[rec]
    )
    state = saved_state(path)
    hb = IterativeDeepeningHyperband.from_state_dict(state["core"])
    assert state["done"] and hb.max_budget == 9 and hb.finished and hb.n_deepenings == 1
    xs, x_of = ray_x_order(hb, analysis2.trials)
    assert hb.ledger.n_failures == 0, [(t.trial_id, t.status) for t in analysis2.trials]
    offline = replay(xs, [3, 9], 3, "preserving")
    # Same evaluations and decisions as ID-HB offline: R=3 results are reused, not re-run.
    ours, theirs = evaluations(hb, x_of), evaluations(offline, lambda c: c["x"])
    assert ours == theirs, (sorted(ours - theirs), sorted(theirs - ours))
    assert hb.ledger == offline.ledger
    assert x_of(hb.incumbent.config) == offline.incumbent.config["x"]
    # Ray trained exactly the continuation cost: the second run added only the difference.
    assert state["consumed"] == hb.ledger.continuation
    assert len(rec.rows) == hb.ledger.continuation > cost_first
    # Trials of the first run that the deeper brackets use continue from their checkpoints.
    top = {}
    for tid, _x, it, _f in rows_first:
        top[tid] = max(top.get(tid, 0), it)
    resumed = [
        (tid, first_it) for tid, _x, it, first_it in rec.rows[len(rows_first) :] if it == first_it
    ]
    firsts = {}
    for tid, first_it in resumed:
        firsts.setdefault(tid, first_it)
    reused = [tid for tid in firsts if tid in top]
    assert reused, "no configuration of the first run was continued"
    for tid in reused:
        assert firsts[tid] == top[tid] + 1 > 1
    assert all(t.status == "TERMINATED" for t in analysis2.trials)


def saved_state(path: str) -> dict:
    """The scheduler's state kept in the experiment: its snapshot plus the journal after it."""
    return RunState.load(Journal(os.path.join(path, STATE_FILE_NAME)), {}).state_dict()


@pytest.mark.parametrize(
    ("api", "resume", "kill_after", "cluster"),
    [
        ("run", "helper", 40, "new"),
        ("tuner", "tuner", 40, "new"),
        ("run", "helper", 8, "shared"),
    ],
    ids=[
        "tune.run+resume_with_larger_budget, new cluster",
        "Tuner.fit+Tuner.restore, new cluster",
        "early kill+resume_with_larger_budget, same cluster",
    ],
)
def test_killed_driver_then_resume_equals_the_uninterrupted_run(
    ray_cluster: str, tmp_path, api: str, resume: str, kill_after: int, cluster: str
) -> None:
    """Issue 19, item 2 and issue 32, item 2: the Tune driver (a separate process running
    max_t=[3, 9]) is killed with SIGKILL by its pid mid-run, after 40 results (during the
    deepening to 9) or after 8 (before the deepening, with most trials not given a configuration
    yet); the experiment is then continued with the helper (to max_t=27) or with Tuner.restore
    (to 9). The trials are held before their next epoch for two seconds before the kill, so no
    epoch is executed after it (Ray kills the dead driver's actors asynchronously) and the
    epochs are exactly countable. With cluster="new" the killed driver ran on a Ray cluster of
    its own, shut down after the kill: the resume runs in another Ray session, which does not
    have the dead driver's staging copy of the trials' result logs (rows were lost there).

    Against the uninterrupted run (the core run offline on the grid in the order Ray adds its
    trials): the same decisions, the same best configuration, every trained configuration's last
    result (at its top budget) in the returned analysis, exactly as many epochs executed (no
    epoch trained twice) and no trial that had a checkpoint started again from epoch 1. Every
    result row a driver received is in the trials' history (result.json, what get_dataframe()
    reads), exactly once, and each trial's last history row is its Result.metrics."""
    out = ray_kill_resume(
        ray_cluster,
        str(tmp_path),
        first_ladder=(3, 9),
        final_max_t=27,
        api=api,
        resume=resume,
        kill_after=kill_after,
        quiesce=True,
        cluster=cluster,
    )
    assert out["killed_at"] >= kill_after
    assert out["decisions_differ"] == 0, out
    assert out["wrong_best"] == 0, out
    assert out["lost_trials"] == 0, out
    assert out["restarts_from_zero"] == 0, out
    assert out["epochs_redone"] == 0, out
    assert out["epochs_executed"] == out["epochs_reference"], out
    assert out["rows_before_kill"] >= kill_after and out["unrestored_rows"] == 0, out
    assert out["rows_reported"] == out["epochs_reference"], out
    assert out["lost_rows"] == 0 and out["extra_rows"] == 0, out
    assert out["dataframe_disagrees"] == 0, out


def test_new_experiment_in_an_old_directory_starts_afresh(ray_cluster: str, tmp_path) -> None:
    """Running the same script twice (same name and storage_path, no resume) is a new
    experiment: it must not continue the first one's ID-HB state (whose trials it does not
    have); the old state is kept aside."""
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(3, 3)
    runs = []
    for _ in range(2):
        sched = IterativeDeepeningHyperBandScheduler(
            metric="loss", mode="min", max_t=3, reduction_factor=3
        )
        analysis = tune.run(
            make_trainable(),
            config={"x": tune.grid_search(grid(n))},
            scheduler=sched,
            storage_path=str(tmp_path),
            name="again",
            verbose=0,
            reuse_actors=True,
        )
        runs.append((sched, analysis))
    for sched, analysis in runs:
        hb = sched.core
        assert sched.finished and hb.ledger.n_failures == 0
        xs, x_of = ray_x_order(hb, analysis.trials)
        assert evaluations(hb, x_of) == evaluations(replay(xs, [3], 3, "efficient"), lambda c: c["x"])
    path = runs[1][1].experiment_path
    assert any(name.startswith(STATE_FILE_NAME + ".replaced-") for name in os.listdir(path))
    assert saved_state(path)["done"]

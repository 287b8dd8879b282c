"""Continuing a Ray experiment with a larger max_t through ``resume_with_larger_budget``: after a
finished run and after a driver killed mid-run; earlier evaluations are reused and trials
continue from their checkpoints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from idhb_ray_helpers import Recorder, evaluations, grid, make_trainable, ray_x_order, replay
from ray import tune

from raytune_ext import (
    STATE_FILE_NAME,
    IterativeDeepeningHyperBandScheduler,
    resume_with_larger_budget,
    scheduler_for_resume,
)
from uvp_plugins.hyperband import IterativeDeepeningHyperband

pytestmark = pytest.mark.ray

HELPERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "idhb_ray_helpers.py")


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
    with open(os.path.join(path, STATE_FILE_NAME)) as fh:
        return json.load(fh)


def test_resume_after_killed_driver(ray_cluster: str, tmp_path) -> None:
    """A driver running max_t=[3, 9] is killed mid-run; the experiment is then continued at
    max_t=27 from the state file: the final decisions are those of ID-HB without the kill.

    Budgets count the trainable's own epoch counter ``it`` (a custom ``time_attr`` through the
    resume helper, which reads it from the state file)."""
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(27, 3)
    env = dict(os.environ, RAY_ADDRESS=ray_cluster, TUNE_GLOBAL_CHECKPOINT_S="0.5")
    block = tmp_path / "block"
    block.write_text("trials block before iteration 4 while this file exists")
    proc = subprocess.Popen(
        [sys.executable, HELPERS, str(tmp_path), "killed", str(n), str(block), "3", "9"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    path = os.path.join(str(tmp_path), "killed")
    state_file = os.path.join(path, STATE_FILE_NAME)
    try:
        # Wait until the run stalls inside the deepened level (R=9): the running trials block
        # before iteration 4 and the state file stops changing; then kill the driver.
        deadline = time.monotonic() + 150
        last, since = None, time.monotonic()
        while time.monotonic() < deadline and proc.poll() is None:
            if os.path.exists(state_file):
                stamp = os.stat(state_file).st_mtime_ns
                if stamp != last:
                    last, since = stamp, time.monotonic()
                elif time.monotonic() - since > 2.5 and saved_state(path)["level"] == 1:
                    break
            time.sleep(0.2)
        assert proc.poll() is None, "the driver ended before it could be killed"
        proc.kill()
    finally:
        proc.kill()
        proc.wait()
    # Ray kills the dead driver's actors asynchronously: keep them blocked until they are gone,
    # so no orphaned actor trains (and writes checkpoints) beside the resumed run.
    time.sleep(3.0)
    block.unlink()
    killed = saved_state(path)
    assert not killed["done"] and killed["core"]["pending"], "killed mid-level with pending jobs"
    progressed_before = {tid for tid, t in killed["progress"].items() if t >= 1}

    rec = Recorder()
    analysis = resume_with_larger_budget(
        path, make_trainable(), max_t=27, reuse_actors=True, callbacks=[rec]
    )
    state = saved_state(path)
    hb = IterativeDeepeningHyperband.from_state_dict(state["core"])
    assert state["done"] and hb.finished and hb.max_budget == 27 and hb.n_deepenings == 2
    assert hb.ledger.n_failures == 0, [(t.trial_id, t.status) for t in analysis.trials]
    xs, x_of = ray_x_order(hb, analysis.trials)
    offline = replay(xs, [3, 9, 27], 3, "efficient")
    ours, theirs = evaluations(hb, x_of), evaluations(offline, lambda c: c["x"])
    assert ours == theirs, (sorted(ours - theirs), sorted(theirs - ours), killed["core"]["pending"])
    assert hb.ledger == offline.ledger
    assert x_of(hb.incumbent.config) == offline.incumbent.config["x"]
    # Trials that trained before the kill and run again restore a checkpoint (first > 1).
    firsts: dict[str, int] = {}
    for tid, _x, _it, first_it in rec.rows:
        firsts.setdefault(tid, first_it)
    again = [tid for tid in firsts if tid in progressed_before]
    assert again, "no trial of the killed run was continued"
    assert all(firsts[tid] > 1 for tid in again), [
        (t, firsts[t], killed["progress"][t]) for t in again
    ]

"""``uvp-bench ray-overhead`` and ``uvp-bench idhb-ray`` on a real local Ray cluster (small runs)."""

from __future__ import annotations

import logging
import math
import os
import time

import pytest

from uvp_plugins.bench.cli import main
from uvp_plugins.bench.idhb_ray import StallStopper, format_idhb_ray, run_idhb_ray
from uvp_plugins.bench.methods.ray_methods import QUIET_TUNE_ENV, quiet_local_ray
from uvp_plugins.bench.ray_overhead import (
    format_ray_overhead,
    load_baseline_scheduler,
    ray_scheduler_overhead,
)

pytestmark = pytest.mark.ray


def test_ray_overhead_rows_for_both_schedulers(ray_cluster: str) -> None:
    rows = ray_scheduler_overhead(max_t=9, eta=3)
    assert [r["scheduler"] for r in rows] == [
        "HyperBandScheduler",
        "IterativeDeepeningHyperBandScheduler",
    ]
    for r in rows:
        assert r["trials"] == 17  # IterativeDeepeningHyperBandScheduler.num_samples_needed(9, 3)
        assert r["results"] > 0 and 0 < r["calls"] <= r["results"]
        assert 0 < r["median_ms"] <= r["p95_ms"] <= r["max_ms"] < 10_000
        assert r["mean_ms"] > 0 and math.isfinite(r["mean_ms"])
        assert r["hook_calls"] > r["calls"] and r["hook_total_s"] > 0 and r["wall_s"] > 0
        assert r["stalled"] in (0, 1)  # Ray's HyperBandScheduler may leave a trial paused
        # CPU time of the driver thread: positive, and never much above the wall time
        assert 0 < r["cpu_median_ms"] and 0 < r["cpu_mean_ms"] <= 1.5 * r["mean_ms"]
    text = format_ray_overhead(rows)
    assert "| HyperBandScheduler | 17 |" in text and "on_trial_result calls" in text
    ours, ray = rows[1], rows[0]
    assert (
        f"ID-HB / HyperBandScheduler per on_trial_result: mean {ours['mean_ms'] / ray['mean_ms']:.2f}x"
        in text
    )


def test_idhb_ray_trains_the_core_continuation(ray_cluster: str) -> None:
    """lc-synthetic, eta 2, R 4 -> 8: Ray trains exactly the continuation of the core replayed on
    the same configurations and curves, with the same decisions and incumbent."""
    rows = run_idhb_ray("lc-synthetic", ["0"], [0], eta=2, r0=4, progress=False)
    (r,) = rows
    assert r["ray_finished"] and r["trials"] == r["trials_trained"] == 22
    assert r["ray_iterations"] == r["core_continuation"] == r["scheduler_consumed"]
    assert r["equal"] and r["same_decisions"] and r["same_incumbent"] and r["seeded_order"]
    assert r["ray_retrained"] == 0 and r["ray_resumed_segments"] > 0
    assert r["core_full_charge"] == 128  # one Hyperband at R = 8, eta = 2 (eID)
    assert r["ray_incumbent"]["value"] == r["core_incumbent"]["value"]
    assert "| 0 | 0 | 22/22 |" in format_idhb_ray(rows)


def test_quiet_local_ray_restores_env_and_loggers(ray_cluster: str) -> None:
    before_env = {k: os.environ.get(k) for k in QUIET_TUNE_ENV}
    before = logging.getLogger("ray.tune").level
    with quiet_local_ray() as started:
        assert not started  # the session cluster is running
        assert all(os.environ[k] == v for k, v in QUIET_TUNE_ENV.items())
        assert logging.getLogger("ray.tune").level == logging.ERROR
    assert {k: os.environ.get(k) for k in QUIET_TUNE_ENV} == before_env
    assert logging.getLogger("ray.tune").level == before


def test_a_baseline_checkout_is_imported_apart_and_reported_beside(tmp_path) -> None:
    import raytune_ext

    tree = os.path.dirname(os.path.dirname(raytune_ext.__file__))
    cls = load_baseline_scheduler("same", tree)
    assert cls.__module__.startswith("raytune_ext_same.")
    assert cls is not raytune_ext.IterativeDeepeningHyperBandScheduler
    sched = cls(max_t=9, reduction_factor=3, seed=0)  # its modules import one another
    assert type(sched).__module__ == "raytune_ext_same._scheduler"
    with pytest.raises(ValueError, match="holds no raytune_ext/ package"):
        load_baseline_scheduler("empty", str(tmp_path))
    with pytest.raises(ValueError, match="baseline name must be letters"):
        load_baseline_scheduler("a-b", tree)
    row = {"max_t": 9, "eta": 3, "runs": 1, "trials": 17, "results": 50, "calls": 50,
           "p95_ms": 0.1, "max_ms": 1.0, "hook_calls": 60, "hook_total_s": 0.1, "wall_s": 9.0,
           "stalled": 0, "median_ms": 0.01, "cpu_mean_ms": 0.02, "cpu_median_ms": 0.01}
    text = format_ray_overhead([
        {**row, "scheduler": "HyperBandScheduler", "mean_ms": 0.02},
        {**row, "scheduler": "IterativeDeepeningHyperBandScheduler", "mean_ms": 0.03},
        {**row, "scheduler": "IterativeDeepeningHyperBandScheduler@old", "mean_ms": 0.05},
    ])
    assert "- ID-HB / HyperBandScheduler per on_trial_result: mean 1.50x, median 1.00x" in text
    assert "- ID-HB@old / HyperBandScheduler per on_trial_result: mean 2.50x" in text


def test_cli_refuses_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ray-overhead", "--max-t", "2", "--eta", "3"]) == 2
    assert "max_t >= eta" in capsys.readouterr().err
    assert main(["ray-overhead", "--baseline", "main"]) == 2
    assert "--baseline must be NAME=DIR, got 'main'" in capsys.readouterr().err
    assert main(["idhb-ray", "--problem", "lc-synthetic", "--r0", "1"]) == 2
    assert "--r0 must be >= eta" in capsys.readouterr().err


def test_stall_stopper_ends_only_after_the_timeout() -> None:
    stopper = StallStopper(stall_s=0.2)
    time.sleep(0.3)  # no result yet: workers may still be starting (patience 10 x stall_s)
    assert not stopper.stop_all() and not stopper("t", {})
    time.sleep(0.3)
    assert stopper.stop_all() and stopper.stalled
    waiting = StallStopper(stall_s=0.1, first_result_s=0.2)
    time.sleep(0.3)
    assert waiting.stop_all()
    fresh = StallStopper(stall_s=60)
    fresh("t", {})
    assert not fresh.stop_all() and not fresh.stalled


_THREADS_PROBE = """
import os, json, ray
from uvp_plugins.bench.methods.ray_methods import quiet_local_ray

@ray.remote(num_cpus=1)
def threads():
    return {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}

with quiet_local_ray(num_cpus=2) as started:
    print(json.dumps([started, ray.get(threads.remote())]))
"""


def test_quiet_local_ray_gives_each_trial_its_share_of_the_thread_budget() -> None:
    # a harness worker with a budget of 2 threads starting a 2-CPU cluster: two trials run at
    # once, so each trial actor gets 1 thread (2 x 2 on 2 cores made the demo's Ray runs 3x
    # slower beside one other busy process)
    import json
    import subprocess
    import sys

    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2")
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run(
        [sys.executable, "-c", _THREADS_PROBE], env=env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    started, seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert started is True
    assert seen == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

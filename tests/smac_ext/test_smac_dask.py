"""SMAC on a Dask LocalCluster with worker *processes* (issue 19): MaxUCB with one Tobit model per
arm, the Tobit model alone, and ID-HB, through SMAC's facades with ``dask_client=``; the driver is
killed with SIGKILL mid-run (its workers with it) and restarted on the same output directory.

Each driver is ``tests/smac_ext/dask_driver.py`` in its own process group (loopback only, two
single-threaded worker processes, BLAS/OpenMP threads pinned to 1: the target raises otherwise).
Checked after the restart: every trial of ``n_trials`` finished exactly once (the trials running at
the kill were submitted again; nothing stays ``RUNNING``), no configuration was evaluated twice,
every successful result is credited to the arm of its configuration exactly once, and the
incumbent is the best configuration of the run history.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.smac

DRIVER = Path(__file__).with_name("dask_driver.py")
RUNNING, SUCCESS = 0, 1  # smac.runhistory.enumerations.StatusType values in runhistory.json
REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONHASHSEED"] = "0"
    # the driver's own threads: the workers get theirs from LocalCluster(env=...)
    env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    return env


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None  # not written yet, or caught mid-write


def _kill_mid_run(out: Path, mode: str, n_trials: int, after: int) -> dict[str, Any]:
    """Start the driver, SIGKILL its whole process group once ``after`` trials are finished
    and another one is running; returns the run history seen just before the kill."""
    proc = subprocess.Popen([sys.executable, str(DRIVER), str(out), mode, str(n_trials), "0.3"],
                            env=_env(), start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    runhistory = out / mode / "0" / "runhistory.json"
    deadline = time.monotonic() + 120
    seen: dict[str, Any] | None = None
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            data = _read_json(runhistory)
            if data and data["stats"]["finished"] >= after and data["stats"]["running"] >= 1:
                seen = data
                break
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its Dask scheduler and workers
        _, err = proc.communicate(timeout=30)
    assert seen is not None, f"the driver did not reach {after} trials: {err.decode()[-2000:]}"
    # no worker survives its driver
    for _ in range(100):
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("processes of the killed driver's group are still alive")
    return seen


def _finish(out: Path, mode: str, n_trials: int) -> tuple[dict[str, Any], dict[str, Any]]:
    done = subprocess.run([sys.executable, str(DRIVER), str(out), mode, str(n_trials), "0.05"],
                          env=_env(), capture_output=True, timeout=300, start_new_session=True)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    report = json.loads((out / mode / "report.json").read_text())
    runhistory = json.loads((out / mode / "0" / "runhistory.json").read_text())
    return report, runhistory


def _trials(runhistory: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    configs = runhistory["configs"]
    return [(configs[str(e["config_id"])], e) for e in runhistory["data"]]


def _check_no_lost_trials(before: dict[str, Any], runhistory: dict[str, Any], n: int) -> None:
    stats = runhistory["stats"]
    assert stats == {"submitted": n, "finished": n, "running": 0}
    assert all(e["status"] != RUNNING for _, e in _trials(runhistory))
    running_at_kill = {(e["config_id"], e["budget"]) for e in before["data"] if e["status"] == RUNNING}
    assert running_at_kill, "the kill must catch a running trial"
    finished = {(e["config_id"], e["budget"]) for e in runhistory["data"] if e["status"] != RUNNING}
    assert running_at_kill <= finished  # re-submitted and finished after the restart


ARMS = ["quad", "lin", "const"]  # the CASH arms of dask_driver.py


def _successes(runhistory: dict[str, Any]) -> list[Counter[float]]:
    """Per arm, the costs of the successful trials of the run history."""
    out: list[Counter[float]] = [Counter() for _ in ARMS]
    for config, entry in _trials(runhistory):
        if entry["status"] == SUCCESS and math.isfinite(entry["cost"]):
            out[ARMS.index(config["algorithm"])][entry["cost"]] += 1
    return out


def _credited(report: dict[str, Any]) -> list[Counter[float]]:
    """Per arm, what the bandit took: observations and discarded burn-in results."""
    policy = report["state"]["bandit"]["policy"]
    out: list[Counter[float]] = [Counter() for _ in ARMS]
    for arm, value in policy["history"] + policy["burn_discarded"]:
        out[arm][value] += 1
    return out


def test_maxucb_with_tobit_models_on_dask_processes_survives_a_killed_driver(
    tmp_path: Path,
) -> None:
    n = 14
    before = _kill_mid_run(tmp_path, "maxucb-tobit", n, after=5)
    report, runhistory = _finish(tmp_path, "maxucb-tobit", n)
    _check_no_lost_trials(before, runhistory, n)
    trials = _trials(runhistory)
    assert len({json.dumps(c, sort_keys=True) for c, _ in trials}) == n  # never twice
    # every success credited exactly once, to the arm of its configuration
    assert _credited(report) == _successes(runhistory)
    policy = report["state"]["bandit"]["policy"]
    assert policy["pending"] == [0, 0, 0] and policy["burn_pending"] == [0, 0, 0]
    assert sum(report["pulls"].values()) == n
    # the incumbent is the best configuration of the run history
    best = min(trials, key=lambda t: t[1]["cost"])[0]
    assert report["incumbent"] == best


def test_tobit_model_on_dask_processes_survives_a_killed_driver(tmp_path: Path) -> None:
    """The Tobit model with SMAC's own ``Intensifier`` (HPO facade). What is lost here is
    SMAC's doing, measured and documented in docs/results/reliability.md: SMAC 2.4.1's
    ``Intensifier`` never re-submits a trial that was ``RUNNING`` when the driver died, so
    that trial stays ``RUNNING`` and counts against ``n_trials`` (our intensifiers re-submit
    it, see the other two tests)."""
    n = 12
    before = _kill_mid_run(tmp_path, "tobit", n, after=5)
    report, runhistory = _finish(tmp_path, "tobit", n)
    running_at_kill = [e for e in before["data"] if e["status"] == RUNNING]
    assert runhistory["stats"]["submitted"] == n
    assert runhistory["stats"]["running"] == len(running_at_kill) >= 1  # SMAC's lost trials
    assert runhistory["stats"]["finished"] == n - len(running_at_kill)
    trials = [t for t in _trials(runhistory) if t[1]["status"] != RUNNING]
    assert len({json.dumps(c, sort_keys=True) for c, _ in trials}) == len(trials)
    # the model trained on every finished result; the incumbent is the best of them
    assert report["incumbent"] == min(trials, key=lambda t: t[1]["cost"])[0]


def test_idhb_on_dask_processes_survives_a_killed_driver(tmp_path: Path) -> None:
    before = _kill_mid_run(tmp_path, "idhb", 200, after=6)
    report, runhistory = _finish(tmp_path, "idhb", 200)
    # one Hyperband iteration at 9: 22 trials, each (config, budget) once
    assert runhistory["stats"]["finished"] == 22 == runhistory["stats"]["submitted"]
    assert runhistory["stats"]["running"] == 0
    trials = _trials(runhistory)
    assert Counter(e["budget"] for _, e in trials) == {1.0: 9, 3.0: 8, 9.0: 5}
    keys = [(json.dumps(c, sort_keys=True), e["budget"]) for c, e in trials]
    assert len(set(keys)) == 22
    running_at_kill = {(e["config_id"], e["budget"]) for e in before["data"] if e["status"] == RUNNING}
    assert running_at_kill
    idhb = report["state"]["idhb"]
    assert idhb["pending"] == [] and idhb["ledger"]["n_evaluations"] == 22
    # the incumbent is the best at the highest budget
    top = [t for t in trials if t[1]["budget"] == 9.0]
    assert report["incumbent"] == min(top, key=lambda t: t[1]["cost"])[0]


def measure(mode: str, n_trials: int, after: int, out: Path) -> dict[str, Any]:
    """One kill-and-restart of ``mode`` (the figures of docs/results/reliability.md)."""
    before = _kill_mid_run(out, mode, n_trials, after=after)
    start = time.monotonic()
    report, runhistory = _finish(out, mode, n_trials)
    trials = [t for t in _trials(runhistory) if t[1]["status"] != RUNNING]
    keys = Counter((json.dumps(c, sort_keys=True), e["budget"]) for c, e in trials)
    credited_right = None
    if mode == "maxucb-tobit":
        credited_right = _credited(report) == _successes(runhistory)
    top = max(e["budget"] or 0 for _, e in trials)
    at_top = [t for t in trials if (t[1]["budget"] or 0) == top]
    return {
        "mode": mode,
        "running_at_kill": sum(e["status"] == RUNNING for e in before["data"]),
        "finished_at_kill": before["stats"]["finished"],
        **{f"final_{k}": v for k, v in runhistory["stats"].items()},
        "lost": runhistory["stats"]["submitted"] - runhistory["stats"]["finished"],
        "duplicates": sum(v - 1 for v in keys.values()),
        "incumbent_correct": report["incumbent"] == min(at_top, key=lambda t: t[1]["cost"])[0],
        "credited_once_to_the_right_arm": credited_right,
        "restart_seconds": round(time.monotonic() - start, 1),
    }


if __name__ == "__main__":
    # python tests/smac_ext/test_smac_dask.py MODE N_TRIALS KILL_AFTER REPEATS
    import tempfile

    mode, n_trials, after, repeats = sys.argv[1], *map(int, sys.argv[2:5])
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(measure(mode, n_trials, after, Path(tmp))), flush=True)

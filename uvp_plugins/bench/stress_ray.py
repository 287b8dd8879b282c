"""Ray stress scenario: ``kill -9`` of the Tune driver mid-run, then a resume (issue 19, item 2).

:func:`ray_kill_resume` runs one scenario on a running Ray cluster and returns counts;
:func:`stress_ray` repeats it with seeded kill points and sums them (for ``uvp-bench stress``).
Importing this module runs nothing and needs no Ray; Ray is imported by the functions.

One scenario:

1. a driver **process** (this module run as ``python -m uvp_plugins.bench.stress_ray SPEC``)
   tunes ``x`` over a grid with
   :class:`raytune_ext.IterativeDeepeningHyperBandScheduler` (``max_t`` ladder ``first_ladder``),
   through ``tune.run`` or ``tune.Tuner(...).fit()``; the trainable (:func:`stress_trainable`)
   trains epoch by epoch from its checkpoint on the deterministic curves :func:`stress_loss`
   and appends every epoch it executes to ``epochs.log``; a driver callback
   (:class:`DeliveredLog`) appends every result the driver received to ``delivered.log``;
2. once the driver has received ``kill_after`` results, it is killed with
   ``SIGKILL``. With ``quiesce=True`` the trials are first held before their next epoch (a block
   file) for ``quiesce_s`` seconds, so that no epoch is executed after the kill by the dead
   driver's actors (Ray kills them asynchronously); with ``quiesce=False`` they train on until
   Ray kills them, and epochs whose results the dead driver never received are executed again;
3. the experiment is resumed in this process, with ``raytune_ext.resume_with_larger_budget(...,
   max_t=final_max_t)`` (``resume="helper"``) or ``tune.Tuner.restore(...).fit()``
   (``resume="tuner"``, same ``max_t``: Tuner.restore cannot deepen);
4. the outcome is compared with the uninterrupted run: the core replayed offline on the same
   configurations in the order Ray placed them (the Ray scheduler makes the core's decisions
   exactly, see ``uvp-bench idhb-ray``).

Counts (keys of the returned dict):

* ``trials``: Ray trials; ``trained_trials``: configurations the uninterrupted run trains;
* ``lost_trials``: trained configurations whose last result in the returned analysis is missing
  or differs from the uninterrupted run's (training iteration and loss);
* ``wrong_best``: 1 if the analysis' best configuration differs from the uninterrupted run's;
* ``decisions_differ``: 1 if the core's evaluations (configuration, rung, budget, value) or its
  ledger differ from the uninterrupted run's;
* ``epochs_reference``: epochs the uninterrupted run trains (the core's continuation ledger);
  ``epochs_executed``: epochs the trainables executed in both runs; ``epochs_redone``: epochs a
  trial executed more than once, split into ``epochs_redone_seen`` (the killed driver had received
  that epoch's result: the scheduler must not train it again; always 0 when it works) and
  ``epochs_redone_unseen`` (executed by actors the dead driver never heard from);
* ``restarts_from_zero``: trials that had reported a checkpoint before the kill and started again
  at epoch 1 in the resumed run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "stress_loss",
    "stress_trainable",
    "DeliveredLog",
    "stress_grid",
    "ray_kill_resume",
    "stress_ray",
    "run_ray_stress",
    "read_saved_core",
    "STRESS_KEYS",
]

#: the counts :func:`stress_ray` sums
STRESS_KEYS = (
    "trials",
    "trained_trials",
    "lost_trials",
    "wrong_best",
    "decisions_differ",
    "epochs_reference",
    "epochs_executed",
    "epochs_redone",
    "epochs_redone_seen",
    "epochs_redone_unseen",
    "restarts_from_zero",
)


def stress_loss(x: float, epoch: float) -> float:
    """Deterministic learning curves that cross: small ``x`` learns fast, ``x`` near 0.7 ends
    best (the same family as the Ray tests')."""
    return (x - 0.7) ** 2 + (1.0 - x) / epoch


def stress_grid(n: int) -> list[float]:
    """``n`` distinct ``x`` in ``(0, 1)`` in a fixed scrambled order."""
    return [round(((i * 7919) % 997) / 997.0, 6) for i in range(1, n + 1)]


def stress_trainable(
    config: dict[str, Any], log_dir: str, block_file: str | None = None, epoch_s: float = 0.0
) -> None:
    """Function trainable: epoch by epoch from its checkpoint, one result and one checkpoint
    per epoch (``loss``, ``epoch``, ``first`` = first epoch of this training segment); appends
    ``trial_id, epoch, first, pid`` of every executed epoch to ``log_dir/epochs.log``. While
    ``block_file`` exists it waits before each epoch."""
    from ray import tune
    from ray.tune import Checkpoint

    tid = tune.get_context().get_trial_id()
    start = 0
    ckpt = tune.get_checkpoint()
    if ckpt is not None:
        with ckpt.as_directory() as d, open(os.path.join(d, "state.json")) as fh:
            start = int(json.load(fh)["epoch"])
    x = float(config["x"])
    log = os.path.join(log_dir, "epochs.log")
    for epoch in range(start + 1, 100_000):
        while block_file and os.path.exists(block_file):
            time.sleep(0.05)
        if epoch_s:
            time.sleep(epoch_s)
        _append(log, f"{tid}\t{epoch}\t{start + 1}\t{os.getpid()}\n")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "state.json"), "w") as fh:
                json.dump({"epoch": epoch}, fh)
            tune.report(
                {"loss": stress_loss(x, epoch), "epoch": epoch, "first": start + 1},
                checkpoint=Checkpoint.from_directory(d),
            )


def _append(path: str, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _delivered_log_class() -> type:
    from ray.tune import Callback

    class _DeliveredLog(Callback):
        """Driver callback: appends ``driver pid, trial_id, epoch`` of every result it receives."""

        def __init__(self, path: str) -> None:
            self.path = path

        def on_trial_result(
            self, iteration: int, trials: list, trial: Any, result: dict, **info: Any
        ) -> None:
            _append(self.path, f"{os.getpid()}\t{trial.trial_id}\t{int(result['epoch'])}\n")

    return _DeliveredLog


def DeliveredLog(path: str) -> Any:
    """A Ray ``Callback`` logging every result the driver receives (see module doc)."""
    return _delivered_log_class()(path)


# ----------------------------------------------------------------------------- the driver
def _scheduler(max_t: Sequence[int]) -> Any:
    from raytune_ext import IterativeDeepeningHyperBandScheduler

    return IterativeDeepeningHyperBandScheduler(
        time_attr="epoch", metric="loss", mode="min", max_t=list(max_t), reduction_factor=3
    )


def _trainable(spec: dict[str, Any], block: bool) -> Any:
    from ray import tune

    return tune.with_parameters(
        stress_trainable,
        log_dir=spec["log_dir"],
        block_file=spec["block_file"] if block else None,
        epoch_s=spec["epoch_s"],
    )


def _driver(spec: dict[str, Any]) -> None:
    """The killed driver: connects to ``spec["address"]`` and runs the first experiment."""
    import ray
    from ray import tune

    ray.init(address=spec["address"], log_to_driver=False)
    xs = stress_grid(spec["n"])
    trainable = _trainable(spec, block=True)
    callbacks = [DeliveredLog(os.path.join(spec["log_dir"], "delivered.log"))]
    if spec["api"] == "tuner":
        tune.Tuner(
            trainable,
            param_space={"x": tune.grid_search(xs)},
            tune_config=tune.TuneConfig(
                scheduler=_scheduler(spec["first_ladder"]), reuse_actors=True
            ),
            run_config=tune.RunConfig(
                storage_path=spec["storage"], name=spec["name"], verbose=0, callbacks=callbacks
            ),
        ).fit()
    else:
        tune.run(
            trainable,
            config={"x": tune.grid_search(xs)},
            scheduler=_scheduler(spec["first_ladder"]),
            storage_path=spec["storage"],
            name=spec["name"],
            verbose=0,
            reuse_actors=True,
            callbacks=callbacks,
        )


# ----------------------------------------------------------------------------- evaluation
def read_saved_core(experiment_path: str) -> Any:
    """The final :class:`~uvp_plugins.hyperband.IterativeDeepeningHyperband` of a finished
    experiment, from the scheduler's state (snapshot and journal)."""
    from raytune_ext import STATE_FILE_NAME, IterativeDeepeningHyperBandScheduler

    path = os.path.join(experiment_path, STATE_FILE_NAME)
    from raytune_ext._scheduler import load_saved_state

    params = load_saved_state(path)
    sched = IterativeDeepeningHyperBandScheduler(
        time_attr=params["time_attr"],
        metric=params["metric"],
        mode=params["mode"],
        max_t=params["ladder"][0],
        reduction_factor=params["reduction_factor"],
        variant=params["variant"],
        min_t=params["min_t"],
        seed=params["seed"],
    )
    sched.restore(path)
    return sched.core


def _read_lines(path: str) -> list[list[str]]:
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [line.rstrip("\n").split("\t") for line in fh if line.endswith("\n")]


def _outcome(
    spec: dict[str, Any],
    trials: Sequence[Any],
    best_x: float | None,
    last_results: dict[str, dict[str, Any]],
    driver_pid: int,
    ladder: Sequence[int],
    executed_before_resume: int,
) -> dict[str, Any]:
    from uvp_plugins.bench.idhb_ray import evaluations, ray_config_order, replay_core

    path = os.path.join(spec["storage"], spec["name"])
    hb = read_saved_core(path)
    _xs, x_of = ray_config_order(hb, trials, lambda t: float(t.config["x"]))
    # the uninterrupted run: Ray adds the grid's trials in grid order, each new configuration
    # of the core is the next trial in that order
    ref = replay_core(
        [{"x": x} for x in stress_grid(spec["n"])],
        list(ladder),
        3,
        hb.variant,
        lambda c, b: stress_loss(c["x"], b),
    )
    # the uninterrupted run: every configuration's last result is at its top budget
    final = {}
    for cid in ref.configs:
        top = ref.evaluated_budget(cid)
        if top:
            x = ref.config(cid)["x"]
            final[x] = (top, stress_loss(x, top))
    ref_best = min(final, key=lambda x: (final[x][1], x))
    x_of_tid = {t.trial_id: float(t.config["x"]) for t in trials}
    lost = 0
    for tid, x in x_of_tid.items():
        if x not in final:
            continue
        last = last_results.get(tid) or {}
        top, value = final[x]
        if int(last.get("epoch", -1)) != top or abs(float(last.get("loss", 1e9)) - value) > 1e-12:
            lost += 1

    executed = _read_lines(os.path.join(spec["log_dir"], "epochs.log"))
    delivered = _read_lines(os.path.join(spec["log_dir"], "delivered.log"))
    seen_before = {(tid, int(it)) for pid, tid, it in delivered if int(pid) == driver_pid}
    counts: dict[tuple[str, int], int] = {}
    for tid, it, _first, _pid in executed:
        counts[(tid, int(it))] = counts.get((tid, int(it)), 0) + 1
    redone = sum(n - 1 for n in counts.values() if n > 1)
    redone_seen = sum(n - 1 for key, n in counts.items() if n > 1 and key in seen_before)
    # every result carries a checkpoint: a trial the killed driver heard from had one
    had_checkpoint = {tid for tid, _it in seen_before}
    from_zero = {
        tid
        for tid, _it, first, _pid in executed[executed_before_resume:]
        if int(first) == 1 and tid in had_checkpoint
    }
    return {
        "trials": len(trials),
        "trained_trials": len(final),
        "lost_trials": lost,
        "wrong_best": int(best_x is None or best_x != ref_best),
        "decisions_differ": int(
            evaluations(hb, x_of) != evaluations(ref, lambda c: c["x"]) or hb.ledger != ref.ledger
        ),
        "epochs_reference": int(ref.ledger.continuation),
        "epochs_executed": len(executed),
        "epochs_redone": redone,
        "epochs_redone_seen": redone_seen,
        "epochs_redone_unseen": redone - redone_seen,
        "restarts_from_zero": len(from_zero),
        "best_x": best_x,
        "reference_best_x": ref_best,
    }


# ----------------------------------------------------------------------------- one scenario
def ray_kill_resume(
    address: str,
    workdir: str,
    *,
    first_ladder: Sequence[int] = (3, 9),
    final_max_t: int = 27,
    api: str = "run",
    resume: str = "helper",
    kill_after: int = 40,
    quiesce: bool = True,
    quiesce_s: float = 2.0,
    epoch_s: float = 0.0,
    driver_timeout_s: float = 240.0,
    name: str = "killed",
) -> dict[str, Any]:
    """One scenario (module doc) on the cluster at ``address``; files go to ``workdir``.

    ``api`` is how the killed driver runs (``"run"``: ``tune.run``; ``"tuner"``:
    ``Tuner.fit``), ``resume`` how it is continued (``"helper"``:
    ``resume_with_larger_budget`` to ``final_max_t``; ``"tuner"``: ``Tuner.restore``, which
    finishes ``first_ladder``). The driver is killed once it received ``kill_after`` results.
    Returns the counts of the module doc plus ``killed_at`` (results the driver had received)
    and ``wall_s``.
    """
    from ray import tune

    from raytune_ext import IterativeDeepeningHyperBandScheduler, resume_with_larger_budget

    if api not in ("run", "tuner") or resume not in ("helper", "tuner"):
        raise ValueError(
            f"api must be 'run' or 'tuner' and resume 'helper' or 'tuner', got {api!r}, "
            f"{resume!r}"
        )
    ladder = list(first_ladder) if resume == "tuner" else list(first_ladder) + [final_max_t]
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(ladder, 3)
    os.makedirs(workdir, exist_ok=True)
    log_dir = os.path.join(workdir, "logs")
    os.makedirs(log_dir, exist_ok=True)
    spec: dict[str, Any] = {
        "address": address,
        "storage": os.path.join(workdir, "storage"),
        "name": name,
        "n": n,
        "first_ladder": list(first_ladder),
        "api": api,
        "log_dir": log_dir,
        "block_file": os.path.join(workdir, "block"),
        "epoch_s": float(epoch_s),
    }
    spec_file = os.path.join(workdir, "spec.json")
    with open(spec_file, "w") as fh:
        json.dump(spec, fh)
    path = os.path.join(spec["storage"], name)
    delivered_log = os.path.join(log_dir, "delivered.log")
    env = dict(os.environ, RAY_ADDRESS=address)
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvp_plugins.bench.stress_ray", spec_file],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    killed_at = 0
    try:
        deadline = time.monotonic() + driver_timeout_s
        while time.monotonic() < deadline and proc.poll() is None:
            killed_at = _delivered(delivered_log)
            if killed_at >= kill_after:
                break
            time.sleep(0.05)
        if proc.poll() is not None:
            raise RuntimeError(
                f"the driver ended (exit {proc.returncode}) after {killed_at} of the "
                f"{kill_after} results to wait for; lower kill_after"
            )
        if time.monotonic() >= deadline:
            raise RuntimeError(f"the driver received {killed_at} results in {driver_timeout_s}s")
        if quiesce:
            open(spec["block_file"], "w").close()
            time.sleep(quiesce_s)  # results still in flight reach the driver
            killed_at = _delivered(delivered_log)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    _wait_quiet(os.path.join(log_dir, "epochs.log"))
    if os.path.exists(spec["block_file"]):
        os.unlink(spec["block_file"])
    executed_before_resume = len(_read_lines(os.path.join(log_dir, "epochs.log")))

    trainable = _trainable(spec, block=False)
    delivered = DeliveredLog(delivered_log)
    if resume == "helper":
        analysis = resume_with_larger_budget(
            path, trainable, max_t=final_max_t, reuse_actors=True, callbacks=[delivered]
        )
        trials = analysis.trials
        best = analysis.get_best_config(metric="loss", mode="min")
        best_x = float(best["x"]) if best is not None else None
        last_results = {t.trial_id: dict(t.last_result) for t in trials}
    else:
        grid = tune.Tuner.restore(path, trainable=trainable, resume_unfinished=True).fit()
        trials = grid._experiment_analysis.trials
        best_config = grid.get_best_result(metric="loss", mode="min").config
        best_x = float(best_config["x"]) if best_config is not None else None
        results = [grid[i] for i in range(len(grid))]
        last_results = {
            str(r.metrics.get("trial_id")): dict(r.metrics) for r in results if r.metrics
        }
    out = _outcome(spec, trials, best_x, last_results, proc.pid, ladder, executed_before_resume)
    out["killed_at"] = killed_at
    out["wall_s"] = time.monotonic() - t0
    return out


def _delivered(path: str) -> int:
    """Results the driver's callback logged so far."""
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.endswith(b"\n"))


def _wait_quiet(path: str, quiet_s: float = 2.0, at_least_s: float = 3.0) -> None:
    """Wait until ``path`` has not grown for ``quiet_s`` (the dead driver's actors are gone)."""
    start = time.monotonic()
    size, since = -1, time.monotonic()
    while time.monotonic() - start < 60:
        now_size = os.path.getsize(path) if os.path.exists(path) else 0
        if now_size != size:
            size, since = now_size, time.monotonic()
        elif time.monotonic() - since >= quiet_s and time.monotonic() - start >= at_least_s:
            return
        time.sleep(0.1)


# ----------------------------------------------------------------------------- repeats
def stress_ray(
    repeats: int = 3,
    seed: int = 0,
    *,
    api: str = "run",
    resume: str = "helper",
    first_ladder: Sequence[int] = (3, 9),
    final_max_t: int = 27,
    quiesce: bool = False,
    epoch_s: float = 0.01,
    workdir: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """``repeats`` scenarios of :func:`ray_kill_resume`, each killed after a number of results
    drawn from ``seed`` (between the 5th result and 90 % of the first run); sums of the counts
    plus ``scenarios`` (the per-scenario dicts). By default the driver is killed while trials
    train (``quiesce=False``) and every epoch takes ``epoch_s`` seconds. Starts a quiet local
    2-CPU cluster (127.0.0.1) if Ray is not running
    (:func:`~uvp_plugins.bench.methods.ray_methods.quiet_local_ray`)."""
    import numpy as np
    import ray

    from uvp_plugins.bench.methods.ray_methods import quiet_local_ray
    from uvp_plugins.hyperband import HyperbandSchedule
    from uvp_plugins.validation import check_int, check_seed

    check_int("repeats", repeats, low=1)
    check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    # the first run trains one Hyperband at its last R with continuation (ID-HB eID): kill it
    # between its 5th result and 90 % of them
    first_epochs = HyperbandSchedule(int(first_ladder[-1]), 3).continuation_budget
    scenarios = []
    with quiet_local_ray(), tempfile.TemporaryDirectory(
        prefix="uvp-stress-ray-", dir=workdir, ignore_cleanup_errors=True
    ) as tmp:
        address = ray.get_runtime_context().gcs_address
        for i in range(repeats):
            kill_after = int(rng.integers(5, int(0.9 * first_epochs)))
            out = ray_kill_resume(
                address,
                os.path.join(tmp, f"s{i}"),
                first_ladder=first_ladder,
                final_max_t=final_max_t,
                api=api,
                resume=resume,
                kill_after=kill_after,
                quiesce=quiesce,
                epoch_s=epoch_s,
            )
            scenarios.append(out)
            if progress:
                print(
                    f"[stress ray] {i + 1}/{repeats}: killed after {out['killed_at']} results; "
                    f"lost {out['lost_trials']}, wrong best {out['wrong_best']}, epochs redone "
                    f"{out['epochs_redone']} ({out['epochs_redone_seen']} seen by the driver), "
                    f"{out['wall_s']:.0f}s",
                    file=sys.stderr,
                    flush=True,
                )
    total: dict[str, Any] = {k: sum(int(s[k]) for s in scenarios) for k in STRESS_KEYS}
    total["scenarios"] = scenarios
    return total


def run_ray_stress(repeats: int, seed: int, out: Path) -> list[dict[str, Any]]:
    """The Ray scenario of ``uvp-bench stress --scenarios ray``
    (:data:`uvp_plugins.bench.stress.EXTERNAL_SCENARIOS`): :func:`stress_ray` once with
    ``tune.run`` resumed by :func:`raytune_ext.resume_with_larger_budget` and once with
    ``Tuner.fit`` resumed by ``Tuner.restore``, ``repeats`` kill points each; one row of summed
    counts per combination. Every scenario's details are appended to ``out/ray.jsonl``."""
    rows: list[dict[str, Any]] = []
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "ray.jsonl", "a") as fh:
        for api, resume in (("run", "helper"), ("tuner", "tuner")):
            total = stress_ray(repeats=repeats, seed=seed, api=api, resume=resume)
            rows.append({"api": api, "resume": resume, **{k: total[k] for k in STRESS_KEYS}})
            for scenario in total["scenarios"]:
                fh.write(json.dumps({"api": api, "resume": resume, **scenario}, default=str) + "\n")
    return rows


if __name__ == "__main__":  # the killed driver of ray_kill_resume (not a command-line tool)
    # Import the module under its own name, so Ray pickles its functions by reference.
    from uvp_plugins.bench.stress_ray import _driver as _run_driver

    with open(sys.argv[1]) as _fh:
        _run_driver(json.load(_fh))

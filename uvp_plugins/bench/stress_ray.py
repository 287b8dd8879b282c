"""Ray stress scenarios: ``kill -9`` of the Tune driver mid-run, then a resume (issues 19 and 32).

:func:`ray_kill_resume` (ID-HB) and :func:`pred_kill_resume` (Pred stopping) run one scenario
and return counts; :func:`stress_ray` repeats one with seeded kill points and sums them (for
``uvp-bench stress --scenarios ray``). Importing this module runs nothing and needs no Ray; Ray
is imported by the functions.

One ID-HB scenario:

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
   (``resume="tuner"``, same ``max_t``: Tuner.restore cannot deepen). With
   ``cluster="shared"`` the killed driver ran on this process's Ray cluster (the resume reuses
   the dead driver's Ray session); with ``cluster="new"`` it ran on a cluster of its own (a
   child process, :func:`_hold_cluster`) that is shut down after the kill, so the resume runs
   in another Ray session - as after a driver that started its own cluster and was killed;
4. the outcome is compared with the uninterrupted run: the core replayed offline on the same
   configurations in the order Ray placed them (the Ray scheduler makes the core's decisions
   exactly, see ``uvp-bench idhb-ray``).

A Pred scenario (:func:`pred_kill_resume`) runs ``Tuner.fit`` with
:class:`raytune_ext.PredStoppingScheduler` the same way, kills the driver right after the
scheduler stopped a trial (once ``kill_after`` results were received) and resumes with
``Tuner.restore``.

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
  at epoch 1 in the resumed run;
* ``rows_reported``: result rows the drivers received (``delivered.log``; a row is a trial's
  epoch, counted as often as it was delivered), ``rows_before_kill`` those the killed driver
  received; ``lost_rows``: reported rows of the trials in the returned result grid that are
  missing from their history (``result.json`` in the experiment directory, as
  ``get_dataframe()`` / ``metrics_dataframe`` read it), ``extra_rows`` history rows nobody
  reported (or more often than reported); ``unrestored_rows``: reported rows of trials Ray did
  not bring back (created after its last experiment snapshot; Ray starts their configurations
  again as new trials);
* ``dataframe_disagrees``: trials whose last history row or whose row in ``get_dataframe()``
  (``ExperimentAnalysis.dataframe()`` after ``tune.run``) does not have the epoch and loss of
  their ``Result.metrics`` (``trial.last_result``), a trial with metrics and no history included;
* Pred only: ``stopped_before_kill`` (trials the killed driver's scheduler had stopped before
  ``max_t``), ``stopped_rerun`` (of those, trials that trained again after the resume or whose
  final result is not the one they were stopped with), ``wrong_final`` (trials whose final epoch
  is neither ``max_t`` nor the step the scheduler's journal says it stopped them at).
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

from uvp_plugins.files import write_text_atomically

__all__ = [
    "stress_loss",
    "stress_trainable",
    "DeliveredLog",
    "stress_grid",
    "ray_kill_resume",
    "pred_kill_resume",
    "history_counts",
    "stress_ray",
    "run_ray_stress",
    "read_saved_core",
    "STRESS_KEYS",
    "PRED_STRESS_KEYS",
    "ROW_KEYS",
]

#: the row counts of both scenarios (module doc)
ROW_KEYS = (
    "rows_reported",
    "rows_before_kill",
    "lost_rows",
    "extra_rows",
    "unrestored_rows",
    "dataframe_disagrees",
)
#: the counts :func:`stress_ray` sums for ID-HB
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
    *ROW_KEYS,
)
#: the counts :func:`stress_ray` sums for Pred
PRED_STRESS_KEYS = (
    "trials",
    *ROW_KEYS,
    "stopped_before_kill",
    "stopped_rerun",
    "wrong_final",
    "epochs_redone_seen",
)
#: the Pred scenario's budget and exploration fraction (no stop before epoch 1)
PRED_MAX_T, PRED_DELTA = 9, 0.12


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
        """Driver callback: appends ``driver pid, trial_id, epoch, done`` of every result it
        receives (``done`` is 1 when the scheduler stopped the trial with it)."""

        def __init__(self, path: str) -> None:
            self.path = path

        def on_trial_result(
            self, iteration: int, trials: list, trial: Any, result: dict, **info: Any
        ) -> None:
            done = int(bool(result.get("done")))
            _append(
                self.path, f"{os.getpid()}\t{trial.trial_id}\t{int(result['epoch'])}\t{done}\n"
            )

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


def _pred_scheduler() -> Any:
    from raytune_ext import PredStoppingScheduler

    return PredStoppingScheduler(
        time_attr="epoch", metric="loss", mode="min", max_t=PRED_MAX_T, delta=PRED_DELTA
    )


def _driver(spec: dict[str, Any]) -> None:
    """The killed driver: connects to ``spec["address"]`` and runs the first experiment."""
    import ray
    from ray import tune

    ray.init(address=spec["address"], log_to_driver=False)
    xs = stress_grid(spec["n"])
    trainable = _trainable(spec, block=True)
    callbacks = [DeliveredLog(os.path.join(spec["log_dir"], "delivered.log"))]
    pred = spec.get("scheduler") == "pred"
    if spec["api"] == "tuner":
        tune.Tuner(
            trainable,
            param_space={"x": tune.grid_search(xs)},
            tune_config=tune.TuneConfig(
                scheduler=_pred_scheduler() if pred else _scheduler(spec["first_ladder"]),
                reuse_actors=True,
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


def _delivered_rows(log_dir: str) -> list[tuple[int, str, int, int]]:
    """``(driver pid, trial_id, epoch, done)`` of every result a driver received, in order."""
    rows = []
    for parts in _read_lines(os.path.join(log_dir, "delivered.log")):
        done = int(parts[3]) if len(parts) > 3 else 0
        rows.append((int(parts[0]), parts[1], int(parts[2]), done))
    return rows


def _same_row(row: Any, last: dict[str, Any]) -> bool:
    """Whether a history row and a ``Result.metrics`` report the same epoch and loss."""
    return row is not None and int(row["epoch"]) == int(last.get("epoch", -1)) and float(
        row["loss"]
    ) == float(last.get("loss", float("nan")))


def history_counts(
    delivered: Sequence[tuple[int, str, int, int]],
    driver_pid: int,
    frames: dict[str, Any],
    last_results: dict[str, dict[str, Any]],
    table: Any = None,
) -> dict[str, int]:
    """The row counts of the module doc. ``frames``: trial id -> its history as Ray's analysis
    reads it (``trial_dataframes``; every trial of the result grid has an entry),
    ``last_results``: trial id -> its ``Result.metrics``, ``table``: the grid's
    ``get_dataframe()`` (or the analysis' ``dataframe()``; a trial's row there must be its
    ``Result.metrics`` too)."""
    reported: dict[tuple[str, int], int] = {}
    for _pid, tid, epoch, _done in delivered:
        reported[(tid, epoch)] = reported.get((tid, epoch), 0) + 1
    by_trial = {}
    if table is not None and len(table):
        by_trial = {str(row["trial_id"]): row for _, row in table.iterrows()}
    stored: dict[tuple[str, int], int] = {}
    disagree = 0
    for tid, df in frames.items():
        epochs = [int(e) for e in df["epoch"]] if len(df) and "epoch" in df else []
        for epoch in epochs:
            stored[(tid, epoch)] = stored.get((tid, epoch), 0) + 1
        last = last_results.get(tid) or {}
        if "epoch" in last or epochs:
            if not _same_row(df.iloc[-1] if epochs else None, last) or (
                table is not None and not _same_row(by_trial.get(tid), last)
            ):
                disagree += 1
    lost = sum(max(0, n - stored.get(k, 0)) for k, n in reported.items() if k[0] in frames)
    return {
        "rows_reported": len(delivered),
        "rows_before_kill": sum(1 for pid, *_ in delivered if pid == driver_pid),
        "lost_rows": lost,
        "extra_rows": sum(max(0, n - reported.get(k, 0)) for k, n in stored.items()),
        "unrestored_rows": sum(n for k, n in reported.items() if k[0] not in frames),
        "dataframe_disagrees": disagree,
    }


def _epoch_counts(
    log_dir: str, driver_pid: int, executed_before_resume: int
) -> tuple[list[list[str]], dict[str, int], set[str]]:
    """Epochs executed (``epochs.log``), the counts of epochs executed more than once, and the
    trials that started again at epoch 1 after the resume although they had a checkpoint."""
    executed = _read_lines(os.path.join(log_dir, "epochs.log"))
    seen_before = {(tid, it) for pid, tid, it, _d in _delivered_rows(log_dir) if pid == driver_pid}
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
    out = {
        "epochs_executed": len(executed),
        "epochs_redone": redone,
        "epochs_redone_seen": redone_seen,
        "epochs_redone_unseen": redone - redone_seen,
        "restarts_from_zero": len(from_zero),
    }
    return executed, out, had_checkpoint


def _outcome(
    spec: dict[str, Any],
    trials: Sequence[Any],
    best_x: float | None,
    last_results: dict[str, dict[str, Any]],
    frames: dict[str, Any],
    table: Any,
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
    _executed, epochs, _ = _epoch_counts(spec["log_dir"], driver_pid, executed_before_resume)
    return {
        "trials": len(trials),
        "trained_trials": len(final),
        "lost_trials": lost,
        "wrong_best": int(best_x is None or best_x != ref_best),
        "decisions_differ": int(
            evaluations(hb, x_of) != evaluations(ref, lambda c: c["x"]) or hb.ledger != ref.ledger
        ),
        "epochs_reference": int(ref.ledger.continuation),
        **epochs,
        **history_counts(
            _delivered_rows(spec["log_dir"]), driver_pid, frames, last_results, table
        ),
        "best_x": best_x,
        "reference_best_x": ref_best,
    }


# ----------------------------------------------------------------------------- one scenario
def _hold_cluster(address_file: str) -> None:
    """A Ray cluster of its own for a killed driver (``cluster="new"``): started here, its
    address written to ``address_file``, shut down when stdin closes (Ray's own shutdown also
    ends the dead driver's trial actors)."""
    import ray

    from uvp_plugins.bench.methods.ray_methods import quiet_local_ray

    with quiet_local_ray():
        write_text_atomically(address_file, ray.get_runtime_context().gcs_address)
        sys.stdin.read()


class _DriverCluster:
    """Where the killed driver runs: this process's cluster (``"shared"``) or a new one held by
    a child process (``"new"``), shut down by :meth:`shutdown` after the kill."""

    def __init__(self, cluster: str, address: str, workdir: str) -> None:
        self.address = address
        self.proc: subprocess.Popen[bytes] | None = None
        if cluster == "shared":
            return
        address_file = os.path.join(workdir, "cluster.address")
        from uvp_plugins.bench.methods.ray_methods import KEEP_CLUSTER_ENV

        env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", KEEP_CLUSTER_ENV)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvp_plugins.bench.stress_ray", "--hold-cluster", address_file],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        deadline = time.monotonic() + 120
        while not os.path.exists(address_file):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.shutdown()
                raise RuntimeError("the driver's own Ray cluster did not start")
            time.sleep(0.1)
        with open(address_file) as fh:
            self.address = fh.read().strip()

    def shutdown(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _start_and_kill(
    spec: dict[str, Any],
    workdir: str,
    kill_after: int,
    *,
    quiesce: bool,
    quiesce_s: float,
    driver_timeout_s: float,
    after_stop: bool = False,
) -> tuple[int, int]:
    """Run the driver of ``spec`` and ``kill -9`` it once it received ``kill_after`` results
    (with ``after_stop``: once one of the results from the ``kill_after``-th on stopped its trial
    before ``max_t``). Returns the driver's pid and the results it had received."""
    spec_file = os.path.join(workdir, "spec.json")
    with open(spec_file, "w") as fh:
        json.dump(spec, fh)
    delivered_log = os.path.join(spec["log_dir"], "delivered.log")
    env = dict(os.environ, RAY_ADDRESS=spec["address"])
    with open(os.path.join(workdir, "driver.log"), "wb") as log:  # for a driver that fails
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvp_plugins.bench.stress_ray", spec_file],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    killed_at = 0
    try:
        deadline = time.monotonic() + driver_timeout_s
        while time.monotonic() < deadline and proc.poll() is None:
            killed_at = _delivered(delivered_log)
            if killed_at >= kill_after and (
                not after_stop or _stopped_since(spec["log_dir"], kill_after)
            ):
                break
            time.sleep(0.02 if after_stop else 0.05)
        if proc.poll() is not None:
            raise RuntimeError(
                f"the driver ended (exit {proc.returncode}) after {killed_at} of the "
                f"{kill_after} results to wait for; lower kill_after (its output: "
                f"{os.path.join(workdir, 'driver.log')})"
            )
        if time.monotonic() >= deadline:
            raise RuntimeError(
                f"the driver received {killed_at} results in {driver_timeout_s}s (its output: "
                f"{os.path.join(workdir, 'driver.log')})"
            )
        if quiesce:
            open(spec["block_file"], "w").close()
            time.sleep(quiesce_s)  # results still in flight reach the driver
            killed_at = _delivered(delivered_log)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return proc.pid, killed_at


def _stopped_since(log_dir: str, first: int) -> bool:
    """Whether a result from the ``first``-th on (1-based) stopped its trial before ``max_t``
    (polled every 20 ms: the driver is killed within about that of the stop)."""
    rows = _delivered_rows(log_dir)[max(0, first - 1) :]
    return any(done == 1 and epoch < PRED_MAX_T for _pid, _tid, epoch, done in rows)


def _prepare(workdir: str, name: str, address: str, n: int, **extra: Any) -> dict[str, Any]:
    os.makedirs(workdir, exist_ok=True)
    log_dir = os.path.join(workdir, "logs")
    os.makedirs(log_dir, exist_ok=True)
    return {
        "address": address,
        "storage": os.path.join(workdir, "storage"),
        "name": name,
        "n": n,
        "log_dir": log_dir,
        "block_file": os.path.join(workdir, "block"),
        **extra,
    }


def _after_kill(spec: dict[str, Any], cluster: _DriverCluster) -> int:
    """Wait until the dead driver's actors are gone (its own cluster: shut it down); returns the
    epochs executed before the resume."""
    cluster.shutdown()
    _wait_quiet(os.path.join(spec["log_dir"], "epochs.log"))
    if os.path.exists(spec["block_file"]):
        os.unlink(spec["block_file"])
    return len(_read_lines(os.path.join(spec["log_dir"], "epochs.log")))


def _killed_run(
    cluster: str,
    address: str,
    workdir: str,
    name: str,
    n: int,
    kill_after: int,
    kill: dict[str, Any],
    **spec_extra: Any,
) -> tuple[dict[str, Any], int, int, int, str]:
    """The killed first run of a scenario: its driver on ``cluster``, killed as ``kill`` says
    (the keyword arguments of :func:`_start_and_kill`), the dead driver's actors gone. Returns
    the spec, the driver's pid, the results it had received, the epochs executed and the
    experiment's directory (what the resume restores)."""
    if cluster not in ("shared", "new"):
        raise ValueError(f"cluster must be 'shared' or 'new', got {cluster!r}")
    os.makedirs(workdir, exist_ok=True)
    held = _DriverCluster(cluster, address, workdir)
    try:
        spec = _prepare(workdir, name, held.address, n, **spec_extra)
        pid, killed_at = _start_and_kill(spec, workdir, kill_after, **kill)
        executed_before_resume = _after_kill(spec, held)
    finally:
        held.shutdown()
    return spec, pid, killed_at, executed_before_resume, os.path.join(spec["storage"], name)


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
    cluster: str = "shared",
) -> dict[str, Any]:
    """One ID-HB scenario (module doc) on the cluster at ``address``; files go to ``workdir``.

    ``api`` is how the killed driver runs (``"run"``: ``tune.run``; ``"tuner"``:
    ``Tuner.fit``), ``resume`` how it is continued (``"helper"``:
    ``resume_with_larger_budget`` to ``final_max_t``; ``"tuner"``: ``Tuner.restore``, which
    finishes ``first_ladder``), ``cluster`` where the killed driver runs (``"shared"``: on
    ``address``; ``"new"``: on a cluster of its own, shut down after the kill). The driver is
    killed once it received ``kill_after`` results. Returns the counts of the module doc plus
    ``killed_at`` (results the driver had received) and ``wall_s``.
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
    t0 = time.monotonic()
    kill = {"quiesce": quiesce, "quiesce_s": quiesce_s, "driver_timeout_s": driver_timeout_s}
    spec, pid, killed_at, executed_before_resume, path = _killed_run(
        cluster, address, workdir, name, n, kill_after, kill,
        first_ladder=list(first_ladder), api=api, epoch_s=float(epoch_s),
    )
    trainable = _trainable(spec, block=False)
    delivered = DeliveredLog(os.path.join(spec["log_dir"], "delivered.log"))
    if resume == "helper":
        analysis = resume_with_larger_budget(
            path, trainable, max_t=final_max_t, reuse_actors=True, callbacks=[delivered]
        )
        trials = analysis.trials
        best = analysis.get_best_config(metric="loss", mode="min")
        best_x = float(best["x"]) if best is not None else None
        last_results = {t.trial_id: dict(t.last_result) for t in trials}
        frames = analysis.trial_dataframes
        table = analysis.dataframe()
    else:
        grid = tune.Tuner.restore(path, trainable=trainable, resume_unfinished=True).fit()
        trials = grid._experiment_analysis.trials
        best_config = grid.get_best_result(metric="loss", mode="min").config
        best_x = float(best_config["x"]) if best_config is not None else None
        last_results, frames = _grid_views(grid)
        table = grid.get_dataframe()
    out = _outcome(
        spec, trials, best_x, last_results, frames, table, pid, ladder, executed_before_resume
    )
    out["killed_at"] = killed_at
    out["wall_s"] = time.monotonic() - t0
    return out


def _grid_views(grid: Any) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """``Result.metrics`` and ``Result.metrics_dataframe`` of every result of a ``ResultGrid``,
    by trial id (a trial that never reported has its id only in its path's trial object)."""
    import pandas as pd

    last, frames = {}, {}
    for trial, result in zip(grid._experiment_analysis.trials, grid, strict=True):
        last[trial.trial_id] = dict(result.metrics or {})
        df = result.metrics_dataframe
        frames[trial.trial_id] = df if df is not None else pd.DataFrame()
    return last, frames


def pred_kill_resume(
    address: str,
    workdir: str,
    *,
    n: int = 12,
    kill_after: int = 15,
    epoch_s: float = 0.02,
    driver_timeout_s: float = 240.0,
    name: str = "killed",
    cluster: str = "new",
) -> dict[str, Any]:
    """One Pred scenario (module doc): ``Tuner.fit`` of ``n`` grid configurations with
    :class:`raytune_ext.PredStoppingScheduler` (``max_t`` = :data:`PRED_MAX_T` epochs), the
    driver killed at the first result after ``kill_after`` that stopped its trial, then
    ``Tuner.restore(...).fit()``. Returns the counts of the module doc (:data:`PRED_STRESS_KEYS`)
    plus ``killed_at`` and ``wall_s``."""
    from ray import tune

    from raytune_ext import PRED_STATE_FILE_NAME
    from raytune_ext._journal import Journal

    t0 = time.monotonic()
    kill = {"quiesce": False, "quiesce_s": 0.0, "driver_timeout_s": driver_timeout_s}
    spec, pid, killed_at, executed_before_resume, path = _killed_run(
        cluster, address, workdir, name, n, kill_after, {**kill, "after_stop": True},
        api="tuner", scheduler="pred", epoch_s=float(epoch_s),
    )
    grid = tune.Tuner.restore(
        path, trainable=_trainable(spec, block=False), resume_unfinished=True
    ).fit()
    last_results, frames = _grid_views(grid)
    delivered = _delivered_rows(spec["log_dir"])
    executed, epochs, _ = _epoch_counts(spec["log_dir"], pid, executed_before_resume)
    # trials the killed driver's scheduler stopped before max_t, with the epoch
    stopped = {tid: e for p, tid, e, d in delivered if p == pid and d and e < PRED_MAX_T}
    trained_after = {tid for tid, *_ in executed[executed_before_resume:]}
    rerun = {
        tid
        for tid, epoch in stopped.items()
        if tid in trained_after or int((last_results.get(tid) or {}).get("epoch", -1)) != epoch
    }
    journal = Journal(os.path.join(path, PRED_STATE_FILE_NAME))
    state, records = journal.load()
    stops = {str(t): int(e) for t, e in state["stopped"].items()}
    for rec in records:
        if rec[0] == "o" and len(rec) > 4 and rec[4] and int(rec[2]) < PRED_MAX_T:
            stops[rec[1]] = int(rec[2])
        elif rec[0] == "s":
            stops[rec[1]] = int(rec[2])
    wrong_final = sum(
        1
        for tid, last in last_results.items()
        if int(last.get("epoch", -1)) != stops.get(tid, PRED_MAX_T)
    )
    out: dict[str, Any] = {
        "trials": len(last_results),
        **history_counts(delivered, pid, frames, last_results, grid.get_dataframe()),
        "stopped_before_kill": len(stopped),
        "stopped_rerun": len(rerun),
        "wrong_final": wrong_final,
        "epochs_redone_seen": epochs["epochs_redone_seen"],
        "killed_at": killed_at,
        "wall_s": time.monotonic() - t0,
    }
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
    scheduler: str = "idhb",
    api: str = "run",
    resume: str = "helper",
    cluster: str = "shared",
    first_ladder: Sequence[int] = (3, 9),
    final_max_t: int = 27,
    quiesce: bool = False,
    epoch_s: float = 0.01,
    workdir: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """``repeats`` scenarios of :func:`ray_kill_resume` (``scheduler="idhb"``) or
    :func:`pred_kill_resume` (``"pred"``; ``api``, ``resume``, ladders and ``quiesce`` do not
    apply), each killed after a number of results drawn from ``seed`` (ID-HB: between the 5th
    result and 90 % of the first run; Pred: between the 5th and the 19th, then at the next stop);
    sums of the counts plus ``scenarios`` (the per-scenario dicts). By default the driver is
    killed while trials train (``quiesce=False``) and every epoch takes ``epoch_s`` seconds.
    Starts a quiet local 2-CPU cluster (127.0.0.1) if Ray is not running
    (:func:`~uvp_plugins.bench.methods.ray_methods.quiet_local_ray`)."""
    import numpy as np
    import ray

    from uvp_plugins.bench.methods.ray_methods import quiet_local_ray
    from uvp_plugins.hyperband import HyperbandSchedule
    from uvp_plugins.validation import check_choice, check_int, check_seed

    check_int("repeats", repeats, low=1)
    check_seed("seed", seed)
    check_choice("scheduler", scheduler, ("idhb", "pred"))
    rng = np.random.default_rng(seed)
    # the first ID-HB run trains one Hyperband at its last R with continuation (ID-HB eID):
    # kill it between its 5th result and 90 % of them
    first_epochs = HyperbandSchedule(int(first_ladder[-1]), 3).continuation_budget
    keys = STRESS_KEYS if scheduler == "idhb" else PRED_STRESS_KEYS
    scenarios = []
    with quiet_local_ray(), tempfile.TemporaryDirectory(
        prefix="uvp-stress-ray-", dir=workdir, ignore_cleanup_errors=True
    ) as tmp:
        # the trials' result logs are what the row counts check: Ray's logger callbacks on, in
        # this process and the drivers (quiet_local_ray restores the switch at its exit)
        os.environ["TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"] = "0"
        address = ray.get_runtime_context().gcs_address
        for i in range(repeats):
            where = os.path.join(tmp, f"s{i}")
            if scheduler == "idhb":
                kill_after = int(rng.integers(5, int(0.9 * first_epochs)))
                out = ray_kill_resume(
                    address,
                    where,
                    first_ladder=first_ladder,
                    final_max_t=final_max_t,
                    api=api,
                    resume=resume,
                    kill_after=kill_after,
                    quiesce=quiesce,
                    epoch_s=epoch_s,
                    cluster=cluster,
                )
                note = (
                    f"lost trials {out['lost_trials']}, wrong best {out['wrong_best']}, epochs "
                    f"redone {out['epochs_redone']} ({out['epochs_redone_seen']} seen)"
                )
            else:
                kill_after = int(rng.integers(5, 20))
                out = pred_kill_resume(
                    address, where, kill_after=kill_after, epoch_s=max(epoch_s, 0.02),
                    cluster=cluster,
                )
                note = (
                    f"stopped before the kill {out['stopped_before_kill']}, run again "
                    f"{out['stopped_rerun']}, wrong final {out['wrong_final']}"
                )
            scenarios.append(out)
            if progress:
                print(
                    f"[stress ray {scheduler}/{cluster}] {i + 1}/{repeats}: killed after "
                    f"{out['killed_at']} results; lost rows {out['lost_rows']} of "
                    f"{out['rows_before_kill']} before the kill, dataframe disagrees "
                    f"{out['dataframe_disagrees']}, {note}, {out['wall_s']:.0f}s",
                    file=sys.stderr,
                    flush=True,
                )
    total: dict[str, Any] = {k: sum(int(s[k]) for s in scenarios) for k in keys}
    total["scenarios"] = scenarios
    return total


#: the combinations ``uvp-bench stress --scenarios ray`` runs: (scheduler, api, resume, cluster)
RAY_STRESS_CASES = (
    ("idhb", "run", "helper", "shared"),
    ("idhb", "tuner", "tuner", "shared"),
    ("idhb", "run", "helper", "new"),
    ("idhb", "tuner", "tuner", "new"),
    ("pred", "tuner", "tuner", "new"),
)


def run_ray_stress(repeats: int, seed: int, out: Path) -> list[dict[str, Any]]:
    """The Ray scenarios of ``uvp-bench stress --scenarios ray``
    (:data:`uvp_plugins.bench.stress.EXTERNAL_SCENARIOS`): :func:`stress_ray` for every case
    of :data:`RAY_STRESS_CASES` (ID-HB with ``tune.run`` resumed by
    :func:`raytune_ext.resume_with_larger_budget` and with ``Tuner.fit`` resumed by
    ``Tuner.restore``, the killed driver on the same or on its own cluster; Pred with
    ``Tuner.restore``), ``repeats`` kill points each; one row of summed counts per case. Every
    scenario's details are appended to ``out/ray.jsonl``."""
    rows: list[dict[str, Any]] = []
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "ray.jsonl", "a") as fh:
        for scheduler, api, resume, cluster in RAY_STRESS_CASES:
            total = stress_ray(
                repeats=repeats, seed=seed, scheduler=scheduler, api=api, resume=resume,
                cluster=cluster,
            )
            case = {"scheduler": scheduler, "api": api, "resume": resume, "cluster": cluster}
            rows.append({**case, **{k: total.get(k, "") for k in _ROW_COLUMNS}})
            for scenario in total["scenarios"]:
                fh.write(json.dumps({**case, **scenario}, default=str) + "\n")
    return rows


#: the columns of the table ``uvp-bench stress --scenarios ray`` prints (both schedulers)
_ROW_COLUMNS = tuple(dict.fromkeys(STRESS_KEYS + PRED_STRESS_KEYS))


if __name__ == "__main__":  # a killed driver of this module's scenarios (not a command-line tool)
    if sys.argv[1:2] == ["--hold-cluster"]:
        from uvp_plugins.bench.stress_ray import _hold_cluster

        _hold_cluster(sys.argv[2])
    else:
        # Import the module under its own name, so Ray pickles its functions by reference.
        from uvp_plugins.bench.stress_ray import _driver as _run_driver

        with open(sys.argv[1]) as _fh:
            _run_driver(json.load(_fh))

"""``uvp-bench stress``: many worker processes on one Optuna study, on every storage Optuna offers,
also with ``kill -9`` of a worker and its restart; counts duplicates and lost trials.

Each run: ``--workers`` processes (default 8) load one study with
:class:`~optuna_ext.EnhancedAdaCentSampler` (``seed`` shared, 1000-point mesh) and run
``--trials`` trials each (default 50) of an objective that returns at once (two floats), all
starting together (a file barrier), on one of

* ``sqlite`` - :class:`~optuna.storages.RDBStorage` on a SQLite file (``connect_args={"timeout":
  60}``: eight writers queue for its lock);
* ``journal`` - :class:`~optuna.storages.JournalStorage` on a ``JournalFileBackend``;
* ``postgresql`` - ``RDBStorage`` on a PostgreSQL server the command starts on loopback
  (:class:`uvp_plugins.bench.servers.PostgresServer`, a fresh database per run);
* ``grpc`` - :class:`~optuna.storages.GrpcStorageProxy` clients of
  :func:`~optuna.storages.run_grpc_proxy_server` in front of that PostgreSQL server.

With ``--kill``, a random worker is killed with ``SIGKILL`` once the study has a random 20-60 %
of its trials, and restarted; the restarted worker runs the trials its predecessor had not
finished. Recovery of the killed worker's trial is Optuna's own:

* RDB storages run with a heartbeat (``RDBStorage(heartbeat_interval=2, grace_period=20,
  heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=3))``): a trial
  whose heartbeat stopped is failed by the next worker that starts a trial and re-enqueued with
  its parameters; the restart waits for the grace period, so its first trial does that.
* ``JournalStorage`` and ``GrpcStorageProxy`` have no heartbeat in Optuna 5: once every worker has
  exited, the run fails the trials still RUNNING (they are orphans) and re-enqueues them with
  the same callback.

Either way a last worker runs whatever is then WAITING. Counted per run, from the storage:

* ``trials`` (all states), ``complete``, ``failed``;
* ``duplicates`` - trials whose parameters equal an earlier trial's while free candidates
  remain (a retry and the failed trial it repeats count once);
* ``lost`` - trials that never reached a result: still RUNNING or WAITING at the end, FAILED
  without a completed retry, plus the shortfall of COMPLETE trials below ``workers x trials``.

Other scenarios (Ray: driver killed and resumed) plug in through :data:`EXTERNAL_SCENARIOS`
(``--scenarios optuna,ray``): ``"name": "module:function"``, the function called as
``function(repeats=..., seed=..., out=Path)`` and returning rows (dicts) printed as a table.

Example::

    uvp-bench stress --storages sqlite,journal,postgresql,grpc --workers 8 --trials 50 --repeats 5
    uvp-bench stress --storages postgresql --kill --repeats 5 --json kill.json
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from uvp_plugins.validation import check_int, check_seed

__all__ = ["STORAGES", "StressRun", "run_optuna_stress", "stress_once", "format_runs", "execute"]

STORAGES = ("sqlite", "journal", "postgresql", "grpc")
STUDY = "stress"
N_CANDIDATES = 1000
HEARTBEAT_INTERVAL, GRACE_PERIOD = 2, 20
#: other scenarios: name -> "module:function"; the function is called as
#: ``function(repeats=..., seed=..., out=Path)`` and returns a list of row dicts (printed as a table)
EXTERNAL_SCENARIOS: dict[str, str] = {"ray": "uvp_plugins.bench.stress_ray:run_ray_stress"}
_SPEC_ENV = "UVP_STRESS_STORAGE"  # the worker's storage (JSON; may hold a password)


# ----------------------------------------------------------------------------- storages
def open_storage(spec: dict[str, Any]) -> Any:
    """The Optuna storage a worker (or the supervisor) uses for ``spec``."""
    import optuna
    from optuna.storages import JournalStorage, RDBStorage, RetryHeartbeatStaleTrialCallback
    from optuna.storages.journal import JournalFileBackend

    kind = spec["kind"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        warnings.simplefilter("ignore", FutureWarning)
        if kind in ("sqlite", "postgresql"):
            heartbeat = spec.get("heartbeat")  # [interval, grace period] or None
            return RDBStorage(
                spec["url"],
                engine_kwargs={"connect_args": {"timeout": 60}} if kind == "sqlite" else None,
                heartbeat_interval=heartbeat[0] if heartbeat else None,
                grace_period=heartbeat[1] if heartbeat else None,
                heartbeat_stale_trial_callback=(
                    RetryHeartbeatStaleTrialCallback(max_retry=3) if heartbeat else None
                ),
            )
        if kind == "journal":
            return JournalStorage(JournalFileBackend(spec["path"]))
        if kind == "grpc":
            from optuna.storages import GrpcStorageProxy

            return GrpcStorageProxy(host=spec["host"], port=spec["port"])
    raise ValueError(f"storage must be one of {', '.join(STORAGES)}, got {kind!r}")


@contextlib.contextmanager
def _postgres_if_needed(kinds: Sequence[str]) -> Iterator[Any]:
    if not any(k in ("postgresql", "grpc") for k in kinds):
        yield None
        return
    from uvp_plugins.bench.servers import PostgresServer

    with PostgresServer() as pg:
        yield pg


@contextlib.contextmanager
def _storage_spec(
    kind: str, root: Path, pg: Any, name: str, hb: tuple[int, int] | None
) -> Iterator[dict[str, Any]]:
    if kind == "sqlite":
        yield {"kind": kind, "url": f"sqlite:///{root / 'study.db'}", "heartbeat": hb}
    elif kind == "journal":
        yield {"kind": kind, "path": str(root / "study.log")}
    elif kind == "postgresql":
        yield {"kind": kind, "url": pg.create_database(name), "heartbeat": hb}
    elif kind == "grpc":
        from uvp_plugins.bench.servers import GrpcProxyServer

        with GrpcProxyServer(pg.create_database(name)) as proxy:
            yield {"kind": kind, "host": proxy.host, "port": proxy.port}
    else:
        raise ValueError(f"storage must be one of {', '.join(STORAGES)}, got {kind!r}")


# ------------------------------------------------------------------------------- worker
def objective(trial: Any) -> float:
    """Returns at once: the race between workers is as tight as it gets."""
    x = trial.suggest_float("x", -5.0, 5.0)
    y = trial.suggest_float("y", -5.0, 5.0)
    return (x - 1.0) ** 2 + (y + 2.0) ** 2


def _worker(run_dir: Path, index: int, n_trials: int, seed: int) -> int:
    import optuna

    from optuna_ext import EnhancedAdaCentSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")
    spec = json.loads(os.environ[_SPEC_ENV])
    study = optuna.load_study(
        study_name=STUDY,
        storage=open_storage(spec),
        sampler=EnhancedAdaCentSampler(seed=seed, n_candidates=N_CANDIDATES),
    )
    progress = run_dir / f"worker{index}.done"
    done = len(progress.read_text().split()) if progress.exists() else 0
    (run_dir / f"worker{index}.ready").touch()
    while not (run_dir / "go").exists():  # all workers start together
        time.sleep(0.005)

    def record(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        with open(progress, "a") as f:
            f.write(f"{trial.number}\n")

    study.optimize(objective, n_trials=max(0, n_trials - done), callbacks=[record])
    return 0


def _start_worker(run_dir: Path, index: int, n_trials: int, seed: int, spec: dict[str, Any]) -> subprocess.Popen[bytes]:
    env = {**os.environ, _SPEC_ENV: json.dumps(spec)}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    with open(run_dir / f"worker{index}.log", "ab") as log:  # the child keeps its own copy
        return subprocess.Popen(
            [sys.executable, "-m", "uvp_plugins.bench.stress", "_worker", str(run_dir),
             str(index), str(n_trials), str(seed)],
            env=env, stdout=log, stderr=log,
        )


def _done(run_dir: Path, workers: int) -> int:
    total = 0
    for i in range(workers):
        p = run_dir / f"worker{i}.done"
        if p.exists():
            total += len(p.read_text().split())
    return total


# ----------------------------------------------------------------------------- one run
@dataclass
class StressRun:
    """One run's counts (module doc)."""

    storage: str
    kill: bool
    repeat: int
    workers: int
    trials_per_worker: int
    trials: int
    complete: int
    failed: int
    retried: int
    duplicates: int
    lost: int
    killed_worker: int | None
    orphans_failed_by_hand: int
    seconds: float


def _recover_orphans(study: Any, heartbeat: tuple[int, int] | None) -> int:
    """After every worker exited: let the heartbeat fail stale trials (RDB storages), then fail
    what is still RUNNING by hand - orphans, as no worker is left - and re-enqueue it with
    Optuna's retry callback. Returns the number failed by hand: storages without a heartbeat,
    or a worker killed between creating its trial and its first heartbeat (Optuna's heartbeat
    never fails a trial that has none)."""
    import optuna
    from optuna.storages import RetryHeartbeatStaleTrialCallback
    from optuna.trial import TrialState

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if heartbeat:
            time.sleep(heartbeat[0] + heartbeat[1])
            optuna.storages.fail_stale_trials(study)
        retry = RetryHeartbeatStaleTrialCallback(max_retry=3)
        by_hand = 0
        for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            if study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL):
                retry(study, study._storage.get_trial(t._trial_id))
                by_hand += 1
    return by_hand


def count_run(trials: Sequence[Any], target: int, n_candidates: int = N_CANDIDATES) -> dict[str, int]:
    """``complete``, ``failed``, ``retried``, ``duplicates`` and ``lost`` of a finished run."""
    from optuna.trial import TrialState

    retried_of: dict[int, list[int]] = {}  # original number -> retry numbers
    for t in trials:
        for n in t.system_attrs.get("retry_history", []) or []:
            retried_of.setdefault(int(n), []).append(t.number)
    by_number = {t.number: t for t in trials}
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    failed = [t for t in trials if t.state == TrialState.FAIL]
    unfinished = [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    fail_lost = [
        t for t in failed
        if not any(by_number[r].state == TrialState.COMPLETE for r in retried_of.get(t.number, []))
    ]
    seen: Counter[tuple[Any, ...]] = Counter()
    duplicates = 0
    for t in sorted(trials, key=lambda t: t.number):
        if t.number in retried_of or "x" not in t.params or "y" not in t.params:
            continue  # a retried original: its retry carries the configuration
        key = (t.params["x"], t.params["y"])
        if seen[key] and len(seen) < n_candidates:
            duplicates += 1
        seen[key] += 1
    return {
        "complete": len(complete),
        "failed": len(failed),
        "retried": sum(1 for t in failed if t.number in retried_of),
        "duplicates": duplicates,
        "lost": len(unfinished) + len(fail_lost) + max(0, target - len(complete)),
    }


def stress_once(
    kind: str,
    *,
    workers: int = 8,
    trials: int = 50,
    seed: int = 0,
    kill: bool = False,
    repeat: int = 0,
    pg: Any = None,
    rng: random.Random | None = None,
    root: Path | None = None,
    timeout: float = 1800.0,
    heartbeat: tuple[int, int] = (HEARTBEAT_INTERVAL, GRACE_PERIOD),
    inspect: Callable[[list[Any]], None] | None = None,
) -> StressRun:
    """One run on storage ``kind`` (module doc); ``pg`` is a started
    :class:`~uvp_plugins.bench.servers.PostgresServer` for ``postgresql``/``grpc``;
    ``heartbeat`` = ``(heartbeat_interval, grace_period)`` of the RDB storages in kill runs;
    ``inspect`` is called with the final trials."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rng = rng or random.Random(seed)
    hb = heartbeat if kill and kind in ("sqlite", "postgresql") else None
    with contextlib.ExitStack() as stack:
        if root is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="uvp-stress-")))
        run_dir = root / f"{kind}-{'kill' if kill else 'plain'}-{repeat}"
        run_dir.mkdir(parents=True)
        name = f"{kind}_{'kill' if kill else 'plain'}_{repeat}_{os.getpid()}"
        spec = stack.enter_context(_storage_spec(kind, run_dir, pg, name, hb))
        storage = open_storage(spec)
        optuna.create_study(study_name=STUDY, storage=storage, direction="minimize")
        procs = {i: _start_worker(run_dir, i, trials, seed, spec) for i in range(workers)}
        stack.callback(_stop_all, procs)
        deadline = time.monotonic() + timeout
        while not all((run_dir / f"worker{i}.ready").exists() for i in range(workers)):
            _check_alive(procs, run_dir)
            _check_deadline(deadline)
            time.sleep(0.05)
        t0 = time.monotonic()
        (run_dir / "go").touch()
        killed: int | None = None
        if kill:
            at = int(rng.uniform(0.2, 0.6) * workers * trials)
            while _done(run_dir, workers) < at:
                _check_alive(procs, run_dir)
                _check_deadline(deadline)
                time.sleep(0.02)
            killed = rng.randrange(workers)
            procs[killed].send_signal(signal.SIGKILL)
            procs[killed].wait()
            if hb:  # restart once the heartbeat shows the trial as stale
                time.sleep(hb[0] + hb[1])
            procs[killed] = _start_worker(run_dir, killed, trials, seed, spec)
        for _i, p in procs.items():
            p.wait(max(1.0, deadline - time.monotonic()))
        _check_alive(procs, run_dir, finished=True)
        study = optuna.load_study(study_name=STUDY, storage=storage)
        by_hand = 0
        if any(t.state == optuna.trial.TrialState.RUNNING for t in study.get_trials(deepcopy=False)):
            by_hand = _recover_orphans(study, hb)
        waiting = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
        if waiting:  # the last worker: runs what was re-enqueued after everyone finished
            p = _start_worker(run_dir, workers, len(waiting), seed, spec)
            p.wait(max(1.0, deadline - time.monotonic()))
            _check_alive({workers: p}, run_dir, finished=True)
        seconds = time.monotonic() - t0
        final = optuna.load_study(study_name=STUDY, storage=storage).get_trials(deepcopy=False)
        counts = count_run(final, workers * trials)
        if inspect is not None:
            inspect(final)
        return StressRun(
            storage=kind, kill=kill, repeat=repeat, workers=workers, trials_per_worker=trials,
            trials=len(final), killed_worker=killed, orphans_failed_by_hand=by_hand,
            seconds=round(seconds, 1), **counts,
        )
    raise AssertionError("unreachable")


def _stop_all(procs: dict[int, subprocess.Popen[bytes]]) -> None:
    for p in procs.values():
        if p.poll() is None:
            p.kill()
            p.wait()


def _check_alive(procs: dict[int, subprocess.Popen[bytes]], run_dir: Path, finished: bool = False) -> None:
    for i, p in procs.items():
        code = p.poll()
        if (code is not None and code != 0) or (finished and code is None):
            log = run_dir / f"worker{i}.log"
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(f"stress worker {i} exited with code {code}:\n{tail}")


def _check_deadline(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise TimeoutError("stress run exceeded its time limit")


# ------------------------------------------------------------------------ the command
def run_optuna_stress(
    storages: Sequence[str],
    *,
    workers: int = 8,
    trials: int = 50,
    repeats: int = 5,
    seed: int = 0,
    kill: bool = False,
    plain: bool = True,
    progress: Callable[[StressRun], None] | None = None,
) -> list[StressRun]:
    """Every storage x repeat (plain runs, and kill runs with ``kill``); one PostgreSQL server
    for the whole call."""
    rng = random.Random(seed)
    modes = ([False] if plain else []) + ([True] if kill else [])
    runs: list[StressRun] = []
    with _postgres_if_needed(storages) as pg:
        for kind in storages:
            for mode in modes:
                for r in range(repeats):
                    run = stress_once(
                        kind, workers=workers, trials=trials, seed=seed + r, kill=mode,
                        repeat=r, pg=pg, rng=rng,
                    )
                    runs.append(run)
                    if progress is not None:
                        progress(run)
    return runs


def format_runs(runs: Sequence[StressRun]) -> str:
    """Per storage and mode: runs, trials and complete trials per run (range), totals of failed,
    retried, failed by hand after the workers exited, duplicates and lost trials; mean time."""
    cols = ["storage", "kill -9", "runs", "trials", "complete", "failed", "retried",
            "by hand", "duplicates", "lost", "s/run"]
    groups: dict[tuple[str, bool], list[StressRun]] = {}
    for r in runs:
        groups.setdefault((r.storage, r.kill), []).append(r)

    def span(values: list[int]) -> str:
        return str(values[0]) if min(values) == max(values) else f"{min(values)}-{max(values)}"

    rows = [
        [storage, "yes" if kill else "no", str(len(rs)), span([r.trials for r in rs]),
         span([r.complete for r in rs]), str(sum(r.failed for r in rs)),
         str(sum(r.retried for r in rs)), str(sum(r.orphans_failed_by_hand for r in rs)),
         str(sum(r.duplicates for r in rs)), str(sum(r.lost for r in rs)),
         f"{sum(r.seconds for r in rs) / len(rs):.1f}"]
        for (storage, kill), rs in groups.items()
    ]
    widths = [max(len(c), *(len(row[j]) for row in rows)) if rows else len(c) for j, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) if j > 1 else c.ljust(w) for j, (c, w) in enumerate(zip(cols, widths, strict=True)))]
    lines.append("-" * len(lines[0]))
    lines += [
        "  ".join(v.rjust(w) if j > 1 else v.ljust(w) for j, (v, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    if runs:
        lines.append(
            f"trials, complete: per run (target {runs[0].workers} workers x "
            f"{runs[0].trials_per_worker} trials = {runs[0].workers * runs[0].trials_per_worker}); "
            "failed, retried, by hand, duplicates, lost: totals over the runs"
        )
    return "\n".join(lines)


def _run_external(name: str, repeats: int, seed: int, out: Path) -> list[dict[str, Any]]:
    target = EXTERNAL_SCENARIOS[name]
    module_name, func_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise ValueError(
            f"scenario {name!r} is not available in this version ({module_name} is missing)"
        ) from None
    rows: list[dict[str, Any]] = getattr(module, func_name)(repeats=repeats, seed=seed, out=out)
    return rows


def _format_rows(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "no rows"
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
    lines = [" ".join(f"{c:<{widths[c]}}" for c in cols)]
    lines += [" ".join(f"{r.get(c, '')!s:<{widths[c]}}" for c in cols) for r in rows]
    return "\n".join(lines)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scenarios", default="optuna", help=f"comma-separated: optuna, {', '.join(EXTERNAL_SCENARIOS)} (default optuna)")
    p.add_argument("--storages", default=",".join(STORAGES), help=f"comma-separated subset of {', '.join(STORAGES)} (default: all)")
    p.add_argument("--workers", type=int, default=8, help="worker processes per run (default 8)")
    p.add_argument("--trials", type=int, default=50, help="trials per worker (default 50)")
    p.add_argument("--repeats", type=int, default=5, help="runs per storage and mode (default 5)")
    p.add_argument("--seed", type=int, default=0, help="sampler seed of run 0 (run r: seed + r) and of the kill schedule")
    p.add_argument("--kill", action="store_true", help="also runs with kill -9 of a random worker and its restart")
    p.add_argument("--only-kill", action="store_true", help="only the kill -9 runs")
    p.add_argument("--json", default=None, help="also write every run as JSON to this file")
    p.add_argument("--out", default="uvp-stress", help="output directory of external scenarios (default uvp-stress)")


def execute(args: argparse.Namespace) -> int:
    """``uvp-bench stress``: run the scenarios, print their tables; exit 1 on any duplicate or
    lost trial (Ray: also a wrong best configuration, decisions that differ, a lost or extra
    history row, a history that disagrees with ``Result.metrics``, a stopped trial run again)."""
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    known = ["optuna", *EXTERNAL_SCENARIOS]
    bad = [s for s in scenarios if s not in known]
    if bad or not scenarios:
        raise ValueError(f"--scenarios must name some of {', '.join(known)}; got {args.scenarios!r}")
    storages = [s.strip() for s in args.storages.split(",") if s.strip()]
    bad = [s for s in storages if s not in STORAGES]
    if bad or not storages:
        raise ValueError(f"--storages must name some of {', '.join(STORAGES)}; got {args.storages!r}")
    workers = check_int("--workers", args.workers, 1, 64)
    trials = check_int("--trials", args.trials, 1)
    repeats = check_int("--repeats", args.repeats, 1)
    seed = int(check_seed("--seed", args.seed) or 0)
    status = 0
    if "optuna" in scenarios:
        def show(run: StressRun) -> None:
            print(
                f"[stress] {run.storage:<10} kill={'yes' if run.kill else 'no ':<3} run {run.repeat}: "
                f"{run.trials} trials, {run.complete} complete, {run.failed} failed, "
                f"{run.duplicates} duplicates, {run.lost} lost ({run.seconds} s)",
                file=sys.stderr, flush=True,
            )

        runs = run_optuna_stress(
            storages, workers=workers, trials=trials, repeats=repeats, seed=seed,
            kill=args.kill or args.only_kill, plain=not args.only_kill, progress=show,
        )
        print(format_runs(runs))
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps([asdict(r) for r in runs], indent=1))
        status = 1 if any(r.duplicates or r.lost for r in runs) else 0
    for name in scenarios:
        if name != "optuna":
            rows = _run_external(name, repeats, seed, Path(args.out))
            print(f"\n{name}:\n{_format_rows(rows)}")
            bad_counts = (
                "lost", "lost_trials", "wrong_best", "decisions_differ", "duplicates",
                "lost_rows", "extra_rows", "dataframe_disagrees", "stopped_rerun", "wrong_final",
            )
            if any(int(r.get(k) or 0) for r in rows for k in bad_counts):
                status = 1
    return status


def _register() -> None:
    import uvp_plugins.bench.studies  # noqa: F401  (the built-in subcommands are listed first)
    from uvp_plugins.bench.study import Study, register_study

    register_study(
        Study(
            name="stress",
            help="reliability: many processes on one Optuna study (SQLite, journal, PostgreSQL, "
            "gRPC proxy), kill -9 and restart; duplicates and lost trials",
            description="Many worker processes on one Optuna study with EnhancedAdaCentSampler, "
            "on SQLite, JournalFileBackend, PostgreSQL and the gRPC proxy (started on loopback), "
            "optionally with kill -9 of a worker and its restart: trials, duplicates, lost "
            "trials. --scenarios ray adds the Ray driver kill-and-resume scenarios (ID-HB and "
            "Pred; lost trials, decisions, lost history rows).",
            add_arguments=_arguments,
            remeasure=True,
            execute=execute,
        )
    )


_register()


if __name__ == "__main__":  # internal: one worker process of a run (see _start_worker)
    argv = sys.argv[1:]
    if argv[:1] != ["_worker"]:
        raise SystemExit("usage: uvp-bench stress ... (this module's own entry runs one worker)")
    raise SystemExit(_worker(Path(argv[1]), int(argv[2]), int(argv[3]), int(argv[4])))

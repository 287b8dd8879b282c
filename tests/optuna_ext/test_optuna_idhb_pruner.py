"""IterativeDeepeningHyperbandPruner with real Optuna: a study run at max_resource=9 and continued
at 27 trains exactly the core's eID continuation ledger; threads, two processes on one storage,
restarts (also after a killed process), bad input, failures, the docstring example."""

from __future__ import annotations

import doctest
import json
import math
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState
from shared_helpers import wait_for_workers

import optuna_ext._idhb_pruner as idhb_module
from optuna_ext import IterativeDeepeningHyperbandPruner
from optuna_ext._idhb_replay import RECORD_ATTR, RECORD_FORMAT, REENTRY_ATTR, RETRY_ATTR
from uvp_plugins.hyperband import HyperbandSchedule, IterativeDeepeningHyperband

pytestmark = pytest.mark.optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def tmp_path() -> Any:
    """A temporary directory in memory when the machine has /dev/shm: the SQLite and Journal
    files stay real files shared by processes, without a disk sync per Optuna commit (about 12 ms
    each on the CI disk, which made one study take 25 s)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix="idhb-test-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def loss(p: dict[str, float], step: int) -> float:
    """Crossing learning curves (slow configurations look bad early, good late) plus a
    deterministic per-(configuration, step) noise: rankings change between rungs."""
    noise = np.random.default_rng([int(p["a"] * 2**40), step]).normal()
    return p["a"] + 2.0 * p["b"] * math.exp(-step / (30.0 * p["tau"])) + 0.3 * noise


class Trainer:
    """An objective with checkpoints keyed by the configuration id; logs every trained step."""

    def __init__(self, pre_check: bool = True, sleep: float = 0.0) -> None:
        self.checkpoints: dict[int, int] = {}
        self.trained: list[tuple[int, int]] = []
        self.pre_check = pre_check
        self.sleep = sleep
        self._lock = threading.Lock()

    def __call__(self, trial: optuna.Trial) -> float:
        p = {
            "a": trial.suggest_float("a", 0.0, 1.0),
            "b": trial.suggest_float("b", 0.0, 1.0),
            "tau": trial.suggest_float("tau", 0.05, 1.0),
        }
        if self.pre_check and trial.should_prune():
            raise optuna.TrialPruned()
        key = IterativeDeepeningHyperbandPruner.configuration_id(trial)
        with self._lock:
            done = self.checkpoints.get(key, 0)
        value = math.nan
        for step in range(done + 1, trial.study.pruner.max_resource + 1):
            if self.sleep:
                time.sleep(self.sleep)
            value = loss(p, step)
            with self._lock:
                self.checkpoints[key] = step
                self.trained.append((key, step))
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return value


def new_configurations(trials: list[optuna.trial.FrozenTrial]) -> list[dict[str, Any]]:
    """Parameters of the trials that introduced a configuration, in trial-number order."""
    out = []
    for t in sorted(trials, key=lambda t: t.number):
        record = t.system_attrs.get(RECORD_ATTR) or {}
        if REENTRY_ATTR in t.system_attrs or RETRY_ATTR in t.system_attrs:
            continue
        if record.get("spare") or record.get("rejected"):
            continue
        out.append(t.params)
    return out


def offline_core(
    configs: list[dict[str, Any]], variant: str, levels: tuple[int, ...] = (9, 27)
) -> IterativeDeepeningHyperband:
    """The core run offline on the same configurations, in the same order."""
    it = iter(configs)
    hb = IterativeDeepeningHyperband(levels[0], 3, variant, mode="min")
    hb.run(lambda rng: next(it), loss)
    for _ in levels[1:]:
        hb.deepen()
        hb.run(lambda rng: next(it), loss)
    return hb


def evaluated(core: IterativeDeepeningHyperband, params_of: Callable[[Any], dict]) -> set:
    """Every evaluation as (parameters, budget, value)."""
    return {
        (
            tuple(sorted(params_of(core.config(c)).items())),
            core.rung_budget(core.bracket_of(c), r),
            v,
        )
        for (c, r), v in core.results.items()
    }


def check_against_offline_core(
    study: optuna.Study, pruner: IterativeDeepeningHyperbandPruner, variant: str
) -> IterativeDeepeningHyperband:
    """The pruner's decisions are the offline core's on the same configurations."""
    trials = study.get_trials(deepcopy=False)
    by_number = {t.number: t for t in trials}
    ours = pruner.core(study)
    ref = offline_core(new_configurations(trials), variant)
    assert ours.finished and ours.max_budget == 27
    assert ours.ledger == ref.ledger
    assert evaluated(ours, lambda n: by_number[n].params) == evaluated(ref, lambda c: c)
    assert ours.incumbent is not None and ref.incumbent is not None
    assert ours.incumbent.value == ref.incumbent.value and ours.incumbent.budget == 27
    best = pruner.best_trial(study)
    assert best is not None and best.params == ref.incumbent.config
    assert best.intermediate_values[27] == ref.incumbent.value
    return ours


def run_continued(
    storage: Any, variant: str, trainer: Trainer, n_jobs: int = 1
) -> tuple[optuna.Study, IterativeDeepeningHyperbandPruner, int]:
    """Optimise at max_resource=9 until the pruner stops the study, then load it with 27."""
    study = optuna.create_study(
        study_name="idhb",
        storage=storage,
        sampler=optuna.samplers.TPESampler(seed=0),
        pruner=IterativeDeepeningHyperbandPruner(max_resource=9, variant=variant),
    )
    study.optimize(trainer, n_trials=300, n_jobs=n_jobs)
    steps_at_9 = len(trainer.trained)
    pruner = IterativeDeepeningHyperbandPruner(max_resource=27, variant=variant)
    study = optuna.load_study(
        study_name="idhb",
        storage=storage,
        sampler=optuna.samplers.TPESampler(seed=1),
        pruner=pruner,
    )
    study.optimize(trainer, n_trials=300, n_jobs=n_jobs)
    return study, pruner, steps_at_9


# ----------------------------------------------------------------------------- acceptance
def test_continued_study_trains_exactly_the_core_eid_continuation_ledger(tmp_path: Path) -> None:
    trainer = Trainer()
    study, pruner, steps_at_9 = run_continued(f"sqlite:///{tmp_path / 's.db'}", "efficient", trainer)
    fresh_27 = HyperbandSchedule(27, 3)
    # the run at 9 is one Hyperband at 9; continuing costs what one Hyperband at 27 costs
    assert steps_at_9 == HyperbandSchedule(9, 3).continuation_budget == 69
    assert len(trainer.trained) == fresh_27.continuation_budget == 357
    core = check_against_offline_core(study, pruner, "efficient")
    assert core.ledger.continuation == len(trainer.trained)
    assert core.ledger.full_charge == fresh_27.total_budget
    # nothing is trained twice: every (configuration, step) once
    assert max(Counter(trainer.trained).values()) == 1
    # the pruner stopped each optimize() itself: no trial without work
    states = Counter(t.state for t in study.trials)
    assert set(states) == {TrialState.COMPLETE, TrialState.PRUNED}
    # COMPLETE: the trials that reached their bracket's last rung, at 9 and then at 27
    last_rungs = sum(b.rungs[-1].n for b in HyperbandSchedule(9, 3).brackets) + sum(
        b.rungs[-1].n for b in fresh_27.brackets
    )
    assert states[TrialState.COMPLETE] == last_rungs == 5 + 8
    assert len(new_configurations(study.trials)) == fresh_27.n_configs == 49
    assert pruner.finished(study)


@pytest.mark.parametrize("variant", ["preserving", "discarding"])
def test_other_variants_decide_what_re_enters_as_the_core_does(variant: str) -> None:
    trainer = Trainer()
    study, pruner, _ = run_continued(optuna.storages.InMemoryStorage(), variant, trainer)
    core = check_against_offline_core(study, pruner, variant)
    assert core.ledger.continuation == len(trainer.trained)


def test_hyperband_at_9_keeps_its_brackets_when_continued() -> None:
    storage = optuna.storages.InMemoryStorage()
    trainer = Trainer()
    study = optuna.create_study(
        study_name="idhb", storage=storage,
        pruner=IterativeDeepeningHyperbandPruner(max_resource=9),
        sampler=optuna.samplers.RandomSampler(seed=3),
    )
    study.optimize(trainer)
    before = IterativeDeepeningHyperbandPruner(max_resource=9).core(study)
    assert before.finished and before.ledger.continuation == 69
    first = {t.number: t.params for t in study.trials}
    pruner = IterativeDeepeningHyperbandPruner(max_resource=27)
    study = optuna.load_study(study_name="idhb", storage=storage, pruner=pruner)
    study.optimize(trainer)
    after = pruner.core(study)
    # every configuration keeps its bracket and pool position, every result at 9 is reused
    for cid, cfg in before.configs.items():
        assert after.bracket_of(cid) == before.bracket_of(cid) and after.config(cid) == cfg
    for key, value in before.results.items():
        assert after.results[key] == value
    assert all(study.trials[n].params == p for n, p in first.items())


STATES = Path(__file__).resolve().parent / "states"


def _stored_study(path: Path) -> optuna.Study:
    """A study holding the trials of ``path`` exactly as an earlier release stored them."""
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=1))
    for t in json.loads(path.read_text())["trials"]:
        study.add_trial(optuna.trial.create_trial(
            state=TrialState[t["state"]],
            value=t["value"],
            params=t["params"],
            distributions={k: optuna.distributions.json_to_distribution(d)
                           for k, d in t["distributions"].items()},
            intermediate_values={int(k): v for k, v in t["intermediate_values"].items()},
            user_attrs=t["user_attrs"],
            system_attrs=t["system_attrs"],
        ))
    return study


@pytest.mark.parametrize(
    "path", sorted(STATES.glob("idhb-trial-records.v*.json")), ids=lambda p: p.stem
)
def test_a_study_run_by_an_earlier_release_continues(path: Path) -> None:
    """Trials whose pruner records an earlier release wrote (version 1: ``"v": 1`` instead of
    the format tag) are read as they were: the study at 9 continued at 27 trains exactly the
    offline core's schedule, and the records written now carry the format tag."""
    study = _stored_study(path)
    version = int(path.name.split(".v")[1].split(".")[0])
    old = [t.system_attrs[RECORD_ATTR] for t in study.trials]
    assert all(RECORD_FORMAT.version_of(r) == version for r in old)
    before = IterativeDeepeningHyperbandPruner(max_resource=9).core(study)
    assert before.finished and before.ledger.continuation == 69
    pruner = IterativeDeepeningHyperbandPruner(max_resource=27)
    study.pruner = pruner
    study.optimize(Trainer())
    check_against_offline_core(study, pruner, "efficient")
    new = [t.system_attrs.get(RECORD_ATTR) for t in study.trials[len(old):]]
    written = [r for r in new if r is not None]
    assert written and all(r["format"] == RECORD_FORMAT.tag and "v" not in r for r in written)
    with pytest.raises(ValueError, match="state format must be 'uvp-optuna-idhb-trial/2'"):
        RECORD_FORMAT.read({**old[0], "v": 3})


# ----------------------------------------------------------------------------- parallel use
def test_threads_train_the_same_schedule() -> None:
    trainer = Trainer(sleep=0.002)
    study, pruner, _ = run_continued(optuna.storages.InMemoryStorage(), "efficient", trainer, 2)
    core = check_against_offline_core(study, pruner, "efficient")
    # trials without work are pruned before they train (trial.should_prune() before training)
    assert len(trainer.trained) == core.ledger.continuation == 357
    assert max(Counter(trainer.trained).values()) == 1


def test_threads_without_the_pre_check_lose_at_most_a_step_per_spare_trial() -> None:
    trainer = Trainer(pre_check=False, sleep=0.002)
    study, pruner, _ = run_continued(optuna.storages.InMemoryStorage(), "efficient", trainer, 2)
    core = check_against_offline_core(study, pruner, "efficient")
    spares = [t for t in study.trials if (t.system_attrs.get(RECORD_ATTR) or {}).get("spare")]
    assert len(trainer.trained) <= core.ledger.continuation + len(spares)
    assert all((t.last_step or 0) <= 1 for t in spares)


WORKER = textwrap.dedent(
    """
    import json, math, os, sys, time
    import numpy as np
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from optuna_ext import IterativeDeepeningHyperbandPruner
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    where, backend, max_resource, start, ckpt_dir, log = sys.argv[1:7]
    max_resource, start = int(max_resource), float(start)
    sleep = float(os.environ.get("IDHB_SLEEP", "0.003"))
    if backend == "journal":
        storage = JournalStorage(JournalFileBackend(where))
    elif backend == "grpc":
        from optuna.storages import GrpcStorageProxy
        storage = GrpcStorageProxy(host="127.0.0.1", port=int(where))
    elif backend == "heartbeat":
        from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback
        storage = RDBStorage(where, heartbeat_interval=1, grace_period=2,
                             heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback())
    else:
        storage = where

    def loss(p, step):
        noise = np.random.default_rng([int(p["a"] * 2**40), step]).normal()
        return p["a"] + 2.0 * p["b"] * math.exp(-step / (30.0 * p["tau"])) + 0.3 * noise

    def objective(trial):
        p = {"a": trial.suggest_float("a", 0.0, 1.0), "b": trial.suggest_float("b", 0.0, 1.0),
             "tau": trial.suggest_float("tau", 0.05, 1.0)}
        if trial.should_prune():
            raise optuna.TrialPruned()
        key = IterativeDeepeningHyperbandPruner.configuration_id(trial)
        path = os.path.join(ckpt_dir, f"{key}.json")
        done = json.load(open(path))["step"] if os.path.exists(path) else 0
        value = float("nan")
        for step in range(done + 1, max_resource + 1):
            time.sleep(sleep)
            value = loss(p, step)
            with open(path + ".tmp", "w") as fh:
                json.dump({"step": step}, fh)
            os.replace(path + ".tmp", path)
            with open(log, "a") as fh:
                fh.write(f"{key} {step}\\n")
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return value

    study = optuna.load_study(study_name="idhb", storage=storage,
                              sampler=optuna.samplers.TPESampler(seed=os.getpid()),
                              pruner=IterativeDeepeningHyperbandPruner(max_resource=max_resource))
    while time.time() < start:  # start the workers together
        time.sleep(0.005)
    study.optimize(objective, n_trials=300)
    """
)


PG_BIN = Path("/usr/lib/postgresql/15/bin")


@pytest.fixture
def postgres_url(tmp_path: Path) -> Any:
    """A throwaway PostgreSQL 15 server on a free loopback port (run as the ``postgres`` user
    when the tests run as root: the server refuses root)."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"PostgreSQL 15 server binaries not installed in {PG_BIN}")
    pg = tmp_path / "pg"
    pg.mkdir()
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(tmp_path, "postgres")
        shutil.chown(pg, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    subprocess.run(
        [*as_user, str(PG_BIN / "initdb"), "-D", str(pg / "data"), "-A", "trust", "-U",
         "postgres", "--no-sync"],
        check=True, capture_output=True,
    )
    ctl = [*as_user, str(PG_BIN / "pg_ctl"), "-D", str(pg / "data")]
    options = f"-k {pg} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*ctl, "-o", options, "-l", str(pg / "log"), "-w", "start"],
                   check=True, capture_output=True)
    try:
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*ctl, "-m", "immediate", "stop"], capture_output=True)


def _storage(tmp_path: Path, backend: str, url: str | None = None) -> tuple[str, Any]:
    if backend == "journal":
        where = str(tmp_path / "journal.log")
        return where, JournalStorage(JournalFileBackend(where))
    where = url or f"sqlite:///{tmp_path / 'study.db'}"
    return where, where


def _workers(
    tmp_path: Path, where: str, backend: str, max_resource: int, n: int, env: dict | None = None
) -> list[subprocess.Popen]:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    (tmp_path / "ckpt").mkdir(exist_ok=True)
    start = time.time() + 2.0
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return [
        subprocess.Popen(
            [sys.executable, str(script), where, backend, str(max_resource), str(start),
             str(tmp_path / "ckpt"), str(tmp_path / f"steps{i}.log")],
            stderr=subprocess.PIPE, env=env,
        )
        for i in range(n)
    ]


def _trained(tmp_path: Path) -> list[tuple[int, int]]:
    out = []
    for log in tmp_path.glob("steps*.log"):
        out += [tuple(map(int, line.split())) for line in log.read_text().split("\n") if line]
    return out  # type: ignore[return-value]


@pytest.fixture
def grpc_port(tmp_path: Path) -> Any:
    """An Optuna gRPC storage proxy on a free loopback port, in front of a Journal file."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = (
        "import optuna, sys\n"
        "from optuna.storages import JournalStorage\n"
        "from optuna.storages.journal import JournalFileBackend\n"
        "optuna.logging.set_verbosity(optuna.logging.WARNING)\n"
        "storage = JournalStorage(JournalFileBackend(sys.argv[1]))\n"
        "optuna.storages.run_grpc_proxy_server(storage, host='127.0.0.1', port=int(sys.argv[2]))\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "grpc-journal.log"), str(port)],
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield port
    finally:
        server.kill()
        server.wait()


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.parametrize("backend", ["journal", "postgresql", "grpc"])
def test_two_processes_on_one_storage_run_at_9_then_continue_at_27(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if backend == "postgresql" else None
    if backend == "grpc":
        from optuna.storages import GrpcStorageProxy

        port = request.getfixturevalue("grpc_port")
        where, storage = str(port), GrpcStorageProxy(host="127.0.0.1", port=port)
    else:
        where, storage = _storage(tmp_path, backend, url)
    optuna.create_study(study_name="idhb", storage=storage)
    wait_for_workers(_workers(tmp_path, where, backend, 9, 2))
    study = optuna.load_study(study_name="idhb", storage=storage)
    core9 = IterativeDeepeningHyperbandPruner(max_resource=9).core(study)
    assert core9.finished and core9.ledger.continuation == 69
    wait_for_workers(_workers(tmp_path, where, backend, 27, 2))
    study = optuna.load_study(study_name="idhb", storage=storage)
    pruner = IterativeDeepeningHyperbandPruner(max_resource=27)
    core = check_against_offline_core(study, pruner, "efficient")
    trained = _trained(tmp_path)
    assert len(trained) == core.ledger.continuation == 357
    assert max(Counter(trained).values()) == 1
    assert all(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in study.trials)


# ----------------------------------------------------------------------------- restarts
def test_restart_from_storage_mid_run_continues_the_same_schedule(tmp_path: Path) -> None:
    storage = JournalStorage(JournalFileBackend(str(tmp_path / "j.log")))
    trainer = Trainer()
    for n_trials in (7, 5, 300):  # three sessions at 9, each a new process's objects
        study = optuna.create_study(
            study_name="idhb", storage=storage, load_if_exists=True,
            sampler=optuna.samplers.TPESampler(seed=n_trials),
            pruner=IterativeDeepeningHyperbandPruner(max_resource=9),
        )
        study.optimize(trainer, n_trials=n_trials)
    assert IterativeDeepeningHyperbandPruner(max_resource=9).finished(study)
    storage = JournalStorage(JournalFileBackend(str(tmp_path / "j.log")))
    for n_trials in (10, 300):  # two sessions at 27
        pruner = IterativeDeepeningHyperbandPruner(max_resource=27)
        study = optuna.load_study(study_name="idhb", storage=storage, pruner=pruner)
        study.optimize(trainer, n_trials=n_trials)
    core = check_against_offline_core(study, pruner, "efficient")
    assert len(trainer.trained) == core.ledger.continuation == 357


def test_a_killed_process_loses_nothing_with_heartbeat_and_retry(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hb.db'}"
    optuna.create_study(study_name="idhb", storage=url)
    (proc,) = _workers(tmp_path, url, "heartbeat", 27, 1, env={"IDHB_SLEEP": "0.02"})
    study = optuna.load_study(study_name="idhb", storage=url)
    deadline = time.time() + 60

    def training() -> bool:
        """A trial at step 2: its heartbeat is recorded and its rung budget (>= 3) is at least
        one step (20 ms) away, so the kill lands inside it."""
        trials = study.get_trials(deepcopy=False)
        return len(trials) >= 12 and any(
            t.state == TrialState.RUNNING and t.last_step == 2 for t in trials
        )

    while time.time() < deadline and not training():
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # mid-trial: its RUNNING trial holds a job
    proc.wait()
    running = [t.number for t in study.trials if t.state == TrialState.RUNNING]
    assert running, "the process was killed between trials; nothing to recover"
    wait_for_workers(_workers(tmp_path, url, "heartbeat", 27, 1))
    study = optuna.load_study(study_name="idhb", storage=url)
    retried = [t for t in study.trials if RETRY_ATTR in t.system_attrs]
    assert {t.system_attrs[RETRY_ATTR] for t in retried} >= set(running)
    core = IterativeDeepeningHyperbandPruner(max_resource=27).core(study)
    # the killed trial's job was taken over by its retry: no configuration was lost
    assert core.finished and core.ledger.n_failures == 0
    assert core.ledger.continuation == HyperbandSchedule(27, 3).continuation_budget


# ----------------------------------------------------------------------------- failures
def test_failing_and_nan_trials_leave_their_bracket_without_corrupting_it() -> None:
    trainer = Trainer()

    def objective(trial: optuna.Trial) -> float:
        if trial.number in (2, 11):
            raise RuntimeError("training crashed")
        if trial.number == 5:
            trial.suggest_float("a", 0.0, 1.0)
            trial.report(float("nan"), 1)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return trainer(trial)

    pruner = IterativeDeepeningHyperbandPruner(max_resource=9)
    study = optuna.create_study(pruner=pruner, sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=200, catch=(RuntimeError,))
    core = pruner.core(study)
    assert pruner.finished(study)
    assert core.ledger.n_failures == 3
    assert core.ledger.continuation == len(trainer.trained)
    assert study.trials[5].state == TrialState.PRUNED
    assert [t.state for t in study.trials].count(TrialState.FAIL) == 2


def test_ask_and_tell_loop_with_finished() -> None:
    pruner = IterativeDeepeningHyperbandPruner(min_resource=2, max_resource=8, reduction_factor=2)
    study = optuna.create_study(direction="maximize", pruner=pruner)
    spent = 0
    while not pruner.finished(study):
        trial = study.ask({"x": optuna.distributions.FloatDistribution(0, 1)})
        x = trial.params["x"]
        state, value = TrialState.COMPLETE, None
        for step in range(1, 9):
            spent += 1
            value = 1 - (x - 0.5) ** 2 - 1 / step
            trial.report(value, step)
            if trial.should_prune():
                state = TrialState.PRUNED
                break
        study.tell(trial, value if state == TrialState.COMPLETE else None, state=state)
    sched = HyperbandSchedule(8, 2, min_budget=2)
    core = pruner.core(study)
    assert core.ledger.full_charge == sched.total_budget
    # no checkpoints: a re-entry retrains from step 1, a promotion in place continues
    assert core.ledger.continuation <= spent <= core.ledger.full_charge
    assert core.schedule.brackets[0].min_budget == 2
    best = pruner.best_trial(study)
    assert best is not None and best.last_step == 8 and best.state == TrialState.COMPLETE


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({}, TypeError, "max_resource is required"),
        ({"max_resource": 9, "min_resource": 0}, ValueError, "min_resource must be an int >= 1"),
        ({"max_resource": 2}, ValueError, "max_resource must be an int >= 3"),
        ({"max_resource": 8, "min_resource": 3}, ValueError, "max_resource must be an int >= 9"),
        ({"max_resource": 9, "reduction_factor": 1}, ValueError, "reduction_factor must be an int >= 2"),
        ({"max_resource": 9.5}, ValueError, "max_resource must be an int >= 3, got 9.5"),
        ({"max_resource": True}, TypeError, "max_resource must be an int"),
        ({"max_resource": 9, "variant": "eid"}, ValueError, "variant must be one of"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], exc: type, words: str) -> None:
    with pytest.raises(exc, match=words):
        IterativeDeepeningHyperbandPruner(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"max_resource": 27, "reduction_factor": 2}, "reduction_factor=2 differs from this study"),
        ({"max_resource": 27, "variant": "discarding"}, "variant='discarding' differs"),
        ({"max_resource": 27, "min_resource": 3}, "min_resource=3 differs"),
        ({"max_resource": 20}, r"max_resource must be 9 \* 3\*\*k"),
        ({"max_resource": 3}, r"max_resource must be 9 \* 3\*\*k"),
    ],
)
def test_continuing_with_other_parameters_is_refused_and_changes_nothing(
    kwargs: dict[str, Any], words: str
) -> None:
    storage = optuna.storages.InMemoryStorage()
    trainer = Trainer()
    study = optuna.create_study(
        study_name="idhb", storage=storage,
        pruner=IterativeDeepeningHyperbandPruner(max_resource=9),
    )
    study.optimize(trainer, n_trials=6)
    wrong = optuna.load_study(
        study_name="idhb", storage=storage, pruner=IterativeDeepeningHyperbandPruner(**kwargs)
    )
    with pytest.raises(ValueError, match=words):
        wrong.optimize(trainer, n_trials=3)
    # the refused trial failed and holds no place: the right pruner continues unharmed
    assert wrong.trials[-1].state == TrialState.FAIL
    pruner = IterativeDeepeningHyperbandPruner(max_resource=27)
    study = optuna.load_study(study_name="idhb", storage=storage, pruner=pruner)
    study.optimize(trainer)
    check_against_offline_core(study, pruner, "efficient")


def test_a_smaller_max_resource_than_the_study_reached_is_refused() -> None:
    storage = optuna.storages.InMemoryStorage()
    study, _, _ = run_continued(storage, "efficient", Trainer())
    study = optuna.load_study(
        study_name="idhb", storage=storage, pruner=IterativeDeepeningHyperbandPruner(max_resource=9)
    )
    with pytest.raises(ValueError, match="already continued up to max_resource=27"):
        study.optimize(Trainer(), n_trials=1)


# ----------------------------------------------------------------------------- docs
def test_docstring_example_runs() -> None:
    result = doctest.testmod(idhb_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0


def test_configuration_id_names_the_first_trial_of_a_configuration() -> None:
    trainer = Trainer()
    study = optuna.create_study(pruner=IterativeDeepeningHyperbandPruner(max_resource=9))
    study.optimize(trainer)
    for t in study.trials:
        cid = IterativeDeepeningHyperbandPruner.configuration_id(t)
        assert study.trials[cid].params == t.params
        if REENTRY_ATTR in t.system_attrs:
            assert cid < t.number
        else:
            assert cid == t.number
    assert json.dumps([t.system_attrs.get(RECORD_ATTR) for t in study.trials])  # JSON-clean


def test_pruner_pickles_with_its_arguments() -> None:
    pruner = IterativeDeepeningHyperbandPruner(
        min_resource=2, max_resource=18, reduction_factor=3, variant="preserving"
    )
    copy = pickle.loads(pickle.dumps(pruner))
    assert repr(copy) == repr(pruner) == (
        "IterativeDeepeningHyperbandPruner(min_resource=2, max_resource=18, "
        "reduction_factor=3, variant='preserving')"
    )
    study = optuna.create_study(pruner=copy)
    study.optimize(Trainer(), n_trials=3)
    assert copy.core(study).min_budget == 2


def test_parallel_trials_on_sqlite_are_warned_about(tmp_path: Path) -> None:
    """Optuna may hand an enqueued trial to two workers on SQLite (optuna/optuna#4002)."""
    pruner = IterativeDeepeningHyperbandPruner(max_resource=9)
    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 'w.db'}", pruner=pruner)
    first, second = study.ask(), study.ask()  # two trials running at once
    second.suggest_float("a", 0.0, 1.0)
    first.report(1.0, 1)
    with pytest.warns(UserWarning, match="optuna/optuna#4002"):
        first.should_prune()
    study.tell(first, 1.0)
    study.tell(second, 1.0)

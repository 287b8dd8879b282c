"""Parallel and distributed use: threads, two processes on SQLite, restarts, Hyperband brackets."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState
from shared_helpers import wait_for_workers

from optuna_ext import EnhancedAdaCentSampler, PredPruner

pytestmark = pytest.mark.optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)

T = 8


def objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -3.0, 3.0)
    k = trial.suggest_int("k", 1, 64, log=True)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    v = 0.0
    for step in range(1, T + 1):
        v = (10 - (x - 1) ** 2 - abs(math.log2(k) - 3) + (c == "b")) * (1 - 0.6**step)
        trial.report(v, step)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return v


def _candidates(trials: list[optuna.trial.FrozenTrial]) -> list[tuple]:
    """The configurations the sampler chose (mesh or local candidates), one per trial."""
    return [
        tuple(sorted(t.system_attrs["uvp:params"].items()))
        for t in trials
        if "uvp:params" in t.system_attrs
    ]


def test_threads_share_one_sampler_without_duplicates() -> None:
    study = optuna.create_study(
        direction="maximize",
        sampler=EnhancedAdaCentSampler(seed=0),
        pruner=PredPruner(max_resource=T),
    )
    study.optimize(objective, n_trials=30, n_jobs=2)
    assert len(study.trials) == 30
    assert all(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in study.trials)
    cands = _candidates(study.trials)
    assert len(cands) >= 26
    assert len(set(cands)) == len(cands)


WORKER = textwrap.dedent(
    """
    import sys, time
    import optuna
    from optuna_ext import EnhancedAdaCentSampler, PredPruner
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url, start = sys.argv[1], float(sys.argv[2])

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        y = trial.suggest_float("y", 0.0, 1.0)
        v = 0.0
        for step in range(1, 5):
            time.sleep(0.01)
            v = (2 - abs(x - 0.3) - abs(y - 0.6)) * (1 - 0.5 ** step)
            trial.report(v, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return v

    study = optuna.load_study(study_name="par", storage=url,
                              sampler=EnhancedAdaCentSampler(seed=0),
                              pruner=PredPruner(max_resource=4))
    while time.time() < start:  # start both workers together
        time.sleep(0.005)
    study.optimize(objective, n_trials=15)
    """
)


def test_two_processes_on_one_sqlite_storage(tmp_path: Path) -> None:
    import time

    url = f"sqlite:///{tmp_path / 'par.db'}"
    optuna.create_study(study_name="par", storage=url, direction="maximize")
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    start = time.time() + 4.0
    procs = [
        subprocess.Popen([sys.executable, str(script), url, str(start)], stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    wait_for_workers(procs, timeout=120)
    study = optuna.load_study(study_name="par", storage=url)
    trials = study.trials
    assert len(trials) == 30
    assert all(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in trials)
    cands = _candidates(trials)
    assert len(cands) >= 25
    # 1000 mesh points: no candidate is handed out twice while free ones remain
    assert len(set(cands)) == len(cands)
    params = [(t.params["x"], t.params["y"]) for t in trials]
    assert len(set(params)) == len(params)


@pytest.mark.parametrize("backend", ["sqlite", "journal"])
def test_restart_from_storage_continues_the_same_sequence(tmp_path: Path, backend: str) -> None:
    def storage(name: str) -> str | JournalStorage:
        if backend == "sqlite":
            return f"sqlite:///{tmp_path / name}.db"
        return JournalStorage(JournalFileBackend(str(tmp_path / f"{name}.log")))

    def make(store: str | JournalStorage, load: bool) -> optuna.Study:
        kwargs = dict(
            study_name="s",
            storage=store,
            sampler=EnhancedAdaCentSampler(seed=7, n_candidates=512),
            pruner=PredPruner(max_resource=T),
        )
        if load:
            return optuna.load_study(**kwargs)  # type: ignore[arg-type]
        return optuna.create_study(direction="maximize", **kwargs)  # type: ignore[arg-type]

    once = make(storage("once"), load=False)
    once.optimize(objective, n_trials=12)

    store = storage("twice")
    first = make(store, load=False)
    first.optimize(objective, n_trials=6)
    del first  # a new process would build a new sampler from the same seed
    second = make(store, load=True)
    second.optimize(objective, n_trials=6)

    a = [(t.params, t.state) for t in once.trials]
    b = [(t.params, t.state) for t in second.trials]
    assert a == b


def test_inside_hyperband_bracket_view() -> None:
    study = optuna.create_study(
        direction="maximize",
        sampler=EnhancedAdaCentSampler(seed=0),
        pruner=optuna.pruners.HyperbandPruner(min_resource=1, max_resource=T, reduction_factor=3),
        study_name="hb",
    )
    study.optimize(objective, n_trials=30)
    states = [t.state for t in study.trials]
    assert states.count(TrialState.PRUNED) > 0
    cands = _candidates(study.trials)
    assert len(cands) >= 28 and len(set(cands)) == len(cands)


INSTANT_WORKER = textwrap.dedent(
    """
    import sys, time
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from optuna_ext import EnhancedAdaCentSampler
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    backend, path, start, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    storage = JournalStorage(JournalFileBackend(path)) if backend == "journal" else path
    study = optuna.load_study(study_name="race", storage=storage,
                              sampler=EnhancedAdaCentSampler(seed=0))
    while time.time() < start:  # all workers ask at once
        time.sleep(0.002)
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=n)
    """
)


def test_processes_with_an_instant_objective_never_share_a_configuration(tmp_path: Path) -> None:
    """Issue 19 (1): 4 processes x 25 trials used to give 1-18 duplicates on a journal file
    (a rival's claim was missed once it had finished, or when it wrote after the re-read).
    SQLite, PostgreSQL and the gRPC proxy: tests/optuna_ext/test_optuna_servers.py."""
    import time

    backend, path = "journal", str(tmp_path / "race.log")
    storage = JournalStorage(JournalFileBackend(path))
    optuna.create_study(study_name="race", storage=storage, direction="maximize")
    script = tmp_path / "worker.py"
    script.write_text(INSTANT_WORKER)
    start = time.time() + 4.0
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), backend, path, str(start), "40"], stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    wait_for_workers(procs, timeout=180)
    trials = optuna.load_study(study_name="race", storage=storage).trials
    assert len(trials) == 160 and all(t.state == TrialState.COMPLETE for t in trials)
    params = [(t.params["x"], t.params["y"]) for t in trials]
    assert len(set(params)) == 160, f"{160 - len(set(params))} duplicate configurations"

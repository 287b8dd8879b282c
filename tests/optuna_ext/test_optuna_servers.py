"""Distributed Optuna on real servers started by the tests (loopback only): 8 worker processes
on PostgreSQL, through Optuna's gRPC storage proxy, and a worker killed with SIGKILL and
restarted (heartbeat on PostgreSQL; orphan recovery on a journal file). Each run is the same
code as ``uvp-bench stress``; the configurations are re-checked here from the storage."""

from __future__ import annotations

import random
import re
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from optuna_ext import EnhancedAdaCentSampler
from uvp_plugins.bench.servers import GrpcProxyServer, PostgresServer
from uvp_plugins.bench.stress import count_run, stress_once

pytestmark = pytest.mark.optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)


def distinct_configurations(trials: list[Any]) -> None:
    """Every trial that got parameters has its own (a retry repeats the trial it retries)."""
    retried = {n for t in trials for n in t.system_attrs.get("retry_history", [])}
    params = [
        (t.params["x"], t.params["y"]) for t in trials if t.params and t.number not in retried
    ]
    assert len(params) == len(set(params)), f"{len(params) - len(set(params))} duplicates"


def test_postgres_server_runs_unprivileged_on_loopback(postgres_server: PostgresServer) -> None:
    import psycopg2

    conn = psycopg2.connect(postgres_server.dsn("postgres"))
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW listen_addresses")
            assert cur.fetchone() == ("127.0.0.1",)
            cur.execute("SELECT current_setting('is_superuser'), version()")
            row = cur.fetchone()
            assert row is not None and "PostgreSQL" in row[1]
    finally:
        conn.close()
    # the server process does not run as root
    pid = int((postgres_server.data_dir / "postmaster.pid").read_text().splitlines()[0])
    with open(f"/proc/{pid}/status") as f:
        uid = next(line.split()[1] for line in f if line.startswith("Uid:"))
    assert int(uid) != 0


@pytest.mark.parametrize("storage", ["postgresql", "grpc"])
def test_eight_processes_get_distinct_configurations(
    postgres_server: PostgresServer, storage: str
) -> None:
    # on PostgreSQL directly, and through Optuna's gRPC proxy in front of it
    run = stress_once(
        storage, workers=8, trials=8, pg=postgres_server, inspect=distinct_configurations
    )
    assert (run.trials, run.complete, run.duplicates, run.lost) == (64, 64, 0, 0)


def test_sampler_through_the_grpc_proxy_in_process(grpc_proxy: GrpcProxyServer) -> None:
    # the fixture's proxy, used directly: n_jobs threads share one sampler and one client
    study = optuna.create_study(
        storage=grpc_proxy.client(), sampler=EnhancedAdaCentSampler(seed=0), study_name="t"
    )
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1),
                   n_trials=16, n_jobs=2)
    trials = study.get_trials()
    assert len(trials) == 16 and all(t.state == TrialState.COMPLETE for t in trials)
    distinct_configurations(trials)


def test_a_killed_worker_on_postgresql_is_recovered_by_the_heartbeat(
    postgres_server: PostgresServer,
) -> None:
    run = stress_once(
        "postgresql", workers=4, trials=12, pg=postgres_server, kill=True,
        rng=random.Random(1), heartbeat=(1, 6), inspect=distinct_configurations,
    )
    assert run.killed_worker is not None
    assert run.duplicates == 0 and run.lost == 0
    assert run.complete >= 48 and run.failed == run.retried <= 1


def test_a_killed_worker_on_a_journal_file_is_recovered_after_the_run() -> None:
    run = stress_once(
        "journal", workers=4, trials=12, kill=True, rng=random.Random(2),
        inspect=distinct_configurations,
    )
    assert run.killed_worker is not None
    assert run.duplicates == 0 and run.lost == 0
    assert run.complete >= 48 and run.failed == run.retried <= 1


def test_counting_lost_trials_and_duplicates() -> None:
    # the counts the stress command prints, on a hand-made study
    study = optuna.create_study()
    for x in (0.0, 1.0, 1.0):
        study.enqueue_trial({"x": x, "y": 0.0})
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=3)
    failed = study.ask({"x": optuna.distributions.FloatDistribution(0, 1),
                        "y": optuna.distributions.FloatDistribution(0, 1)})
    study.tell(failed, state=TrialState.FAIL)
    study.ask()  # left RUNNING
    counts = count_run(study.get_trials(), target=4)
    assert counts == {"complete": 3, "failed": 1, "retried": 0, "duplicates": 1, "lost": 3}


def test_stress_command_rejects_bad_choices_with_the_accepted_ones() -> None:
    from uvp_plugins.bench import stress
    from uvp_plugins.bench.cli import main, parser

    for argv, message in [
        (["stress", "--storages", "sqlite,mongo"], "--storages must name some of sqlite, journal"),
        (["stress", "--workers", "0"], re.escape("--workers must be an int in [1, 64]")),
        (["stress", "--scenarios", "dask"], "--scenarios must name some of optuna, ray"),
    ]:
        with pytest.raises(ValueError, match=message):
            stress.execute(parser().parse_args(argv))
        assert main(argv) == 2

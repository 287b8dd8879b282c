"""Worker processes run with jobs x BLAS/OpenMP threads <= cores; the user can override it."""

from __future__ import annotations

import os

import pytest

from uvp_plugins.bench.runner import RunSpec, run_many
from uvp_plugins.bench.threads import (
    THREAD_ENV_VARS,
    available_cores,
    resolve_threads,
    worker_thread_env,
)

SPEC = RunSpec("lc-synthetic", "0", "random", 0, budget_factor=2)


@pytest.fixture
def no_thread_env(monkeypatch):  # type: ignore[no-untyped-def]
    """A caller who set none of the thread variables (CI and the brief export them)."""
    for var in THREAD_ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def test_workers_report_the_limited_blas_pool(tmp_path, no_thread_env) -> None:  # type: ignore[no-untyped-def]
    # two workers: each gets cores // 2 threads; the worker's own threadpoolctl report says so
    results = run_many([SPEC, RunSpec("lc-synthetic", "1", "random", 0, budget_factor=2)],
                       tmp_path, jobs=2, progress=lambda _: None)
    expected = max(1, available_cores() // 2)
    for res in results:
        assert res["threads"] == expected
        assert res["thread_pools"]["blas"] == expected  # numpy's OpenBLAS, loaded before the run
    assert not any(var in os.environ for var in THREAD_ENV_VARS)  # the caller's env is restored


def test_threads_option_and_the_callers_own_variable_override(tmp_path, no_thread_env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (res,) = run_many([SPEC], tmp_path / "a", jobs=1, threads=3, progress=lambda _: None)
    assert res["threads"] == 3 and res["thread_pools"]["blas"] == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    (res,) = run_many([SPEC], tmp_path / "b", jobs=2, progress=lambda _: None)
    assert res["threads"] == 2 and res["thread_pools"]["blas"] == 2
    assert os.environ["OMP_NUM_THREADS"] == "2"  # restored, not ours
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")  # e.g. `OPENBLAS_NUM_THREADS=1 uvp-bench ...`
    (res,) = run_many([SPEC], tmp_path / "c", jobs=1, progress=lambda _: None)
    assert res["threads"] == 1 and res["thread_pools"]["blas"] == 1


def test_resolve_threads_rules_and_bad_input(no_thread_env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert resolve_threads(1) == available_cores()
    assert resolve_threads(10 * available_cores()) == 1
    assert resolve_threads(2, threads=5) == 5
    with pytest.raises(ValueError, match="threads must be an int >= 1"):
        resolve_threads(1, threads=0)
    with pytest.raises(ValueError, match="jobs must be an int >= 1"):
        resolve_threads(0)
    monkeypatch.setenv("OMP_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="OMP_NUM_THREADS must be an int >= 1"):
        resolve_threads(1)


def test_worker_thread_env_restores_the_callers_values(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MKL_NUM_THREADS", "7")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    with worker_thread_env(1):
        assert all(os.environ[v] == "1" for v in THREAD_ENV_VARS)
    assert os.environ["MKL_NUM_THREADS"] == "7" and "OPENBLAS_NUM_THREADS" not in os.environ


def test_cli_threads_option_reaches_the_workers(tmp_path, no_thread_env) -> None:  # type: ignore[no-untyped-def]
    import json

    from uvp_plugins.bench.cli import main

    assert main(["run", "--problem", "lc-synthetic", "--methods", "random", "--budget-factor", "2",
                 "--out", str(tmp_path), "--threads", "2"]) == 0
    summary = json.loads((tmp_path / "lc-synthetic/0/random/seed0.json").read_text())
    assert summary["threads"] == 2 and summary["thread_pools"]["blas"] == 2

"""uvp_plugins.blas.single_thread_blas: one BLAS thread inside, the caller's sizes after, also
when blocks of several threads overlap."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.linalg  # noqa: F401  (its BLAS is one of those limited)
from threadpoolctl import threadpool_info, threadpool_limits

from uvp_plugins.adacent.guidance import Guidance
from uvp_plugins.adacent.online import OnlineEnhancedAdaCent
from uvp_plugins.blas import single_thread_blas
from uvp_plugins.space import FloatParam, SearchSpace


def blas_threads() -> list[int]:
    sizes = [int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]
    assert sizes, "no BLAS library found"
    return sizes


@pytest.fixture
def three_threads():
    """Start from a known size above one (CI exports OMP_NUM_THREADS=1)."""
    with threadpool_limits(limits=3, user_api="blas"):
        assert blas_threads() == [3] * len(blas_threads())
        yield


def test_one_thread_inside_and_the_callers_size_after(three_threads):
    with single_thread_blas():
        assert set(blas_threads()) == {1}
        np.linalg.solve(np.eye(4) * 2.0, np.ones(4))
    assert set(blas_threads()) == {3}


def test_an_exception_inside_still_restores(three_threads):
    with pytest.raises(RuntimeError), single_thread_blas():
        raise RuntimeError("boom")
    assert set(blas_threads()) == {3}


def test_overlapping_blocks_restore_once_the_last_leaves(three_threads):
    """Blocks of two workers interleaved: A enters, B enters, A leaves (B still inside: one
    thread), B leaves (restored). Without the reference count, A's exit would restore 3 under B,
    and B's exit would then 'restore' the 1 it found on entry, leaving the process at one thread.
    (Interleaved in one thread: the count is process-wide, and OpenBLAS reports thread counts
    reliably only to the thread that set them.)"""
    a, b = single_thread_blas(), single_thread_blas()
    a.__enter__()
    b.__enter__()
    assert set(blas_threads()) == {1}
    a.__exit__(None, None, None)
    assert set(blas_threads()) == {1}
    b.__exit__(None, None, None)
    assert set(blas_threads()) == {3}


def test_blocks_entered_from_two_threads_at_once_leave_the_size(three_threads):
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(200):
                barrier.wait(5)
                with single_thread_blas():
                    np.linalg.cholesky(np.eye(8) * 2.0)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert set(blas_threads()) == {3}


def test_the_online_step_runs_with_one_thread_and_leaves_the_size(three_threads, monkeypatch):
    space = SearchSpace([FloatParam("x", 0.0, 1.0), FloatParam("y", 0.0, 1.0)])
    ea = OnlineEnhancedAdaCent(space, n_candidates=64, max_resource=10, guidance=Guidance(n_init=3))
    seen: list[set[int]] = []
    inner = ea._ask

    def spy(*args, **kwargs):
        seen.append(set(blas_threads()))
        return inner(*args, **kwargs)

    monkeypatch.setattr(ea, "_ask", spy)
    for t in range(6):
        p = ea.ask()
        ea.tell(t, p.config, status="pruned", curve={1: p.config["x"]})
    assert seen == [{1}] * 6
    assert set(blas_threads()) == {3}

"""BLAS/OpenMP thread limits for the harness's worker processes: jobs x threads <= cores.

Every numerical library a run touches (numpy's OpenBLAS or MKL, scikit-learn's OpenMP, torch,
joblib's ``n_jobs=-1``) starts one thread per core by default. Two workers on two cores then run
four busy thread pools, and small models train several times slower than on one thread each.

A thread pool reads its size when its library is loaded, and a worker process has loaded numpy
before it runs anything (``uvp_plugins`` imports it), so the limit must be in the environment
*before the worker starts*: :func:`worker_thread_env` sets it in the parent around the start of
the pool (and restores the caller's environment afterwards, as
:func:`uvp_plugins.bench.runner.fixed_worker_hash_seed` does for the hash seed), and
:func:`limit_threads` applies the same limit with ``threadpoolctl`` inside the worker, for pools
that were already loaded or that ignore the environment.

How many threads (:func:`resolve_threads`): ``--threads N`` if given, else the smallest of the
caller's own ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS`` that are set,
else ``max(1, cores // jobs)``.

Example:
    >>> resolve_threads(jobs=2, threads=3)
    3
    >>> with worker_thread_env(1):
    ...     os.environ["OPENBLAS_NUM_THREADS"]
    '1'
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from uvp_plugins.validation import check_int

__all__ = [
    "THREAD_ENV_VARS",
    "USER_THREAD_VARS",
    "available_cores",
    "resolve_threads",
    "worker_thread_env",
    "limit_threads",
    "thread_pool_sizes",
]

#: environment variables that size the thread pools of OpenMP, OpenBLAS, MKL, Apple's
#: Accelerate, numexpr, and joblib's ``n_jobs=-1`` (SMAC's random forest uses it)
THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "LOKY_MAX_CPU_COUNT",
)


#: the variables a user sets to choose a thread count (honoured by :func:`resolve_threads`)
USER_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(jobs: int, threads: int | None = None) -> int:
    """Threads per worker: ``threads`` if given, else the smallest of the caller's own
    :data:`USER_THREAD_VARS` that are set, else ``max(1, cores // jobs)`` (so that
    jobs x threads <= cores)."""
    jobs = check_int("jobs", jobs, low=1)
    if threads is not None:
        return check_int("threads", threads, low=1)
    own = []
    for var in USER_THREAD_VARS:
        text = os.environ.get(var, "").strip()
        if text:
            try:
                own.append(check_int(var, int(text), low=1))
            except ValueError:
                raise ValueError(f"{var} must be an int >= 1, got {text!r}") from None
    if own:
        return min(own)
    return max(1, available_cores() // jobs)


@contextmanager
def worker_thread_env(threads: int) -> Iterator[None]:
    """Processes started inside the block get ``threads`` in every :data:`THREAD_ENV_VARS`;
    the caller's environment is restored afterwards."""
    threads = check_int("threads", threads, low=1)
    saved = {k: os.environ.get(k) for k in THREAD_ENV_VARS}
    os.environ.update({k: str(threads) for k in THREAD_ENV_VARS})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def limit_threads(threads: int) -> Any:
    """Limit every thread pool already loaded in this process to ``threads`` (threadpoolctl).

    Pools loaded later read their size from the environment (:func:`worker_thread_env`).
    Returns threadpoolctl's limiter (threadpoolctl is a core dependency: ``uvp_plugins.blas``)."""
    from threadpoolctl import threadpool_limits

    threads = check_int("threads", threads, low=1)
    return threadpool_limits(limits=threads)


def thread_pool_sizes() -> dict[str, int]:
    """The size of every thread pool loaded in this process, by API (``"blas"``,
    ``"openmp"``): the largest one per API, as threadpoolctl reports them."""
    from threadpoolctl import threadpool_info

    out: dict[str, int] = {}
    for pool in threadpool_info():
        api = str(pool.get("user_api"))
        out[api] = max(out.get(api, 0), int(pool.get("num_threads", 0)))
    return out

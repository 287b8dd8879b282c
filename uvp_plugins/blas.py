"""One BLAS thread for the core's small linear algebra, safe under concurrent callers.

The online Enhanced-AdaCent step (:class:`~uvp_plugins.adacent.online.OnlineEnhancedAdaCent`)
multiplies and solves matrices of a few hundred rows (the guidance GP's Cholesky factor, a
``(candidates x trials)`` cross kernel, Alg. 4's distance columns). numpy's and scipy's OpenBLAS
start one thread per core; at this size the threads' hand-offs cost more than they save. Measured
on 2 cores (``uvp-bench overhead``, 1000 trials, 1000 candidates): 16.0 ms wall per trial with
OpenBLAS's default 2 threads (32 ms of CPU: the second thread spins), 9.7 ms with one.

:func:`single_thread_blas` limits the BLAS pools (``threadpoolctl``, ``user_api="blas"``) for the
duration of a ``with`` block. The limit is process-wide (a BLAS library has one thread count), so
the context is reference-counted under a lock: the first caller to enter sets the limit, the last
one to leave restores the sizes found on entry. Two Optuna workers (``n_jobs=2``, threads) asking
at once therefore never leave the process at one thread. While a block runs, BLAS calls of
*other* threads of the process also use one thread (with ``n_jobs>1`` they share the cores
anyway). Entering costs about 12 microseconds. Seen with OpenBLAS 0.3.23 (pthreads): once the
main thread has set a thread count (e.g. ``threadpool_limits`` in a script), counts set from
other threads are ignored, so a block entered from an Optuna worker thread may run with the
process's size; blocks entered from the main thread (``n_jobs=1``, Ray Tune's driver, the
offline allocators) always get one thread. The libraries are enumerated once, at the first
use (after importing numpy and scipy.linalg, whose BLAS the core uses); a BLAS library loaded
later by other code is not limited.

Example:
    >>> import numpy as np
    >>> with single_thread_blas():
    ...     x = np.linalg.solve(np.eye(3) * 2.0, np.ones(3))
    >>> x.tolist()
    [0.5, 0.5, 0.5]
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["single_thread_blas"]

_lock = threading.Lock()
_depth = 0
_controller: Any = None
_limiter: Any = None


def _get_controller() -> Any:
    global _controller
    if _controller is None:
        import numpy  # noqa: F401  (load the BLAS libraries the core uses before enumerating)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


@contextmanager
def single_thread_blas() -> Iterator[None]:
    """Run the block with every loaded BLAS library at one thread (module doc)."""
    global _depth, _limiter
    with _lock:
        if _depth == 0:
            _limiter = _get_controller().limit(limits=1, user_api="blas")
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                limiter, _limiter = _limiter, None
                limiter.restore_original_limits()

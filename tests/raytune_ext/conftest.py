"""A session-scoped local Ray cluster (2 CPUs) for the Ray ID-HB tests; shut down at the end.

Ray binds its servers to the node's address, which it resolves from "localhost" to the
machine's external address on Linux. ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` selects Ray's
single-machine behaviour (its default on macOS and Windows): every server binds to 127.0.0.1 and
every address Ray hands out is loopback. Set before the cluster starts, so the driver processes
the tests spawn and Ray's workers inherit it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # idhb_ray_helpers

# Read by Ray when it is imported: set here, before the test modules import Ray.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """Starts a new ``ray.init(address="local", num_cpus=2)`` cluster on 127.0.0.1; yields the GCS
    address."""
    import ray

    os.environ.setdefault("RAY_DEDUP_LOGS", "1")
    started = not ray.is_initialized()
    if started:
        # address="local": a new cluster even when another Ray cluster of this machine is
        # registered in /tmp/ray (ray.init() would connect to it and refuse num_cpus)
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        if started:
            ray.shutdown()

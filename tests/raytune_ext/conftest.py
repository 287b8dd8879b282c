"""A session-scoped local Ray cluster (2 CPUs) for the Ray ID-HB tests; shut down at the end.

The node registers at 127.0.0.1, so every address Ray hands out and connects to is loopback."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # idhb_ray_helpers


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """Starts ``ray.init(num_cpus=2, include_dashboard=False)`` on 127.0.0.1; yields the GCS
    address."""
    import ray

    os.environ.setdefault("RAY_DEDUP_LOGS", "1")
    started = not ray.is_initialized()
    if started:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            _node_ip_address="127.0.0.1",
        )
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        if started:
            ray.shutdown()

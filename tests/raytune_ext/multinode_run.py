"""A Ray cluster of a head and a worker node (separate raylet processes, 127.0.0.1, one CPU
each) and one ID-HB experiment on it with a shared ``storage_path``; writes a JSON summary
(:func:`idhb_ray_helpers.run_and_summarise` plus the alive nodes).

Run as a script by ``test_ray_multinode.py`` (a cluster needs its own driver process: the test
session already runs a single-node cluster):
``python multinode_run.py STORAGE NAME OUT_JSON MAX_T...``.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> None:
    import ray
    from idhb_ray_helpers import run_and_summarise
    from ray.cluster_utils import Cluster

    storage, name, out = argv[0], argv[1], argv[2]
    max_t = [int(v) for v in argv[3:]]
    node_args = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=node_args)
    try:
        cluster.add_node(**node_args)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        # a new actor per trial start: with a reused actor, trials this short could all run on
        # the node whose worker process started first (seen on a loaded machine)
        summary = run_and_summarise(max_t, storage, name, reuse_actors=False)
        summary["nodes"] = sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
        with open(out, "w") as fh:
            json.dump(summary, fh)
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    # Loopback only: Ray resolves "127.0.0.1" to the machine's external address on Linux unless
    # its single-machine mode is on (see conftest.py); read when Ray is imported.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main(sys.argv[1:])

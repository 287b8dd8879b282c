"""ID-HB on a multi-node Ray cluster: a head and a worker node as separate processes on
127.0.0.1, trials placed on both, one shared storage_path; the decisions and the ledger equal a
single-node run's (issue 19: Ray multi-node)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from idhb_ray_helpers import run_and_summarise

pytestmark = pytest.mark.ray

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "multinode_run.py")
MAX_T = (3, 9)


def test_two_node_cluster_takes_the_single_node_decisions(ray_cluster: str, tmp_path) -> None:
    out = tmp_path / "multinode.json"
    proc = subprocess.run(
        [sys.executable, SCRIPT, str(tmp_path / "shared"), "multi", str(out), *map(str, MAX_T)],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    multi = json.loads(out.read_text())
    assert len(multi["nodes"]) == 2
    used = {node for nodes in multi["trial_nodes"].values() for node in nodes}
    assert used == set(multi["nodes"]), "trials ran on both nodes"

    single = run_and_summarise(MAX_T, str(tmp_path / "single"), "single")
    assert multi["finished"] and single["finished"]
    assert multi["evaluations"] == single["evaluations"]
    assert multi["ledger"] == single["ledger"]
    assert multi["incumbent_x"] == single["incumbent_x"]
    # Ray trained exactly the core's continuation ledger on both clusters
    assert multi["results"] == single["results"] == multi["ledger"]["continuation"]
    assert multi["statuses"] == single["statuses"] == ["TERMINATED"]

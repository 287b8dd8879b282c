"""Every script in ``examples/`` runs with its small budget (``UVP_EXAMPLES_QUICK=1``) and prints
the comparison it exists for (issue 33, item 2).

Each runs as a user runs it, in its own process from a temporary working directory. The quick
mode only shrinks budgets and seeds; the code paths are the full runs'. ``raytune_idhb.py`` is
run by ``tests/raytune_ext/test_ray_quiet.py``, which also checks that it prints nothing else.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FLOAT = r"[0-9]+\.[0-9]+"
#: example -> the lines (regular expressions, searched line by line) its output must contain
EXPECTED: dict[str, list[str]] = {
    "optuna_adacent.py": [
        rf"^  EnhancedAdaCentSampler \+ PredPruner \(ours\) +{FLOAT} +{FLOAT} +\d+",
        rf"^  GPSampler +{FLOAT} +{FLOAT} +\d+",
        rf"^  TPESampler \(Optuna's default\) +{FLOAT} +{FLOAT} +\d+",
    ],
    "optuna_idhb.py": [
        rf"^Hyperband at 3: +\d+ trials, \d+ epochs, best accuracy {FLOAT}",
        r"^continued at 9: \d+ more trials, \d+ more epochs; in total (\d+) epochs = the core's "
        r"ledger \1 ",
        rf"^Optuna's HyperbandPruner re-run at 9 \(new study\): 17 trials, \d+ epochs from scratch, "
        rf"best accuracy {FLOAT}",
    ],
    "optuna_maxucb_cash.py": [
        r"^12 trials in ",
        rf"^best: error {FLOAT} with \{{'model': ",
        r"^trials per model class \(credited\): \{",
    ],
    "raytune_adacent_pred.py": [
        rf"^  EnhancedAdaCentSearch \+ PredStoppingScheduler \(ours\) +{FLOAT} +{FLOAT} +\d+",
        rf"^  random search \+ ASHAScheduler +{FLOAT} +{FLOAT} +\d+",
        rf"^  random search \+ MedianStoppingRule +{FLOAT} +{FLOAT} +\d+",
        rf"^  OptunaSearch \(TPE\) \+ ASHAScheduler +{FLOAT} +{FLOAT} +\d+",
    ],
    "smac_idhb.py": [
        r"^max_budget= 3: \d+ trials so far, \d+ epochs trained in total",
        r"^max_budget= 9: \d+ trials so far, (\d+) epochs trained in total",
        r"^a fresh Hyperband at 9 trains 78 epochs; after the run at 3 a re-run at 9 brings the "
        r"total to 90, the continued run to 78$",
    ],
    "smac_maxucb_cash.py": [
        r"^12 trials in ",
        rf"^incumbent \(joint space\), validation error {FLOAT}:",
        r"^pulls per model class \(credited trials\) and best error:",
    ],
    "smac_tobit_runtime.py": [
        r"^trial  9: (SUCCESS|TIMEOUT) ",
        r"^censored observations in the last fit: \d+/\d+$",
        r"^best time-to-95%: ",
    ],
}
RUN_ELSEWHERE = {"raytune_idhb.py": "raytune_ext/test_ray_quiet.py"}


def test_every_example_is_run() -> None:
    scripts = {p.name for p in EXAMPLES.glob("*.py")}
    assert scripts == set(EXPECTED) | set(RUN_ELSEWHERE)
    for name, test in RUN_ELSEWHERE.items():
        text = (Path(__file__).parent / test).read_text()
        assert f'"{name}"' in text and "UVP_EXAMPLES_QUICK" in text


MARKS = {"optuna": pytest.mark.optuna, "raytune": pytest.mark.ray, "smac": pytest.mark.smac}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=MARKS[n.split("_")[0]]) for n in sorted(EXPECTED)]
)
def test_example_runs_and_prints_its_comparison(name: str, tmp_path: Path) -> None:
    env = {**os.environ, "UVP_EXAMPLES_QUICK": "1"}
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    for pattern in EXPECTED[name]:
        assert any(re.search(pattern, line) for line in lines), f"{pattern!r} not in\n{proc.stdout}"

"""README's Ray snippet and ``examples/raytune_idhb.py`` print their own results only (issue 18,
item 4): no traceback, no warning, no worker log lines.

Each runs as a user runs it, in its own process with its own local Ray. The causes of the
messages they printed before, each fixed where it arises:

* "Failed to fetch metrics for 32 trial(s): ... Should not access `trial_fs_path` without
  setting `trial_dir_name`": trials the schedule did not need never got a trial directory (the
  scheduler now gives every trial it holds back its directory and an empty result log);
* "Exception ignored in ... sigterm_handler ... SystemExit: 1": without ``reuse_actors`` every
  pause ends the trial's worker process, and Ray removes its placement group while the process
  is still exiting, which sends it a SIGTERM (reproduced with a bare actor in a placement
  group); the snippet and the resume helper reuse actors. Tune still stops its cached workers
  and removes their groups together at the end of every experiment, which printed the same lines
  in 1 of 26 runs, so the snippet keeps the workers' output in their log files
  (``log_to_driver=False``), as the example does;
* coloured "(trainable pid=...) Checkpoint successfully created" lines: Ray's INFO log of every
  persisted checkpoint, forwarded from the workers; the snippet sets Ray's log level to WARNING
  (``ray.LoggingConfig``).

Allowed are what Ray 2.60 prints for every program, with or without this plugin: its notice
when ``ray.init`` starts a local cluster without ``RAY_AUTH_MODE``, and the experiment box and
result path its default console output prints at the start of every ``tune.run`` even at
``verbose=0`` (its legacy output, ``RAY_AIR_NEW_OUTPUT=0``, is silent there but prints "Trial ...
completed. Last result:" for every trial that never ran).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

REPO = Path(__file__).resolve().parents[2]
NOISE = re.compile(
    r"Traceback|Exception|Error|WARNING|Warning|SystemExit|pid=\d+|Failed to fetch|"
    r"Remote file not found|Checkpoint successfully|\x1b\["
)
RAY_AUTH_NOTICE = re.compile(r"WARNING authentication_token_setup\.py:\d+ -- Token authentication")


#: lines of Ray's experiment box (``tune.run`` at verbose=0, default console output)
RAY_BOX = re.compile(
    r"^[╭│├╰]|^View detailed results here: |^To visualize your results with TensorBoard, run: "
)


def _noise(text: str) -> list[str]:
    return [
        line for line in text.splitlines() if NOISE.search(line) and not RAY_AUTH_NOTICE.search(line)
    ]


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_readme_ray_snippet_prints_only_its_result(tmp_path) -> None:
    text = (REPO / "README.md").read_text()
    section = re.split(r"\n#{3,4} ", text.split("### Ray Tune\n", 1)[1], maxsplit=1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    (tmp_path / "snippet.py").write_text(blocks[0])
    proc = _run(["snippet.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _noise(proc.stdout + proc.stderr) == []
    ours = [line for line in proc.stdout.splitlines() if line.strip() and not RAY_BOX.search(line)]
    assert len(ours) == 1, proc.stdout
    best = ast.literal_eval(ours[0])
    assert abs(best["lr"] - 0.1) < 0.05  # 49 uniform samples; ID-HB keeps each bracket's best


def test_example_prints_only_its_results(tmp_path) -> None:
    # with its small budget (R=3, then 9), as tests/test_examples.py runs the other examples
    proc = _run([str(REPO / "examples" / "raytune_idhb.py")], tmp_path, UVP_EXAMPLES_QUICK="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _noise(proc.stdout + proc.stderr) == []
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    ours = [line for line in lines if not RAY_BOX.search(line)]
    prefixes = [
        "(the scheduler state lived in ",
        "ID-HB at R=3: ",
        "continued to R=9 (resumed): ",
        "fresh Hyperband at R=9: ",
        "total with ID-HB: ",
        "budget saved by continuing: ",
    ]
    assert len(ours) == len(prefixes), proc.stdout
    assert all(line.startswith(p) for line, p in zip(ours, prefixes, strict=True)), proc.stdout
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [
        line for line in proc.stderr.splitlines() if RAY_AUTH_NOTICE.search(line)
    ]

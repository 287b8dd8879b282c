"""README's Optuna drop-in snippet runs as shown (the SMAC/Ray snippets mirror integration tests)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks_under(heading: str) -> list[str]:
    text = README.read_text()
    section = re.split(r"\n#{3,4} ", text.split(heading + "\n", 1)[1], maxsplit=1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_optuna_snippet_runs_and_finds_the_optimum(tmp_path) -> None:  # type: ignore[no-untyped-def]
    blocks = _python_blocks_under("### Optuna")
    assert len(blocks) == 1
    script = tmp_path / "snippet.py"
    script.write_text(blocks[0])
    ns = runpy.run_path(str(script))
    study = ns["study"]
    assert len(study.trials) == 30
    assert abs(study.best_params["lr"] - 1e-2) < 5e-3  # the toy objective peaks at lr = 0.01


def test_optuna_idhb_snippet_continues_the_study_at_27(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    blocks = _python_blocks_under(
        "#### Hyperband you can continue at a larger `max_resource`: "
        "`IterativeDeepeningHyperbandPruner`"
    )
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)  # the snippet writes its journal file to the working directory
    script = tmp_path / "snippet.py"
    script.write_text(blocks[0])
    ns = runpy.run_path(str(script))
    pruner, study = ns["pruner"], ns["study"]
    assert pruner.core(study).ledger.continuation == 357 == sum(ns["checkpoints"].values())
    assert abs(pruner.best_trial(study).params["lr"] - 0.1) < 0.05

"""README's Optuna drop-in snippet runs as shown (the Ray one: tests/raytune_ext/test_ray_quiet.py; the
full snippets on the plugin pages: tests/test_docs_site.py)."""

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



def test_readme_stays_a_front_page() -> None:
    """Issue 33: README.md at most 200 lines; the details live on the documentation site."""
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move details to docs/"

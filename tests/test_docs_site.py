"""The documentation site's sources (issue 33, item 1; ``.ci/run`` builds the site with
``mkdocs build --strict``, which fails on a dead link, a missing page or a docstring the API
reference cannot read).

The plugin pages include their snippets from README.md (``--8<-- "README.md:<name>"``, one copy of
each snippet; the README tests run them). A section name that README does not mark would be
included as nothing, which the strict build does not notice: checked here. Snippets written on a
page itself (not on the results pages) run here as written.
"""

from __future__ import annotations

import math
import re
import runpy
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README = (REPO / "README.md").read_text()
INCLUDE = re.compile(r'^--8<-- "README\.md:([a-z0-9-]+)"$', flags=re.M)
#: the site's own pages (the results pages quote the analysis scripts that produced them)
PAGES = sorted(p for p in DOCS.rglob("*.md") if "results" not in p.relative_to(DOCS).parts)


def _included() -> list[tuple[str, str]]:
    return [(p.relative_to(DOCS).as_posix(), name) for p in PAGES
            for name in INCLUDE.findall(p.read_text())]


def _own_python_blocks() -> list[tuple[str, str]]:
    return [(p.relative_to(DOCS).as_posix(), block) for p in PAGES
            for block in re.findall(r"^```python\n(.*?)^```", p.read_text(), flags=re.M | re.S)]


def test_every_plugin_page_has_a_snippet() -> None:
    for page in sorted((DOCS / "plugins").glob("*.md")):
        text = page.read_text()
        assert INCLUDE.search(text) or "```python" in text, f"{page.name} has no snippet"


@pytest.mark.parametrize(("page", "name"), _included())
def test_included_readme_section_is_one_python_block(page: str, name: str) -> None:
    match = re.search(
        rf"^<!-- --8<-- \[start:{name}\] -->\n(.*?)^<!-- --8<-- \[end:{name}\] -->$",
        README, flags=re.M | re.S,
    )
    assert match is not None, f"{page} includes README section {name!r}, which README does not mark"
    body = match.group(1)
    assert body.startswith("```python\n") and body.endswith("\n```\n") and body.count("```") == 2


@pytest.mark.parametrize(("page", "block"), _own_python_blocks(), ids=lambda v: v[:40])
def test_page_snippet_runs_as_written(page: str, block: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "snippet.py"
    script.write_text(block)
    runpy.run_path(str(script))


def test_the_maxucb_snippet_finds_the_better_class(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = [b for p, b in _own_python_blocks() if p == "plugins/optuna-maxucb.md"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snippet.py").write_text(block)
    study = runpy.run_path(str(tmp_path / "snippet.py"))["study"]
    assert len(study.trials) == 20
    assert study.best_params["model"] == "svc" and study.best_value < 0.05


def _run_readme_section(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    match = re.search(rf"\[start:{name}\] -->\n```python\n(.*?)```\n", README, flags=re.S)
    assert match is not None, name
    monkeypatch.chdir(tmp_path)  # SMAC writes its output directory here
    (tmp_path / "snippet.py").write_text(match.group(1))
    return runpy.run_path(str(tmp_path / "snippet.py"))


# The SMAC pages' snippets (README sections) as written; the Optuna and Ray ID-HB ones are run
# by tests/test_readme_snippets.py and tests/raytune_ext/test_ray_quiet.py.
@pytest.mark.smac
def test_smac_maxucb_snippet_picks_the_best_class(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ns = _run_readme_section("smac-maxucb", tmp_path, monkeypatch)
    assert ns["incumbent"]["algorithm"] == "svc"  # the class with the lowest loss (0 at C = 10)
    assert sum(ns["intensifier"].pulls.values()) == 30


@pytest.mark.smac
def test_smac_tobit_snippet_finds_a_fast_configuration(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ns = _run_readme_section("smac-tobit", tmp_path, monkeypatch)
    incumbent = ns["smac"].intensifier.get_incumbent()
    assert ns["runtime"](incumbent) < 1.0  # the minimum is 0.5 at (0.3, 0.6); the cutoff is 5


@pytest.mark.smac
def test_smac_idhb_snippet_continues_to_27(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = _run_readme_section("smac-idhb", tmp_path, monkeypatch)
    lr = ns["incumbent"]["lr"]
    assert abs(math.log10(lr) + 2) < 0.5  # the toy loss is lowest at lr = 0.01
    runs = list((tmp_path / "smac3_output" / "lr-search").glob("*/scenario.json"))
    assert len(runs) == 1 and '"max_budget": 27' in runs[0].read_text()  # one run, continued

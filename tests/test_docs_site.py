"""The documentation site's sources (issue 33, item 1; ``.ci/run`` builds the site with
``mkdocs build --strict``, which fails on a dead link, a missing page or a docstring the API
reference cannot read).

The plugin pages include the snippets README.md shows in full (``--8<-- "README.md:<name>"``, one
copy of each snippet; the README tests run them). A section name that README does not mark would be
included as nothing, which the strict build does not notice: checked here. Snippets written on a
page itself (not on the results pages) run here as written; where README shows a shorter drop-in
excerpt of a page's snippet, every line of the excerpt is checked to be in the page's snippet.
"""

from __future__ import annotations

import json
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


#: the pages with snippets of their own; a test below runs each as written and checks its result
CHECKED_BELOW = {"plugins/optuna-maxucb.md", "plugins/optuna-idhb.md", "plugins/smac-maxucb.md",
                 "plugins/smac-tobit.md", "plugins/smac-idhb.md", "plugins/optuna-adacent-pred.md"}


def _page_blocks(page: str) -> list[str]:
    return [block for p, block in _own_python_blocks() if p == page]


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


def test_every_page_snippet_is_run_by_a_test_below() -> None:
    pages = {page for page, _ in _own_python_blocks()}
    assert pages == CHECKED_BELOW, f"pages with their own snippets: {sorted(pages)}; add a test below"


def test_the_maxucb_snippet_finds_the_better_class(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = _page_blocks("plugins/optuna-maxucb.md")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snippet.py").write_text(block)
    study = runpy.run_path(str(tmp_path / "snippet.py"))["study"]
    assert len(study.trials) == 20
    assert study.best_params["model"] == "svc" and study.best_value < 0.05


def _run(block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         init: dict[str, Any] | None = None) -> dict[str, Any]:
    monkeypatch.chdir(tmp_path)  # SMAC writes its output directory here, Optuna its journal
    (tmp_path / "snippet.py").write_text(block)
    return runpy.run_path(str(tmp_path / "snippet.py"), init_globals=init)


def _readme_excerpts() -> list[tuple[str, str]]:
    """README's python blocks outside its marked sections, each with the one plugin page its part
    of README (from one heading or bold lead-in to the next) links."""
    unmarked = re.sub(r"<!-- --8<-- \[start:([a-z0-9-]+)\] -->\n.*?\[end:\1\] -->\n", "", README,
                      flags=re.S)
    out = []
    for part in re.split(r"^(?=#{2,4} |\*\*)", unmarked, flags=re.M):
        blocks = re.findall(r"^```python\n(.*?)^```", part, flags=re.M | re.S)
        if blocks:
            pages = set(re.findall(r"\(docs/(plugins/[a-z-]+\.md)\)", part))
            assert len(pages) == 1, f"README part {part[:60]!r} should link its plugin page once"
            out += [(pages.pop(), block) for block in blocks]
    return out


@pytest.mark.parametrize(("page", "excerpt"), _readme_excerpts(), ids=lambda v: v[:40])
def test_readme_excerpt_is_taken_from_the_page_snippet(page: str, excerpt: str) -> None:
    code = "\n".join(_page_blocks(page))
    for line in excerpt.splitlines():
        stripped = line.split("#")[0].strip()
        assert stripped in code, f"README's excerpt line {line!r} is not in {page}'s snippet"


# The full SMAC and Optuna ID-HB snippets on their pages, as written; the README ones (Optuna
# sampler + pruner, Ray ID-HB) are run by tests/test_readme_snippets.py and
# tests/raytune_ext/test_ray_quiet.py.
def test_optuna_idhb_snippet_continues_the_study_at_27(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = _page_blocks("plugins/optuna-idhb.md")
    ns = _run(block, tmp_path, monkeypatch)
    pruner, study = ns["pruner"], ns["study"]
    assert pruner.core(study).ledger.continuation == 357 == sum(ns["checkpoints"].values())
    assert abs(pruner.best_trial(study).params["lr"] - 0.1) < 0.05


def test_optuna_issue17_rules_snippet_completes_trials_near_the_best_rate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = _page_blocks("plugins/optuna-adacent-pred.md")
    ns = _run(block, tmp_path, monkeypatch)
    from optuna.trial import TrialState

    study, rules = ns["study"], ns["issue17_rules"]
    assert (rules.targets, rules.bounds, rules.lengthscale_prior) == ("depth", "clip", "hvarfner")
    assert study.sampler._guidance is rules and study.pruner.calibrate is False
    complete = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert complete and abs(math.log10(study.best_params["lr"]) + 2) < 0.5


@pytest.mark.smac
def test_smac_maxucb_snippet_picks_the_best_class(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = _page_blocks("plugins/smac-maxucb.md")
    ns = _run(block, tmp_path, monkeypatch)
    assert ns["incumbent"]["algorithm"] == "svc"  # the class with the lowest loss (0 at C = 10)
    assert sum(ns["intensifier"].pulls.values()) == 30


@pytest.mark.smac
def test_smac_tobit_snippets_find_a_fast_configuration(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    hpo, algorithm_configuration = _page_blocks("plugins/smac-tobit.md")
    ns = _run(hpo, tmp_path, monkeypatch)
    incumbent = ns["smac"].intensifier.get_incumbent()
    assert ns["runtime"](incumbent) < 1.0  # the minimum is 0.5 at (0.3, 0.6); the cutoff is 5
    # the page's second snippet continues the first (its runtime and configuration space)
    ns = _run(algorithm_configuration, tmp_path, monkeypatch, init=ns)
    assert ns["runtime"](ns["incumbent"]) < 1.0


@pytest.mark.smac
def test_smac_idhb_snippet_continues_to_27(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from smac_ext import hyperband_trials

    (block,) = _page_blocks("plugins/smac-idhb.md")
    ns = _run(block, tmp_path, monkeypatch)
    lr = ns["incumbent"]["lr"]
    assert abs(math.log10(lr) + 2) < 0.5  # the toy loss is lowest at lr = 0.01
    runs = list((tmp_path / "smac3_output" / "lr-search").glob("*/scenario.json"))
    assert len(runs) == 1 and '"max_budget": 27' in runs[0].read_text()  # one run, continued
    data = json.loads((runs[0].parent / "runhistory.json").read_text())
    assert data["stats"]["finished"] == hyperband_trials(1, 27, 3)  # 22 at 9, 47 more at 27

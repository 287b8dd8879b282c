"""Every docstring example of the four packages runs as written (issue 33, item 2).

pytest's ``--doctest-modules`` is not used: under ``--import-mode=importlib`` (pyproject's
addopts) it imports each module a second time, so classes differ in identity from the ones the
package itself uses (e.g. ``guidance must be a Guidance`` from the online sampler). Here each
module is imported normally and its examples are collected with :class:`doctest.DocTestFinder`
and run with one :class:`doctest.DocTestRunner`, one test per module, in a temporary working
directory, with ``os.environ`` restored afterwards. A module whose examples need a live cluster
is run by its own test file on that cluster instead (``RUN_ELSEWHERE``, checked below).
"""

from __future__ import annotations

import doctest
import importlib
import io
import os
import pkgutil
from pathlib import Path

import pytest

PACKAGES = ("uvp_plugins", "optuna_ext", "raytune_ext", "smac_ext")
TESTS = Path(__file__).resolve().parent
#: module -> (test file, the call in it that runs the module's examples): examples that start a
#: Ray cluster run there on the session's cluster (about 14 s more here with a cluster of their own)
RUN_ELSEWHERE: dict[str, tuple[str, str]] = {
    "raytune_ext._pred_scheduler": (
        "raytune_ext/test_pred_scheduler.py", "doctest.testmod(pred_scheduler_module"
    ),
}


def _module_names() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            names.append(info.name)
    return sorted(n for n in names if n not in RUN_ELSEWHERE)


MODULES = _module_names()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = io.StringIO()
    environ = dict(os.environ)
    try:
        for test in finder.find(module, name, globs=dict(vars(module))):
            runner.run(test, out=out.write)
    finally:
        os.environ.clear()
        os.environ.update(environ)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()


@pytest.mark.parametrize("name", sorted(RUN_ELSEWHERE))
def test_examples_left_out_here_run_elsewhere(name: str) -> None:
    path, call = RUN_ELSEWHERE[name]
    assert call in (TESTS / path).read_text(), f"{name}'s examples are no longer run by {path}"


def test_the_examples_are_many_and_cover_every_package() -> None:
    """Guards the collection itself: a finder that silently found nothing would pass above."""
    counts: dict[str, int] = dict.fromkeys(PACKAGES, 0)
    finder = doctest.DocTestFinder(exclude_empty=True)
    for name in MODULES + sorted(RUN_ELSEWHERE):
        module = importlib.import_module(name)
        n = sum(len(t.examples) for t in finder.find(module, name))
        counts[name.split(".")[0]] += n
    assert all(n > 0 for n in counts.values()), counts
    assert sum(counts.values()) >= 200, counts

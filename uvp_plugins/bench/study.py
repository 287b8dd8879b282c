"""What a ``uvp-bench`` subcommand is: a registered :class:`Study`.

Every subcommand (``run``, ``report``, ``idhb``, ``tobit-runtime``, ...) is one study with

* its options (:attr:`Study.add_arguments`, added to the one ``uvp-bench`` parser),
* a :attr:`Study.plan`: the jobs to run (:class:`uvp_plugins.bench.runner.Job`: picklable, each
  writes one JSON summary) and where their results go,
* a :attr:`Study.report`: the text printed from the jobs' summaries, and the exit code.

:func:`run_study` executes any study the same way: the jobs go through
:func:`uvp_plugins.bench.runner.run_many` (worker processes, thread limits, a fixed string-hash
seed, progress, finished jobs skipped unless ``--force`` or the study re-measures by nature),
then the report reads every job's summary file. A study with no jobs (``list``, ``report``) only
reports; a study that composes several runs of the runner (``demo``) gives :attr:`Study.execute`.

Adding a subcommand (e.g. ``uvp-bench stress`` in ``uvp_plugins/bench/stress.py``)::

    from uvp_plugins.bench.study import Plan, Study, register_study

    register_study(Study(
        name="stress", help="reliability scenarios", description="...",
        add_arguments=lambda p: p.add_argument("--out", default="bench-stress", help="..."),
        plan=lambda args: Plan(jobs=[...], out=Path(args.out)),
        report=lambda args, summaries: (format_rows(summaries), 0),
    ))

:data:`STUDY_MODULES` lists the modules whose import registers studies (a listed module that
does not exist is skipped).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uvp_plugins.bench.runner import Job

__all__ = [
    "Study",
    "Plan",
    "CallJob",
    "register_study",
    "studies",
    "run_study",
    "STUDY_MODULES",
    "load_summaries",
    "rows_of",
]

#: modules whose import registers studies, in the order their subcommands are listed
STUDY_MODULES = ("uvp_plugins.bench.studies", "uvp_plugins.bench.stress")


@dataclass
class Plan:
    """The jobs of one invocation and how to run them."""

    jobs: list[Job]
    out: Path
    workers: int = 1
    threads: int | None = None
    force: bool = False
    #: progress bar label (None: plain lines only)
    bar: str | None = None
    #: one line per finished job on stderr
    quiet: bool = False


@dataclass(frozen=True)
class Study:
    """One ``uvp-bench`` subcommand (see the module docstring)."""

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    plan: Callable[[argparse.Namespace], Plan] | None = None
    report: Callable[[argparse.Namespace, list[dict[str, Any]]], tuple[str, int]] | None = None
    #: timing studies measure this machine now: earlier results are never reused
    remeasure: bool = False
    #: a study that drives the runner itself (e.g. several comparisons in a row)
    execute: Callable[[argparse.Namespace], int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallJob:
    """A job that calls ``function(**kwargs)`` (``"module:name"``) in a worker and stores the
    rows it returns in ``OUT/<name>.json`` (key ``rows``; a crash is kept in ``error``).

    For studies whose unit of work is a measurement function (timing studies, a chunk of a
    model-quality table, one Ray experiment)."""

    name: str
    function: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        return self.name

    def summary_path(self, out: Path) -> Path:
        return Path(out) / f"{self.name}.json"

    def execute(self, out: Path, threads: int | None = None) -> dict[str, Any]:
        from uvp_plugins.bench.runner import write_summary

        module, name = self.function.split(":")
        start = time.perf_counter()
        error, rows = None, []
        try:
            rows = list(getattr(importlib.import_module(module), name)(**self.kwargs))
        except Exception:  # recorded, not hidden
            error = traceback.format_exc()
        summary = {
            "name": self.name, "function": self.function, "kwargs": self.kwargs, "rows": rows,
            "wall_seconds": time.perf_counter() - start, "threads": threads, "error": error,
        }
        write_summary(self.summary_path(out), summary)
        return summary


def rows_of(summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :class:`CallJob` summaries, in order; a job's crash raises with its traceback."""
    rows: list[dict[str, Any]] = []
    for s in summaries:
        if s.get("error"):
            raise RuntimeError(f"{s.get('name', 'a job')} failed:\n{s['error']}")
        rows.extend(s.get("rows", []))
    return rows


_STUDIES: dict[str, Study] = {}


def register_study(study: Study) -> Study:
    """Register ``study`` under its name (a second, different study with the name is refused)."""
    if study.name in _STUDIES and _STUDIES[study.name] is not study:
        raise ValueError(f"study {study.name!r} is already registered")
    if study.execute is None and (study.plan is None or study.report is None):
        raise ValueError(f"study {study.name!r} needs plan and report, or execute")
    _STUDIES[study.name] = study
    return study


def studies() -> dict[str, Study]:
    """Every registered study, in registration order (the modules of :data:`STUDY_MODULES`)."""
    for module in STUDY_MODULES:
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)
    return dict(_STUDIES)


def load_summaries(jobs: Sequence[Job], out: Path) -> list[dict[str, Any]]:
    """The summaries of ``jobs`` that exist, in the jobs' order."""
    found = []
    for job in jobs:
        path = job.summary_path(out)
        if path.exists():
            found.append(json.loads(path.read_text()))
    return found


def run_study(study: Study, args: argparse.Namespace) -> int:
    """Plan, run through the runner, report; returns the exit code."""
    from uvp_plugins.bench.runner import run_many

    if study.execute is not None:
        return int(study.execute(args))
    assert study.plan is not None and study.report is not None
    plan = study.plan(args)
    if plan.jobs:
        run_many(
            plan.jobs, plan.out, jobs=plan.workers, force=plan.force or study.remeasure,
            threads=plan.threads, bar=plan.bar, progress=(lambda _: None) if plan.quiet else None,
        )
    text, code = study.report(args, load_summaries(plan.jobs, plan.out))
    if text:
        print(text)
    return int(code)

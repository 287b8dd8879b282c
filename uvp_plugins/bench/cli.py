"""The ``uvp-bench`` command: one parser over the registered studies.

Every subcommand is a :class:`~uvp_plugins.bench.study.Study` (the built-in ones are in
:mod:`uvp_plugins.bench.studies`); this module builds the parser from them and runs the chosen
one with :func:`~uvp_plugins.bench.study.run_study`.

Examples::

    uvp-bench list
    uvp-bench run --problem lcbench --tasks 3945 --methods random,optuna-tpe-hyperband --seeds 0-2
    uvp-bench report bench-out --baseline optuna-tpe-hyperband
    uvp-bench demo
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from uvp_plugins.bench.studies import build_specs, problem_options, resolve_tasks
from uvp_plugins.bench.study import run_study, studies

__all__ = ["main", "build_specs", "parser", "problem_options", "resolve_tasks"]


def parser() -> argparse.ArgumentParser:
    """The ``uvp-bench`` parser: one subcommand per registered study."""
    top = argparse.ArgumentParser(
        prog="uvp-bench",
        description="Benchmark uvp-plugins beside the frameworks' own methods (same budget, same seeds).",
    )
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for study in studies().values():
        sp = sub.add_parser(study.name, help=study.help, description=study.description)
        study.add_arguments(sp)
        sp.set_defaults(study=study)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return run_study(args.study, args)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"uvp-bench: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

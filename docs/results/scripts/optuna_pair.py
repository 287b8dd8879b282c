"""Paired comparison of two methods over (task, seed) pairs of ``uvp-bench run`` directories
(issue 29, docs/results/optuna.md).

Each directory may carry a prefix (``DIR:prefix``) that is put before its methods' names, so the
same method measured on two versions of the code can be compared (``tune20-base:base:`` makes
``base:optuna-eadacent-pred``). Per group (all tasks of a problem by default), prints the runs
won / tied / lost by ``A`` at a budget fraction, the two-sided sign test over the decided runs,
and the tasks on which ``A`` wins or loses the majority of its seeds.

Usage::

    python docs/results/scripts/optuna_pair.py v-depth base:optuna-eadacent-pred \
        tune20-abl tune20-base:base: --score envelope --fraction 0.25
"""

from __future__ import annotations

import argparse
import re

import numpy as np
from scipy.stats import binomtest

from uvp_plugins.bench.report import load_runs


def group_of(problem: str, task: str, how: str) -> str:
    """The group a run counts in: its problem (``all``), its task (``task``), or its problem and
    rank-agreement level for the synthetic families (``level``)."""
    if how == "all":
        return problem
    if how == "task":
        return f"{problem}/{task}"
    level = re.search(r"(high|medium|low|none)$", task)
    return f"{problem}:{level.group(1)}" if level else problem


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="method A (with its directory's prefix, if any)")
    ap.add_argument("b", help="method B")
    ap.add_argument("dirs", nargs="+", help="run directories, each DIR or DIR:prefix")
    ap.add_argument("--score", default="user", choices=("user", "envelope"))
    ap.add_argument("--fraction", type=float, default=1.0)
    ap.add_argument("--group", default="all", choices=("all", "task", "level"))
    args = ap.parse_args()
    scores: dict[str, dict[tuple[str, int], dict[str, float]]] = {}
    for d in args.dirs:
        path, _, prefix = d.partition(":")
        for r in load_runs(path, args.score):
            name = prefix + r.method
            if name not in (args.a, args.b):
                continue
            sign = -1.0 if r.direction == "min" else 1.0
            key = (r.task, r.seed)
            scores.setdefault(group_of(r.problem, r.task, args.group), {}).setdefault(key, {})[
                name
            ] = sign * r.score_at(args.fraction)
    for g in sorted(scores):
        pairs = [(v[args.a], v[args.b], k[0]) for k, v in scores[g].items() if len(v) == 2]
        if not pairs:
            continue
        w = sum(a > b for a, b, _ in pairs)
        lost = sum(a < b for a, b, _ in pairs)
        p = binomtest(w, w + lost).pvalue if w + lost else 1.0
        per_task: dict[str, list[float]] = {}
        for a, b, task in pairs:
            per_task.setdefault(task, []).append(float(np.sign(a - b)))
        tw = sum(np.mean(v) > 0 for v in per_task.values())
        tl = sum(np.mean(v) < 0 for v in per_task.values())
        print(
            f"{g:22s} {args.a} vs {args.b}: runs W/T/L {w}/{len(pairs) - w - lost}/{lost} "
            f"(p={p:.3g}); tasks W/L {tw}/{tl} of {len(per_task)}"
        )


if __name__ == "__main__":
    main()

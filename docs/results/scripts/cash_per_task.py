"""Per-task table of one method against a baseline in a ``uvp-bench run`` directory (issue 30).

For each task on which both methods have runs for every one of the given seeds: the mean over
seeds of each method's best loss at a budget fraction, the difference (baseline minus method,
> 0: the method is better) and the outcome (W/T/L, ties by ``numpy.isclose``: the rule of
``uvp-bench report``). Tasks with a missing run of either method are listed apart and left out,
so only complete (task, seed) pairs count.

Usage (docs/results/cash_yahpo6.md)::

    python docs/results/scripts/cash_per_task.py bench-held6 optuna-maxucb-cash optuna-tpe-cash \
        --seeds 0-9 --fraction 1
"""

from __future__ import annotations

import argparse

import numpy as np

from uvp_plugins.bench.paired import compare
from uvp_plugins.bench.report import load_runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("method")
    parser.add_argument("baseline")
    parser.add_argument("--seeds", default="0-9", help="e.g. 0-9")
    parser.add_argument("--fraction", type=float, default=1.0)
    args = parser.parse_args()
    lo, hi = (int(x) for x in args.seeds.split("-"))
    seeds = set(range(lo, hi + 1))
    runs = [r for r in load_runs(args.directory, "user") if r.seed in seeds]
    by_task: dict[str, dict[str, dict[int, float]]] = {}
    for r in runs:
        if r.method in (args.method, args.baseline):
            by_task.setdefault(r.task, {}).setdefault(r.method, {})[r.seed] = r.score_at(args.fraction)
    direction = runs[0].direction
    rows, incomplete = [], []
    for task, per_method in by_task.items():
        if any(set(per_method.get(m, {})) != seeds for m in (args.method, args.baseline)):
            incomplete.append(f"{task} ({', '.join(f'{m}: {len(per_method.get(m, {}))}' for m in (args.method, args.baseline))})")
            continue
        ours = float(np.mean(list(per_method[args.method].values())))
        theirs = float(np.mean(list(per_method[args.baseline].values())))
        sign = 1.0 if direction == "max" else -1.0
        rows.append((task, ours, theirs, sign * (ours - theirs), compare(ours, theirs, direction)))
    rows.sort(key=lambda row: row[3])
    print(f"| task | {args.method} | {args.baseline} | difference (> 0: {args.method} better) | outcome |")
    print("|---|---|---|---|---|")
    for task, ours, theirs, diff, out in rows:
        print(f"| {task} | {ours:.4f} | {theirs:.4f} | {diff:+.4f} | {'W' if out > 0 else 'L' if out < 0 else 'T'} |")
    wins = sum(1 for row in rows if row[4] > 0)
    ties = sum(1 for row in rows if row[4] == 0)
    print(f"\n{len(rows)} complete tasks at fraction {args.fraction:g}: {wins}/{ties}/{len(rows) - wins - ties} W/T/L")
    if incomplete:
        print("incomplete (left out): " + "; ".join(sorted(incomplete)))


if __name__ == "__main__":
    main()

"""Per BBOB dimension: on how many functions ours has a better mean rank than each peer, and the
mean ranks (issue 29's BBOB item, docs/results/optuna.md).

For each (function, seed) the methods are ranked by their best value after ``fraction`` of the
run's trials (ties share a rank); a function's mean rank is the mean over its seeds, and a
dimension's mean rank the mean over its functions. Only (function, seed) pairs that every listed
method finished count.

Usage::

    python docs/results/scripts/bbob_dims.py bbob500 optuna-eadacent optuna-tpe random \
        --fraction 0.2
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict

import numpy as np
from scipy.stats import rankdata

from uvp_plugins.bench.report import load_runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory")
    ap.add_argument("ours")
    ap.add_argument("peers", nargs="+")
    ap.add_argument("--fraction", type=float, default=1.0)
    args = ap.parse_args()
    methods = [args.ours, *args.peers]
    scores: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for r in load_runs(args.directory, "user"):
        if r.method in methods:  # oriented so that smaller is better (BBOB is minimised)
            sign = -1.0 if r.direction == "max" else 1.0
            scores[(r.task, r.seed)][r.method] = sign * r.score_at(args.fraction)
    per_function: dict[int, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
    for (task, _seed), by_method in scores.items():
        if len(by_method) < len(methods):
            continue
        dim = int(re.search(r"-d(\d+)$", task).group(1))  # type: ignore[union-attr]
        ranks = rankdata([by_method[m] for m in methods])  # rank 1: the best
        per_function[dim][task].append(ranks)
    print(f"fraction {args.fraction}: ours = {args.ours}")
    for dim in sorted(per_function):
        fn = {t: np.mean(v, axis=0) for t, v in per_function[dim].items()}
        seeds = sorted({len(v) for v in per_function[dim].values()})
        cells = []
        for j, peer in enumerate(args.peers, start=1):
            w = sum(m[0] < m[j] for m in fn.values())
            lost = sum(m[0] > m[j] for m in fn.values())
            cells.append(f"vs {peer} {w}/{lost}")
        means = np.mean(list(fn.values()), axis=0)
        print(
            f"d={dim:<3d} functions {len(fn)} (seeds per function {seeds}): " + ", ".join(cells)
            + "; mean rank " + " / ".join(f"{x:.2f}" for x in means)
        )


if __name__ == "__main__":
    main()

"""Issue 31: where the test PAR10 differences between the configurators come from (per-instance
test runtimes of the final incumbents, from the run summaries of `uvp-bench tobit-ac`).

Usage: ``python docs/results/scripts/tobit_ac_why.py RESULTS/tobit-ac/main-n40-kappa0.5-budget20``
(the folder of one setting: ``<family>/<method>/seed<k>.json``). Prints, per family, how many test
instances every / no incumbent solves, PAR10 and solved counts per method, the Tobit-minus-forest
PAR10 difference per seed split into TIMEOUTs and runtimes on solved instances, and (pooled) the
runtime ratio on the test instances both incumbents of a pair solve, with a sign test.
"""

from __future__ import annotations

import collections
import glob
import json
import math
import statistics
import sys
from typing import Any

from scipy.stats import binomtest

METHODS = ("ac-tobit", "ac-smac", "ac-random")


def _solved(summary: dict[str, Any]) -> list[float]:
    """The test runtimes of the instances the incumbent solved (a TIMEOUT is recorded at the
    cutoff ``kappa_max``); PAR10 and the solved count are the summary's own."""
    return [r for r in summary["test_runtimes"] if r is not None and r < summary["kappa_max"]]


def _load(root: str) -> dict[tuple[str, int], dict[str, Any]]:
    runs: dict[tuple[str, int], dict[str, Any]] = collections.defaultdict(dict)
    for path in glob.glob(f"{root}/*/*/seed*.json"):
        with open(path) as fh:
            summary = json.load(fh)
        if not summary.get("error"):
            runs[(summary["family"], summary["seed"])][summary["method"]] = summary
    return runs


def _family(family: str, runs: dict[tuple[str, int], dict[str, Any]]) -> None:
    default = next((m["ac-default"] for (f, _), m in runs.items() if f == family and "ac-default" in m), None)
    groups = [m for (f, _), m in sorted(runs.items()) if f == family and all(k in m for k in METHODS)]
    print(f"== {family}: {len(groups)} complete seeds")
    if not groups:
        return
    n_test = len(groups[0]["ac-tobit"]["test_runtimes"])
    solved_by = [0] * n_test
    for group in groups:
        for method in METHODS:
            cutoff = group[method]["kappa_max"]
            for i, r in enumerate(group[method]["test_runtimes"]):
                solved_by[i] += r is not None and r < cutoff
    total = len(groups) * len(METHODS)
    never = sum(c == 0 for c in solved_by)
    always = sum(c == total for c in solved_by)
    print(f"  test instances solved by no incumbent: {never}, by every one: {always}, by some: "
          f"{n_test - never - always} (of {n_test}; {total} incumbents)")
    if default:
        print(f"  default: PAR10 {default['test_par10']:.3f}, solved {default['test_solved']}")
    for method in METHODS:
        par10 = [g[method]["test_par10"] for g in groups]
        solved = [g[method]["test_solved"] for g in groups]
        print(f"  {method:10s} PAR10 median {statistics.median(par10):.3f} mean {statistics.mean(par10):.3f}; "
              f"solved per seed {solved}")
    timeouts, runtimes = [], []
    for g in groups:
        ours, peer = g["ac-tobit"], g["ac-smac"]
        penalty = 10 * ours["kappa_max"]  # PAR10's count of a TIMEOUT
        timeouts.append(penalty * (peer["test_solved"] - ours["test_solved"]) / n_test)
        runtimes.append((sum(_solved(ours)) - sum(_solved(peer))) / n_test)
    print(f"  tobit - smac PAR10 per seed: from TIMEOUTs {[round(x, 3) for x in timeouts]}, "
          f"from solved runtimes {[round(x, 3) for x in runtimes]}")


def _common_runtimes(runs: dict[tuple[str, int], dict[str, Any]], peer: str) -> None:
    ratios = []
    for _, group in sorted(runs.items()):
        if not all(k in group for k in METHODS):
            continue
        cutoff = group["ac-tobit"]["kappa_max"]
        both = [
            (x, y) for x, y in zip(group["ac-tobit"]["test_runtimes"], group[peer]["test_runtimes"], strict=True)
            if x is not None and y is not None and x < cutoff and y < cutoff
        ]
        if both:
            logs = [math.log(max(x, 1e-3) / max(y, 1e-3)) for x, y in both]
            ratios.append(math.exp(statistics.mean(logs)))
    wins = sum(r < 1 for r in ratios)
    losses = sum(r > 1 for r in ratios)
    p = binomtest(wins, wins + losses).pvalue if wins + losses else math.nan
    mean = math.exp(statistics.mean(math.log(r) for r in ratios)) if ratios else math.nan
    print(f"tobit vs {peer}, runtime on the test instances both solve: W/L {wins}/{losses}, "
          f"sign test p = {p:.3g}, geometric mean ratio {mean:.3f}")


def main(root: str) -> None:
    runs = _load(root)
    for family in ("jobshop", "facility"):
        _family(family, runs)
    for peer in ("ac-smac", "ac-random"):
        _common_runtimes(runs, peer)


if __name__ == "__main__":
    main(sys.argv[1])

"""Bootstrap confidence intervals for the mean rank over tasks.

The protocol of Balef, Vernade & Eggensperger (*Put CASH on Bandits*, App. D.1, "Average ranking
calculation"): for every task, resample each method's repetitions (seeds) with replacement and
average them; rank the methods on those averages (1 = best, ties share the average rank); average
the ranks over tasks; repeat ``n_boot`` times. The spread of the replicates says how much of a
mean-rank difference the choice of seeds alone can produce.

We report the mean rank on all runs (the estimate, the ``rank@`` column of ``uvp-bench report``),
the central 95 % interval of the replicates (percentile bootstrap) and **P(best)**: the share of
replicates in which the method has the lowest mean rank (a shared lowest counts ``1/k``), which
answers "which method has the best final mean rank" with its uncertainty. (The replicates' own
mean is not a point estimate to print beside the percentile interval: when a method ranks first in
99 % of the replicates, the replicates' mean is 1.01 while the interval is 1.00-1.00.)
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

if TYPE_CHECKING:
    from uvp_plugins.bench.report import Run

__all__ = ["BootstrapRank", "bootstrap_mean_ranks", "format_bootstrap_ranks", "per_task_scores"]


@dataclass(frozen=True)
class BootstrapRank:
    """A method's mean rank over tasks: on all runs (``mean``) and across the bootstrap
    replicates (95 % interval ``low``..``high``, ``p_best``)."""

    mean: float
    low: float
    high: float
    p_best: float


def per_task_scores(runs: Sequence[Run], fraction: float) -> dict[str, dict[str, np.ndarray]]:
    """task -> method -> the runs' scores at ``fraction`` (one per seed)."""
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        acc[r.task][r.method].append(r.score_at(fraction))
    return {t: {m: np.asarray(v, dtype=float) for m, v in ms.items()} for t, ms in acc.items()}


def _resampled_means(scores: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``n_boot`` means of ``scores`` resampled with replacement; NaN scores (no value yet at
    this fraction) are ignored, and a replicate of only NaNs stays NaN."""
    idx = rng.integers(0, scores.size, size=(n_boot, scores.size))
    sample = scores[idx]
    finite = np.isfinite(sample)
    counts = finite.sum(axis=1)
    sums = np.where(finite, sample, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def bootstrap_mean_ranks(
    runs: Sequence[Run], fraction: float = 1.0, n_boot: int = 1000, seed: int = 0
) -> dict[str, BootstrapRank]:
    """Mean rank over tasks at budget ``fraction`` with bootstrap replicates (App. D.1).

    As in :func:`uvp_plugins.bench.report.mean_ranks`, a method is ranked on the tasks where it
    has runs, a method without a value yet at ``fraction`` ranks last, and its mean rank is over
    those tasks. ``seed`` fixes the resampling, so a report is reproducible.
    """
    if not isinstance(n_boot, int) or isinstance(n_boot, bool) or n_boot < 1:
        raise ValueError(f"n_boot: expected a positive integer number of replicates, got {n_boot!r}")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction: expected a budget fraction in (0, 1], got {fraction!r}")
    if not runs:
        raise ValueError("runs: expected at least one run")
    sign = -1.0 if runs[0].direction == "max" else 1.0
    rng = np.random.default_rng(seed)
    # row 0: the runs as they are (the estimate); rows 1..n_boot: the replicates
    rank_sums: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(n_boot + 1))
    task_counts: dict[str, int] = defaultdict(int)
    per_task = per_task_scores(runs, fraction)
    for task in sorted(per_task):
        methods = sorted(per_task[task])
        means = np.column_stack([
            np.concatenate([[_observed_mean(per_task[task][m])],
                            _resampled_means(per_task[task][m], n_boot, rng)])
            for m in methods
        ])
        key = np.where(np.isfinite(means), sign * means, np.inf)
        ranks = stats.rankdata(key, method="average", axis=1)
        for j, m in enumerate(methods):
            rank_sums[m] += ranks[:, j]
            task_counts[m] += 1
    names = sorted(rank_sums)
    mean_rank = np.column_stack([rank_sums[m] / task_counts[m] for m in names])  # (1 + n_boot, M)
    replicates = mean_rank[1:]
    lowest = replicates <= replicates.min(axis=1, keepdims=True) + 1e-12
    share = lowest / lowest.sum(axis=1, keepdims=True)
    out = {}
    for j, m in enumerate(names):
        low, high = np.percentile(replicates[:, j], [2.5, 97.5])
        out[m] = BootstrapRank(
            mean=float(mean_rank[0, j]), low=float(low), high=float(high),
            p_best=float(share[:, j].mean()),
        )
    return out


def _observed_mean(scores: np.ndarray) -> float:
    """The mean of the finite scores (NaN: no value yet at this fraction)."""
    finite = scores[np.isfinite(scores)]
    return float(finite.mean()) if finite.size else math.nan


def format_bootstrap_ranks(ranks: dict[str, BootstrapRank], fraction: float, n_boot: int) -> str:
    """Markdown table of :func:`bootstrap_mean_ranks`, best mean rank first."""
    pct = f"{fraction * 100:g}"
    lines = [
        f"Mean rank at {pct} % of the budget, bootstrap over seeds per task ({n_boot} replicates; "
        "Balef et al., App. D.1):",
        "",
        f"| method | mean rank@{pct}% (all runs) | 95 % bootstrap interval | P(best) |",
        "|---|---|---|---|",
    ]
    outside = []
    for m, r in sorted(ranks.items(), key=lambda kv: (kv[1].mean, kv[0])):
        p = f"{r.p_best:.3f}" if math.isfinite(r.p_best) else "nan"
        mark = ""
        if not r.low - 1e-9 <= r.mean <= r.high + 1e-9:
            mark = " *"
            outside.append(m)
        lines.append(f"| {m} | {r.mean:.2f}{mark} | {r.low:.2f}–{r.high:.2f} | {p} |")
    if outside:
        lines += [
            "",
            f"\\* outside its interval ({', '.join(outside)}): the replicates resample each "
            "method's seeds separately, which breaks exact ties between methods that share runs "
            "(e.g. the same first trials for a seed) and moves a leading method's replicate ranks "
            "up; the all-runs rank is the estimate, P(best) says which method ranks first.",
        ]
    return "\n".join(lines)

"""Ours against a baseline, task by task and seed by seed, at several budget fractions.

The comparison of Balef, Vernade & Eggensperger (*Put CASH on Bandits*, Table 1 and App. D.1):
per task, the mean over seeds of each method's best loss at a budget fraction; a task is *won*,
*tied* (``numpy.isclose`` of the two means with its default tolerances, the paper's rule) or
*lost*; the **one-sided** sign test (``scipy.stats.binomtest``, ties dropped,
``alternative="greater"``) asks whether the method wins more often than the baseline. Beside it
the same per (task, seed) pair (the same seed for both methods) and the mean difference over
tasks (baseline minus method, oriented so that > 0 means the method is better) with a 95 %
bootstrap interval over tasks.

Example:
    >>> rows = paired_rows(runs, "ours", "peer", (0.25, 0.5, 1.0))   # doctest: +SKIP
    >>> print(format_paired(rows, "peer"))                            # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from uvp_plugins.bench.bootstrap_ranks import per_task_scores

if TYPE_CHECKING:
    from uvp_plugins.bench.report import Run

__all__ = ["PairedRow", "compare", "format_paired", "one_sided_sign_p", "paired_rows"]

#: bootstrap replicates of the interval of the mean difference (seeded: the table repeats)
N_BOOT = 2000


@dataclass(frozen=True)
class PairedRow:
    """One method against the baseline at one budget fraction."""

    method: str
    fraction: float
    tasks: tuple[int, int, int]
    tasks_p: float
    seeds: tuple[int, int, int]
    seeds_p: float
    mean_diff: float
    low: float
    high: float


def compare(a: float, b: float, direction: str) -> int:
    """+1 if ``a`` is better than ``b``, -1 if worse, 0 if ``numpy.isclose`` (or either is
    missing)."""
    if not (math.isfinite(a) and math.isfinite(b)) or bool(np.isclose(a, b)):
        return 0
    return 1 if (a > b) == (direction == "max") else -1


def one_sided_sign_p(wins: int, losses: int) -> float:
    """P(at least ``wins`` wins in ``wins + losses`` fair coin flips): the one-sided sign test
    that the method wins more often (1.0 without decided pairs)."""
    n = wins + losses
    return float(stats.binomtest(wins, n, 0.5, alternative="greater").pvalue) if n else 1.0


def _count(outcomes: Sequence[int]) -> tuple[int, int, int]:
    return (sum(1 for o in outcomes if o > 0), sum(1 for o in outcomes if o == 0),
            sum(1 for o in outcomes if o < 0))


def _mean_of_values(scores: Iterable[float]) -> float:
    """Mean of the runs that have a value at this fraction; NaN (no warning) if none has."""
    values = [float(v) for v in scores if math.isfinite(v)]
    return float(np.mean(values)) if values else math.nan


def paired_rows(
    runs: Sequence[Run], method: str, baseline: str, fractions: Sequence[float]
) -> list[PairedRow]:
    """``method`` against ``baseline`` at each fraction, on the tasks both have runs on."""
    direction = runs[0].direction
    sign = 1.0 if direction == "max" else -1.0
    rows = []
    for f in fractions:
        per_task = per_task_scores(runs, f)
        task_out, seed_out, diffs = [], [], []
        for ms in per_task.values():
            if method not in ms or baseline not in ms:
                continue
            ours, theirs = ms[method], ms[baseline]
            a, b = _mean_of_values(ours), _mean_of_values(theirs)
            task_out.append(compare(a, b, direction))
            if math.isfinite(a) and math.isfinite(b):
                diffs.append(sign * (a - b))
        by_seed: dict[tuple[str, int], dict[str, float]] = {}
        for r in runs:
            if r.method in (method, baseline):
                by_seed.setdefault((r.task, r.seed), {})[r.method] = r.score_at(f)
        for pair in by_seed.values():
            if len(pair) == 2:
                seed_out.append(compare(pair[method], pair[baseline], direction))
        tw, tt, tl = _count(task_out)
        sw, st, sl = _count(seed_out)
        d = np.asarray(diffs, dtype=float)
        if d.size:
            rng = np.random.default_rng(0)
            boot = d[rng.integers(0, d.size, size=(N_BOOT, d.size))].mean(axis=1)
            low, high = (float(x) for x in np.percentile(boot, [2.5, 97.5]))
            mean = float(d.mean())
        else:
            mean = low = high = math.nan
        rows.append(PairedRow(method, f, (tw, tt, tl), one_sided_sign_p(tw, tl), (sw, st, sl),
                              one_sided_sign_p(sw, sl), mean, low, high))
    return rows


def format_paired(rows: Sequence[PairedRow], baseline: str) -> str:
    """Markdown table of :func:`paired_rows` output."""
    lines = [
        f"| method | at | tasks W/T/L vs {baseline} | one-sided p | seeds W/T/L | one-sided p "
        "| mean difference (> 0: method better) [95 % bootstrap over tasks] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.method} | {r.fraction:.0%} | {'/'.join(map(str, r.tasks))} | {r.tasks_p:.3g} "
            f"| {'/'.join(map(str, r.seeds))} | {r.seeds_p:.3g} "
            f"| {r.mean_diff:+.4g} [{r.low:+.4g}, {r.high:+.4g}] |"
        )
    return "\n".join(lines)

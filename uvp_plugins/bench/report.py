"""Summaries and plots of a ``uvp-bench run`` output directory.

For every problem found under the directory:

* **score@f**: the best value within the first ``f * B`` budget units (the anytime curve at
  fraction ``f``); **final** is score@1. Two views of "best value" (:data:`SCORES`):

  - ``"user"`` - what a user of the framework gets: the best value among evaluations *at the
    full budget* ``T`` (trials that reached ``T``: in Optuna ``study.best_value``, the best
    COMPLETE trial; a pruned trial's value does not count). A run with no such evaluation yet
    has no score (it ranks last).
  - ``"envelope"`` - the best value among *all* paid evaluations, partial ones included (the
    protocol of the AdaCent paper and shared/anchors/lcbench.md). It is kept only for problems
    whose partial results are usable models (learning curves with checkpoints, smaller training
    sets: ``Problem.partial_results_usable``); for the others (synthetic multi-fidelity
    functions, where a low fidelity is a different function) it is not reported.
* **mean final**: mean over tasks of the per-task mean over seeds (± standard error over runs).
* **rank@f**: per task, methods are ranked by their mean score@f over seeds (1 = best, ties get
  the average rank, a method with no value yet ranks last); ranks are averaged over tasks — the
  protocol of shared/anchors/lcbench.md and the papers' rank plots.
* **W/T/L vs baseline**: per task, the method's mean final against the baseline's (ties within
  ``1e-9`` relative), with a two-sided sign test p-value (``scipy.stats.binomtest``, ties dropped).
* **at T/run**: evaluations at the full budget ``T`` per run (Optuna: COMPLETE trials per study).
* **overhead**: mean wall time per run spent outside problem evaluations (the optimizer's cost).
* **optimizer time per step**: for methods that time named steps (e.g. SMAC's ``ask``), calls per
  run and milliseconds per call.
* **evaluations per arm** (CASH problems): mean evaluations per model class and run, per method.
* with ``--bootstrap N``: the final mean rank with a 95 % bootstrap interval over seeds and
  P(best), the paper's ranking protocol (:mod:`uvp_plugins.bench.bootstrap_ranks`).

Plots (PNG): anytime mean rank vs budget fraction, and mean score vs budget fraction.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from uvp_plugins.bench.bootstrap_ranks import (
    bootstrap_mean_ranks,
    format_bootstrap_ranks,
    per_task_scores,
)
from uvp_plugins.bench.suggest import did_you_mean, short_list

__all__ = [
    "Run",
    "SCORES",
    "load_runs",
    "summarise",
    "format_table",
    "plot_problem",
    "plot_name",
    "report",
]

DEFAULT_FRACTIONS = (0.1, 0.25, 0.5, 1.0)
#: the two views of a run's best value (module doc): "user" first, the one every report shows
SCORES = ("user", "envelope")


@dataclass
class Run:
    problem: str
    task: str
    method: str
    seed: int
    direction: str
    total_budget: float
    spent: np.ndarray
    best: np.ndarray
    summary: dict[str, Any] = field(default_factory=dict)
    #: which best value ``best`` holds (:data:`SCORES`)
    score: str = "envelope"

    @property
    def full_evaluations(self) -> int:
        """Evaluations of this run at the full budget ``T`` (Optuna: COMPLETE trials)."""
        return int(self.summary.get("_full_evaluations", 0))

    def score_at(self, fraction: float) -> float:
        limit = fraction * self.total_budget + 1e-9
        idx = np.searchsorted(self.spent, limit, side="right") - 1
        return float(self.best[idx]) if idx >= 0 else math.nan


def user_view(
    spent: np.ndarray, value: np.ndarray, budget: np.ndarray, max_budget: int, maximize: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The anytime curve of the user view: at every evaluation at the full budget ``T``, the
    best value among the evaluations at ``T`` so far (module doc). Returns ``(spent, best)``.

    Example:
        >>> s, b = user_view(np.array([1.0, 3, 4]), np.array([0.5, 0.7, 0.6]),
        ...                  np.array([1, 3, 3]), 3, True)
        >>> s.tolist(), b.tolist()
        ([3.0, 4.0], [0.7, 0.7])
    """
    full = np.flatnonzero(np.asarray(budget) >= max_budget)
    vals = np.asarray(value, dtype=float)[full]
    best = np.maximum.accumulate(vals) if maximize else np.minimum.accumulate(vals)
    return np.asarray(spent, dtype=float)[full], best


def load_runs(directory: str | Path, score: str = "envelope") -> list[Run]:
    """All finished runs below ``directory`` (a JSON summary with its CSV curve), with their
    anytime curve in the view ``score`` (:data:`SCORES`)."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {', '.join(SCORES)}, got {score!r}")
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"no such results directory: {root}")
    runs = []
    for js in sorted(root.rglob("seed*.json")):
        summary = json.loads(js.read_text())
        csv_path = js.with_suffix(".csv")
        if not csv_path.exists() or "direction" not in summary:
            continue
        data = np.genfromtxt(csv_path, delimiter=",", names=True, dtype=float)
        data = np.atleast_1d(data)
        spent = np.asarray(data["spent"], dtype=float) if data.size else np.array([])
        best = np.asarray(data["best"], dtype=float) if data.size else np.array([])
        max_budget = int(summary.get("max_budget") or 1)
        if data.size and "budget" in (data.dtype.names or ()):
            budget = np.asarray(data["budget"], dtype=float)
        else:  # a curve without budgets: every evaluation counts as one at T
            budget = np.full(spent.shape, float(max_budget))
        summary["_full_evaluations"] = int(np.sum(budget >= max_budget))
        if score == "user":
            names = data.dtype.names or ()
            value = np.asarray(data["value"], dtype=float) if "value" in names else best
            spent, best = user_view(spent, value, budget, max_budget, summary["direction"] == "max")
        runs.append(
            Run(
                problem=summary["problem"],
                task=str(summary["task"]),
                method=summary["method"],
                seed=int(summary["seed"]),
                direction=summary["direction"],
                total_budget=float(summary["total_budget"]),
                spent=spent,
                best=best,
                summary=summary,
                score=score,
            )
        )
    if not runs:
        raise FileNotFoundError(f"no benchmark results (seed*.json with .csv) found below {root}")
    return runs


def _task_means(runs: Sequence[Run], fraction: float) -> dict[str, dict[str, float]]:
    """task -> method -> mean score@fraction over seeds."""
    return {
        t: {m: float(np.nanmean(v)) if np.any(np.isfinite(v)) else math.nan for m, v in ms.items()}
        for t, ms in per_task_scores(runs, fraction).items()
    }


def _ranks(values: dict[str, float], direction: str) -> dict[str, float]:
    names = list(values)
    arr = np.array([values[n] for n in names], dtype=float)
    sign = -1.0 if direction == "max" else 1.0
    key = np.where(np.isfinite(arr), sign * arr, np.inf)
    ranks = stats.rankdata(key, method="average")
    return dict(zip(names, ranks.tolist(), strict=False))


def mean_ranks(runs: Sequence[Run], fraction: float) -> dict[str, float]:
    direction = runs[0].direction
    per_task = _task_means(runs, fraction)
    acc: dict[str, list[float]] = defaultdict(list)
    for methods in per_task.values():
        for m, rk in _ranks(methods, direction).items():
            acc[m].append(rk)
    return {m: float(np.mean(v)) for m, v in acc.items()}


def summarise(
    runs: Sequence[Run], baseline: str | None = None, fractions: Sequence[float] = DEFAULT_FRACTIONS
) -> list[dict[str, Any]]:
    """One row per method of one problem (see module doc for the columns)."""
    direction = runs[0].direction
    methods = sorted({r.method for r in runs})
    per_frac_ranks = {f: mean_ranks(runs, f) for f in fractions}
    finals = _task_means(runs, 1.0)
    per_frac_scores = {f: _task_means(runs, f) for f in fractions}
    rows = []
    for m in methods:
        mruns = [r for r in runs if r.method == m]
        run_finals = np.array([r.score_at(1.0) for r in mruns])
        task_finals = [finals[t][m] for t in finals if m in finals[t]]
        row: dict[str, Any] = {
            "method": m,
            "runs": len(mruns),
            "tasks": len(task_finals),
            "final": float(np.nanmean(task_finals)) if task_finals else math.nan,
            "final_se": float(np.nanstd(run_finals, ddof=1) / math.sqrt(len(run_finals)))
            if len(run_finals) > 1
            else math.nan,
            "overhead_s": float(np.mean([r.summary.get("overhead_seconds", math.nan) for r in mruns])),
            "errors": sum(1 for r in mruns if r.summary.get("error")),
            "full_per_run": float(np.mean([r.full_evaluations for r in mruns])),
        }
        for f in fractions:
            vals = [per_frac_scores[f][t][m] for t in per_frac_scores[f] if m in per_frac_scores[f][t]]
            row[f"score@{f:g}"] = float(np.nanmean(vals)) if np.any(np.isfinite(vals)) else math.nan
            row[f"rank@{f:g}"] = per_frac_ranks[f].get(m, math.nan)
        if baseline is not None and m != baseline:
            w = t_ = lo = 0
            for _task, ms in finals.items():
                if m not in ms or baseline not in ms:
                    continue
                a, b = ms[m], ms[baseline]
                if not (math.isfinite(a) and math.isfinite(b)) or abs(a - b) <= 1e-9 * max(1.0, abs(b)):
                    t_ += 1
                elif (a > b) == (direction == "max"):
                    w += 1
                else:
                    lo += 1
            row["wtl"] = (w, t_, lo)
            row["sign_p"] = float(stats.binomtest(w, w + lo, 0.5).pvalue) if w + lo > 0 else 1.0
        rows.append(row)
    return rows


def format_table(
    problem: str, rows: Sequence[dict[str, Any]], baseline: str | None, fractions: Sequence[float]
) -> str:
    head = ["method", "runs", "final (±se)"]
    head += [f"rank@{int(f * 100)}%" for f in fractions]
    if baseline:
        head += [f"W/T/L vs {baseline}", "sign p"]
    head += ["at T/run", "overhead s/run"]
    lines = [f"## {problem}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    best_final = None
    for r in rows:
        if math.isfinite(r["final"]):
            better = best_final is None or (
                r["final"] > best_final if rows_direction(rows) == "max" else r["final"] < best_final
            )
            best_final = r["final"] if better else best_final
    for r in rows:
        se = f" ± {r['final_se']:.2g}" if math.isfinite(r["final_se"]) else ""
        cells = [r["method"] + (f" ({r['errors']} errors)" if r["errors"] else ""), str(r["runs"]), f"{r['final']:.4g}{se}"]
        cells += [f"{r[f'rank@{f:g}']:.2f}" for f in fractions]
        if baseline:
            if "wtl" in r:
                cells += ["{}/{}/{}".format(*r["wtl"]), f"{r['sign_p']:.3g}"]
            else:
                cells += ["(baseline)", ""]
        cells += [f"{r['full_per_run']:.1f}", f"{r['overhead_s']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_timings(runs: Sequence[Run]) -> str:
    """Markdown table of the named optimizer steps the runs timed (``RunContext.timed``), per
    method: calls per run, mean ms per call (all calls pooled) and the median over runs of the
    per-run median; empty if no run recorded any."""
    per: dict[tuple[str, str], list[dict[str, float]]] = {}
    for r in runs:
        for name, t in (r.summary.get("timings") or {}).items():
            per.setdefault((r.method, name), []).append(t)
    if not per:
        return ""
    lines = [
        "| method | step | runs | calls/run | mean ms/call | median ms/call (median over runs) |",
        "|---|---|---|---|---|---|",
    ]
    for (method, name), ts in sorted(per.items()):
        calls = sum(t["calls"] for t in ts)
        mean_ms = 1000.0 * sum(t["total_s"] for t in ts) / calls if calls else math.nan
        lines.append(
            f"| {method} | {name} | {len(ts)} | {calls / len(ts):.1f} | {mean_ms:.1f} | "
            f"{float(np.median([t['median_ms'] for t in ts])):.1f} |"
        )
    return "\n".join(lines)


def format_arm_evaluations(runs: Sequence[Run]) -> str:
    """Markdown table of evaluations per arm (CASH problems: model class), mean per run for each
    method, from the runs' ``arm_evaluations``; empty if no run recorded any."""
    per: dict[str, list[dict[str, int]]] = {}
    for r in runs:
        counts = r.summary.get("arm_evaluations")
        if counts:
            per.setdefault(r.method, []).append(counts)
    if not per:
        return ""
    arms = sorted({a for cs in per.values() for c in cs for a in c})
    lines = ["| method | runs | " + " | ".join(arms) + " |", "|---|---|" + "---|" * len(arms)]
    for method, cs in sorted(per.items()):
        means = [sum(c.get(a, 0) for c in cs) / len(cs) for a in arms]
        lines.append(f"| {method} | {len(cs)} | " + " | ".join(f"{m:.1f}" for m in means) + " |")
    return "\n".join(lines)


def rows_direction(rows: Sequence[dict[str, Any]]) -> str:
    return str(rows[0].get("direction", "max")) if rows else "max"


#: markers and line styles cycled over methods, so overlapping curves stay distinguishable
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
_LINESTYLES = ("-", "--", "-.", ":")
#: the score axis shows the values from this budget fraction on (earlier values, far below the
#: later ones, would squeeze the differences that matter into a few pixels)
SCORE_AXIS_FROM = 0.1


def _anytime(runs: Sequence[Run], grid: np.ndarray) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """method -> mean rank and mean score (over tasks) at every budget fraction of ``grid``."""
    methods = sorted({r.method for r in runs})
    ranks: dict[str, list[float]] = {m: [] for m in methods}
    scores: dict[str, list[float]] = {m: [] for m in methods}
    for f in grid:
        rk = mean_ranks(runs, float(f))
        tm = _task_means(runs, float(f))
        for m in methods:
            ranks[m].append(rk.get(m, math.nan))
            vals = [tm[t][m] for t in tm if m in tm[t]]
            scores[m].append(float(np.nanmean(vals)) if np.any(np.isfinite(vals)) else math.nan)
    return ranks, scores


def score_axis_limits(scores: dict[str, list[float]], grid: np.ndarray) -> tuple[float, float] | None:
    """Y limits showing every method's mean score from :data:`SCORE_AXIS_FROM` of the budget on,
    with a 5 % margin (None if there is nothing to show)."""
    later = grid >= SCORE_AXIS_FROM - 1e-12
    vals = np.array([v for m in scores for v, keep in zip(scores[m], later, strict=True) if keep], dtype=float)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return None
    lo, hi = float(vals.min()), float(vals.max())
    pad = 0.05 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1e-9)
    return lo - pad, hi + pad


def plot_problem(runs: Sequence[Run], path: Path, title: str) -> Path:
    """Anytime mean rank and mean score vs budget fraction, one PNG with two panels.

    Each panel stands on its own: its own legend (below it, never over the curves), the metric
    and its direction named, a distinct marker and line style per method (markers staggered, so
    coinciding curves stay visible), and a score axis zoomed to the values from
    :data:`SCORE_AXIS_FROM` of the budget on."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(0.02, 1.0, 50)
    methods = sorted({r.method for r in runs})
    ranks, scores = _anytime(runs, grid)
    direction = runs[0].direction
    metric = str(runs[0].summary.get("metric") or "score")
    better = "higher" if direction == "max" else "lower"
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2 + 0.25 * math.ceil(len(methods) / 3)))
    colors = plt.get_cmap("tab10" if len(methods) <= 10 else "tab20")
    step = 6
    for i, m in enumerate(methods):
        style = {
            "label": m, "color": colors(i % colors.N), "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": _LINESTYLES[i % len(_LINESTYLES)], "linewidth": 1.6, "markersize": 5,
            "markevery": (i % step, step), "alpha": 0.9,
        }
        axes[0].plot(grid * 100, ranks[m], **style)
        axes[1].plot(grid * 100, scores[m], **style)
    axes[0].set_ylabel(f"mean rank over tasks of the best {metric} (1 = best)")
    axes[0].set_ylim(len(methods) + 0.2, 0.8)  # inverted: best on top
    axes[0].set_title(f"{title}: anytime mean rank")
    axes[1].set_ylabel(f"mean best {metric} so far ({better} is better)")
    limits = score_axis_limits(scores, grid)
    if limits is not None:
        axes[1].set_ylim(*limits)
    axes[1].set_title(f"{title}: anytime mean {metric} (axis from {SCORE_AXIS_FROM:.0%} of B)")
    for ax in axes:
        ax.set_xlabel("budget spent (% of B)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14),
                  ncol=min(3, len(methods)), frameon=False)
    tasks = sorted({r.task for r in runs})
    seeds = sorted({r.seed for r in runs})
    fig.suptitle(
        f"{len(tasks)} task(s) x seeds {_compact_seeds(seeds)}, B = {runs[0].total_budget:g} "
        "fidelity units", fontsize=9,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _compact_seeds(seeds: Sequence[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``."""
    parts: list[str] = []
    start = prev = None
    for s in sorted(seeds):
        if start is None:
            start = prev = s
        elif prev is not None and s == prev + 1:
            prev = s
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = s
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def plot_name(
    problem: str,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
) -> str:
    """The PNG file name of a report: the problem, plus the subset when the report is filtered
    (so a report on a subset never overwrites the full report's plot)."""
    def part(key: str, values: Sequence[str]) -> str:
        text = "+".join(values)
        if len(text) > 40 or not re.fullmatch(r"[A-Za-z0-9_.+,-]*", text):
            digest = hashlib.sha1("\0".join(values).encode()).hexdigest()[:8]
            text = f"{len(values)}-{digest}"
        return f"{key}-{text}"

    parts = [problem]
    if methods is not None:
        parts.append(part("methods", sorted(methods)))
    if tasks is not None:
        parts.append(part("tasks", list(tasks)))
    if seeds is not None:
        parts.append(f"seeds-{_compact_seeds(seeds)}")
    return "--".join(parts) + ".png"


def _on_common_tasks(runs: list[Run]) -> list[Run]:
    """The runs on tasks where every method of the run's problem has at least one run."""
    methods: dict[str, set[str]] = {}
    tasks: dict[tuple[str, str], set[str]] = {}
    for r in runs:
        methods.setdefault(r.problem, set()).add(r.method)
        tasks.setdefault((r.problem, r.task), set()).add(r.method)
    return [r for r in runs if tasks[(r.problem, r.task)] == methods[r.problem]]


def _select(
    runs: list[Run],
    directory: str | Path,
    methods: Sequence[str] | None,
    tasks: Sequence[str] | None,
    seeds: Sequence[int] | None,
) -> list[Run]:
    """``runs`` restricted to ``methods``, ``tasks`` (or ``["common"]``) and ``seeds``."""
    common = tasks is not None and list(tasks) == ["common"]
    if common:
        tasks = None
    for name, wanted, attr in (("methods", methods, "method"), ("tasks", tasks, "task")):
        if wanted is not None:
            present = sorted({getattr(r, attr) for r in runs})
            for w in wanted:
                if w not in present:
                    raise ValueError(
                        f"--{name}: no runs of {attr} {w!r} in {directory}{did_you_mean(w, present)}; "
                        f"{name} with runs there: {short_list(present)}"
                    )
            runs = [r for r in runs if getattr(r, attr) in set(wanted)]
    if seeds is not None:
        runs = [r for r in runs if r.seed in set(seeds)]
    if common:
        runs = _on_common_tasks(runs)
    if not runs:
        raise ValueError(f"no runs left in {directory} after the --methods/--tasks/--seeds filters")
    return runs


def _views(pruns: Sequence[Run], scores: Sequence[str]) -> list[str]:
    """The score views to report for one problem's runs: ``scores`` in :data:`SCORES` order,
    without the envelope where partial results are not usable models (module doc)."""
    usable = all(r.summary.get("partial_results_usable", True) for r in pruns)
    return [s for s in SCORES if s in scores and (s == "user" or usable)]


_VIEW_TITLES = {
    "user": "user view: best value of the evaluations at T (Optuna: study.best_value, COMPLETE trials)",
    "envelope": "envelope: best value of all paid evaluations, partial ones included",
}


def report(
    directory: str | Path,
    baseline: str | None = None,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    plot_dir: str | Path | None = None,
    plots: bool = True,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    bootstrap: int = 0,
    scores: Sequence[str] = SCORES,
) -> str:
    """Print-ready markdown for every problem in ``directory``; writes PNGs unless ``plots=False``.

    ``methods``, ``tasks`` and ``seeds`` restrict the runs (e.g. to the tasks and seeds every
    compared method was run on, so that the ranks compare like with like); ``tasks=["common"]``
    keeps, per problem, the tasks on which every selected method has runs. ``bootstrap > 0``
    adds, at every fraction, the mean rank with a bootstrap interval and P(best) from that many
    replicates (:mod:`uvp_plugins.bench.bootstrap_ranks`, the paper's App. D.1). ``scores``: the
    views of the best value to report (:data:`SCORES`; the envelope only where partial results
    are usable models), each with its own table."""
    if not isinstance(bootstrap, int) or isinstance(bootstrap, bool) or bootstrap < 0:
        raise ValueError(f"--bootstrap: expected a number of replicates >= 0, got {bootstrap!r}")
    scores = list(scores)
    if not scores or any(s not in SCORES for s in scores):
        raise ValueError(f"--scores: expected one or more of {', '.join(SCORES)}, got {scores!r}")
    per_view = {s: _select(load_runs(directory, s), directory, methods, tasks, seeds) for s in scores}
    out_dir = Path(plot_dir) if plot_dir is not None else Path(directory) / "plots"
    texts = []
    first = per_view[scores[0]]
    for problem in sorted({r.problem for r in first}):
        views = _views([r for r in first if r.problem == problem], scores)
        for view in views:
            pruns = [r for r in per_view[view] if r.problem == problem]
            texts.append(
                _problem_report(
                    problem, pruns, view, len(views) > 1, baseline, fractions, bootstrap,
                    out_dir if plots else None, (methods, tasks, seeds),
                )
            )
    return "\n\n".join(texts)


def _problem_report(
    problem: str,
    pruns: list[Run],
    view: str,
    name_view: bool,
    baseline: str | None,
    fractions: Sequence[float],
    bootstrap: int,
    out_dir: Path | None,
    subset: tuple[Sequence[str] | None, Sequence[str] | None, Sequence[int] | None],
) -> str:
    """One problem's table (+ bootstrap ranks, timings, arms, plot) in one score view."""
    methods = sorted({r.method for r in pruns})
    base = baseline if baseline in methods else None
    if baseline is not None and base is None:
        raise ValueError(f"--baseline {baseline!r} has no runs for {problem}; methods there: {', '.join(methods)}")
    rows = summarise(pruns, base, fractions)
    for r in rows:
        r["direction"] = pruns[0].direction
    tasks = sorted({r.task for r in pruns})
    seeds = sorted({r.seed for r in pruns})
    text = format_table(f"{problem} ({view} view)" if name_view else problem, rows, base, fractions)
    text += (
        f"\n\nScore: {_VIEW_TITLES[view]}. {len(tasks)} task(s), seeds {seeds[0]}..{seeds[-1]} "
        f"({len(seeds)}), B = {pruns[0].total_budget:g} fidelity units; direction {pruns[0].direction}."
    )
    if bootstrap:
        for fraction in fractions:
            boot = bootstrap_mean_ranks(pruns, fraction, bootstrap)
            text += "\n\n" + format_bootstrap_ranks(boot, fraction, bootstrap)
    if view == SCORES[0] or not name_view:  # what does not depend on the view: once
        timings = format_timings(pruns)
        if timings:
            text += "\n\nOptimizer time per step (wall, in the same runs):\n\n" + timings
        arm_table = format_arm_evaluations(pruns)
        if arm_table:
            text += "\n\nEvaluations per arm (mean per run):\n\n" + arm_table
    if out_dir is not None:
        sub_methods, sub_tasks, sub_seeds = subset
        name = plot_name(
            problem,
            None if sub_methods is None else list(sub_methods),
            None if sub_tasks is None else list(sub_tasks),
            None if sub_seeds is None else list(sub_seeds),
        )
        if name_view and view != SCORES[0]:  # the user view keeps the plain name
            name = name[: -len(".png")] + f"--{view}.png"
        png = plot_problem(pruns, out_dir / name, f"{problem} ({view})" if name_view else problem)
        text += f"\nPlot: {png}"
    return text

"""``uvp-bench idhb``: ID-HB vs. re-running Hyperband, the protocol of Brandt et al. Sec. 7.

For every (task, seed): :func:`~uvp_plugins.bench.idhb_compare.idhb_budget_comparison` runs
Hyperband at ``R0``, IH-HB (a fresh Hyperband at ``eta R0`` after it) and the three ID-HB variants
deepened once to ``eta R0``, with unlimited budget. The problem's fidelity grid is set to
``eta R0`` levels (trainsize ``r / R``, as in the paper; epochs on ``lcbench``, see
:class:`~uvp_plugins.bench.problems.yahpo.YahpoProblem`).

Results go to ``OUT/<problem>-eta<eta>-R<R0>/<task>/seed<k>.json``; :func:`idhb_report` prints
per method the mean final incumbent, the mean gap to IH-HB (in points of the metric; accuracy
points for ``lcbench``, which is in %), the mean, min and max full-charge budget relative to
IH-HB, the continuation cost, and writes the paper's Figure 3 as PNG: scatter of final incumbents
(ID-HB vs IH-HB) and the distribution of total budgets.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["IdhbJob", "idhb_root", "idhb_report", "check_idhb_arguments"]

METHODS = ("hb", "ih-hb", "eid-hb", "pid-hb", "did-hb")


def check_idhb_arguments(eta: int, r0: int) -> None:
    """Clear errors for ``--eta`` / ``--r0`` (Hyperband at ``r0`` needs two rungs)."""
    if eta < 2:
        raise ValueError(f"--eta must be >= 2, got {eta}")
    if r0 < eta:
        raise ValueError(f"--r0 must be >= eta = {eta} (Hyperband needs two rungs), got {r0}")


def idhb_root(out: str | Path, problem: str, eta: int, r0: int) -> Path:
    """``OUT/<problem>-eta<eta>-R<R0>``: the results directory of one protocol."""
    return Path(out) / f"{problem}-eta{eta}-R{r0}"


@dataclass(frozen=True)
class IdhbJob:
    """One (task, seed) of ``uvp-bench idhb`` (a :class:`uvp_plugins.bench.runner.Job`); its
    summary is :meth:`IDHBComparison.to_dict` plus ``wall_seconds`` and ``error``, in
    ``<root>/<task>/seed<k>.json`` with ``root`` = :func:`idhb_root`."""

    problem: str
    task: str
    seed: int
    eta: int
    r0: int
    options: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        return f"{self.problem}/{self.task}/seed{self.seed}"

    def summary_path(self, out: Path) -> Path:
        return Path(out) / str(self.task) / f"seed{self.seed}.json"

    def execute(self, out: Path, threads: int | None = None) -> dict[str, Any]:
        from uvp_plugins.bench.idhb_compare import idhb_budget_comparison
        from uvp_plugins.bench.registry import get_problem
        from uvp_plugins.bench.runner import write_summary

        prob = get_problem(self.problem).make(task=self.task, max_budget=self.eta * self.r0, **self.options)
        t0 = time.perf_counter()
        res = idhb_budget_comparison(prob, seed=self.seed, eta=self.eta, initial_max_budget=self.r0).to_dict()
        res["wall_seconds"] = time.perf_counter() - t0
        res["error"] = None
        write_summary(self.summary_path(out), res)
        return res


def _load(root: Path) -> list[dict[str, Any]]:
    rows = [json.loads(p.read_text()) for p in sorted(root.rglob("seed*.json"))]
    if not rows:
        raise FileNotFoundError(f"no ID-HB results below {root}")
    return rows


def idhb_report(root: str | Path, plot: bool = True) -> str:
    """Markdown table (and Figure-3-like PNG) for one ``uvp-bench idhb`` results directory."""
    root = Path(root)
    rows = _load(root)
    first = rows[0]
    sign = 1.0 if first["direction"] == "max" else -1.0
    lines = [
        f"## ID-HB vs IH-HB: {first['problem']}, eta = {first['eta']}, R = {first['initial_max_budget']} -> {first['final_max_budget']}",
        "",
        f"{len({r['task'] for r in rows})} task(s) x {len({r['seed'] for r in rows})} seed(s) = {len(rows)} runs per method.",
        "",
        "| method | mean final | mean gap to IH-HB | max |gap| | runs with |gap| <= 0.3 | full charge / IH-HB: mean (min..max) | mean full charge | mean continuation |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in METHODS:
        finals = np.array([r["outcomes"][m]["final_value"] for r in rows])
        ih = np.array([r["outcomes"]["ih-hb"]["final_value"] for r in rows])
        gap = sign * (finals - ih)
        full = np.array([r["outcomes"][m]["full_charge"] for r in rows], dtype=float)
        cont = np.array([r["outcomes"][m]["continuation"] for r in rows], dtype=float)
        ratio = full / np.array([r["outcomes"]["ih-hb"]["full_charge"] for r in rows], dtype=float)
        lines.append(
            f"| {m} | {finals.mean():.4f} | {gap.mean():+.4f} | {np.abs(gap).max():.4f} | "
            f"{int(np.sum(np.abs(gap) <= 0.3))}/{len(gap)} | {ratio.mean():.3f} ({ratio.min():.3f}..{ratio.max():.3f}) | "
            f"{full.mean():.0f} | {cont.mean():.0f} |"
        )
    lines.append("")
    lines.append(
        "`hb` is the first run alone (at R0); `ih-hb` = `hb` + a fresh Hyperband at eta*R0; "
        "ID-HB variants continue `hb`. Gap in points of the metric, positive = better than IH-HB."
    )
    if plot:
        png = _plot(rows, root / "figure3.png")
        lines.append(f"\nPlot: {png}")
    return "\n".join(lines)


def _plot(rows: list[dict[str, Any]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = ("did-hb", "pid-hb", "eid-hb")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    ih = np.array([r["outcomes"]["ih-hb"]["final_value"] for r in rows])
    lo, hi = float(np.min(ih)), float(np.max(ih))
    for v in variants:
        axes[0].scatter(ih, [r["outcomes"][v]["final_value"] for r in rows], s=8, alpha=0.6, label=v)
        lo = min(lo, min(r["outcomes"][v]["final_value"] for r in rows))
        hi = max(hi, max(r["outcomes"][v]["final_value"] for r in rows))
    pad = 0.02 * (hi - lo + 1e-12)
    axes[0].plot([lo - pad, hi + pad], [lo - pad, hi + pad], "k--", lw=1)
    axes[0].set_xlabel("IH-HB final incumbent")
    axes[0].set_ylabel("ID-HB final incumbent")
    axes[0].set_title("final incumbents (diagonal = on a par)")
    axes[0].legend()
    data = [[r["outcomes"][m]["full_charge"] for r in rows] for m in ("ih-hb", *variants)]
    axes[1].violinplot(data, showmeans=True)
    axes[1].set_xticks(range(1, 5), ["ih-hb", *variants])
    axes[1].set_ylabel("total budget of a run (full charge)")
    axes[1].set_title("budget consumed")
    fig.suptitle(f"{rows[0]['problem']}: eta={rows[0]['eta']}, R {rows[0]['initial_max_budget']} -> {rows[0]['final_max_budget']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

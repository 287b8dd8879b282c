"""``uvp-bench demo``: each plugin against what its framework offers, on real training.

Four comparisons, each the one that shows what the plugin is for, each repeated over seeds with
the uncertainty of its verdict printed (a difference whose 95 % interval contains 0 is a tie):

* **Optuna** (``sklearn-mlp`` on digits: an MLP trained epoch by epoch): our
  Enhanced-AdaCent sampler + Pred pruner against Optuna's default sampler (TPE) and, when torch
  is installed, Optuna's GPSampler, at equal epochs (the same budget B for every method).
* **Ray Tune** (the same MLP, R = 3 and eta * R = 9 epochs): a finished Hyperband at R
  continued to eta*R with ``raytune_ext.resume_with_larger_budget`` against a fresh Hyperband at
  eta*R (what starting over costs): epochs trained after the first run, and final quality.
* **CASH** (``cash-sklearn`` on breast_cancer: 7 scikit-learn model classes, 5-fold
  cross-validation, T = 200 trials): ``MaxUCBCashSampler`` against one ``TPESampler`` on the
  joint space, at equal trials - the regime the CASH paper makes claims for (about 200 trials for
  six or seven classes; at 30 trials for 8 classes, the block's earlier setting, MaxUCB is round
  robin and no class's model learns). It runs through Optuna: SMAC's intensifier trains one
  random forest per class (about a minute per 200-trial run here), too slow for the demo's time
  limit; its held-out results are in ``docs/results/cash_yahpo6.md``.
* **Tobit** (runtime of SGD until a logistic regression converges, capped): censored runtime
  minimisation with the Tobit ensemble against SMAC's random forest, same cutoffs and budget.

Every run goes through :func:`uvp_plugins.bench.runner.run_many` (worker processes, thread
limits, finished runs reused when the demo is repeated) with a progress bar that moves while runs
train. The demo prints one summary at the end and writes plots to ``OUT/plots``.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from uvp_plugins.bench import registry
from uvp_plugins.bench.runner import Job, RunSpec, run_many

__all__ = ["Block", "DEMO_BLOCKS", "PairedVerdict", "paired_verdict", "run_demo"]


@dataclass(frozen=True)
class PairedVerdict:
    """Ours minus a peer over paired seeds (positive = ours better), with a 95 % t-interval."""

    n: int
    mean: float
    low: float
    high: float
    wins: int
    ties: int
    losses: int

    @property
    def word(self) -> str:
        if self.n == 0:
            return "no paired runs"
        if self.wins == self.losses == 0:
            return "tie (identical results)"
        if self.low > 0:
            return "ours better"
        if self.high < 0:
            return "ours worse"
        return "tie (the difference is within the seed-to-seed noise)"


def paired_verdict(ours: dict[int, float], theirs: dict[int, float], direction: str) -> PairedVerdict:
    """The paired difference over the seeds both have (``direction``: "max" or "min")."""
    seeds = sorted(set(ours) & set(theirs))
    sign = 1.0 if direction == "max" else -1.0
    d = np.array([sign * (ours[s] - theirs[s]) for s in seeds], dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return PairedVerdict(0, math.nan, math.nan, math.nan, 0, 0, 0)
    tol = 1e-9 * max(1.0, float(np.max(np.abs(d))))
    wins, losses = int(np.sum(d > tol)), int(np.sum(d < -tol))
    mean = float(d.mean())
    if d.size < 2 or float(d.std(ddof=1)) == 0.0:
        low = high = mean
    else:
        half = float(stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))
        low, high = mean - half, mean + half
    return PairedVerdict(int(d.size), mean, low, high, wins, int(d.size) - wins - losses, losses)


@dataclass(frozen=True)
class Block:
    """One comparison of the demo.

    ``jobs(methods, seeds)`` builds the runs; ``values(summary)`` reads the compared value from a
    run's summary (``direction`` says which way is better); ``ours`` is compared with each peer.
    """

    key: str
    title: str
    setting: str
    ours: str
    peers: tuple[str, ...]
    seeds: tuple[int, ...]
    direction: str
    quantity: str
    jobs: Callable[[Sequence[str], Sequence[int]], list[Job]]
    value: Callable[[dict[str, Any]], float] = field(default=lambda s: float(s["final"]))
    serial: bool = False  # Ray starts its own 2-CPU cluster: one run at a time
    #: also compare at half the budget (the anytime view; budgeted harness runs only)
    at_half: bool = False
    #: what the comparison can and cannot show, printed with it
    note: str = ""


def _runspecs(problem: str, task: str, budget_factor: float = 20.0, total: float | None = None,
              options: dict[str, Any] | None = None) -> Callable[[Sequence[str], Sequence[int]], list[Job]]:
    def build(methods: Sequence[str], seeds: Sequence[int]) -> list[Job]:
        return [
            RunSpec(problem, task, m, s, budget_factor, total, dict(options or {}))
            for s in seeds
            for m in methods
        ]

    return build


def _tobit_jobs(methods: Sequence[str], seeds: Sequence[int]) -> list[Job]:
    from uvp_plugins.bench.methods.tobit_bench import RuntimeJob

    return [
        RuntimeJob(m, s, runtime_budget=150.0, max_trials=40, kappa_max=10.0, n_initial=4, challengers=300)
        for s in seeds
        for m in methods
    ]


#: the comparisons, in the order they run
DEMO_BLOCKS: tuple[Block, ...] = (
    Block(
        key="optuna",
        title="Optuna: EnhancedAdaCentSampler + PredPruner vs Optuna's samplers, equal epochs",
        setting="MLP on digits, up to 10 epochs per trial, B = 150 epochs per run",
        ours="optuna-eadacent-pred",
        peers=("optuna-tpe", "optuna-gp"),
        seeds=tuple(range(4)),
        direction="max",
        quantity="best validation accuracy (%)",
        jobs=_runspecs("sklearn-mlp", "digits", budget_factor=15.0, options={"max_budget": 10}),
        at_half=True,
    ),
    Block(
        key="ray",
        title="Ray Tune: continue a finished Hyperband at R to eta*R vs start over at eta*R",
        setting="MLP on digits, R = 3 -> eta*R = 9 epochs, eta = 3",
        ours="ray-idhb-resume",
        peers=("ray-hyperband-fresh",),
        seeds=(0, 1),
        direction="max",
        quantity="best validation accuracy (%)",
        jobs=_runspecs("sklearn-mlp", "digits", total=10_000.0, options={"max_budget": 9}),
        serial=True,
    ),
    Block(
        key="cash",
        title="CASH: MaxUCBCashSampler vs one TPESampler on the joint space, equal trials",
        setting="7 scikit-learn model classes on breast_cancer, 5-fold CV, 200 trials per run",
        ours="optuna-maxucb-cash",
        peers=("optuna-tpe-cash",),
        seeds=tuple(range(4)),
        direction="min",
        quantity="best CV error, 1 - balanced accuracy (%)",
        jobs=_runspecs("cash-sklearn", "breast_cancer", total=200.0),
        value=lambda s: 100.0 * float(s["final"]),
        at_half=True,
        note="one task and four seeds cannot show the paper's effect, which is a majority of "
        "many tasks (the held-out YAHPO and real-training results: docs/results/cash_yahpo6.md); "
        "read a tie as a tie",
    ),
    Block(
        key="tobit",
        title="SMAC + Tobit: censored runtime minimisation vs SMAC's random forest, same cutoffs",
        setting="epochs of SGD until a logistic regression converges, cutoff 10 epochs "
        "(adaptive capping), 150 epochs of total runtime per run",
        ours="smac-tobit-ts",
        peers=("smac-rf",),
        seeds=tuple(range(4)),
        direction="min",
        quantity="best runtime found (epochs)",
        jobs=_tobit_jobs,
    ),
)

#: the frameworks each block needs (a block whose framework is missing is skipped)
_BLOCK_MODULES = {"optuna": ("optuna", "sklearn"), "ray": ("ray", "sklearn"),
                  "cash": ("optuna", "sklearn"), "tobit": ("smac", "sklearn")}


def _available(method: str) -> bool:
    spec = registry.methods().get(method)
    if spec is not None:
        return spec.available
    return True  # tobit-runtime methods: the block's framework check covers them


def _missing_modules(block: Block) -> list[str]:
    import importlib.util

    return [m for m in _BLOCK_MODULES.get(block.key, ()) if importlib.util.find_spec(m) is None]


def _fmt(v: float) -> str:
    return "nan" if not math.isfinite(v) else f"{v:+.2f}" if v else "0.00"


def _mean_ci(values: Sequence[float]) -> str:
    a = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if a.size == 0:
        return "nan"
    if a.size < 2:
        return f"{a.mean():.2f}"
    half = float(stats.t.ppf(0.975, a.size - 1) * a.std(ddof=1) / math.sqrt(a.size))
    return f"{a.mean():.2f} ± {half:.2f}"


def _half_budget_values(runs: dict[int, dict[str, Any]], out: Path, block: Block) -> dict[int, float]:
    """seed -> the block's value at half the budget, from the runs' anytime curves."""
    from uvp_plugins.bench.report import load_runs

    values = {}
    for seed, summary in runs.items():
        spec = RunSpec(summary["problem"], str(summary["task"]), summary["method"], seed)
        csv = spec.summary_path(out).with_suffix(".csv")
        if summary.get("error") or not csv.exists():
            continue
        (run,) = [r for r in load_runs(csv.parent) if r.seed == seed]
        values[seed] = block.value({"final": run.score_at(0.5)})
    return values


def _summaries(jobs: Sequence[Job], out: Path) -> dict[str, dict[int, dict[str, Any]]]:
    """method -> seed -> summary, for the jobs' summaries that exist."""
    found: dict[str, dict[int, dict[str, Any]]] = {}
    for job in jobs:
        path = job.summary_path(out)
        if path.exists():
            s = json.loads(path.read_text())
            found.setdefault(str(s["method"]), {})[int(s["seed"])] = s
    return found


def _block_text(
    block: Block, methods: Sequence[str], runs: dict[str, dict[int, dict[str, Any]]], out: Path
) -> tuple[list[str], list[str]]:
    """(lines of the block's summary, one-line verdicts)."""
    lines = [f"{block.title}", f"  {block.setting}; seeds {', '.join(map(str, block.seeds))}"]
    final = {m: {s: block.value(r) for s, r in runs.get(m, {}).items() if not r.get("error")} for m in methods}
    views = [("at the end", final)]
    if block.at_half:
        views.insert(0, ("at half the budget", {m: _half_budget_values(runs.get(m, {}), out, block) for m in methods}))
    errors = {m: sum(1 for r in runs.get(m, {}).values() if r.get("error")) for m in methods}
    better = "higher" if block.direction == "max" else "lower"
    verdicts = []
    for when, values in views:
        lines.append(f"  {block.quantity} ({better} is better) {when}, mean ± 95 % interval over seeds:")
        for m in methods:
            err = f"  ({errors[m]} runs failed)" if errors[m] else ""
            lines.append(f"    {m:22s} {_mean_ci(list(values[m].values()))}{err}")
        for peer in methods:
            if peer == block.ours:
                continue
            v = paired_verdict(values[block.ours], values[peer], block.direction)
            lines.append(
                f"    ours - {peer}: {_fmt(v.mean)} [{_fmt(v.low)}, {_fmt(v.high)}] "
                f"(> 0: ours better), wins/ties/losses {v.wins}/{v.ties}/{v.losses} -> {v.word}"
            )
            verdicts.append(f"{block.key}: {block.ours} vs {peer}, {when}: {v.word} "
                            f"({_fmt(v.mean)} [{_fmt(v.low)}, {_fmt(v.high)}])")
    if block.key == "ray":
        lines += _ray_epochs(runs, block.ours, block.peers[0])
    if block.note:
        lines.append(f"  note: {block.note}")
    return lines, verdicts


def _ray_epochs(runs: dict[str, dict[int, dict[str, Any]]], resume: str, fresh: str) -> list[str]:
    """Epochs to reach eta*R after the finished first run: continuing vs starting over."""
    cont, over, first = [], [], []
    for seed, r in runs.get(resume, {}).items():
        f = r.get("notes", {}).get("first_run_spent")
        if f is None or r.get("error") or seed not in runs.get(fresh, {}):
            continue
        first.append(float(f))
        cont.append(float(r["spent"]) - float(f))
        over.append(float(runs[fresh][seed]["spent"]))
    if not cont:
        return ["  epochs: no paired runs"]
    saved = 1.0 - float(np.mean(cont)) / float(np.mean(over))
    return [
        f"  epochs trained after the finished first run at R ({np.mean(first):.0f} epochs): "
        f"continuing {np.mean(cont):.0f}, starting over {np.mean(over):.0f} "
        f"(continuing saves {100 * saved:.0f} %; per seed: "
        + ", ".join(f"{c:.0f} vs {o:.0f}" for c, o in zip(cont, over, strict=True)) + ")",
    ]


def _plot(blocks: Sequence[tuple[Block, list[str], dict[str, dict[int, dict[str, Any]]]]], path: Path) -> Path:
    """One panel per comparison: each seed's value for each method, a seed's values joined."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(blocks), figsize=(4.6 * len(blocks), 4.6), squeeze=False)
    for ax, (block, methods, runs) in zip(axes[0], blocks, strict=True):
        if block.key == "ray" and _plot_ray_epochs(ax, runs, block):
            continue
        for seed in block.seeds:
            ys = [block.value(runs[m][seed]) if seed in runs.get(m, {}) else math.nan for m in methods]
            ax.plot(range(len(methods)), ys, color="0.75", linewidth=0.8, zorder=1)
        for i, m in enumerate(methods):
            ys = [block.value(r) for r in runs.get(m, {}).values() if not r.get("error")]
            ax.scatter([i] * len(ys), ys, s=28, zorder=2, label=f"{m} (one dot per seed)")
            if ys:
                ax.hlines(float(np.mean(ys)), i - 0.25, i + 0.25, color="k", linewidth=2, zorder=3)
        ax.set_xticks(range(len(methods)), methods, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel(f"{block.quantity} ({'higher' if block.direction == 'max' else 'lower'} is better)", fontsize=8)
        ax.set_title(block.key.capitalize() + ": " + block.setting.split(",")[0], fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False)
    fig.suptitle("uvp-bench demo: per-seed results (black bar: mean; grey lines join a seed's runs)", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _plot_ray_epochs(ax: Any, runs: dict[str, dict[int, dict[str, Any]]], block: Block) -> bool:
    """Ray's panel: epochs to reach eta*R, continuing the finished run vs starting over."""
    resume, fresh = block.ours, block.peers[0]
    seeds = [s for s, r in runs.get(resume, {}).items()
             if "first_run_spent" in r.get("notes", {}) and s in runs.get(fresh, {})]
    if not seeds:
        return False
    first = float(np.mean([runs[resume][s]["notes"]["first_run_spent"] for s in seeds]))
    cont = float(np.mean([runs[resume][s]["spent"] for s in seeds])) - first
    over = float(np.mean([runs[fresh][s]["spent"] for s in seeds]))
    ax.bar([0, 1], [first, first], color="0.8", label=f"the finished first run at R ({first:.0f} epochs)")
    ax.bar([0], [cont], bottom=[first], color="tab:blue", label=f"continuing to eta*R ({cont:.0f} more)")
    ax.bar([1], [over], bottom=[first], color="tab:orange", label=f"starting over at eta*R ({over:.0f} more)")
    ax.set_xticks([0, 1], [resume, fresh], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("epochs trained in total (lower is better)", fontsize=8)
    ax.set_title("Ray: epochs to reach eta*R (mean over seeds; same final accuracy)", fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False)
    return True


def run_demo(out: str | Path, jobs: int = 2, threads: int | None = None, force: bool = False,
             blocks: Sequence[Block] = DEMO_BLOCKS) -> int:
    """Run every comparison, print the summary; returns the exit code (1: nothing could run)."""
    from uvp_plugins.bench.report import plot_name, report

    out = Path(out)
    start = time.perf_counter()
    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    done: list[tuple[Block, list[str], dict[str, dict[int, dict[str, Any]]]]] = []
    texts: list[str] = []
    verdicts: list[str] = []
    plots: list[Path] = []
    for i, block in enumerate(blocks, 1):
        missing = _missing_modules(block)
        if missing:
            say(f"[uvp-bench demo] skipping {block.key}: {registry.install_hint(missing)}")
            continue
        methods = [block.ours] + [p for p in block.peers if _available(p)]
        for p in block.peers:
            if p not in methods:
                say(f"[uvp-bench demo] {block.key}: without {p} ({registry.install_hint(registry.methods()[p].missing())})")
        if len(methods) < 2:
            continue
        block_jobs = block.jobs(methods, block.seeds)
        block_out = out / block.key
        run_many(
            block_jobs, block_out, jobs=1 if block.serial else jobs, force=force, threads=threads,
            bar=f"[{i}/{len(blocks)}] {block.key}", progress=lambda _: None,
        )
        runs = _summaries(block_jobs, block_out)
        lines, block_verdicts = _block_text(block, methods, runs, block_out)
        texts.append("\n".join(lines))
        verdicts += block_verdicts
        done.append((block, methods, runs))
        say("\n".join(lines))
        specs = [j for j in block_jobs if isinstance(j, RunSpec)]
        if block.key in ("optuna", "cash") and specs:  # anytime curves of the budgeted comparisons
            report(block_out, None, (0.25, 0.5, 1.0), out / "plots")
            plots.append(out / "plots" / plot_name(specs[0].problem))
    if not done:
        say("[uvp-bench demo] nothing to run: install the frameworks with pip install -e '.[all]'")
        return 1
    plots.insert(0, _plot(done, out / "plots" / "demo.png"))
    minutes, seconds = divmod(time.perf_counter() - start, 60)
    print("\n".join([
        "",
        "=" * 78,
        "uvp-bench demo: each plugin against what its framework offers, on real scikit-learn training",
        "Differences: ours minus the peer over paired seeds, mean with a 95 % t-interval (> 0:",
        "ours better); an interval that contains 0 is a tie: the seeds do not resolve it.",
        "=" * 78,
        "",
        "\n\n".join(texts),
        "",
        "Verdicts:",
        *[f"  {v}" for v in verdicts],
        "",
        f"Plots: {', '.join(str(p) for p in plots)}",
        f"Runs and their summaries: {out}/<comparison>/ (a repeated demo reuses finished runs; --force reruns)",
        f"Wall time: {int(minutes)} min {seconds:.0f} s",
    ]))
    return 0

"""Issue 17, rbv2_xgboost at 25 % of B: what the sampler's first trials are worth, per scenario.

An analysis, not a tuning run: nothing here chooses a setting. For every task it draws 256
uniform configurations and reads their curves from the YAHPO surrogate (monotone envelope), then
reports

* ``rho``: Spearman's rank correlation, over those configurations, between the value at the
  exploration depth ``floor(0.1 T)`` and the value at ``T`` - what PredPruner and the guidance
  model rely on;
* ``first``: the percentile (among the 256) of the value at ``T`` of the sampler's first trial
  (the candidate nearest the mesh's centroid; it trains to ``T`` because nothing is there to
  prune it against);
* ``cover``: the mean percentile of trials 2-10, the Enhanced-KCenter coverage steps (each told
  its curve up to the depth, as a pruned trial), against 50 for uniform random configurations;
* ``best10``: the percentile of the best of trials 1-10, and ``random10`` that of the best of
  10 of the 256 random configurations (drawn without replacement).
* ``below``: the share of the 256 configurations whose optimistic prediction at ``T`` from the
  curve up to the depth (the tail fit of Sec. 4, PredPruner's default when this was measured) is
  below their value at ``T`` - where the bound that PRED relies on (Lemma 3.11, concave curves)
  fails; ``below_top``: the same among the best tenth of them (the configurations a wrong stop
  costs most).

Second, from the runs of a ``uvp-bench run`` directory, how many evaluations each method
started within a fraction of B and how many of them reached ``T`` (a new evaluation: a step not
above the previous one, or a jump of more than one unit of budget, as a from-scratch
evaluation at a larger budget is charged at once), and in how many runs the best value within
that fraction was a value at ``T``.

Usage (``UVP_YAHPO_DATA`` set), seeds 0-4::

    python docs/results/scripts/early_budget.py values lcbench first:17
    python docs/results/scripts/early_budget.py starts issue17/rbv2_xgboost 0.25 optuna-gp,random
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from uvp_plugins.adacent.online import OnlineEnhancedAdaCent
from uvp_plugins.adacent.pred import DELTA, exploration_steps, optimistic_prediction
from uvp_plugins.bench.problems.yahpo import YahpoProblem, yahpo_surrogate
from uvp_plugins.bench.report import load_runs

N_RANDOM, N_FIRST, SEEDS = 256, 10, range(5)
FIGURES = ("rho", "first", "cover", "best10", "random10", "below", "below_top")


def task_figures(scenario: str, task: str) -> tuple[float, ...]:
    problem = YahpoProblem(scenario, task)
    T = problem.max_budget
    depth = max(1, exploration_steps(DELTA, T))
    rho, first, cover, best10, random10, below, below_top = [], [], [], [], [], [], []
    for seed in SEEDS:
        pool = problem.space.sample(N_RANDOM, rng=seed)
        env = np.maximum.accumulate(np.array([problem.curve(c) for c in pool]), axis=1)
        at_T = env[:, -1]
        rho.append(spearmanr(env[:, depth - 1], at_T).statistic)
        bound = np.array([optimistic_prediction(curve[:depth], T, "tail") for curve in env])
        top = at_T >= np.quantile(at_T, 0.9)
        below.append(float(np.mean(bound < at_T)))
        below_top.append(float(np.mean(bound[top] < at_T[top])))
        ea = OnlineEnhancedAdaCent(problem.space, max_resource=T, seed=seed)
        pct = []
        for t in range(N_FIRST):
            config = ea.ask().config
            curve = np.maximum.accumulate(problem.curve(config))
            pct.append(100.0 * float(np.mean(at_T < curve[-1])))
            ea.tell(
                t, config, status="pruned", curve={b + 1: float(curve[b]) for b in range(depth)}
            )
        first.append(pct[0])
        cover.append(float(np.mean(pct[1:])))
        best10.append(max(pct))
        drawn = np.random.default_rng(seed).choice(N_RANDOM, N_FIRST, replace=False)
        random10.append(100.0 * float(np.mean(at_T < at_T[drawn].max())))
    figures = (rho, first, cover, best10, random10, below, below_top)
    return tuple(float(np.mean(f)) for f in figures)


def starts(run_dir: str, fraction: float, method: str) -> tuple[int, float, float, float]:
    """Runs, mean evaluations started, mean evaluations that reached ``T`` and the share of runs
    whose best value was reached at ``T``, within ``fraction`` of B, for one method's runs under
    ``run_dir`` (``<out>/<problem>``; read with the harness's :func:`load_runs`)."""
    started, full, best_at_T = [], [], []
    for run in load_runs(run_dir):
        if run.method != method:
            continue
        T = int(run.summary["max_budget"])
        columns = np.atleast_1d(
            np.genfromtxt(
                Path(run_dir) / run.task / method / f"seed{run.seed}.csv", delimiter=",", names=True
            )
        )
        paid = columns["spent"] <= fraction * run.total_budget + 1e-9
        spent, step = columns["spent"][paid], columns["budget"][paid].astype(int)
        value = columns["value"][paid] * (1.0 if run.direction == "max" else -1.0)
        gap = np.diff(spent, prepend=0.0)
        new = np.r_[True, step[1:] <= step[:-1]] | (gap > 1.5)
        started.append(int(new.sum()))
        full.append(int((step == T).sum()))
        best_at_T.append(bool(step.size) and step[int(np.argmax(value))] == T)
    return len(started), float(np.mean(started)), float(np.mean(full)), float(np.mean(best_at_T))


def values(scenario: str, tasks: str) -> None:
    names = list(yahpo_surrogate(scenario).instances)
    chosen = names[: int(tasks[6:])] if tasks.startswith("first:") else tasks.split(",")
    rows = np.array([task_figures(scenario, t) for t in chosen])
    se = (
        rows.std(axis=0, ddof=1) / math.sqrt(len(rows)) if len(rows) > 1 else np.zeros(len(FIGURES))
    )
    print(
        f"{scenario} ({len(rows)} tasks x {len(SEEDS)} seeds): "
        + ", ".join(
            f"{k} {m:.2f} ± {s:.2f}" for k, m, s in zip(FIGURES, rows.mean(0), se, strict=True)
        )
    )


if __name__ == "__main__":
    if sys.argv[1] == "values":
        values(sys.argv[2], sys.argv[3])
    else:
        for m in sys.argv[4].split(","):
            runs, mean_started, mean_full, at_T = starts(sys.argv[2], float(sys.argv[3]), m)
            print(
                f"{m}: {runs} runs, {mean_started:.1f} evaluations started, {mean_full:.2f} "
                f"reached T, best value at T in {100 * at_T:.0f} % of the runs"
            )

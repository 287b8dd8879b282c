"""Optuna's Hyperband continued at a larger ``max_resource``: our ID-HB pruner vs re-running.

The scenario of Brandt et al. (*Iterative Deepening Hyperband*, Sec. 7): Hyperband was run with
maximum budget ``R0``; later the user wants ``R1 = eta R0``. With ``eta = 3``, ``R1`` is the largest
power of 3 not above the problem's ``T`` and ``R0 = R1 / 3`` (lcbench, ``T = 52``, and
sklearn-mlp, ``T = 30``: ``R0 = 9``, ``R1 = 27``).

* ``optuna-idhb``: ``TPESampler(seed)`` + :class:`optuna_ext.IterativeDeepeningHyperbandPruner`
  (``max_resource=R0``, efficient variant) until the pruner stops the study; then the *same*
  study (same storage, ``optuna.load_study``) with ``max_resource=R1``. A trial trains its
  configuration from the configuration's checkpoint: the harness's paid budget per
  :meth:`~optuna_ext.IterativeDeepeningHyperbandPruner.configuration_id` (continuation), so the
  steps spent are what the pruner's schedule trains; the run records the pruner's core ledger
  beside them (``extras``), and fails if they differ.
* ``optuna-idhb-fresh``: the same pruner started at ``R1`` (a fresh Hyperband at ``R1``).
* ``optuna-hyperband-rerun``: ``TPESampler(seed)`` + Optuna's
  ``HyperbandPruner(min_resource=1, max_resource=R0, reduction_factor=3)`` for as many trials as
  Hyperband at ``R0`` has configurations, then a *new* study with ``HyperbandPruner(1, R1, 3)``
  for as many trials as Hyperband at ``R1`` has (``HyperbandPruner`` cannot continue a study at a
  larger ``max_resource``: it would map the earlier trials to other brackets). Every trial trains
  from step 1 (a re-run has no checkpoints to continue).
* ``optuna-hyperband-rerun-eq``: the same, stopped when its steps reach what ``optuna-idhb``
  spends (Hyperband's continuation budget at ``R1``, 357 for ``R1 = 27``): quality at equal steps.

Each step is ``ctx.evaluate(key, config, step)`` followed by ``trial.report`` and
``trial.should_prune`` (ask-and-tell, as
:func:`~uvp_plugins.bench.methods.optuna_native.run_optuna_study`). ``extras`` of a run: the steps
of the first run (``steps_r0``), the incumbent's value at ``R1`` the method returns
(``returned``: the pruner's :meth:`~optuna_ext.IterativeDeepeningHyperbandPruner.best_trial`, or
``study.best_value`` of Optuna's run at ``R1``) and, for our pruner, the core's ledger.
:func:`format_optuna_idhb` prints the comparison from a results directory.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import numpy as np

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method
from uvp_plugins.hyperband import HyperbandSchedule, integer_log

__all__ = ["deepening_levels", "format_optuna_idhb", "METHODS"]

ETA = 3
METHODS = ("optuna-idhb", "optuna-idhb-fresh", "optuna-hyperband-rerun", "optuna-hyperband-rerun-eq")


def deepening_levels(max_budget: int, eta: int = ETA) -> tuple[int, int]:
    """``(R0, R1)``: ``R1`` the largest power of ``eta`` not above ``max_budget``, ``R0 = R1/eta``."""
    k = integer_log(int(max_budget), eta)
    if k < 2:
        raise ValueError(
            f"the problem's max_budget={max_budget} is too small: Hyperband at R0 = R1 / {eta} "
            f"needs R1 >= {eta * eta}"
        )
    return eta ** (k - 1), eta**k


def _study(ctx: RunContext, pruner: Any, storage: Any, name: str, load: bool) -> Any:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=ctx.seed)
    if load:
        return optuna.load_study(study_name=name, storage=storage, sampler=sampler, pruner=pruner)
    return optuna.create_study(
        study_name=name,
        storage=storage,
        sampler=sampler,
        pruner=pruner,
        direction="maximize" if ctx.direction == "max" else "minimize",
    )


def _train(
    ctx: RunContext,
    study: Any,
    max_resource: int,
    key_of: Callable[[Any], Hashable],
    done: Callable[[], bool],
    step_cap: float = math.inf,
) -> None:
    """Ask-and-tell until ``done()``: each trial trains its key from the key's paid budget; the
    trial running when the steps spent reach ``step_cap`` is stopped there (told PRUNED)."""
    from optuna.trial import TrialState

    from optuna_ext import to_distributions

    distributions = to_distributions(ctx.problem.space)
    while not done():
        trial = study.ask(distributions)
        if trial.should_prune():  # no work for this trial (ID-HB); never True for Optuna's HB
            study.tell(trial, state=TrialState.PRUNED)
            continue
        key = key_of(trial)
        config = dict(trial.params)
        value = math.nan
        state = TrialState.COMPLETE
        try:
            for step in range(ctx.paid(key) + 1, max_resource + 1):
                value = ctx.evaluate(key, config, step)
                trial.report(value, step)
                if trial.should_prune() or ctx.ledger.spent >= step_cap:
                    state = TrialState.PRUNED
                    break
        except BudgetExhausted:
            study.tell(trial, state=TrialState.PRUNED)
            raise
        study.tell(trial, value if state == TrialState.COMPLETE else None, state=state)


def _finished(pruner: Any, study: Any) -> Callable[[], bool]:
    return lambda: bool(pruner.finished(study))


def _idhb_run(ctx: RunContext, levels: tuple[int, ...]) -> None:
    import optuna

    from optuna_ext import IterativeDeepeningHyperbandPruner

    storage = optuna.storages.InMemoryStorage()
    tag = "idhb" if len(levels) > 1 else "idhb-fresh"

    def key_of(trial: Any) -> Hashable:
        return (tag, IterativeDeepeningHyperbandPruner.configuration_id(trial))

    pruner: IterativeDeepeningHyperbandPruner | None = None
    study: Any = None
    for i, level in enumerate(levels):
        pruner = IterativeDeepeningHyperbandPruner(max_resource=level, reduction_factor=ETA)
        study = _study(ctx, pruner, storage, f"uvp-bench-seed{ctx.seed}", load=i > 0)
        _train(ctx, study, level, key_of, _finished(pruner, study))
        ctx.extras[f"steps_r{i}"] = ctx.ledger.spent
    assert pruner is not None and study is not None
    core = pruner.core(study)
    best = pruner.best_trial(study)
    ctx.extras.update(
        levels=list(levels),
        core_continuation=core.ledger.continuation,
        core_full_charge=core.ledger.full_charge,
        trials=len(study.trials),
        returned=None if best is None else float(best.intermediate_values[levels[-1]]),
    )
    if core.ledger.continuation != ctx.ledger.spent:
        raise RuntimeError(
            f"steps spent {ctx.ledger.spent:g} differ from the core's continuation ledger "
            f"{core.ledger.continuation}"
        )


@register_method(
    "optuna-idhb",
    "ours: Optuna IterativeDeepeningHyperbandPruner at T'/3, the same study continued at T' "
    "(T' = largest power of 3 <= T)",
    requires=("optuna",),
    kind="ours",
)
def run_idhb_continued(ctx: RunContext) -> None:
    _idhb_run(ctx, deepening_levels(ctx.max_budget))


@register_method(
    "optuna-idhb-fresh",
    "ours: Optuna IterativeDeepeningHyperbandPruner, a fresh Hyperband at T' (largest power of 3 <= T)",
    requires=("optuna",),
    kind="ours",
)
def run_idhb_fresh(ctx: RunContext) -> None:
    _idhb_run(ctx, deepening_levels(ctx.max_budget)[1:])


def _hyperband_rerun(ctx: RunContext, step_cap: float) -> None:
    import optuna

    levels = deepening_levels(ctx.max_budget)
    study = None
    for i, level in enumerate(levels):
        pruner = optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=level, reduction_factor=ETA
        )
        study = _study(ctx, pruner, None, f"uvp-bench-seed{ctx.seed}-R{level}", load=False)
        n = HyperbandSchedule(level, ETA).n_configs

        def key_of(trial: Any, i: int = i) -> Hashable:
            return ("hb", i, trial.number)

        def done(s: Any = study, n: int = n) -> bool:
            return len(s.trials) >= n or ctx.ledger.spent >= step_cap

        _train(ctx, study, level, key_of, done, step_cap)
        ctx.extras[f"steps_r{i}"] = ctx.ledger.spent
    assert study is not None
    complete = [t for t in study.trials if t.value is not None]
    ctx.extras.update(
        levels=list(levels),
        trials=len(study.trials),
        returned=study.best_value if complete else None,
    )


@register_method(
    "optuna-hyperband-rerun",
    "Optuna HyperbandPruner at T'/3, then a new study with HyperbandPruner at T' (T' = largest "
    "power of 3 <= T), as many trials as Hyperband's configurations",
    requires=("optuna",),
)
def run_hyperband_rerun(ctx: RunContext) -> None:
    _hyperband_rerun(ctx, math.inf)


@register_method(
    "optuna-hyperband-rerun-eq",
    "optuna-hyperband-rerun stopped when its steps reach what eID-HB continued to T' spends "
    "(Hyperband's continuation budget at T')",
    requires=("optuna",),
)
def run_hyperband_rerun_equal_steps(ctx: RunContext) -> None:
    r1 = deepening_levels(ctx.max_budget)[1]
    _hyperband_rerun(ctx, HyperbandSchedule(r1, ETA).continuation_budget)


# ----------------------------------------------------------------------------- report
def _mean_se(values: list[float]) -> str:
    if not values:
        return "-"
    a = np.asarray(values, dtype=float)
    se = a.std(ddof=1) / math.sqrt(len(a)) if len(a) > 1 else 0.0
    return f"{a.mean():.2f} ± {se:.2f}"


def _runs(task_dir: Path, method: str) -> list[dict[str, Any]]:
    runs = [json.loads(f.read_text()) for f in sorted((task_dir / method).glob("seed*.json"))]
    return [r for r in runs if not r.get("error")]


def _paired(root: Path, a: str, b: str, direction: str) -> str:
    """``a`` vs ``b`` on the returned value at ``R1``, per (task, seed): W/T/L and sign test."""
    from scipy import stats

    w = t = lo = 0
    diffs = []
    for task_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        ra = {r["seed"]: r["extras"]["returned"] for r in _runs(task_dir, a)}
        rb = {r["seed"]: r["extras"]["returned"] for r in _runs(task_dir, b)}
        for seed in sorted(set(ra) & set(rb)):
            x, y = ra[seed], rb[seed]
            if x is None or y is None:
                continue
            d = (x - y) if direction == "max" else (y - x)
            diffs.append(d)
            if abs(d) <= 1e-9 * max(1.0, abs(y)):
                t += 1
            elif d > 0:
                w += 1
            else:
                lo += 1
    p = float(stats.binomtest(w, w + lo, 0.5).pvalue) if w + lo else 1.0
    mean = float(np.mean(diffs)) if diffs else math.nan
    return f"| {a} vs {b} | {w}/{t}/{lo} | {p:.3f} | {mean:+.2f} |"


def format_optuna_idhb(out: str | Path, problem: str = "lcbench") -> str:
    """Markdown tables from ``uvp-bench run`` results of :data:`METHODS`: per task and method,
    the steps of the first run and in total, the returned incumbent's value at ``R1`` and the best
    value seen, and (for our pruner) whether the steps equal the core's continuation ledger; then
    ``optuna-idhb`` against each other method, paired by task and seed (wins/ties/losses on the
    returned value, two-sided sign test with ties dropped, mean difference, positive = better)."""
    root = Path(out) / problem
    rows = []
    totals: dict[str, dict[str, list[float]]] = {}
    direction = "max"
    for task_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for method in METHODS:
            runs = _runs(task_dir, method)
            if not runs:
                continue
            direction = runs[0]["direction"]
            ex = [r["extras"] for r in runs]
            cols = {
                "steps R0": [e.get("steps_r0", 0.0) if len(e["levels"]) > 1 else 0.0 for e in ex],
                "steps": [r["spent"] for r in runs],
                "returned": [e["returned"] for e in ex if e["returned"] is not None],
                "best seen": [r["final"] for r in runs],
            }
            for name, vals in cols.items():
                totals.setdefault(method, {}).setdefault(name, []).extend(vals)
            equal = [e["core_continuation"] == r["spent"] for e, r in zip(ex, runs, strict=True)
                     if "core_continuation" in e]
            ledger = f"{sum(equal)}/{len(equal)}" if equal else "-"
            rows.append(
                f"| {task_dir.name} | {method} | {len(runs)} | {_mean_se(cols['steps R0'])} | "
                f"{_mean_se(cols['steps'])} | {ledger} | {_mean_se(cols['returned'])} | "
                f"{_mean_se(cols['best seen'])} |"
            )
    head = (
        "| task | method | seeds | steps at R0 | steps in total | steps = core ledger | "
        "returned at R1 | best seen |\n|---|---|---|---|---|---|---|---|"
    )
    overall = ["| method | runs | steps in total | returned at R1 | best seen |", "|---|---|---|---|---|"]
    for method, cols in totals.items():
        overall.append(
            f"| {method} | {len(cols['steps'])} | {_mean_se(cols['steps'])} | "
            f"{_mean_se(cols['returned'])} | {_mean_se(cols['best seen'])} |"
        )
    paired = ["| pair | W/T/L | sign p | mean difference |", "|---|---|---|---|"]
    paired += [_paired(root, METHODS[0], m, direction) for m in METHODS[1:] if m in totals]
    return (
        head + "\n" + "\n".join(rows) + "\n\nAll tasks:\n\n" + "\n".join(overall)
        + "\n\nPaired by task and seed (returned value at R1):\n\n" + "\n".join(paired)
    )

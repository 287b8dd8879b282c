"""Our Optuna plugin in the harness: EnhancedAdaCentSampler + PredPruner through ask/tell.

* ``optuna-eadacent-pred`` (ours, default): ``EnhancedAdaCentSampler(seed, max_resource=T)`` +
  ``PredPruner(max_resource=T)`` - Enhanced-AdaCent's coverage for the first trials, then the
  expected-improvement choice of :mod:`uvp_plugins.adacent.guidance` (delta = 0.1, the pruner's
  default predictor - Alg. 6's last slope - and median cut, 1000 Sobol candidates, epsilon
  "auto").
* ``optuna-eadacent-pred-paper``: the same with ``guidance=None`` - Enhanced-AdaCent (Bateni et
  al., Alg. 8) in Optuna's trial-at-a-time model: Enhanced-KCenter at every trial.
* ``optuna-adacent-pred``: ``enhanced=False, guidance=None`` - AdaCent (Alg. 7): plain greedy
  k-center selection with the same pruning.
* ``optuna-eadacent-pred-nocut`` and ``optuna-eadacent-pred-paper-nocut``: the first two with
  ``PredPruner(keep_fraction=None)`` (Pred alone, without the median cut that issue 17's tuning
  tasks chose on 2026-11-26).
* ``optuna-eadacent-pred-tail`` and ``optuna-eadacent-pred-paper-tail``: the first two with
  ``PredPruner(predictor="tail", keep_fraction=None)`` (Sec. 4's tail fit instead of Alg. 6's
  PRED, no cut), the pruner's default until issue 17's tuning tasks chose the last slope
  (docs/results/optuna.md).

The study loop is the harness's :func:`uvp_plugins.bench.methods.optuna_native.run_optuna_study`
(one ``trial.report`` per step, each step charged to the ledger by ``ctx.evaluate``; a pruned
trial has paid for the steps it ran; the trial running when the budget ends is told PRUNED), so
our methods and Optuna's native ones are driven identically. Optuna's logging is silenced there.
"""

from __future__ import annotations

from typing import Any

from uvp_plugins.adacent.pred import DEFAULT_PREDICTOR, KEEP_FRACTION
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.registry import register_method

__all__ = [
    "run_eadacent_pred",
    "run_eadacent_pred_paper",
    "run_adacent_pred",
    "run_eadacent_pred_tail",
    "run_eadacent_pred_paper_tail",
    "run_eadacent_pred_nocut",
    "run_eadacent_pred_paper_nocut",
]

_DEFAULT: Any = "default"


def _run(
    ctx: RunContext,
    enhanced: bool,
    guidance: Any = _DEFAULT,
    predictor: str = DEFAULT_PREDICTOR,
    keep_fraction: float | None = KEEP_FRACTION,
) -> None:
    from optuna_ext import EnhancedAdaCentSampler
    from uvp_plugins.bench.methods.optuna_native import pred_pruner, run_optuna_study

    T = ctx.max_budget
    kwargs = {} if guidance is _DEFAULT else {"guidance": guidance}
    sampler = EnhancedAdaCentSampler(
        seed=ctx.seed, max_resource=max(T, 2), enhanced=enhanced, **kwargs
    )
    run_optuna_study(ctx, sampler, pred_pruner(T, predictor, keep_fraction))


@register_method(
    "optuna-eadacent-pred",
    "ours (default): Optuna EnhancedAdaCentSampler + PredPruner (Enhanced-AdaCent's coverage, "
    "then expected improvement on every trial's value at the depth)",
    requires=("optuna",),
    kind="ours",
)
def run_eadacent_pred(ctx: RunContext) -> None:
    _run(ctx, enhanced=True)


@register_method(
    "optuna-eadacent-pred-paper",
    "ours, paper-faithful: EnhancedAdaCentSampler(guidance=None) + PredPruner (Alg. 8)",
    requires=("optuna",),
    kind="ours",
)
def run_eadacent_pred_paper(ctx: RunContext) -> None:
    _run(ctx, enhanced=True, guidance=None)


@register_method(
    "optuna-adacent-pred",
    "ours, paper-faithful: EnhancedAdaCentSampler(enhanced=False, guidance=None) + PredPruner "
    "(AdaCent, Alg. 7)",
    requires=("optuna",),
    kind="ours",
)
def run_adacent_pred(ctx: RunContext) -> None:
    _run(ctx, enhanced=False, guidance=None)


@register_method(
    "optuna-eadacent-pred-tail",
    "ours with PredPruner(predictor='tail', keep_fraction=None) (Sec. 4): the default sampler + "
    "Pred pruning by the tail fit, no cut (the pruner's default before 2026-11-26)",
    requires=("optuna",),
    kind="ours",
)
def run_eadacent_pred_tail(ctx: RunContext) -> None:
    _run(ctx, enhanced=True, predictor="tail", keep_fraction=None)


@register_method(
    "optuna-eadacent-pred-paper-tail",
    "ours, paper-faithful, with PredPruner(predictor='tail', keep_fraction=None): Alg. 8 with "
    "Sec. 4's tail fit",
    requires=("optuna",),
    kind="ours",
)
def run_eadacent_pred_paper_tail(ctx: RunContext) -> None:
    _run(ctx, enhanced=True, guidance=None, predictor="tail", keep_fraction=None)


@register_method(
    "optuna-eadacent-pred-nocut",
    "ours with PredPruner(keep_fraction=None): the default sampler + Pred alone, without the "
    "median cut (the pruner's default before the cut, 2026-11-26)",
    requires=("optuna",),
    kind="ours",
)
def run_eadacent_pred_nocut(ctx: RunContext) -> None:
    _run(ctx, enhanced=True, keep_fraction=None)


@register_method(
    "optuna-eadacent-pred-paper-nocut",
    "ours, paper-faithful, with PredPruner(keep_fraction=None): Alg. 8 with Pred alone",
    requires=("optuna",),
    kind="ours",
)
def run_eadacent_pred_paper_nocut(ctx: RunContext) -> None:
    _run(ctx, enhanced=True, guidance=None, keep_fraction=None)

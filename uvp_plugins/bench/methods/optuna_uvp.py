"""Our Optuna plugin in the harness: EnhancedAdaCentSampler + PredPruner through ask/tell.

* ``optuna-eadacent-pred`` (ours, default): ``EnhancedAdaCentSampler(seed, max_resource=T)`` +
  ``PredPruner(max_resource=T)`` - Enhanced-AdaCent's coverage for the first trials, then the
  expected-improvement choice of :mod:`uvp_plugins.adacent.guidance` (delta = 0.1, the pruner's
  default predictor - Alg. 6's last slope -, median cut and, with this sampler, probe phase;
  1000 Sobol candidates, epsilon "auto").
* ``optuna-eadacent``: the sampler alone (defaults, no pruner; ``max_resource`` unknown to it,
  as for a user without a pruner): for plain objectives (BBOB) and as the sampler-only row.
* ``optuna-eadacent-pred-paper``: the same with ``guidance=None`` - Enhanced-AdaCent (Bateni et
  al., Alg. 8) in Optuna's trial-at-a-time model: Enhanced-KCenter at every trial.
* ``optuna-adacent-pred``: ``enhanced=False, guidance=None`` - AdaCent (Alg. 7): plain greedy
  k-center selection with the same pruning.
* :data:`EARLIER_DEFAULTS`, the pruner's earlier defaults for paired comparisons (each with
  ``n_probes=0``): ``optuna-eadacent-pred-noprobe`` (the median cut without the probe phase
  that issue 17's tuning tasks chose with our sampler on 2026-11-26), ``-nocut`` and
  ``-paper-nocut`` (Pred alone, ``keep_fraction=None``), ``-tail`` and ``-paper-tail``
  (``predictor="tail"``: Sec. 4's tail fit instead of Alg. 6's PRED, no cut;
  docs/results/optuna.md).

The study loop is the harness's :func:`uvp_plugins.bench.methods.optuna_native.run_optuna_study`
(one ``trial.report`` per step, each step charged to the ledger by ``ctx.evaluate``; a pruned
trial has paid for the steps it ran; the trial running when the budget ends is told PRUNED), so
our methods and Optuna's native ones are driven identically. Optuna's logging is silenced there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from uvp_plugins.adacent.pred import DEFAULT_PREDICTOR, KEEP_FRACTION
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.registry import register_method

__all__ = ["run_eadacent", "run_eadacent_pred", "run_eadacent_pred_paper", "run_adacent_pred", "EARLIER_DEFAULTS"]

_DEFAULT: Any = "default"


def _run(
    ctx: RunContext,
    enhanced: bool,
    guidance: Any = _DEFAULT,
    predictor: str = DEFAULT_PREDICTOR,
    keep_fraction: float | None = KEEP_FRACTION,
    n_probes: int | str = "auto",
) -> None:
    from optuna_ext import EnhancedAdaCentSampler
    from uvp_plugins.bench.methods.optuna_native import pred_pruner, run_optuna_study

    T = ctx.max_budget
    kwargs = {} if guidance is _DEFAULT else {"guidance": guidance}
    sampler = EnhancedAdaCentSampler(
        seed=ctx.seed, max_resource=max(T, 2), enhanced=enhanced, **kwargs
    )
    run_optuna_study(ctx, sampler, pred_pruner(T, predictor, keep_fraction, n_probes))


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
    "optuna-eadacent",
    "ours, sampler alone: Optuna EnhancedAdaCentSampler (defaults), no pruner (every trial to T; "
    "for problems without a fidelity, a plain objective)",
    requires=("optuna",),
    kind="ours",
)
def run_eadacent(ctx: RunContext) -> None:
    from optuna_ext import EnhancedAdaCentSampler
    from uvp_plugins.bench.methods.optuna_native import run_optuna_study

    run_optuna_study(ctx, EnhancedAdaCentSampler(seed=ctx.seed), None)


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


#: earlier defaults, kept for paired comparisons: name -> (description, sampler and pruner kwargs)
EARLIER_DEFAULTS: dict[str, tuple[str, dict[str, Any]]] = {
    "optuna-eadacent-pred-noprobe": (
        "ours with PredPruner(n_probes=0): the default sampler + Pred and the median cut, without "
        "the probe phase (the pruner's default with our sampler before 2026-11-26, later)",
        {"n_probes": 0},
    ),
    "optuna-eadacent-pred-nocut": (
        "ours with PredPruner(keep_fraction=None, n_probes=0): the default sampler + Pred alone "
        "(the pruner's default before the median cut, 2026-11-26)",
        {"keep_fraction": None, "n_probes": 0},
    ),
    "optuna-eadacent-pred-paper-nocut": (
        "ours, paper-faithful, with PredPruner(keep_fraction=None): Alg. 8 with Pred alone",
        {"guidance": None, "keep_fraction": None, "n_probes": 0},
    ),
    "optuna-eadacent-pred-tail": (
        "ours with PredPruner(predictor='tail', keep_fraction=None, n_probes=0) (Sec. 4): the "
        "default sampler + Pred pruning by the tail fit (the pruner's default before 2026-11-26)",
        {"predictor": "tail", "keep_fraction": None, "n_probes": 0},
    ),
    "optuna-eadacent-pred-paper-tail": (
        "ours, paper-faithful, with PredPruner(predictor='tail', keep_fraction=None): Alg. 8 with "
        "Sec. 4's tail fit",
        {"guidance": None, "predictor": "tail", "keep_fraction": None, "n_probes": 0},
    ),
}


def _earlier_default(kwargs: dict[str, Any]) -> Callable[[RunContext], None]:
    def run(ctx: RunContext) -> None:
        _run(ctx, enhanced=True, **kwargs)

    return run


for _name, (_description, _kwargs) in EARLIER_DEFAULTS.items():
    register_method(_name, _description, requires=("optuna",), kind="ours")(_earlier_default(_kwargs))

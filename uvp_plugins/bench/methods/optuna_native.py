"""Optuna's own methods, driven through ask/tell so the harness charges every step.

* ``optuna-tpe``: ``TPESampler(seed)``, every trial trained to ``T`` (no pruner).
* ``optuna-tpe-hyperband``: ``TPESampler`` + ``HyperbandPruner(min_resource=1, max_resource=T,
  reduction_factor=3)`` (the anchors' configuration).
* ``optuna-random-median``: ``RandomSampler`` + ``MedianPruner(n_startup_trials=5,
  n_warmup_steps=5)``.

Trials report the envelope value at every step (``trial.report(v, step)``) and are pruned when
the pruner says so; a pruned trial has paid for the steps it ran (continuation). The study name
is fixed per seed: ``HyperbandPruner`` assigns brackets by hashing it (anchors: reproducibility).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uvp_plugins.adacent.pred import DEFAULT_PREDICTOR, KEEP_FRACTION
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method

if TYPE_CHECKING:
    from optuna_ext import PredPruner

__all__ = ["run_optuna_study", "pred_pruner"]


def run_optuna_study(ctx: RunContext, sampler: Any, pruner: Any | None) -> Any:
    """Spend ``ctx``'s budget with an Optuna study (ask/tell, one report per step).

    A problem without a fidelity (``T = 1``, e.g. BBOB) is a plain objective: its trials report
    nothing and are told their value, as a user's objective without a pruner would be."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        direction="maximize" if ctx.direction == "max" else "minimize",
        sampler=sampler,
        pruner=pruner if pruner is not None else optuna.pruners.NopPruner(),
        study_name=f"uvp-bench-seed{ctx.seed}",
    )
    from optuna_ext import to_distributions

    distributions = to_distributions(ctx.problem.space)
    T = ctx.max_budget
    while not ctx.exhausted:
        trial = study.ask(distributions)
        config = dict(trial.params)
        value = None
        pruned = False
        try:
            for step in range(1, T + 1):
                value = ctx.evaluate(("optuna", trial.number), config, step)
                if T == 1:  # a plain objective reports nothing
                    break
                trial.report(value, step)
                if step < T and trial.should_prune():
                    pruned = True
                    break
            if pruned:
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            else:
                study.tell(trial, value)
        except BudgetExhausted:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            break
    return study


def pred_pruner(
    T: int,
    predictor: str = DEFAULT_PREDICTOR,
    keep_fraction: float | None = KEEP_FRACTION,
    n_probes: int | str = "auto",
) -> PredPruner | None:
    """Our ``PredPruner(max_resource=T, predictor=..., keep_fraction=..., n_probes=...)`` for
    the harness's Optuna methods (ours and the ``optuna-tpe-pred`` peers); ``None`` when
    ``T < 2`` (nothing to prune)."""
    from optuna_ext import PredPruner

    if T < 2:
        return None
    return PredPruner(
        max_resource=T, predictor=predictor, keep_fraction=keep_fraction, n_probes=n_probes
    )


@register_method("optuna-tpe", "Optuna TPESampler, every trial to T", requires=("optuna",))
def run_tpe(ctx: RunContext) -> None:
    import optuna

    run_optuna_study(ctx, optuna.samplers.TPESampler(seed=ctx.seed), None)


@register_method(
    "optuna-tpe-hyperband",
    "Optuna TPESampler + HyperbandPruner(1, T, eta=3)",
    requires=("optuna",),
)
def run_tpe_hyperband(ctx: RunContext) -> None:
    import optuna

    pruner = optuna.pruners.HyperbandPruner(
        min_resource=1, max_resource=ctx.max_budget, reduction_factor=3
    )
    run_optuna_study(ctx, optuna.samplers.TPESampler(seed=ctx.seed), pruner)


@register_method(
    "optuna-random-median",
    "Optuna RandomSampler + MedianPruner(n_startup_trials=5, n_warmup_steps=5)",
    requires=("optuna",),
)
def run_random_median(ctx: RunContext) -> None:
    import optuna

    pruner = optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=5)
    run_optuna_study(ctx, optuna.samplers.RandomSampler(seed=ctx.seed), pruner)

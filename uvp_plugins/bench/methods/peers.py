"""The peers a user would compare our Optuna plugin with (extra ``peers``: torch, dehb).

* ``optuna-gp``: Optuna's ``GPSampler(seed)`` with its defaults and no pruner, every trial to
  ``T`` — the sampler Optuna's documentation recommends below a few hundred trials (needs torch).
* ``optuna-gp-median``: the same ``GPSampler`` with Optuna's ``MedianPruner()`` (its defaults:
  prune below the median of earlier trials at the same step after 5 trials).
* ``optuna-tpe-pred``: Optuna's ``TPESampler(seed)`` with its defaults + our
  ``optuna_ext.PredPruner(max_resource=T)``: our pruner under Optuna's default sampler;
  ``optuna-tpe-pred-nocut`` the same with ``keep_fraction=None`` (Pred alone, the pruner's
  default before the median cut), ``optuna-tpe-pred-tail`` with ``predictor="tail",
  keep_fraction=None`` (Sec. 4's tail fit, the pruner's default before the last slope).
* ``dehb``: DEHB (Awad, Mallik & Hutter 2021; the ``dehb`` package) through its ask/tell
  interface, fidelity = the problem's budget axis (epochs, trainsize levels) from 1 to ``T``,
  ``eta = 3``, on the unit hypercube of the search space (DEHB's own representation;
  :meth:`~uvp_plugins.space.SearchSpace.from_unit` decodes it exactly as DEHB decodes a
  ConfigSpace vector: linear or log scale, categoricals by equal bins). DEHB evaluates every
  configuration from scratch at each fidelity (a promotion retrains), so every evaluation is
  charged in full (``restart=True``). DEHB's fidelities ``T * eta^-k`` are rounded to the
  nearest integer budget.

The Optuna peers run through :func:`~uvp_plugins.bench.methods.optuna_native.run_optuna_study`,
as every Optuna method of the harness. dehb pins ``numpy<2``: installing the ``peers`` extra
keeps numpy at 1.26.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method

__all__ = [
    "run_optuna_gp",
    "run_optuna_gp_median",
    "run_optuna_tpe_pred",
    "TPE_EARLIER_DEFAULTS",
    "run_dehb",
    "DEHB_ETA",
]

#: DEHB's reduction factor (its default)
DEHB_ETA = 3


@register_method(
    "optuna-gp",
    "Optuna GPSampler (defaults), no pruner, every trial to T",
    requires=("optuna", "torch"),
)
def run_optuna_gp(ctx: RunContext) -> None:
    import optuna

    from uvp_plugins.bench.methods.optuna_native import run_optuna_study

    run_optuna_study(ctx, optuna.samplers.GPSampler(seed=ctx.seed), None)


@register_method(
    "optuna-gp-median",
    "Optuna GPSampler (defaults) + MedianPruner (defaults)",
    requires=("optuna", "torch"),
)
def run_optuna_gp_median(ctx: RunContext) -> None:
    import optuna

    from uvp_plugins.bench.methods.optuna_native import run_optuna_study

    run_optuna_study(ctx, optuna.samplers.GPSampler(seed=ctx.seed), optuna.pruners.MedianPruner())


@register_method(
    "optuna-tpe-pred",
    "Optuna TPESampler (defaults) + our PredPruner(max_resource=T)",
    requires=("optuna",),
)
def run_optuna_tpe_pred(ctx: RunContext) -> None:
    _tpe_pred(ctx)


#: the pruner's earlier defaults under TPE, kept for paired comparisons: name -> PredPruner kwargs
#: (with TPE ``n_probes="auto"`` is 0 anyway)
TPE_EARLIER_DEFAULTS: dict[str, dict[str, Any]] = {
    "optuna-tpe-pred-nocut": {"keep_fraction": None},
    "optuna-tpe-pred-tail": {"predictor": "tail", "keep_fraction": None},
}


def _tpe_pred(ctx: RunContext, **pruner_kwargs: Any) -> None:
    import optuna

    from uvp_plugins.bench.methods.optuna_native import pred_pruner, run_optuna_study

    sampler = optuna.samplers.TPESampler(seed=ctx.seed)
    run_optuna_study(ctx, sampler, pred_pruner(ctx.max_budget, **pruner_kwargs))


def _tpe_earlier_default(kwargs: dict[str, Any]) -> Callable[[RunContext], None]:
    def run(ctx: RunContext) -> None:
        _tpe_pred(ctx, **kwargs)

    return run


for _name, _kwargs in TPE_EARLIER_DEFAULTS.items():
    _args = ", ".join(f"{k}={v!r}" for k, v in _kwargs.items())
    register_method(
        _name,
        f"Optuna TPESampler (defaults) + our PredPruner(max_resource=T, {_args})",
        requires=("optuna",),
    )(_tpe_earlier_default(_kwargs))


@register_method(
    "dehb",
    "DEHB (dehb package, ask/tell, eta=3), fidelity 1..T, every evaluation from scratch",
    requires=("dehb",),
)
def run_dehb(ctx: RunContext) -> None:
    if ctx.max_budget < 2:
        raise ValueError(f"dehb needs a fidelity axis (T >= 2), got T = {ctx.max_budget}")
    from dehb import DEHB

    space = ctx.problem.space
    sign = ctx.problem.sign
    with tempfile.TemporaryDirectory(prefix="uvp-bench-dehb-") as output:
        optimizer = DEHB(
            cs=None,
            dimensions=len(space),
            min_fidelity=1,
            max_fidelity=ctx.max_budget,
            eta=DEHB_ETA,
            n_workers=1,
            seed=ctx.seed,
            output_path=output,  # DEHB writes its log there (removed afterwards)
            save_freq="end",  # "end" is reached only by DEHB.run; ask/tell saves nothing
            log_level="ERROR",
        )
        evaluation = 0
        try:
            while not ctx.exhausted:
                job = optimizer.ask()
                vector = np.clip(np.asarray(job["config"], dtype=float), 0.0, 1.0)
                config = space.from_unit(vector[None, :])[0]
                budget = int(min(ctx.max_budget, max(1, round(float(job["fidelity"])))))
                value = ctx.evaluate(("dehb", evaluation), config, budget, restart=True)
                evaluation += 1
                optimizer.tell(job, {"fitness": -sign * value, "cost": float(budget)})
        except BudgetExhausted:
            return

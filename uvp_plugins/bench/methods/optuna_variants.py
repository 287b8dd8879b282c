"""Issue 29 design variants, for the tuning-set experiments (docs/results/optuna.md)."""

from __future__ import annotations

from typing import Any

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.registry import register_method

_VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "v-new": ({}, {}),
    "v-kc4": ({"kcenter_max_dim": 4}, {}),
    "v-kc8": ({"kcenter_max_dim": 8}, {}),
    "v-new-grow": ({"coverage_growth": 50}, {}),
    "v-new-hd": ({"kcenter_max_dim": 8}, {}),
    "v-new-grow-hd": ({"coverage_growth": 50, "kcenter_max_dim": 8}, {}),
}


def _variant(guidance_kwargs: dict[str, Any], pruner_kwargs: dict[str, Any]):  # type: ignore[no-untyped-def]
    def run(ctx: RunContext) -> None:
        from optuna_ext import EnhancedAdaCentSampler, PredPruner
        from uvp_plugins.adacent.guidance import Guidance
        from uvp_plugins.bench.methods.optuna_native import run_optuna_study

        T = ctx.max_budget
        sampler = EnhancedAdaCentSampler(seed=ctx.seed, max_resource=max(T, 2), guidance=Guidance(**guidance_kwargs))
        pruner = PredPruner(max_resource=T, **pruner_kwargs) if T >= 2 else None
        run_optuna_study(ctx, sampler, pruner)

    return run


for _name, (_g, _p) in _VARIANTS.items():
    register_method(_name, f"issue-29 variant: Guidance({_g}), PredPruner({_p})", requires=("optuna",), kind="ours")(_variant(_g, _p))


@register_method("v-tpe-cal", "TPE + calibrated PredPruner", requires=("optuna",))
def run_tpe_cal(ctx: RunContext) -> None:
    import optuna

    from optuna_ext import PredPruner
    from uvp_plugins.bench.methods.optuna_native import run_optuna_study

    run_optuna_study(ctx, optuna.samplers.TPESampler(seed=ctx.seed), PredPruner(max_resource=ctx.max_budget))


def _sampler_only(guidance_kwargs: dict[str, Any]):  # type: ignore[no-untyped-def]
    def run(ctx: RunContext) -> None:
        from optuna_ext import EnhancedAdaCentSampler
        from uvp_plugins.adacent.guidance import Guidance
        from uvp_plugins.bench.methods.optuna_native import run_optuna_study

        run_optuna_study(ctx, EnhancedAdaCentSampler(seed=ctx.seed, guidance=Guidance(**guidance_kwargs)), None)

    return run


for _name, _g in {
    "s-kc0": {},
    "s-kc4": {"kcenter_max_dim": 4},
    "s-kc8": {"kcenter_max_dim": 8},
    "s-cov0": {"coverage_every": 0},
    "s-cov6": {"coverage_every": 6},
    "s-covg": {"coverage_growth": 20},
    "s-kc4c0": {"kcenter_max_dim": 4, "coverage_every": 0},
    "s-kc4g": {"kcenter_max_dim": 4, "coverage_growth": 20},
}.items():
    register_method(_name, f"issue-29 sampler-only variant: Guidance({_g})", requires=("optuna",), kind="ours")(_sampler_only(_g))

"""Issue 29's declared variants of the default sampler, kept so that the tuning-set figures of
docs/results/optuna.md ("Issue 29 results on the tuning sets") can be reproduced:

* ``s-g0`` - ``EnhancedAdaCentSampler`` without a pruner, the coverage step every third trial
  for the whole study (``Guidance(coverage_growth=0)``, issue 17's rule);
* ``s-cov0`` - the same without any coverage step after the first ``n_init`` trials
  (``Guidance(coverage_every=0)``);
* ``v-cov0`` - ``s-cov0``'s sampler with the default ``PredPruner``;
* ``v-cal0`` - the default sampler with ``PredPruner(calibrate=False)`` (issue 17's pruning rule,
  the switch a user has);
* the 20·T ablation (declared 2026-11-27 13:07 UTC): ``v-depth`` (the surrogate learns the values
  at the depth, ``Guidance(targets="depth")``, issue 17's targets), ``v-g0`` (a fixed coverage
  period, ``Guidance(coverage_growth=0)``), ``v-depth-g0`` (both) and ``v-depth-g0-cal0`` (both
  and ``PredPruner(calibrate=False)``: issue 17's rules with issue 29's other sampler changes),
  each with the default ``PredPruner`` unless said;
* bounds (declared 2026-11-27 13:14 UTC): ``v-clip`` (``Guidance(bounds="clip")``, issue 17's
  local candidates clipped onto the bounds) and ``v-both`` (``Guidance(bounds="both")``: the
  reflected candidate and its clipped twin), each with the default ``PredPruner``;
* ``s-both`` - the sampler of ``v-both`` without a pruner (BBOB);
* mixed bases (declared 2026-11-27 22:02 UTC): ``s-mix`` (``Guidance(mix_share=0.5)``, no
  pruner) and ``v-mix`` (the same with the default ``PredPruner``): half the local candidates
  start from a base that takes each coordinate from a top configuration drawn for it;
* ``v-issue17`` - issue 17's rules through today's switches: ``Guidance(targets="depth",
  coverage_growth=0, bounds="clip", lengthscale_prior="hvarfner")`` with
  ``PredPruner(calibrate=False)``.

The defaults themselves are the methods ``optuna-eadacent`` and ``optuna-eadacent-pred``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.registry import register_method

__all__: list[str] = []


def _variant(
    guidance_kwargs: dict[str, Any], pruned: bool, pruner_kwargs: dict[str, Any] | None = None
) -> Callable[[RunContext], None]:
    def run(ctx: RunContext) -> None:
        from optuna_ext import EnhancedAdaCentSampler, PredPruner
        from uvp_plugins.adacent.guidance import Guidance
        from uvp_plugins.bench.methods.optuna_native import run_optuna_study

        T = ctx.max_budget
        guidance = Guidance(**guidance_kwargs)
        if pruned:
            sampler = EnhancedAdaCentSampler(seed=ctx.seed, max_resource=max(T, 2), guidance=guidance)
            pruner = PredPruner(max_resource=T, **(pruner_kwargs or {})) if T >= 2 else None
        else:
            sampler, pruner = EnhancedAdaCentSampler(seed=ctx.seed, guidance=guidance), None
        run_optuna_study(ctx, sampler, pruner)

    return run


_SAMPLER_VARIANTS: tuple[tuple[str, dict[str, Any], bool], ...] = (
    ("s-g0", {"coverage_growth": 0}, False),
    ("s-cov0", {"coverage_every": 0}, False),
    ("v-cov0", {"coverage_every": 0}, True),
    ("s-both", {"bounds": "both"}, False),
    ("s-mix", {"mix_share": 0.5}, False),
)
_PRUNED_VARIANTS: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (
    ("v-cal0", {}, {"calibrate": False}),
    ("v-depth", {"targets": "depth"}, {}),
    ("v-g0", {"coverage_growth": 0}, {}),
    ("v-depth-g0", {"targets": "depth", "coverage_growth": 0}, {}),
    ("v-depth-g0-cal0", {"targets": "depth", "coverage_growth": 0}, {"calibrate": False}),
    ("v-clip", {"bounds": "clip"}, {}),
    ("v-both", {"bounds": "both"}, {}),
    ("v-mix", {"mix_share": 0.5}, {}),
    (
        "v-issue17",
        {"targets": "depth", "coverage_growth": 0, "bounds": "clip", "lengthscale_prior": "hvarfner"},
        {"calibrate": False},
    ),
)

for _name, _kwargs, _pruned in _SAMPLER_VARIANTS:
    register_method(
        _name,
        f"issue-29 variant (docs/results/optuna.md): Guidance({_kwargs})"
        + (" + PredPruner" if _pruned else ", no pruner"),
        requires=("optuna",),
        kind="ours",
    )(_variant(_kwargs, _pruned))

for _name, _kwargs, _pruner_kwargs in _PRUNED_VARIANTS:
    register_method(
        _name,
        f"issue-29 variant (docs/results/optuna.md): Guidance({_kwargs}) + PredPruner({_pruner_kwargs})",
        requires=("optuna",),
        kind="ours",
    )(_variant(_kwargs, True, _pruner_kwargs))

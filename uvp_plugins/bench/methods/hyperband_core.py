"""Hyperband and Iterative-Deepening Hyperband run offline on a benchmark problem (core, no framework).

Methods (``kind="core"``), for ``eta = 2`` (the paper's main setting) and, with the suffix
``-eta3``, for ``eta = 3``:

* ``core-hb``: one Hyperband at the problem's ``T``;
* ``core-idhb-efficient`` / ``-preserving`` / ``-discarding``: ID-HB (Brandt et al.) first at
  ``R0 = T // eta``, then deepened once to ``eta R0`` (``= T`` when ``eta`` divides ``T``, else the
  largest multiple of ``eta`` below ``T``; see
  :func:`~uvp_plugins.bench.idhb_compare.idhb_protocol`);
* ``core-ih-hb``: the paper's baseline — Hyperband at ``R0``, then a fresh Hyperband at
  ``eta R0`` (same seed, hence the same per-bracket sampling streams).

Every evaluation is ``ctx.evaluate(trial, config, budget, restart=True)`` (full charge: each
evaluation at ``r`` costs ``r``, the paper's accounting); the optimiser minimises
``loss = -sign * value``. The methods do not stop on their own before their schedule ends: they
spend the harness's ``ctx.total_budget`` and return when it raises ``BudgetExhausted``.
"""

from __future__ import annotations

from collections.abc import Callable

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.idhb_compare import idhb_protocol, problem_loss, problem_sampler
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method
from uvp_plugins.hyperband import VARIANTS, IterativeDeepeningHyperband

__all__ = ["run_core_hb", "run_core_idhb", "run_core_ih_hb"]


def _drive(ctx: RunContext, hb: IterativeDeepeningHyperband, tag: str) -> None:
    """``hb.run`` through the harness: trial id ``tag + config id``, full charge per evaluation."""
    sample = problem_sampler(ctx.problem)
    while (job := hb.ask(sample)) is not None:
        value = ctx.evaluate(f"{tag}{job.config_id}", job.config, job.budget, restart=True)
        hb.tell(job, problem_loss(ctx.problem, value))


def _make(
    ctx: RunContext, max_budget: int, eta: int, variant: str = "efficient"
) -> IterativeDeepeningHyperband:
    return IterativeDeepeningHyperband(
        max_budget, eta, variant, min_budget=ctx.problem.min_budget, mode="min", seed=ctx.seed
    )


def run_core_hb(ctx: RunContext, eta: int) -> None:
    """One Hyperband at ``T``."""
    try:
        _drive(ctx, _make(ctx, ctx.max_budget, eta), "hb-")
    except BudgetExhausted:
        return


def run_core_idhb(ctx: RunContext, eta: int, variant: str) -> None:
    """ID-HB at ``R0 = T // eta``, deepened once to ``eta R0``."""
    r0, _ = idhb_protocol(ctx.max_budget, eta, ctx.problem.min_budget)
    hb = _make(ctx, r0, eta, variant)
    try:
        _drive(ctx, hb, f"idhb-{variant}-")
        hb.deepen()
        _drive(ctx, hb, f"idhb-{variant}-")
    except BudgetExhausted:
        return


def run_core_ih_hb(ctx: RunContext, eta: int) -> None:
    """Hyperband at ``R0``, then a fresh Hyperband at ``eta R0`` (Brandt et al.'s IH-HB)."""
    r0, r1 = idhb_protocol(ctx.max_budget, eta, ctx.problem.min_budget)
    try:
        _drive(ctx, _make(ctx, r0, eta), "ih1-")
        _drive(ctx, _make(ctx, r1, eta), "ih2-")
    except BudgetExhausted:
        return


def _register(eta: int, suffix: str) -> None:
    def hb(ctx: RunContext) -> None:
        run_core_hb(ctx, eta)

    def ih_hb(ctx: RunContext) -> None:
        run_core_ih_hb(ctx, eta)

    def idhb(variant: str) -> Callable[[RunContext], None]:
        def run(ctx: RunContext) -> None:
            run_core_idhb(ctx, eta, variant)

        return run

    register_method(f"core-hb{suffix}", f"Hyperband at T (core, eta={eta})", kind="core")(hb)
    register_method(
        f"core-ih-hb{suffix}",
        f"Hyperband at T//eta, then a fresh Hyperband at eta*(T//eta) (IH-HB; core, eta={eta})",
        kind="core",
    )(ih_hb)
    for variant in VARIANTS:
        register_method(
            f"core-idhb-{variant}{suffix}",
            f"Iterative-Deepening Hyperband ({variant}): T//eta, deepened to eta*(T//eta) "
            f"(core, eta={eta})",
            kind="core",
        )(idhb(variant))


_register(2, "")
_register(3, "-eta3")

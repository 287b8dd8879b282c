"""The UVP allocators of Bateni et al. (Alg. 3, 5, 7, 8) run offline on a benchmark problem.

``core-fullcent``, ``core-enhanced-fullcent``, ``core-adacent``, ``core-enhanced-adacent``: the
candidate set is the problem's scrambled Sobol mesh of n = 1000 configurations
(``space.sobol_mesh(1000, seed=ctx.seed)``, the authors' setting), embedded with
``space.embed``; the allocators of :mod:`uvp_plugins.adacent.allocators` run with the paper's settings (p = 25,
delta = 0.1, tail-fit on the last 30 %, epsilon="auto" estimated from paid evaluations only) and
the first center drawn with the run's seed. Every value the allocator asks for is one
``ctx.evaluate(i, configs[i], b)`` call (trial id = mesh index, continuation: cost 1 per step),
so the harness ledger is charged and scores everything.

Values are mapped to positive, higher-is-better scores (the enhancement factors are ratios) by
:func:`positive_score`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from uvp_plugins.adacent.allocators import (
    UVPResult,
    adacent,
    enhanced_adacent,
    enhanced_fullcent,
    fullcent,
)
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method

__all__ = ["positive_score", "N_CANDIDATES"]

#: candidate mesh size (authors' code: n = 1000 Sobol points)
N_CANDIDATES = 1000


def positive_score(value: float, direction: str) -> float:
    """Map a raw metric to a positive, higher-is-better score (monotone, continuous, C^1).

    * ``"max"``: ``v`` if ``v >= 1`` (accuracies in %, unchanged) else ``exp(v - 1)``.
    * ``"min"`` (losses): ``1 / (1 + v)`` if ``v >= 0`` else ``1 - v``.

    Both branches meet with equal value and slope, so the map preserves the order of values and
    is positive for every real input.
    """
    v = float(value)
    if direction == "max":
        return v if v >= 1.0 else math.exp(v - 1.0)
    if direction == "min":
        return 1.0 / (1.0 + v) if v >= 0.0 else 1.0 - v
    raise ValueError(f"direction must be 'max' or 'min', got {direction!r}")


def _run(ctx: RunContext, allocator: Callable[..., UVPResult], **kwargs: object) -> None:
    configs, Z = ctx.problem.space.sobol_mesh(N_CANDIDATES, seed=ctx.seed)
    direction = ctx.direction

    def value_fn(i: int, b: int) -> float:
        return positive_score(ctx.evaluate(i, configs[i], b), direction)

    budget = int(math.floor(ctx.remaining + 1e-9))
    if budget < ctx.max_budget:
        return
    try:
        allocator(value_fn, Z, budget, ctx.max_budget, seed=ctx.seed, **kwargs)
    except BudgetExhausted:
        return


@register_method("core-fullcent", "FullCent offline allocator (Alg. 3)", kind="core")
def run_fullcent(ctx: RunContext) -> None:
    _run(ctx, fullcent)


@register_method(
    "core-enhanced-fullcent", "Enhanced-FullCent offline allocator (Alg. 5), epsilon auto", kind="core"
)
def run_enhanced_fullcent(ctx: RunContext) -> None:
    _run(ctx, enhanced_fullcent, epsilon="auto")


@register_method("core-adacent", "AdaCent offline allocator (Alg. 7), p=25, tail-fit", kind="core")
def run_adacent(ctx: RunContext) -> None:
    _run(ctx, adacent, p=25, predictor="tail")


@register_method(
    "core-enhanced-adacent",
    "Enhanced-AdaCent offline allocator (Alg. 8), p=25, delta=0.1, tail-fit, epsilon auto",
    kind="core",
)
def run_enhanced_adacent(ctx: RunContext) -> None:
    _run(ctx, enhanced_adacent, p=25, delta=0.1, predictor="tail", epsilon="auto")

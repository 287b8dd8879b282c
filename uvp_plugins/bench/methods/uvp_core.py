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
the one rule every adapter uses, :func:`uvp_plugins.adacent.value_scale.positive_scores`,
applied to the values paid so far (:class:`StreamingScores`): accuracies (all positive, maximised)
are used unchanged, positive losses by their reciprocal; only where a non-positive value occurs
(e.g. Hartmann's negative minima) is the affine rule relative to the values seen so far.
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
from uvp_plugins.adacent.value_scale import positive_scores
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method

__all__ = ["StreamingScores", "N_CANDIDATES"]

#: candidate mesh size (authors' code: n = 1000 Sobol points)
N_CANDIDATES = 1000


class StreamingScores:
    """Scores of values as they are paid: ``positive_scores`` over every value so far, the
    newest one returned.

    Example:
        >>> score = StreamingScores(maximize=True)
        >>> score(0.8), score(0.9)        # accuracies: unchanged (rule 1)
        (0.8, 0.9)
        >>> loss = StreamingScores(maximize=False)
        >>> loss(0.5), loss(0.25)         # losses: reciprocal (rule 2)
        (2.0, 4.0)
    """

    def __init__(self, maximize: bool) -> None:
        self.maximize = bool(maximize)
        self.values: list[float] = []

    def __call__(self, value: float) -> float:
        self.values.append(float(value))
        return float(positive_scores(self.values, self.maximize)[-1])


def _run(ctx: RunContext, allocator: Callable[..., UVPResult], **kwargs: object) -> None:
    configs, Z = ctx.problem.space.sobol_mesh(N_CANDIDATES, seed=ctx.seed)
    score = StreamingScores(maximize=ctx.direction == "max")

    def value_fn(i: int, b: int) -> float:
        return score(ctx.evaluate(i, configs[i], b))

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

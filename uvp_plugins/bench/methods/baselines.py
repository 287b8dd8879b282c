"""Framework-free baseline: random search.

``random``: independent uniform samples of the search space (unit coordinates), each trained to
``T`` epoch by epoch (every epoch paid and scored), until the budget ``B`` is spent — with
``B = 20 T`` that is 20 configurations, the anchors' "random search (20 configs x T)".
"""

from __future__ import annotations

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method


@register_method("random", "random search, every configuration trained to T", kind="native")
def run_random(ctx: RunContext) -> None:
    rng = ctx.rng()
    trial = 0
    try:
        while not ctx.exhausted:
            config = ctx.problem.space.sample(1, rng)[0]
            ctx.evaluate_curve(trial, config, ctx.max_budget)
            trial += 1
    except BudgetExhausted:
        return

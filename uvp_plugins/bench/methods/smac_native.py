"""SMAC3's own methods, driven through ask/tell so the harness charges every evaluation.

* ``smac-hpo``: ``HyperparameterOptimizationFacade`` (random forest + EI); every trial trained to
  ``T`` epoch by epoch (each epoch paid and scored), the final value told to SMAC.
* ``smac-mf``: ``MultiFidelityFacade`` (Hyperband, ``eta=3``, budgets 1..T). SMAC's promotions
  are new trials at a higher budget and SMAC's target functions retrain from scratch, so each
  evaluation at budget ``b`` is charged in full (``restart=True``), as in the anchors.

SMAC minimises: values of maximisation problems are told negated. SMAC writes its output into a
temporary directory that is removed after the run.
"""

from __future__ import annotations

import tempfile
from typing import Any

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method


def _smac_loop(ctx: RunContext, multi_fidelity: bool) -> None:
    import logging

    from smac import HyperparameterOptimizationFacade, MultiFidelityFacade, Scenario
    from smac.runhistory.dataclasses import TrialValue

    from smac_ext import configspace_from_space

    logging.getLogger("smac").setLevel(logging.ERROR)
    cs = configspace_from_space(ctx.problem.space, seed=ctx.seed)
    T = ctx.max_budget
    sign = ctx.problem.sign
    with tempfile.TemporaryDirectory(prefix="uvp-bench-smac-") as out:
        kwargs: dict[str, Any] = dict(
            deterministic=True,
            n_trials=100_000,
            seed=ctx.seed,
            output_directory=out,
        )
        if multi_fidelity:
            scenario = Scenario(cs, min_budget=1, max_budget=T, **kwargs)
            facade: Any = MultiFidelityFacade
            intensifier: Any = MultiFidelityFacade.get_intensifier(scenario, eta=3)
        else:
            scenario = Scenario(cs, **kwargs)
            facade = HyperparameterOptimizationFacade
            intensifier = HyperparameterOptimizationFacade.get_intensifier(scenario)

        def target(config: Any, seed: int = 0, budget: float | None = None) -> float:
            raise RuntimeError("the benchmark drives SMAC through ask/tell")

        smac = facade(scenario, target, intensifier=intensifier, overwrite=True, logging_level=40)
        n = 0
        try:
            while not ctx.exhausted:
                info = smac.ask()
                config = dict(info.config)
                if multi_fidelity:
                    budget = max(1, min(T, int(round(float(info.budget)))))
                    value = ctx.evaluate(("smac", n), config, budget, restart=True)
                else:
                    value = ctx.evaluate_curve(("smac", n), config, T)[-1]
                smac.tell(info, TrialValue(cost=-sign * value))
                n += 1
        except BudgetExhausted:
            return


@register_method(
    "smac-hpo",
    "SMAC3 HyperparameterOptimizationFacade (RF + EI), every trial to T",
    requires=("smac",),
)
def run_smac_hpo(ctx: RunContext) -> None:
    _smac_loop(ctx, multi_fidelity=False)


@register_method(
    "smac-mf",
    "SMAC3 MultiFidelityFacade (Hyperband eta=3), retrains from scratch (full charge)",
    requires=("smac",),
)
def run_smac_mf(ctx: RunContext) -> None:
    _smac_loop(ctx, multi_fidelity=True)

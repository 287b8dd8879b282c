"""Continuing a SMAC Hyperband run with a larger budget: ID-HB (ours) beside SMAC's Hyperband.

The protocol of Brandt et al. (Sec. 7) through SMAC3's ``MultiFidelityFacade`` (random-forest
config selector, ``eta = 3``) on a multi-fidelity problem with fidelity ``1..T``: a first run at
``R0 = T // 3``, then the budget is raised to ``R1 = 3 R0``.

* ``smac-idhb`` (ours): :class:`smac_ext.IterativeDeepeningHyperbandIntensifier` -- one Hyperband
  iteration at ``R0``, then the *same* SMAC run continued on its output directory with
  ``max_budget = R1`` (a second facade, as the user re-runs the script; eID-HB reuses every
  result of the first run).
* ``smac-hb-rerun`` (native): SMAC's own ``Hyperband`` -- one iteration at ``R0``, then, as SMAC
  cannot continue a run with a changed scenario, a fresh run (new output directory) with one
  iteration at ``R1``.
* ``smac-hb`` (native): SMAC's ``Hyperband``, one iteration at ``R1`` only (the quality
  reference at the larger budget, without the first run's cost).

Every evaluation is ``ctx.evaluate(..., budget, restart=True)``: SMAC's targets train from
scratch, so each evaluation at budget ``b`` is charged ``b`` (full charge). SMAC's real budgets
``R * 3**-k`` are rounded to the nearest integer fidelity (as ``smac-mf`` does). All runs of a
method use the same ``Scenario`` fields except ``max_budget`` (``n_trials`` is the same cap for
all, so SMAC's initial design is the same); one "iteration" of SMAC's Hyperband is its first
:func:`smac_ext.hyperband_trials` trials (sequential ask/tell). Values are told as costs
``-sign * value``; SMAC writes into a temporary directory removed after the run.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.idhb_compare import idhb_protocol
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method

__all__ = ["run_smac_hyperband_protocol"]

ETA = 3


def _smac_run(ctx: RunContext, out: Path, name: str, max_budget: int, n_cap: int,
              ours: bool, tag: str) -> None:
    """One SMAC run (ask/tell through the harness) until the intensifier stops (ours) or
    one Hyperband iteration was asked (SMAC's)."""
    from smac import MultiFidelityFacade, Scenario
    from smac.runhistory.dataclasses import TrialValue

    from smac_ext import IterativeDeepeningHyperbandIntensifier, configspace_from_space
    from smac_ext import hyperband_trials as trials_of

    scenario = Scenario(configspace_from_space(ctx.problem.space, seed=ctx.seed), name=name,
                        output_directory=out, deterministic=True, seed=ctx.seed,
                        min_budget=ctx.problem.min_budget, max_budget=max_budget, n_trials=n_cap)
    if ours:
        intensifier: Any = IterativeDeepeningHyperbandIntensifier(scenario, eta=ETA)
        limit = n_cap
    else:
        intensifier = MultiFidelityFacade.get_intensifier(scenario, eta=ETA)
        limit = trials_of(ctx.problem.min_budget, max_budget, ETA)

    def target(config: Any, seed: int = 0, budget: float | None = None) -> float:
        raise RuntimeError("the benchmark drives SMAC through ask/tell")

    smac = MultiFidelityFacade(scenario, target, intensifier=intensifier, logging_level=40)
    sign = ctx.problem.sign
    for n in range(limit):
        try:
            with ctx.timed("ask"):
                info = smac.ask()
        except StopIteration:  # ID-HB: the Hyperband iteration at max_budget is complete
            return
        assert info.budget is not None  # a budget intensifier sets one on every trial
        budget = max(1, min(ctx.max_budget, int(round(float(info.budget)))))
        value = ctx.evaluate((tag, n), dict(info.config), budget, restart=True)
        smac.tell(info, TrialValue(cost=-sign * value))


def run_smac_hyperband_protocol(ctx: RunContext, method: str) -> None:
    """``method`` in ``{"idhb", "hb-rerun", "hb"}`` (module docstring)."""
    import logging

    from smac_ext import hyperband_trials

    logging.getLogger("smac").setLevel(logging.ERROR)
    r0, r1 = idhb_protocol(ctx.max_budget, ETA, ctx.problem.min_budget)
    lo = ctx.problem.min_budget
    n_cap = hyperband_trials(lo, r0, ETA) + hyperband_trials(lo, r1, ETA)
    with tempfile.TemporaryDirectory(prefix="uvp-bench-smac-idhb-") as tmp:
        out = Path(tmp)
        try:
            if method == "idhb":
                _smac_run(ctx, out, "run", r0, n_cap, ours=True, tag="idhb")
                _smac_run(ctx, out, "run", r1, n_cap, ours=True, tag="idhb-continued")
            elif method == "hb-rerun":
                _smac_run(ctx, out, "first", r0, n_cap, ours=False, tag="hb-first")
                _smac_run(ctx, out, "rerun", r1, n_cap, ours=False, tag="hb-rerun")
            elif method == "hb":
                _smac_run(ctx, out, "hb", r1, n_cap, ours=False, tag="hb")
            else:
                raise ValueError(f"method must be 'idhb', 'hb-rerun' or 'hb', got {method!r}")
        except BudgetExhausted:
            return


for _name, _desc, _kind, _method in (
    ("smac-idhb", "SMAC3 MultiFidelityFacade + IterativeDeepeningHyperbandIntensifier (eID, "
     "eta=3): T//3, then the same run continued at 3*(T//3)", "ours", "idhb"),
    ("smac-hb-rerun", "SMAC3 MultiFidelityFacade + Hyperband (eta=3): T//3, then a fresh run at "
     "3*(T//3)", "native", "hb-rerun"),
    ("smac-hb", "SMAC3 MultiFidelityFacade + Hyperband (eta=3): one iteration at 3*(T//3)",
     "native", "hb"),
):
    register_method(_name, _desc, requires=("smac",), kind=_kind)(
        functools.partial(run_smac_hyperband_protocol, method=_method)
    )

"""CASH benchmark methods through SMAC3: ``smac-maxucb`` (ours) and ``smac-combined`` (native).

Both drive SMAC's ``HyperparameterOptimizationFacade`` with ask/tell on the CASH ConfigSpace of a
:class:`~uvp_plugins.bench.problems.cash.CashProblem` (selector ``"algorithm"`` with every arm's
parameters conditioned on it, built by :func:`smac_ext.cash_configspace`), so the harness's
ledger stays in control: trial ``n`` is charged with ``ctx.evaluate(("smac", n), config, 1)``
(one HPO iteration), and a run lasts ``T = ctx.total_budget`` iterations (the scenario's
``n_trials``, which also sizes SMAC's initial designs).

* ``smac-maxucb``: :class:`smac_ext.MaxUCBIntensifier` with its defaults: MaxUCB picks the
  model class, each class runs SMAC's random-forest HPO on its own subspace (Balef et al., *Put
  CASH on Bandits*, Alg. 1, with the defaults chosen in issue 30, see the intensifier).
* The other bandit methods below keep the intensifier's settings from before issue 30 (Alg. 1:
  ``alpha = 0.5``, no exploration floor, every arm judged from its first result, each arm's
  default then ``T // (4 K) - 1`` Sobol configurations) unless they say otherwise, so that the
  results of ``docs/results/smac_maxucb.md`` repeat; ``smac-maxucb-v1`` is ``smac-maxucb`` as it
  was then.
* ``smac-maxucb-burnin``: the same with a burn-in of ``C = 5`` rounds per arm (Alg. E.1: the
  first ``5 K`` pulls are round-robin and their rewards are not observed by the bandit), the
  paper's remedy for rewards that are not yet stationary early in HPO (App. E.3, YaHPOGym).
* ``smac-maxucb-burnin-design``: the burn-in covers every arm's initial design
  (``burn_in="initial_design"``: ``C`` = the default configuration plus the intensifier's
  per-arm Sobol design, ``T // (4 K)`` for ``T >= 4 K``), so the
  bandit judges arms only on their model-based proposals; the rewards of random configurations,
  which are not representative of what an arm's HPO will reach, are not observed (Alg. E.1).
* ``smac-maxucb-paper-design``: MaxUCB (Alg. 1, no burn-in) with the paper's per-arm initial
  design (App. D: each class's default, then ``50 / (K - 1)`` Sobol configurations, 50 at
  ``K = 2``) instead of the intensifier's default ``T // (4 K) - 1``.
* ``smac-combined``: SMAC's own facade on the joint conditional space (the paper's "combined
  search" baseline with SMAC), with the facade's default initial design (Sobol, ``min(10 d,
  T / 4)`` configurations for ``d`` joint hyperparameters).
* ``smac-combined-defaults``: the same facade with the paper's initial-design protocol for
  combined search (App. D, TabRepoRaw/YaHPOGym: "we always evaluate the default configuration
  for each model first and then allow SMAC to run an initial design of 50 - #arms
  configurations in the upper level"): every class's default configuration first, then
  ``n - K`` Sobol configurations, ``n`` the facade's default design size (50 at ``T = 200``).
* ``smac-ucb``, ``smac-quantileucb``, ``smac-roundrobin``: the paper's bandit baselines on the
  same per-arm SMAC HPO (the intensifier with ``policy=...``); ``smac-quantileucb-burnin-design``
  gives Quantile-UCB the same burn-in as ``smac-maxucb-burnin-design``.

Losses are told as costs (``cost = -sign * value``). A failing evaluation (an exception of the
problem other than ``BudgetExhausted``) is told as ``StatusType.CRASHED`` with the worst cost told
so far (1.0 before any), a finite crash cost so that SMAC's surrogates can learn from it (an
infinite cost makes SMAC's random forest fail); the bandit never credits it. The time spent in
``ask`` (SMAC's model fits and acquisition optimisation) is recorded per call
(``RunContext.timed("ask")``; ``uvp-bench report`` prints it) and is most of the harness's
overhead (wall time minus evaluation time). SMAC writes its output into a temporary
directory that is removed after the run.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method

__all__ = ["paper_per_arm_design_size", "run_smac_cash"]


def _cash_configspace(ctx: RunContext) -> Any:
    from smac_ext import cash_configspace

    problem: Any = ctx.problem
    for attr in ("arms", "arm_spaces", "selector"):
        if not hasattr(problem, attr):
            raise TypeError(
                f"problem {problem.name!r} is not a CASH problem (it has no {attr!r}); the smac "
                "CASH methods need a CashProblem (problem kind 'cash')"
            )
    # CashProblem parameter names are already prefixed with the arm ("svc:C"); a problem's own
    # default configurations (cash-yahpo6: the scenarios') become the hyperparameters' defaults
    return cash_configspace(
        problem.arm_spaces, selector=problem.selector, arms=problem.arms, seed=ctx.seed,
        prefix=False, defaults=getattr(problem, "arm_defaults", None),
    )


def _class_defaults_first_design(scenario: Any, ctx: RunContext) -> Any:
    """Combined-search initial design of the paper (App. D): each class's default first.

    The joint configurations with the selector set to each arm and that arm's hyperparameters at
    their defaults come first, in arm order, then ``n - K`` Sobol configurations of the joint
    space, ``n = min(10 d, T / 4)`` the HPO facade's default design size. (SMAC's
    ``additional_configs`` would come *after* the Sobol configurations, hence the reordering.)
    """
    from smac import HyperparameterOptimizationFacade
    from smac.initial_design import SobolInitialDesign

    from smac_ext import split_cash_space

    problem: Any = ctx.problem
    cash = split_cash_space(scenario.configspace, selector=problem.selector)
    defaults = [
        cash.to_joint(i, sub.get_default_configuration(), origin="Initial Design: class default")
        for i, sub in enumerate(cash.subspaces)
    ]
    facade_design = HyperparameterOptimizationFacade.get_initial_design(scenario)
    n_sobol = max(0, int(facade_design.meta["n_configs"]) - len(defaults))

    class ClassDefaultsFirst(SobolInitialDesign):  # type: ignore[misc]
        def select_configurations(self) -> list[Any]:
            configs = super().select_configurations()
            return defaults + [c for c in configs if c not in defaults]

    return ClassDefaultsFirst(scenario, n_configs=n_sobol)


def paper_per_arm_design_size(n_arms: int, n_trials: int) -> int:
    """Sobol configurations per arm after its default in the paper's protocol (App. D).

    "[W]e always evaluate the default configuration for each model first and then allow SMAC to
    run an initial design of [...] 50 / (#arms - 1) [configurations] in the lower level":
    ``floor(50 / (K - 1))`` (50 for a single arm), capped so that the ``K`` designs, defaults
    included, fit into ``n_trials`` (at most ``n_trials // K - 1`` each).
    """
    if n_arms < 1:
        raise ValueError(f"n_arms must be >= 1, got {n_arms}")
    paper = 50 // max(1, n_arms - 1)
    return max(0, min(paper, n_trials // n_arms - 1))


def run_smac_cash(
    ctx: RunContext,
    policy: str | None = "MaxUCB",
    alpha: float | None = 0.5,
    burn_in: int | str = 0,
    class_defaults_first: bool = False,
    per_arm_design: str | None = None,
    **intensifier_options: Any,
) -> None:
    """One run: SMAC HPO facade with the bandit intensifier (``policy``) or without (``None``).

    Args:
        ctx: the run context of a CASH problem.
        policy: a policy of :mod:`uvp_plugins.bandits` for :class:`smac_ext.MaxUCBIntensifier`,
            or ``None`` for SMAC's own intensifier on the joint space (combined search).
        alpha: the policy's exploration parameter (ignored by ``"RoundRobin"``; ``None``: the
            intensifier's default).
        burn_in: the intensifier's ``burn_in`` (rounds ``C``, or ``"initial_design"``).
        class_defaults_first: combined search only (``policy=None``): the initial design is
            every class's default configuration, then the facade's default Sobol design shortened
            by the number of classes (the paper's combined-search protocol, App. D).
        per_arm_design: bandit policies only: ``None``, the per-arm initial design the
            intensifier had before issue 30 (default plus ``T // (4 K) - 1`` Sobol
            configurations, each arm judged from its first result on: ``min_pulls=1``);
            ``"paper"`` the paper's (App. D), see :func:`paper_per_arm_design_size`, also with
            ``min_pulls=1`` unless given; ``"default"``: the intensifier's own defaults for the
            design and ``min_pulls``.
        **intensifier_options: further arguments of :class:`smac_ext.MaxUCBIntensifier` (e.g.
            ``min_pulls``).
    """
    if class_defaults_first and policy is not None:
        raise ValueError("class_defaults_first is a combined-search protocol: it needs "
                         f"policy=None, got policy={policy!r}")
    if per_arm_design not in (None, "paper", "default"):
        raise ValueError(f"per_arm_design must be None, 'paper' or 'default', got {per_arm_design!r}")
    if per_arm_design is not None and policy is None:
        raise ValueError("per_arm_design sizes the bandit's per-arm designs: it needs a bandit "
                         "policy, got policy=None")
    import logging

    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.runhistory.dataclasses import TrialValue
    from smac.runhistory.enumerations import StatusType

    from smac_ext import MaxUCBIntensifier, plain_config

    logging.getLogger("smac").setLevel(logging.ERROR)
    configspace = _cash_configspace(ctx)
    n_trials = max(1, int(ctx.total_budget))
    sign = ctx.problem.sign
    with tempfile.TemporaryDirectory(prefix="uvp-bench-smac-cash-") as out:
        scenario = Scenario(
            configspace,
            deterministic=True,
            n_trials=n_trials,
            seed=ctx.seed,
            output_directory=Path(out),
        )
        intensifier: Any = None
        if policy is not None:
            kwargs: dict[str, Any] = {"policy": policy, **intensifier_options}
            if policy != "RoundRobin" and alpha is not None:
                kwargs["alpha"] = alpha
            if burn_in:
                kwargs["burn_in"] = burn_in
            n_arms = len(ctx.problem.arms)  # type: ignore[attr-defined]
            if per_arm_design is None:  # the intensifier's defaults before issue 30
                kwargs.setdefault("n_initial", max(0, n_trials // (4 * n_arms) - 1))
            elif per_arm_design == "paper":
                kwargs["n_initial"] = paper_per_arm_design_size(n_arms, n_trials)
            if per_arm_design != "default":  # the bandit of Alg. 1 as before issue 30
                kwargs.setdefault("min_pulls", 1)
                kwargs.setdefault("floor", 0.0)
            intensifier = MaxUCBIntensifier(scenario, **kwargs)
        facade_kwargs: dict[str, Any] = {}
        if class_defaults_first:
            facade_kwargs["initial_design"] = _class_defaults_first_design(scenario, ctx)

        def target(config: Any, seed: int = 0) -> float:
            raise RuntimeError("the benchmark drives SMAC through ask/tell")

        smac = HyperparameterOptimizationFacade(
            scenario, target, intensifier=intensifier, overwrite=True, logging_level=40,
            **facade_kwargs,
        )
        n = 0
        worst = None  # the worst cost told so far: the cost of a crashed trial
        try:
            while not ctx.exhausted:
                try:
                    with ctx.timed("ask"):
                        info = smac.ask()
                except StopIteration:  # every arm exhausted (finite spaces)
                    return
                try:
                    value = ctx.evaluate(("smac", n), plain_config(info.config), 1)
                except BudgetExhausted:
                    raise
                except Exception as exc:  # a failing model fit: a crashed trial
                    crash_cost = 1.0 if worst is None else worst
                    smac.tell(info, TrialValue(cost=crash_cost, status=StatusType.CRASHED,
                                               additional_info={"error": repr(exc)}))
                else:
                    cost = -sign * value
                    worst = cost if worst is None else max(worst, cost)
                    smac.tell(info, TrialValue(cost=cost))
                n += 1
        except BudgetExhausted:
            return


#: (name, description, kind, arguments of ``run_smac_cash``): ``policy=None`` is SMAC's own
#: intensifier on the joint space
_METHOD_TABLE: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("smac-maxucb",
     "smac_ext.MaxUCBIntensifier with its defaults: MaxUCB picks the class, per-class SMAC RF HPO",
     "ours", {"policy": "MaxUCB", "alpha": None, "per_arm_design": "default"}),
    ("smac-maxucb-v1",
     "MaxUCB intensifier as smac-maxucb was before issue 30: Alg. 1 (alpha=0.5), each arm's "
     "default then T // (4K) - 1 Sobol configurations",
     "ours", {"policy": "MaxUCB"}),
    ("smac-maxucb-burnin",
     "MaxUCB-Burn-in intensifier (alpha=0.5, C=5; Alg. E.1) over per-model SMAC RF HPO",
     "ours", {"policy": "MaxUCB", "burn_in": 5}),
    ("smac-maxucb-burnin-design",
     "MaxUCB-Burn-in (alpha=0.5, C = per-arm initial design, T // (4K)) over per-model SMAC RF HPO",
     "ours", {"policy": "MaxUCB", "burn_in": "initial_design"}),
    ("smac-maxucb-paper-design",
     "MaxUCB (alpha=0.5) over per-model SMAC RF HPO, paper's per-arm design (App. D): default "
     "then 50 / (K - 1) Sobol configurations per arm",
     "ours", {"policy": "MaxUCB", "per_arm_design": "paper"}),
    ("smac-combined",
     "SMAC3 HyperparameterOptimizationFacade (RF + EI) on the joint conditional CASH space",
     "native", {"policy": None}),
    ("smac-ucb",
     "UCB (alpha=0.5) over per-model SMAC RF HPO (paper baseline, smac_ext intensifier)",
     "ours", {"policy": "UCB"}),
    ("smac-quantileucb",
     "Quantile-UCB (alpha=0.5, tau=0.95) over per-model SMAC RF HPO (paper baseline)",
     "ours", {"policy": "QuantileUCB"}),
    ("smac-quantileucb-burnin-design",
     "Quantile-UCB (alpha=0.5, tau=0.95), burn-in over the per-arm initial designs, per-model SMAC",
     "ours", {"policy": "QuantileUCB", "burn_in": "initial_design"}),
    ("smac-combined-defaults",
     "SMAC3 HPO facade on the joint CASH space, paper protocol: every class's default first, "
     "then the facade's Sobol design minus K",
     "native", {"policy": None, "class_defaults_first": True}),
    ("smac-roundrobin",
     "Round-robin arm allocation over per-model SMAC RF HPO (paper baseline)",
     "ours", {"policy": "RoundRobin"}),
    # tuning variants of issue 30 (docs/results/cash_yahpo6.md): the bandit rule chosen with
    # Optuna (alpha 1, an arm below ln t pulls is pulled first), each arm's design its default
    # then 0 or the paper's 50 / (K - 1) Sobol configurations
    ("smac-maxucb-tune-d0",
     "tuning variant (issue 30): alpha 1, exploration floor ln t, each arm its default then BO",
     "ours", {"policy": "MaxUCB", "alpha": 1.0, "n_initial": 0, "floor": 1.0}),
    ("smac-maxucb-tune-paper",
     "tuning variant (issue 30): alpha 1, exploration floor ln t, paper's per-arm design",
     "ours", {"policy": "MaxUCB", "alpha": 1.0, "per_arm_design": "paper", "floor": 1.0}),
    ("smac-maxucb-tune-a05",
     "tuning variant (issue 30): the intensifier's defaults with the paper's alpha 0.5",
     "ours", {"policy": "MaxUCB", "alpha": 0.5, "per_arm_design": "default"}),
)

for _name, _description, _kind, _arguments in _METHOD_TABLE:
    register_method(_name, _description, requires=("smac",), kind=_kind, problem_kinds=("cash",))(
        functools.partial(run_smac_cash, **_arguments)
    )

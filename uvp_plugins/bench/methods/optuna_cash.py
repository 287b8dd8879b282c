"""CASH benchmark methods through Optuna: ``optuna-maxucb-cash`` (ours, also with a burn-in) and
``optuna-tpe-cash``.

Both run an Optuna study (in-memory storage) on a
:class:`~uvp_plugins.bench.problems.cash.CashProblem` with the define-by-run objective an Optuna
user writes for CASH: ``trial.suggest_categorical("algorithm", arms)``, then the chosen class's
parameters (their names carry the class prefix, ``"svc:C"``; distributions from
:func:`optuna_ext.to_distributions` of the class's space). The harness drives the study with
ask/tell, so its ledger stays in control: trial ``n`` is charged with
``ctx.evaluate(("optuna", n), config, 1)`` (one HPO iteration), and a run lasts
``T = ctx.total_budget`` trials.

* ``optuna-maxucb-cash``: :class:`optuna_ext.MaxUCBCashSampler` with its defaults (issue 30:
  MaxUCB with ``alpha = 1`` and an exploration floor of ``2 ln t`` pulls per class, each class
  starting with its default configuration - the problem's ``arm_defaults`` as
  ``class_defaults`` - and univariate TPE per class from there on). Before issue 30 its
  defaults were Alg. 1 with ``alpha = 0.5`` and Optuna 5's multivariate ``TPESampler`` per class
  (10 random start-up trials, no default first): the runs of ``docs/results/optuna_cash.md``
  sections 0-2 were made with that sampler (commit 969d637).
* ``optuna-maxucb-cash-burnin``: the same with ``burn_in=10`` (Alg. E.1): the first ``10 K``
  trials go round robin before MaxUCB compares the classes.
* ``optuna-maxucb-cash-tune-*``: the tuning variants of issue 30 (``TUNING_VARIANTS``;
  ``docs/results/cash_yahpo6.md``).
* ``optuna-tpe-cash``: Optuna's ``TPESampler`` with its defaults on the joint conditional space,
  the way Optuna users do CASH.

A failing evaluation (an exception of the problem other than ``BudgetExhausted``) is told as a
FAILED trial. Time per trial is recorded in two named steps (``RunContext.timed``; ``uvp-bench
report`` prints calls, mean and median): ``"ask"`` is ``study.ask()`` plus the trial's suggest
calls - where an Optuna sampler does its work (relative sampling runs at the first suggest) -
and ``"tell"`` is ``study.tell`` (the sampler's ``after_trial`` and the storage write).
"""

from __future__ import annotations

import functools
from typing import Any

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method

__all__ = ["run_optuna_cash", "suggest_cash_config"]


def suggest_cash_config(trial: Any, problem: Any) -> dict[str, Any]:
    """The objective's suggest calls: the class first, then that class's parameters."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    from optuna_ext import to_distributions

    arm = trial.suggest_categorical(problem.selector, list(problem.arms))
    config: dict[str, Any] = {problem.selector: arm}
    for name, dist in to_distributions(problem.arm_spaces[arm]).items():
        if isinstance(dist, FloatDistribution):
            config[name] = trial.suggest_float(name, dist.low, dist.high, step=dist.step,
                                               log=dist.log)
        elif isinstance(dist, IntDistribution):
            config[name] = trial.suggest_int(name, dist.low, dist.high, step=dist.step,
                                             log=dist.log)
        elif isinstance(dist, CategoricalDistribution):
            config[name] = trial.suggest_categorical(name, list(dist.choices))
        else:
            raise TypeError(f"parameter {name!r}: no suggest call for {type(dist).__name__}")
    return config


def _class_tpe_factory(seed: int, multivariate: bool, design: int) -> Any:
    """Per-class TPE samplers for the tuning variants: ``TPESampler(multivariate=...,
    n_startup_trials=1 + design)`` seeded from ``(seed, class)``; in a sequential run a class's
    sampler is asked only for that class's trials, so its proposals depend on that class alone."""
    import optuna

    from optuna_ext._sampler import _stable_seed

    def build(value: Any) -> Any:
        return optuna.samplers.TPESampler(
            seed=_stable_seed(seed, "class", str(value)), multivariate=multivariate,
            n_startup_trials=1 + design,
        )

    return build


def run_optuna_cash(
    ctx: RunContext, sampler: str, burn_in: int | str = 0, class_tpe: dict[str, Any] | None = None,
    **options: Any,
) -> None:
    """One run: an Optuna study with ``sampler`` (``"maxucb"`` or ``"tpe"``) for ``T`` trials.

    ``burn_in`` and ``options`` go to ``MaxUCBCashSampler`` (with the problem's default
    configurations as ``class_defaults``); ``class_tpe`` (``{"multivariate": bool, "design":
    int}``) replaces its per-class sampler by :func:`_class_tpe_factory`'s."""
    import optuna

    from optuna_ext import MaxUCBCashSampler

    problem: Any = ctx.problem
    for attr in ("arms", "arm_spaces", "selector"):
        if not hasattr(problem, attr):
            raise TypeError(f"problem {problem.name!r} is not a CASH problem (it has no "
                            f"{attr!r}); the optuna CASH methods need a CashProblem (kind 'cash')")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    if sampler == "maxucb":
        if class_tpe is not None:
            options["class_samplers"] = _class_tpe_factory(ctx.seed, **class_tpe)
        chosen: optuna.samplers.BaseSampler = MaxUCBCashSampler(
            problem.selector, seed=ctx.seed, burn_in=burn_in,
            class_defaults=getattr(problem, "arm_defaults", None), **options,
        )
    elif sampler == "tpe":
        chosen = optuna.samplers.TPESampler(seed=ctx.seed)
    else:
        raise ValueError(f"sampler must be 'maxucb' or 'tpe', got {sampler!r}")
    study = optuna.create_study(
        direction="maximize" if ctx.direction == "max" else "minimize",
        sampler=chosen,
        study_name=f"uvp-bench-cash-seed{ctx.seed}",
    )
    while not ctx.exhausted:
        with ctx.timed("ask"):
            trial = study.ask()
            config = suggest_cash_config(trial, problem)
        try:
            value = ctx.evaluate(("optuna", trial.number), config, 1)
        except BudgetExhausted:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return
        except Exception:  # a failing model fit: a failed trial
            with ctx.timed("tell"):
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            continue
        with ctx.timed("tell"):
            study.tell(trial, value)


register_method(
    "optuna-maxucb-cash",
    "optuna_ext.MaxUCBCashSampler with its defaults (MaxUCB picks the class, TPE per class)",
    requires=("optuna",),
    kind="ours",
    problem_kinds=("cash",),
)(lambda ctx: run_optuna_cash(ctx, "maxucb"))

#: the burn-in rounds of optuna-maxucb-cash-burnin: TPESampler's n_startup_trials, the per-class
#: start-up of the sampler before issue 30 (docs/results/optuna_cash.md, section 0)
TPE_STARTUP_TRIALS = 10

register_method(
    "optuna-maxucb-cash-burnin",
    "optuna_ext.MaxUCBCashSampler(burn_in=10): 10 round-robin rounds whose results the bandit "
    "does not judge (Alg. E.1), then its defaults",
    requires=("optuna",),
    kind="ours",
    problem_kinds=("cash",),
)(lambda ctx: run_optuna_cash(ctx, "maxucb", burn_in=TPE_STARTUP_TRIALS))

#: tuning variants of issue 30 (docs/results/cash_yahpo6.md, chosen on the declared tuning
#: tasks only): name suffix -> (description, arguments of run_optuna_cash)
TUNING_VARIANTS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("alg1-mv", "Alg. 1 (alpha 0.5), default first, per-class multivariate TPE, 10 random",
     {"class_tpe": {"multivariate": True, "design": 10}}),
    ("alg1", "Alg. 1 (alpha 0.5), default first, per-class independent TPE, 10 random",
     {"class_tpe": {"multivariate": False, "design": 10}}),
    ("mp", "alpha 0.5, default + 10 random observed per class before MaxUCB, independent TPE",
     {"class_tpe": {"multivariate": False, "design": 10}, "design": 10, "min_pulls": "design"}),
    ("d4-mp", "alpha 0.5, default + 4 random observed per class before MaxUCB, independent TPE",
     {"class_tpe": {"multivariate": False, "design": 4}, "design": 4, "min_pulls": "design"}),
    ("d2-mp", "alpha 0.5, default + 2 random observed per class before MaxUCB, independent TPE",
     {"class_tpe": {"multivariate": False, "design": 2}, "design": 2, "min_pulls": "design"}),
    ("mp-a1", "alpha 1, default + 10 random observed per class before MaxUCB, independent TPE",
     {"class_tpe": {"multivariate": False, "design": 10}, "design": 10, "min_pulls": "design",
      "alpha": 1.0}),
    ("d4-mp-a1", "alpha 1, default + 4 random observed per class before MaxUCB, independent TPE",
     {"class_tpe": {"multivariate": False, "design": 4}, "design": 4, "min_pulls": "design",
      "alpha": 1.0}),
    ("burnin", "alpha 0.5, burn-in over default + 10 random per class (Alg. E.1), independent TPE",
     {"class_tpe": {"multivariate": False, "design": 10}, "design": 10, "burn_in": "design"}),
    ("a2", "Alg. 1 with alpha 2, default first, per-class independent TPE, 10 random",
     {"class_tpe": {"multivariate": False, "design": 10}, "alpha": 2.0}),
)

for _suffix, _description, _arguments in TUNING_VARIANTS:
    register_method(
        f"optuna-maxucb-cash-tune-{_suffix}",
        f"tuning variant (issue 30): MaxUCBCashSampler, {_description}",
        requires=("optuna",), kind="ours", problem_kinds=("cash",),
    )(functools.partial(run_optuna_cash, sampler="maxucb", **_arguments))

register_method(
    "optuna-tpe-cash",
    "Optuna TPESampler (defaults) on the joint conditional CASH space",
    requires=("optuna",),
    kind="native",
    problem_kinds=("cash",),
)(lambda ctx: run_optuna_cash(ctx, "tpe"))

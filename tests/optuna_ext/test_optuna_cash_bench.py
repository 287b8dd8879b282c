"""The uvp-bench CASH methods optuna-maxucb-cash / optuna-tpe-cash drive real Optuna through the ledger."""

from __future__ import annotations

import pytest
from shared_helpers import TinyCash

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.problems.cash import SyntheticCash
from uvp_plugins.bench.registry import get_method

pytestmark = pytest.mark.optuna


def test_methods_are_registered_for_cash_problems() -> None:
    for name, kind in [("optuna-maxucb-cash", "ours"), ("optuna-tpe-cash", "native")]:
        spec = get_method(name)
        assert spec.kind == kind and spec.problem_kinds == ("cash",)
        assert spec.requires == ("optuna",)


@pytest.mark.parametrize("method", ["optuna-maxucb-cash", "optuna-tpe-cash"])
def test_every_trial_is_charged_to_the_ledger_and_timed(method: str) -> None:
    problem = SyntheticCash("2")
    ctx = RunContext(problem, total_budget=20, seed=1)
    get_method(method).run(ctx)
    ledger = ctx.ledger
    assert ledger.spent == 20 and ledger.n_evaluations == 20
    trials = [p.trial for p in ledger.curve]
    assert len(trials) == len(set(trials)) == 20  # one Optuna trial per iteration
    assert problem.optimum is not None and ledger.best >= problem.optimum
    assert len(ctx.timings["ask"]) == 20 and len(ctx.timings["tell"]) == 20
    again = RunContext(problem, total_budget=20, seed=1)
    get_method(method).run(again)  # the same seed repeats the run
    assert [p.value for p in again.ledger.curve] == [p.value for p in ledger.curve]


def test_maxucb_method_round_robins_first_and_survives_failing_fits() -> None:
    problem = TinyCash()
    ctx = RunContext(problem, total_budget=24, seed=0)
    get_method("optuna-maxucb-cash").run(ctx)
    assert ctx.ledger.spent == 24
    arms = [c["algorithm"] for c in problem.calls]
    # one credited pull per class first, in choice order: a failed fit of "bad" (x > 0.5)
    # credits nothing, so "bad" is pulled again before "nb"
    first_nb = arms.index("nb")
    assert arms[0] == "good" and set(arms[1:first_nb]) == {"bad"}
    assert all(c["x"] > 0.5 for c in problem.calls[1:first_nb - 1])
    assert arms.count("nb") == 1  # a class without hyperparameters: one trial
    assert arms.count("good") > arms.count("bad")
    crashed = [c for c in problem.calls if c["algorithm"] == "bad" and c["x"] > 0.5]
    assert len(ctx.ledger.curve) == 24 - len(crashed)  # failed fits are paid, not scored

"""Budget ledger arithmetic: continuation vs full charge, exact stop at B, anytime scores."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted, BudgetLedger
from uvp_plugins.bench.problems.synthetic import LCSynthetic, MFBranin


def test_continuation_charges_the_difference_and_restart_charges_in_full() -> None:
    led = BudgetLedger(total_budget=100, max_budget=10)
    assert led.charge("a", 3) == 3
    assert led.charge("a", 7) == 4
    assert led.charge("a", 5) == 0  # already paid up to 7
    assert led.charge("a", 10, restart=True) == 10
    assert led.spent == 17
    assert led.paid["a"] == 10


def test_a_trial_reporting_budgets_one_to_k_costs_k() -> None:
    led = BudgetLedger(total_budget=100, max_budget=10)
    for b in range(1, 8):
        led.charge("t", b)
    assert led.spent == 7


def test_budget_below_one_full_evaluation_is_refused() -> None:
    with pytest.raises(ValueError, match="below one full evaluation"):
        BudgetLedger(total_budget=5, max_budget=10)
    with pytest.raises(ValueError, match="direction"):
        BudgetLedger(total_budget=50, max_budget=10, direction="up")


def test_run_stops_exactly_at_B_and_pays_the_affordable_part_of_the_last_step() -> None:
    ctx = RunContext(LCSynthetic("0", max_budget=10), total_budget=25, seed=0)
    cfg = {"x0": 0.5, "x1": 0.5, "x2": 0.5}
    ctx.evaluate("a", cfg, 10)
    ctx.evaluate("b", cfg, 10)
    with pytest.raises(BudgetExhausted):
        ctx.evaluate("c", cfg, 10)
    assert ctx.ledger.spent == 25  # five epochs of trial c were paid and scored
    assert ctx.ledger.paid["c"] == 5
    assert ctx.ledger.curve[-1].budget == 5
    with pytest.raises(BudgetExhausted):
        ctx.evaluate("d", cfg, 1)
    assert ctx.ledger.spent == 25


def test_envelope_is_scored_over_every_epoch_paid() -> None:
    prob = MFBranin(max_budget=9)  # minimisation; curves decrease with budget
    ctx = RunContext(prob, total_budget=90, seed=0)
    cfg = {"x1": 1.0, "x2": 2.0}
    v = ctx.evaluate("t", cfg, 9)
    assert v == pytest.approx(min(prob.evaluate(cfg, b) for b in range(1, 10)))
    assert ctx.ledger.best == pytest.approx(v)


@given(
    steps=st.lists(
        st.tuples(st.integers(0, 5), st.integers(1, 12), st.booleans()), min_size=1, max_size=60
    ),
    total=st.integers(12, 80),
)
@settings(max_examples=150, deadline=None)
def test_ledger_never_exceeds_B_and_spent_equals_sum_of_costs(steps, total) -> None:  # type: ignore[no-untyped-def]
    ctx = RunContext(LCSynthetic("1", max_budget=12), total_budget=total, seed=0)
    cfg = {"x0": 0.1, "x1": 0.2, "x2": 0.3}
    for trial, budget, restart in steps:
        try:
            ctx.evaluate(trial, cfg, budget, restart=restart)
        except BudgetExhausted:
            break
        assert ctx.ledger.spent <= total
    assert ctx.ledger.spent <= total + 1e-9
    spent_curve = [p.spent for p in ctx.ledger.curve]
    assert spent_curve == sorted(spent_curve)
    bests = [p.best for p in ctx.ledger.curve]
    assert bests == sorted(bests)  # maximisation: the anytime best never decreases

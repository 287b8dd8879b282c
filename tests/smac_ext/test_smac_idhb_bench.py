"""uvp-bench methods smac-idhb / smac-hb-rerun / smac-hb: SMAC runs charged to the ledger."""

from __future__ import annotations

from collections import Counter

import pytest

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.problems.synthetic import MFBranin
from uvp_plugins.bench.registry import get_method, methods
from uvp_plugins.hyperband import HyperbandSchedule

pytestmark = pytest.mark.smac


def _run(method: str) -> RunContext:
    # multi-fidelity Branin with T = 9: R0 = 3 and R1 = 9 (integer budgets, no rounding)
    ctx = RunContext(MFBranin(max_budget=9), total_budget=1e6, seed=0)
    get_method(method).run(ctx)
    return ctx


def test_methods_are_registered_beside_smacs_hyperband() -> None:
    names = set(methods())
    assert {"smac-idhb", "smac-hb-rerun", "smac-hb", "smac-mf"} <= names
    assert get_method("smac-idhb").kind == "ours"
    assert get_method("smac-hb-rerun").kind == "native"


def test_continued_run_pays_a_fresh_hyperband_at_the_larger_budget() -> None:
    ours = _run("smac-idhb")
    # 6 evaluations at R0 = 3, then 16 new ones at R1 = 9: nothing is evaluated twice
    assert ours.ledger.n_evaluations == 22
    assert ours.ledger.spent == HyperbandSchedule(9, 3).total_budget == 78
    assert Counter(p.budget for p in ours.ledger.curve) == {1: 9, 3: 8, 9: 5}
    rerun = _run("smac-hb-rerun")  # SMAC's Hyperband: a first run at 3, then a fresh one at 9
    assert rerun.ledger.n_evaluations == 6 + 22
    assert rerun.ledger.spent > ours.ledger.spent
    fresh = _run("smac-hb")  # the fresh run alone
    assert fresh.ledger.n_evaluations == 22
    assert rerun.ledger.spent == HyperbandSchedule(3, 3).total_budget + fresh.ledger.spent

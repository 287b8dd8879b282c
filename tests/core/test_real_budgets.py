"""Real-valued Hyperband budgets mapped to the core's integer units."""

from __future__ import annotations

import doctest
import math

import pytest

import uvp_plugins.hyperband.real_budgets as real_budgets_module
from uvp_plugins.hyperband import HyperbandSchedule
from uvp_plugins.hyperband.real_budgets import deepening_steps, real_budget_units


def test_docstring_example_runs() -> None:
    assert doctest.testmod(real_budgets_module, raise_on_error=True).attempted >= 4


@pytest.mark.parametrize(
    ("lo", "hi", "eta", "s_max"),
    [(1, 27, 3, 3), (1, 243, 3, 5), (1, 26.99, 3, 2), (0.5, 40.5, 3, 4), (1, 10, 2, 3),
     (3, 81, 3, 3), (1e-3, 1.0, 10, 3), (2, 6, 3, 1)],
)
def test_rungs_are_smacs_hyperband_rungs(lo: float, hi: float, eta: int, s_max: int) -> None:
    units = real_budget_units(lo, hi, eta)
    assert units.s_max == s_max and units.max_budget == eta**s_max
    schedule = HyperbandSchedule(units.max_budget, eta)
    for bracket in schedule.brackets:
        for rung in bracket.rungs:
            # SMAC's Hyperband: max_budget * eta**-(s - i); never below min_budget
            k = bracket.s - rung.index
            assert math.isclose(units.to_real(rung.budget), hi * eta**-k, rel_tol=1e-12)
            assert units.to_real(rung.budget) >= lo * (1 - 1e-9)
            assert units.to_core(units.to_real(rung.budget)) == rung.budget


def test_deepening_steps() -> None:
    assert deepening_steps(9, 9, 3) == 0
    assert deepening_steps(9, 27, 3) == 1
    assert deepening_steps(100 / 3, 900.0000000001, 3) == 3
    with pytest.raises(ValueError, match=r"max_budget = 9 \* 3\*\*k .* got 20"):
        deepening_steps(9, 20, 3)
    with pytest.raises(ValueError, match="got 3"):
        deepening_steps(9, 3, 3)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="min_budget must be a float > 0"):
        real_budget_units(0, 9, 3)
    with pytest.raises(ValueError, match=r"max_budget must be >= eta \* min_budget = 3"):
        real_budget_units(1, 2.5, 3)
    with pytest.raises(ValueError, match="max_budget must be a finite float"):
        real_budget_units(1, float("inf"), 3)
    with pytest.raises(ValueError, match="eta must be an int >= 2"):
        real_budget_units(1, 9, 1)

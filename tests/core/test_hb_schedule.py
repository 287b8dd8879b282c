"""Hyperband bracket arithmetic (Li et al., 2018) with integers only."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.hyperband import HyperbandSchedule, deepening_ladder, integer_log, power_of

# Li et al. (JMLR 2018), Table 1: R = 81, eta = 3, one (n_i, r_i) list per bracket s = 4..0
LI_TABLE_R81_ETA3 = [
    [(81, 1), (27, 3), (9, 9), (3, 27), (1, 81)],
    [(34, 3), (11, 9), (3, 27), (1, 81)],
    [(15, 9), (5, 27), (1, 81)],
    [(8, 27), (2, 81)],
    [(5, 81)],
]


def test_li_et_al_table_r81_eta3() -> None:
    sched = HyperbandSchedule(81, eta=3)
    assert sched.s_max == 4
    assert [[(r.n, r.budget) for r in b.rungs] for b in sched.brackets] == LI_TABLE_R81_ETA3
    assert [b.s for b in sched.brackets] == [4, 3, 2, 1, 0]
    assert sched.bracket_budget == 5 * 81


def test_r243_eta3_has_six_brackets_where_float_log_loses_one() -> None:
    assert math.floor(math.log(243, 3)) == 4  # the float pitfall the reference code hits
    sched = HyperbandSchedule(243, eta=3)
    assert sched.s_max == 5
    assert len(sched.brackets) == 6
    # n_s = ceil(6 * 3^s / (s + 1)), r_s = 243 / 3^s
    assert [b.n for b in sched.brackets] == [243, 98, 41, 18, 9, 6]
    assert [b.min_budget for b in sched.brackets] == [1, 3, 9, 27, 81, 243]


def _reference(R: int, eta: int, rmin: int) -> list[list[tuple[int, int]]]:
    """Li et al.'s formulas with exact rationals: s_max = floor(log_eta(R / rmin)),
    n_s = ceil((s_max+1) eta^s / (s+1)), n_i = floor(n_s eta^-i), r_i = floor(R eta^(i-s))."""
    ratio = Fraction(R, rmin)
    s_max = 0
    while Fraction(eta) ** (s_max + 1) <= ratio:
        s_max += 1
    out = []
    for s in range(s_max, -1, -1):
        n = math.ceil(Fraction((s_max + 1) * eta**s, s + 1))
        out.append(
            [
                (math.floor(Fraction(n, eta**i)), math.floor(Fraction(R, eta ** (s - i))))
                for i in range(s + 1)
            ]
        )
    return out


@given(
    eta=st.integers(2, 6),
    rmin=st.integers(1, 4),
    mult=st.integers(1, 400),
)
@settings(max_examples=150, deadline=None)
def test_schedule_matches_li_formulas(eta: int, rmin: int, mult: int) -> None:
    R = eta * rmin + mult - 1
    sched = HyperbandSchedule(R, eta=eta, min_budget=rmin)
    ref = _reference(R, eta, rmin)
    assert [[(r.n, r.budget) for r in b.rungs] for b in sched.brackets] == ref
    for b in sched.brackets:
        assert b.rungs[-1].budget == R
        assert all(r.budget >= rmin for r in b.rungs)
        assert all(r.n >= 1 for r in b.rungs)
        # Successive Halving keeps floor(n_i / eta) configurations
        assert all(b.rungs[i + 1].n == b.rungs[i].n // eta for i in range(b.s))
        # each rung spends at most n_s R / eta^s (Li et al.'s bracket budget (s + 1) n_s r_s)
        assert b.cost <= Fraction((b.s + 1) * b.n * R, eta**b.s)
    assert sched.total_budget == sum(n * r for br in ref for n, r in br)


@given(eta=st.integers(2, 5), k=st.integers(1, 6), rmin=st.integers(1, 3))
@settings(max_examples=60, deadline=None)
def test_powers_of_eta_give_exact_geometric_budgets(eta: int, k: int, rmin: int) -> None:
    R = rmin * eta**k
    sched = HyperbandSchedule(R, eta=eta, min_budget=rmin)
    assert sched.s_max == k
    for b in sched.brackets:
        assert b.min_budget * eta**b.s == R
        assert [r.budget for r in b.rungs] == [b.min_budget * eta**i for i in range(b.s + 1)]


@given(eta=st.integers(2, 5), R=st.integers(2, 2000))
@settings(max_examples=100, deadline=None)
def test_deepening_keeps_min_budgets_and_adds_one_rung(eta: int, R: int) -> None:
    if R < eta:
        return
    old, new = HyperbandSchedule(R, eta), HyperbandSchedule(eta * R, eta)
    assert new.s_max == old.s_max + 1
    for pos, ob in enumerate(old.brackets):
        nb = new.brackets[pos]
        assert nb.s == ob.s + 1
        assert [r.budget for r in nb.rungs[:-1]] == [r.budget for r in ob.rungs]
        assert nb.rungs[-1].budget == eta * R
        assert nb.n >= ob.n  # pools only grow
    assert new.brackets[-1].s == 0 and new.brackets[-1].min_budget == eta * R


def test_continuation_budget_counts_each_configuration_once_at_its_last_budget() -> None:
    sched = HyperbandSchedule(27, eta=3)
    expected = 0
    for b in sched.brackets:
        for i, r in enumerate(b.rungs):
            stopped_here = r.n - (b.rungs[i + 1].n if i < b.s else 0)
            expected += stopped_here * r.budget
    assert sched.continuation_budget == expected
    assert sched.continuation_budget < sched.total_budget
    assert sched.n_configs == sum(b.n for b in sched.brackets)


@given(x=st.integers(1, 10**9), base=st.integers(2, 10))
def test_integer_log(x: int, base: int) -> None:
    s = integer_log(x, base)
    assert base**s <= x < base ** (s + 1)


@pytest.mark.parametrize(
    ("args", "exc", "word"),
    [
        ((2, 3, 1), ValueError, "max_budget"),  # max_budget < eta
        ((5, 3, 2), ValueError, "max_budget"),  # max_budget < eta * min_budget
        ((16, 1, 1), ValueError, "eta"),
        ((16, 2, 0), ValueError, "min_budget"),
        ((16, 2.5, 1), ValueError, "eta must be an int >= 2, got 2.5"),
        (("16", 2, 1), TypeError, "max_budget"),
        ((True, 2, 1), TypeError, "max_budget"),
    ],
)
def test_bad_input(args: tuple, exc: type, word: str) -> None:
    with pytest.raises(exc, match=word):
        HyperbandSchedule(*args)


def test_integral_floats_are_ints_as_everywhere_else() -> None:
    sched = HyperbandSchedule(16.0, eta=2.0)
    assert (sched.max_budget, sched.eta, sched.min_budget) == (16, 2, 1)
    assert type(sched.max_budget) is int and sched.brackets == HyperbandSchedule(16, eta=2).brackets


def test_budget_accessors_validate() -> None:
    sched = HyperbandSchedule(16, eta=2)
    assert sched.budget(4, 0) == 1 and sched.pool_size(4) == 16
    with pytest.raises(ValueError, match="bracket s"):
        sched.budget(5, 0)
    with pytest.raises(ValueError, match="rung index"):
        sched.budget(2, 3)


# ------------------------------------------------------------------ deepening ladder
def test_deepening_ladder_inserts_intermediate_levels() -> None:
    assert deepening_ladder([9, 81], eta=3) == [9, 27, 81]
    assert deepening_ladder(9, eta=3) == [9]
    assert deepening_ladder([4, 16], eta=2) == [4, 8, 16]
    assert deepening_ladder(27.0, eta=3) == [27]  # an integral float is an int
    # a run saved at R = 9 asked for 81: starts at 9, the smaller requests are dropped
    assert deepening_ladder([3, 81], eta=3, start=9) == [9, 27, 81]
    assert deepening_ladder(9, eta=3, start=9) == [9]


@given(eta=st.integers(2, 5), r0=st.integers(1, 50), ks=st.lists(st.integers(1, 3), max_size=3))
def test_deepening_ladder_is_every_power_in_between(eta: int, r0: int, ks: list[int]) -> None:
    r0 = max(r0, eta)
    requested = [r0]
    for k in ks:
        requested.append(requested[-1] * eta**k)
    ladder = deepening_ladder(requested, eta)
    assert ladder == [r0 * eta**j for j in range(sum(ks) + 1)]
    assert set(requested) <= set(ladder)


def test_power_of() -> None:
    assert [power_of(v, 3) for v in (1, 3, 9, 27, 6, 0, 18)] == [0, 1, 2, 3, None, None, None]


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "match"),
    [
        (([9, 18], 3), {}, ValueError, "powers of eta=3"),
        (([9, 9], 3), {}, ValueError, "powers of eta=3"),
        (([], 3), {}, ValueError, "max_budget must not be empty"),
        ((9.5, 3), {}, ValueError, "max_budget must be an int >= 1, got 9.5"),
        ((float("nan"), 3), {}, ValueError, "max_budget must be an int >= 1, got nan"),
        ((2, 3), {}, ValueError, "max_budget must be >= eta=3"),
        ((9, float("nan")), {}, ValueError, "eta must be an int >= 2, got nan"),
        ((9, 1), {}, ValueError, "eta must be an int >= 2, got 1"),
        ((True, 3), {}, TypeError, "max_budget"),
        (
            ([9, 18], 3),
            {"name": "max_t", "eta_name": "reduction_factor"},
            ValueError,
            "max_t values must grow by powers of reduction_factor=3",
        ),
    ],
)
def test_deepening_ladder_bad_input(args: tuple, kwargs: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        deepening_ladder(*args, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"max_budget": float("nan")}, ValueError, "max_budget must be an int >= 1, got nan"),
        ({"max_budget": 9, "eta": float("nan")}, ValueError, "eta must be an int >= 2, got nan"),
        ({"max_budget": 9, "min_budget": float("nan")}, ValueError, "min_budget"),
        ({"max_budget": 9, "seed": -1}, ValueError, "seed must be an int >= 0, got -1"),
        ({"max_budget": 9, "seed": float("nan")}, TypeError, "seed must be an int >= 0, got nan"),
        ({"max_budget": 9, "seed": True}, TypeError, "seed must be an int >= 0, got True"),
    ],
)
def test_nan_budgets_and_negative_seeds_name_the_argument(kwargs: dict, exc: type, match: str) -> None:
    """Issue 19, item 6, for Hyperband: every bad value fails at construction, naming it."""
    from uvp_plugins.hyperband import IterativeDeepeningHyperband

    with pytest.raises(exc, match=match):
        IterativeDeepeningHyperband(**kwargs)

"""The shared argument checks: accepted values pass through, others name the argument and range."""

from __future__ import annotations

import math

import numpy as np
import pytest

from uvp_plugins.validation import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_reported_number,
    check_reported_progress,
    check_reported_step,
    check_seed,
)


def test_check_int_accepts_integral_values_and_names_the_range() -> None:
    assert check_int("k", 3, low=1) == 3
    assert check_int("k", np.int64(4), low=1, high=9) == 4
    assert check_int("k", 5.0, low=1) == 5
    with pytest.raises(ValueError, match=r"k must be an int >= 1, got 0"):
        check_int("k", 0, low=1)
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 3\]"):
        check_int("k", 4, low=1, high=3)
    for bad in (True, "3", None):
        with pytest.raises(TypeError, match="k must be an int"):
            check_int("k", bad, low=1)
    for bad in (2.5, math.nan):
        with pytest.raises(ValueError, match="k must be an int"):
            check_int("k", bad, low=1)


def test_check_float_refuses_nan_inf_and_out_of_range_values() -> None:
    assert check_float("delta", 0.5, 0.0, 1.0, low_open=True, high_open=True) == 0.5
    for bad in (0.0, 1.0, -0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match=r"delta must be a (finite )?float in \(0, 1\)"):
            check_float("delta", bad, 0.0, 1.0, low_open=True, high_open=True)
    assert check_float("eps", math.inf, low=0.0, low_open=True, allow_inf=True) == math.inf
    with pytest.raises(TypeError, match="total_budget must be a float"):
        check_float("total_budget", "10", low=1.0)
    with pytest.raises(TypeError):
        check_float("x", False)


def test_check_seed_refuses_negative_and_non_integers() -> None:
    assert check_seed("seed", 0) == 0
    assert check_seed("seed", None, allow_none=True) is None
    with pytest.raises(ValueError, match=r"seed must be an int >= 0 or None, got -1"):
        check_seed("seed", -1, allow_none=True)
    with pytest.raises(TypeError, match=r"seed must be an int >= 0, got None"):
        check_seed("seed", None)
    with pytest.raises(TypeError):
        check_seed("seed", 1.5)
    with pytest.raises(TypeError):
        check_seed("seed", True)


def test_check_choice_and_bool() -> None:
    assert check_choice("variant", "efficient", ("efficient", "discarding")) == "efficient"
    with pytest.raises(ValueError, match="variant must be one of 'efficient', 'discarding'; got 'x'"):
        check_choice("variant", "x", ("efficient", "discarding"))
    with pytest.raises(ValueError):
        check_choice("flag", True, (1, 0))
    assert check_bool("enhanced", False) is False
    with pytest.raises(TypeError, match="enhanced must be a bool"):
        check_bool("enhanced", 1)


def test_reported_values_name_the_key_the_reporter_and_the_accepted_type() -> None:
    assert check_reported_number("loss", 0.5, "trial a") == 0.5
    assert check_reported_number("loss", np.float32(0.5), "trial a") == 0.5
    assert check_reported_number("loss", 3, "trial a") == 3.0
    assert math.isnan(check_reported_number("loss", math.nan, "trial a"))  # the algorithm decides
    for bad in ("0.5", None, True, [1.0]):
        with pytest.raises(TypeError, match=r"result\['loss'\] of trial a must be a real number"):
            check_reported_number("loss", bad, "trial a")
    assert check_reported_step("it", np.int64(3), "trial a") == 3
    assert check_reported_step("it", 4.0, "trial a") == 4
    for bad in (2.5, -1, math.nan, math.inf):
        with pytest.raises(ValueError, match=r"result\['it'\] of trial a must be an int >= 0"):
            check_reported_step("it", bad, "trial a")
    for bad in ("3", None, False):
        with pytest.raises(TypeError, match=r"result\['it'\] of trial a must be an int >= 0"):
            check_reported_step("it", bad, "trial a")
    assert check_reported_progress("t", 2.5, "trial a") == 2.5
    for bad in (-0.5, math.nan, math.inf):
        with pytest.raises(ValueError, match=r"must be a finite real number >= 0"):
            check_reported_progress("t", bad, "trial a")
    with pytest.raises(TypeError, match=r"result\['t'\] of trial a must be a finite real"):
        check_reported_progress("t", "1", "trial a")

"""Argument checks shared by every core object and adapter: one message format, one place.

Every check names the argument and the accepted range and raises early (at construction), as
scikit-learn and Optuna do: ``TypeError`` for a value of the wrong kind, ``ValueError`` for a value
of the right kind outside its range. ``bool`` is never accepted where a number is expected
(``True`` is an ``int`` in Python, but never what the caller meant).

Example:
    >>> check_int("n_candidates", 1000, low=1)
    1000
    >>> check_seed("seed", None, allow_none=True) is None
    True
    >>> check_float("delta", 0.1, low=0.0, high=1.0, low_open=True, high_open=True)
    0.1
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Collection
from typing import Any, TypeVar

__all__ = [
    "check_int",
    "check_float",
    "check_seed",
    "check_choice",
    "check_bool",
    "check_reported_number",
    "check_reported_step",
    "check_reported_progress",
    "is_finite_number",
]

_T = TypeVar("_T")

#: seeds are fed to ``numpy.random.SeedSequence`` / ``default_rng``: non-negative integers
SEED_RANGE = "an int >= 0"


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python ``int`` in ``[low, high]`` (either bound may be ``None``).

    Integral floats (``4.0``) are accepted; a non-integral number (``2.5``, ``nan``) is a
    ``ValueError``; strings, ``None`` and bools are a ``TypeError``.
    """
    rng = _int_range(low, high)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and not _is_int(value):
        raise ValueError(f"{name} must be {rng}, got {value!r}")
    if not _is_int(value):
        raise TypeError(f"{name} must be {rng}, got {value!r}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{name} must be {rng}, got {value!r}")
    return v


def _int_range(low: int | None, high: int | None) -> str:
    bounds = _bounds(low, high, False, False, str)
    return f"an int {bounds}" if bounds else "an int"


def check_float(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """``value`` as a finite ``float`` in the interval given by ``low``/``high`` (open or closed
    ends); ``NaN`` is always refused, infinities unless ``allow_inf``."""
    interval = _float_range(low, high, low_open, high_open)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a float {interval}, got {value!r}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite float {interval}, got {value!r}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name} must be a float {interval}, got {value!r}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"{name} must be a float {interval}, got {value!r}")
    return v


def _float_range(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    return _bounds(low, high, low_open, high_open, lambda x: f"{x:g}")


def _bounds(
    low: Any, high: Any, low_open: bool, high_open: bool, show: Callable[[Any], str]
) -> str:
    """The accepted range in words, for every check's message: ``in [low, high]`` (brackets
    open or closed), ``>= low`` / ``> low``, ``<= high`` / ``< high``, or ``""`` unbounded."""
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{show(low)}, {show(high)}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {show(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {show(high)}"
    return ""


def check_seed(name: str, value: Any, *, allow_none: bool = False) -> int | None:
    """A random seed: an int ``>= 0`` (what ``numpy.random.default_rng`` accepts), or ``None``
    when ``allow_none``."""
    if value is None and allow_none:
        return None
    accepted = f"{SEED_RANGE} or None" if allow_none else SEED_RANGE
    if not _is_int(value):
        raise TypeError(f"{name} must be {accepted}, got {value!r}")
    if int(value) < 0:
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    return int(value)


def check_choice(name: str, value: _T, choices: Collection[_T]) -> _T:
    """``value`` if it is one of ``choices`` (compared with ``==``, bools never match ints)."""
    for c in choices:
        if type(c) is type(value) and c == value:
            return value
    shown = ", ".join(repr(c) for c in choices)
    raise ValueError(f"{name} must be one of {shown}; got {value!r}")


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is a ``bool`` (not a truthy number or string)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool (True or False), got {value!r}")
    return value


#: what a trial may report as a metric value or a progress counter
REPORTED_NUMBER = "a real number (int or float)"


def check_reported_number(name: str, value: Any, where: str) -> float:
    """A value a trial reported (a metric, a progress counter) as a ``float``.

    ``name`` is the value's key, ``where`` says who reported it (e.g. ``"trial 3f2a_00001"``).
    Numbers of any kind (Python, numpy) are accepted, also ``nan`` and infinities (what those
    mean is each algorithm's decision); strings, ``None``, bools and other objects are a
    ``TypeError`` naming the key, the reporter and the accepted type.

    Example:
        >>> check_reported_number("loss", 0.25, "trial t1")
        0.25
        >>> check_reported_number("loss", "bad", "trial t1")
        Traceback (most recent call last):
        ...
        TypeError: result['loss'] of trial t1 must be a real number (int or float), got 'bad' (str)
    """
    if type(value) is float:  # the common case, without the ABC check
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"result[{name!r}] of {where} must be {REPORTED_NUMBER}, got {value!r} "
            f"({type(value).__name__})"
        )
    return float(value)


def check_reported_step(name: str, value: Any, where: str) -> int:
    """A step counter a trial reported (its integer progress, e.g. a training iteration), as an
    ``int >= 0``; integral floats (``3.0``) are accepted. Anything else is a ``TypeError``
    (not a number) or ``ValueError`` (``2.5``, ``-1``, ``nan``) naming the key, the reporter
    and the accepted values.

    Example:
        >>> check_reported_step("training_iteration", 3.0, "trial t1")
        3
        >>> check_reported_step("time_total_s", 2.5, "trial t1")
        Traceback (most recent call last):
        ...
        ValueError: result['time_total_s'] of trial t1 must be an int >= 0 (a step counter), got 2.5
    """
    if type(value) is int and value >= 0:  # the common case
        return value
    label = f"result[{name!r}] of {where} must be an int >= 0 (a step counter), got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{label} ({type(value).__name__})")
    v = float(value)
    if not (math.isfinite(v) and v.is_integer() and v >= 0):
        raise ValueError(label)
    return int(v)


def check_reported_progress(name: str, value: Any, where: str) -> float:
    """A trial's reported progress (a training budget: iterations, epochs, seconds) as a finite
    ``float >= 0``; ``TypeError`` (not a number) or ``ValueError`` (negative, ``nan``, infinite)
    naming the key, the reporter and the accepted values.

    Example:
        >>> check_reported_progress("time_total_s", 12.5, "trial t1")
        12.5
        >>> check_reported_progress("epoch", "3", "trial t1")
        Traceback (most recent call last):
        ...
        TypeError: result['epoch'] of trial t1 must be a finite real number >= 0 (its progress), got '3' (str)
    """
    label = f"result[{name!r}] of {where} must be a finite real number >= 0 (its progress), got"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{label} {value!r} ({type(value).__name__})")
    v = float(value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{label} {value!r}")
    return v


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is a finite real number (Python or numpy scalar, not a ``bool``): the
    one test of "a cost or value we can use" (a crashed or capped run reports ``inf``/``nan``,
    a multi-objective one a list).

    Example:
        >>> is_finite_number(0.25), is_finite_number(float("inf")), is_finite_number([0.1, 0.2])
        (True, False, False)
    """
    if type(value) is float:  # the common case, without the ABC check
        return math.isfinite(value)
    return (
        isinstance(value, numbers.Real) and not isinstance(value, bool)
        and math.isfinite(float(value))
    )

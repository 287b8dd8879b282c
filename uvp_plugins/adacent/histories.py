"""Learning-curve histories from sparse, possibly non-finite ``(step, value)`` observations.

The predictors of :mod:`uvp_plugins.adacent.curves` take a *dense* history ``H`` (values at consecutive
budgets ``1..|H|``, Bateni et al., Alg. 6) while frameworks report values at arbitrary
non-negative integer steps (every epoch, every fifth epoch, starting at 0 or 1) and sometimes
report ``nan``/``inf``. This module turns such observations into what the core expects:

* **Non-finite values are ignored** (a diverged or failed measurement carries no information
  about the curve; the monotone envelope ``A(x, b) := max_{t <= b} A(x, t)`` of the paper, §4,
  is unaffected by them).
* :func:`dense_history` linearly interpolates the finite observations onto every integer step
  between the first and the last reported step. For a concave curve (Assumption 3.10) the chord
  between two reported steps lies below the curve and its slope is at least the slope of the
  curve after the later step, so the last-slope predictor stays optimistic (Lemma 3.11) on
  sparse reports. The predictors are then asked for ``max_budget - last_step`` more steps, so
  the result does not depend on whether steps start at 0 or 1.
* :func:`value_at_depth` is the envelope value at an exploration depth ``t`` (Alg. 8:
  ``T_explore = floor(delta T)``): the best finite value reported at a step ``<= t``; a curve
  that has not reached ``t`` yet gives its best value so far (its latest envelope value).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["finite_observations", "dense_history", "value_at", "value_at_depth", "final_value", "best_value"]


def finite_observations(intermediate: Mapping[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """Steps and values of the finite observations, sorted by step."""
    items = sorted((int(s), float(v)) for s, v in intermediate.items())
    steps = np.array([s for s, v in items if np.isfinite(v)], dtype=np.int64)
    values = np.array([v for s, v in items if np.isfinite(v)], dtype=float)
    return steps, values


def dense_history(intermediate: Mapping[int, float]) -> tuple[np.ndarray, int]:
    """The dense history and its last step.

    Args:
        intermediate: ``{step: value}`` with integer steps ``>= 0``.

    Returns:
        ``(h, last_step)``: ``h[i]`` is the (linearly interpolated) value at step
        ``first_step + i`` for ``i = 0 .. last_step - first_step``; an empty array and ``-1`` if
        no value is finite.
    """
    steps, values = finite_observations(intermediate)
    if steps.size == 0:
        return np.empty(0), -1
    grid = np.arange(int(steps[0]), int(steps[-1]) + 1)
    return np.interp(grid, steps, values), int(steps[-1])


def value_at(curve: Mapping[int, float], step: float, maximize: bool = True) -> float:
    """A trial's envelope value at ``step``: the best finite value it reported at a step
    ``<= step`` (``nan`` if it reported none there).

    Example:
        >>> value_at({2: 0.5, 4: 0.4, 8: 0.9}, 5), value_at({2: 0.5}, 1)
        (0.5, nan)
    """
    steps, values = finite_observations(curve)
    early = values[steps <= step]
    if early.size == 0:
        return float("nan")
    return float(early.max() if maximize else early.min())


def value_at_depth(intermediate: Mapping[int, float], depth: int, maximize: bool = True) -> float:
    """Envelope value at step ``depth`` (best finite value at steps ``<= depth``).

    If no finite value was reported at a step ``<= depth`` but later ones were, the value at the
    earliest reported step is returned (the closest information to the exploration depth).
    Returns ``nan`` if no reported value is finite.
    """
    v = value_at(intermediate, depth, maximize)
    if v == v:  # not nan
        return v
    _, values = finite_observations(intermediate)
    return float(values[0]) if values.size else float("nan")


def final_value(curve: Mapping[int, float], final: float | None, maximize: bool = True) -> float:
    """A complete trial's final value: ``final`` if finite, else its curve's envelope value at
    the last step (``nan`` without either)."""
    if final is not None and np.isfinite(float(final)):
        return float(final)
    if curve:
        return value_at(curve, max(int(s) for s in curve), maximize)
    return float("nan")


def best_value(values: np.ndarray | list[float], maximize: bool = True) -> float:
    """Best finite value in the direction (``nan`` if none is finite)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan")
    return float(v.max() if maximize else v.min())

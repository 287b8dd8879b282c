"""Hyperband on real-valued budgets: the integer units the core schedule runs in.

Frameworks such as SMAC3 give budgets as floats (``Scenario(min_budget=0.5, max_budget=40.5)``)
and place Hyperband's rungs at ``max_budget * eta**-k`` for ``k = 0 .. s_max`` with
``s_max = floor(log_eta(max_budget / min_budget))`` (Li et al., 2018; SMAC's ``Hyperband``). The
core (:class:`~uvp_plugins.hyperband.HyperbandSchedule`,
:class:`~uvp_plugins.hyperband.IterativeDeepeningHyperband`) works on integer budgets. The exact
correspondence is

* core maximum budget ``R = eta**s_max`` (minimum budget 1), so every core rung budget is a power
  of ``eta`` and no rounding happens;
* one core unit is ``unit = max_budget / R`` of the framework's budget (``unit >= min_budget``):
  core budget ``r`` is framework budget ``r * unit``.

Deepening (Brandt et al., Alg. 1: ``R <- eta R``) keeps the unit: a run continued with
``max_budget * eta**k`` has core maximum ``R * eta**k``. :func:`deepening_steps` finds ``k`` for a
new real ``max_budget`` (or says why there is none).

``s_max`` is computed with a relative tolerance of ``1e-9`` instead of ``numpy.log`` ratios, so
``min_budget=1, max_budget=243, eta=3`` has ``s_max = 5`` (the float ``log(243) / log(3)`` is
``4.999...``, which loses a bracket; see ``shared/papers/README.md``).

Example:
    >>> units = real_budget_units(min_budget=1.0, max_budget=100.0, eta=3)
    >>> units.s_max, units.max_budget, round(units.unit, 4)
    (4, 81, 1.2346)
    >>> [round(units.to_real(3**i), 3) for i in range(5)]     # SMAC's Hyperband budgets
    [1.235, 3.704, 11.111, 33.333, 100.0]
    >>> deepening_steps(current_max=100.0, new_max=900.0, eta=3)
    2
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from uvp_plugins.validation import check_float, check_int

__all__ = ["RealBudgetUnits", "real_budget_units", "deepening_steps"]

#: relative tolerance for comparing real budgets (``max / min`` ratios, ``eta**k`` factors)
REL_TOL = 1e-9


@dataclass(frozen=True)
class RealBudgetUnits:
    """Integer core budgets for a real budget range (see the module docstring).

    Attributes:
        s_max: Hyperband's ``s_max`` (number of rungs of the largest bracket minus one).
        max_budget: the core's maximum budget ``R = eta**s_max``.
        unit: framework budget of one core unit (``real_max_budget / R``).
        eta: the reduction factor.
    """

    s_max: int
    max_budget: int
    unit: float
    eta: int

    def to_real(self, budget: int) -> float:
        """The framework's budget of core budget ``budget``."""
        return float(budget * self.unit)

    def to_core(self, budget: float) -> int:
        """The core budget of a framework budget (the nearest multiple of the unit)."""
        return int(round(float(budget) / self.unit))


def real_budget_units(min_budget: float, max_budget: float, eta: int) -> RealBudgetUnits:
    """The core's integer units for real budgets ``[min_budget, max_budget]``.

    Raises:
        TypeError / ValueError: a budget is not a finite float ``> 0``, ``eta`` is not an int
            ``>= 2``, or ``max_budget < eta * min_budget`` (Hyperband needs two rungs).
    """
    lo = check_float("min_budget", min_budget, low=0.0, low_open=True)
    hi = check_float("max_budget", max_budget, low=0.0, low_open=True)
    e = check_int("eta", eta, low=2)
    if hi < e * lo * (1.0 - REL_TOL):
        raise ValueError(
            f"max_budget must be >= eta * min_budget = {e * lo:g} (Hyperband needs at least two "
            f"rungs), got min_budget={lo:g}, max_budget={hi:g}"
        )
    s = 0
    while lo * e ** (s + 1) <= hi * (1.0 + REL_TOL):
        s += 1
    r = e**s
    return RealBudgetUnits(s_max=s, max_budget=r, unit=hi / r, eta=e)


def deepening_steps(current_max: float, new_max: float, eta: int) -> int:
    """``k >= 0`` with ``new_max == current_max * eta**k`` (relative tolerance ``1e-9``).

    Raises:
        ValueError: ``new_max`` is smaller than ``current_max`` or not ``eta**k`` times it.
    """
    cur = check_float("current_max", current_max, low=0.0, low_open=True)
    new = check_float("new_max", new_max, low=0.0, low_open=True)
    e = check_int("eta", eta, low=2)
    ratio = new / cur
    k = max(0, round(math.log(ratio) / math.log(e))) if ratio > 0 else 0
    if ratio < 1.0 - REL_TOL or not math.isclose(ratio, float(e**k), rel_tol=REL_TOL):
        multiples = ", ".join(f"{cur * e**i:g}" for i in range(1, 4))
        raise ValueError(
            f"a run at max_budget={cur:g} can only be continued with max_budget = {cur:g} * "
            f"{e}**k for an integer k >= 0 (ID-HB deepens by R <- eta R), e.g. {cur:g}, "
            f"{multiples}; got {new:g}"
        )
    return k

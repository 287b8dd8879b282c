"""Budget ledger in fidelity units, and the anytime score bookkeeping of one benchmark run.

Protocol (the AdaCent paper's, ``shared/anchors/lcbench.md``): a run has a total budget ``B`` in
fidelity units (epochs, trainsize levels, iterations). Every evaluation of a configuration at
budget ``b`` is *paid* before its value is seen:

* **continuation** (default): a trial that already paid up to ``b0`` and now reports ``b > b0``
  pays ``b - b0`` (training is incremental; a trial reporting budgets 1..k costs k);
* **full charge** (``restart=True``): a method that retrains from scratch at ``b`` pays ``b``
  again, whatever it paid before.

When the remaining budget cannot pay a step, the run stops *exactly* at ``B``: with continuation
the trial trains as far as the budget allows (the epochs up to ``b0 + remaining`` are paid and
scored), and :class:`BudgetExhausted` is raised. Every paid value enters the anytime curve
``score(spent) = best value among all paid evaluations``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

__all__ = ["BudgetExhausted", "BudgetLedger", "AnytimePoint"]


class BudgetExhausted(RuntimeError):
    """Raised when a run's total budget is used up; the method must stop."""


@dataclass(frozen=True)
class AnytimePoint:
    spent: float
    best: float
    value: float
    trial: str
    budget: int


@dataclass
class BudgetLedger:
    """Charges evaluations against a total budget and records the anytime curve.

    Args:
        total_budget: ``B`` in fidelity units (must be at least ``max_budget``, one full evaluation).
        max_budget: ``T``, the largest fidelity of the problem.
        direction: ``"max"`` if higher values are better, ``"min"`` otherwise.
    """

    total_budget: float
    max_budget: int
    direction: str = "max"
    spent: float = 0.0
    n_evaluations: int = 0
    paid: dict[Hashable, int] = field(default_factory=dict)
    curve: list[AnytimePoint] = field(default_factory=list)
    best: float = field(default=math.nan)
    best_trial: str | None = None
    eval_seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.direction not in ("max", "min"):
            raise ValueError(f"direction must be 'max' or 'min', got {self.direction!r}")
        if int(self.max_budget) != self.max_budget or self.max_budget < 1:
            raise ValueError(f"max_budget must be a positive int, got {self.max_budget!r}")
        if not (self.total_budget >= self.max_budget):
            raise ValueError(
                f"total_budget={self.total_budget} is below one full evaluation "
                f"(max_budget={self.max_budget}); use a total budget >= max_budget"
            )

    @property
    def remaining(self) -> float:
        return self.total_budget - self.spent

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 1e-9

    def _better(self, a: float, b: float) -> bool:
        if math.isnan(b):
            return True
        return a > b if self.direction == "max" else a < b

    def affordable_budget(self, trial: Hashable, budget: int, restart: bool = False) -> int:
        """The largest budget <= ``budget`` this trial can still be paid for (0: none)."""
        base = 0 if restart else self.paid.get(trial, 0)
        if budget <= base and not restart:
            return budget
        return int(min(budget, base + math.floor(self.remaining + 1e-9)))

    def charge(self, trial: Hashable, budget: int, restart: bool = False) -> float:
        """Pay for evaluating ``trial`` at ``budget``; returns the cost charged.

        Raises:
            BudgetExhausted: if not even part of the step can be paid.
        """
        if int(budget) != budget or budget < 1 or budget > self.max_budget:
            raise ValueError(f"budget must be an int in [1, {self.max_budget}], got {budget!r}")
        base = 0 if restart else self.paid.get(trial, 0)
        cost = float(max(0, budget - base))
        if cost > self.remaining + 1e-9:
            raise BudgetExhausted(
                f"budget exhausted: {self.spent:g} of {self.total_budget:g} spent, step costs {cost:g}"
            )
        self.spent += cost
        self.paid[trial] = max(self.paid.get(trial, 0), int(budget)) if not restart else int(budget)
        self.n_evaluations += 1
        return cost

    def record(self, trial: Hashable, budget: int, value: float) -> None:
        """Enter a paid value into the anytime curve."""
        if not math.isfinite(value):
            return
        if self._better(value, self.best):
            self.best = float(value)
            self.best_trial = str(trial)
        self.curve.append(AnytimePoint(self.spent, self.best, float(value), str(trial), int(budget)))

    def pay_and_evaluate(
        self,
        trial: Hashable,
        budget: int,
        evaluate: Callable[[int], float],
        restart: bool = False,
    ) -> float:
        """Charge, then evaluate and record. Partial steps at the end of the budget are paid and
        recorded up to the affordable budget before :class:`BudgetExhausted` is raised."""
        affordable = self.affordable_budget(trial, budget, restart)
        base = 0 if restart else self.paid.get(trial, 0)
        if affordable < budget:
            if affordable > base:
                self.charge(trial, affordable, restart)
                t0 = time.perf_counter()
                v = evaluate(affordable)
                self.eval_seconds += time.perf_counter() - t0
                self.record(trial, affordable, v)
            raise BudgetExhausted(
                f"budget exhausted at {self.spent:g} of {self.total_budget:g} "
                f"(step to budget {budget} of trial {trial!r} not affordable)"
            )
        self.charge(trial, budget, restart)
        t0 = time.perf_counter()
        v = evaluate(budget)
        self.eval_seconds += time.perf_counter() - t0
        self.record(trial, budget, v)
        return v

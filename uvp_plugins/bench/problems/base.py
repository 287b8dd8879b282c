"""What a benchmark problem is: a search space, a fidelity axis 1..T and ``evaluate(config, b)``.

Values returned by :meth:`Problem.evaluate` are the *raw* metric at budget ``b`` in the problem's
``direction``. The harness applies the monotone envelope ``v(c, b) = best_{b' <= b} A(c, b')``
(shared/anchors/lcbench.md) itself, through :class:`uvp_plugins.bench.context.RunContext`: methods
see the envelope and it is what is scored.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from uvp_plugins.space import SearchSpace

__all__ = ["Problem"]


class Problem(abc.ABC):
    """A multi-fidelity black-box problem for the harness.

    Subclasses set ``name``, ``task``, ``space``, ``max_budget`` (T), ``direction`` and
    ``metric``, and implement :meth:`evaluate`. ``min_budget`` is the smallest fidelity (1).
    ``fidelity`` names the axis (``"epoch"``, ``"trainsize_level"``, ``"iteration"``, ...).
    """

    name: str = "problem"
    task: str = ""
    space: SearchSpace
    max_budget: int = 1
    min_budget: int = 1
    direction: str = "max"
    metric: str = "score"
    fidelity: str = "epoch"
    #: the true optimum when known (synthetic problems), else None
    optimum: float | None = None
    #: True when a result below ``T`` is itself a usable model (a checkpoint of a learning curve,
    #: a model trained on a smaller training set): the report then also shows the envelope score
    #: (best of all paid evaluations); False for multi-fidelity functions whose low fidelities
    #: are other functions (only the evaluations at ``T`` count, as in Optuna's best_value)
    partial_results_usable: bool = True
    #: True when a whole curve 1..T costs about as much as one point (surrogates, closed forms):
    #: the harness then computes curves to T at once and caches them (only paid parts are scored)
    curve_is_cheap: bool = True

    @abc.abstractmethod
    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        """The raw metric of ``config`` trained for ``budget`` fidelity units (1..T)."""

    def curve(self, config: Mapping[str, Any], max_budget: int | None = None) -> np.ndarray:
        """Raw values at budgets 1..max_budget (default T). Subclasses may vectorise this."""
        top = self.max_budget if max_budget is None else int(max_budget)
        return np.array([self.evaluate(config, b) for b in range(1, top + 1)], dtype=float)

    def check_budget(self, budget: int) -> int:
        if int(budget) != budget or not (self.min_budget <= budget <= self.max_budget):
            raise ValueError(
                f"budget must be an int in [{self.min_budget}, {self.max_budget}] for "
                f"{self.name}, got {budget!r}"
            )
        return int(budget)

    def describe(self) -> str:
        return (
            f"{self.name}[{self.task}] {self.metric} ({self.direction}), {self.fidelity} 1..{self.max_budget}, "
            f"{len(self.space)} parameters"
        )

    @property
    def sign(self) -> float:
        """+1 for maximisation, -1 for minimisation: ``sign * value`` is higher-is-better."""
        return 1.0 if self.direction == "max" else -1.0

    def better(self, a: float, b: float) -> bool:
        return a > b if self.direction == "max" else a < b

    def best_of(self, values: Sequence[float] | np.ndarray) -> float:
        arr = np.asarray(values, dtype=float)
        return float(np.nanmax(arr) if self.direction == "max" else np.nanmin(arr))

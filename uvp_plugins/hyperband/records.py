"""Small value objects of the Hyperband core: jobs, the cost ledger and the incumbent."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Job", "CostLedger", "Incumbent"]


@dataclass(frozen=True)
class Job:
    """One evaluation asked for by :class:`~uvp_plugins.hyperband.IterativeDeepeningHyperband`.

    Attributes:
        job_id: unique id of the job within the optimiser.
        config_id: id of the configuration (stable for its lifetime, also across deepening).
        config: the configuration object as sampled / given.
        bracket: bracket position (0 = the bracket with the most configurations).
        rung: rung index within the bracket (0 = the bracket's minimum budget).
        budget: the budget to evaluate at.
        previous_budget: the largest budget this configuration was already evaluated at (0 for a
            new configuration); a checkpointed trial continues from here, costing
            ``budget - previous_budget``.
    """

    job_id: int
    config_id: int
    config: Any
    bracket: int
    rung: int
    budget: int
    previous_budget: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Job:
        return cls(
            int(d["job_id"]),
            int(d["config_id"]),
            d["config"],
            int(d["bracket"]),
            int(d["rung"]),
            int(d["budget"]),
            int(d["previous_budget"]),
        )


@dataclass
class CostLedger:
    """Budget spent, in both conventions of the ID-HB paper (Sec. 7, Figure 3).

    Attributes:
        full_charge: every evaluation at budget ``r`` costs ``r`` (retraining from scratch; the
            paper's accounting).
        continuation: a configuration resumed from ``r`` to ``r'`` costs ``r' - r`` (training
            continues from a checkpoint).
        n_evaluations: number of successful evaluations (told results).
        n_failures: number of failed jobs (not charged: their cost is unknown).
    """

    full_charge: int = 0
    continuation: int = 0
    n_evaluations: int = 0
    n_failures: int = 0

    def charge(self, budget: int, previous_budget: int) -> None:
        self.full_charge += int(budget)
        self.continuation += max(0, int(budget) - int(previous_budget))
        self.n_evaluations += 1

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CostLedger:
        return cls(**{k: int(v) for k, v in d.items()})


@dataclass(frozen=True)
class Incumbent:
    """The best configuration at the largest budget evaluated so far.

    ``value`` is the result as told (in the optimiser's ``mode``).
    """

    config_id: int
    config: Any
    value: float
    budget: int

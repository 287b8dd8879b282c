"""Iterative-Deepening Hyperband versus re-running Hyperband (Brandt et al., Sec. 7, Figure 3).

:func:`idhb_budget_comparison` runs, on one problem and seed and with unlimited budget:

* ``hb``: Hyperband at ``R0`` (the first run);
* ``ih-hb``: the paper's baseline — Hyperband at ``R0``, then a *fresh* Hyperband at ``eta R0``
  (cost = both runs, incumbent = the second run's);
* ``eid-hb`` / ``pid-hb`` / ``did-hb``: ID-HB at ``R0`` deepened once to ``eta R0``.

All runs use :class:`~uvp_plugins.hyperband.IterativeDeepeningHyperband` with the same seed, so
every bracket samples from the same stream: the fresh run at ``eta R0`` sees the first run's
configurations first, as in the authors' experiments (their sampler is seeded per bracket). Each
evaluation is the raw problem value ``problem.evaluate(config, budget)`` (no envelope); the
optimiser minimises ``loss = -sign * value``. Costs are the ledgers' full charge (the paper's
accounting) and continuation.

The helpers :func:`problem_sampler`, :func:`problem_loss` and :func:`idhb_protocol` are shared
with the ``core-*`` benchmark methods in :mod:`uvp_plugins.bench.methods.hyperband_core`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.hyperband import VARIANTS, IterativeDeepeningHyperband

__all__ = [
    "MethodOutcome",
    "IDHBComparison",
    "idhb_budget_comparison",
    "idhb_protocol",
    "problem_sampler",
    "problem_loss",
    "VARIANT_LABELS",
]

#: method labels of the comparison for the three variants (the paper's names)
VARIANT_LABELS = {"efficient": "eid-hb", "preserving": "pid-hb", "discarding": "did-hb"}


def idhb_protocol(max_budget: int, eta: int, min_budget: int = 1) -> tuple[int, int]:
    """``(R0, R1)`` for a problem with fidelity ``1..max_budget``: ``R0 = max_budget // eta`` and
    ``R1 = eta * R0`` (``= max_budget`` when ``eta`` divides it, else the largest multiple below).

    Raises:
        ValueError: ``R0 < eta * min_budget`` (a Hyperband at ``R0`` needs two rungs).
    """
    r0 = int(max_budget) // int(eta)
    if r0 < eta * min_budget:
        raise ValueError(
            f"max_budget={max_budget} is too small for ID-HB with eta={eta}: the first run needs "
            f"R0 = max_budget // eta >= eta * min_budget = {eta * min_budget}"
        )
    return r0, eta * r0


def problem_sampler(problem: Problem) -> Callable[[np.random.Generator], dict[str, Any]]:
    """``sample(rng)``: one uniform configuration of the problem's search space."""

    def sample(rng: np.random.Generator) -> dict[str, Any]:
        return problem.space.sample(1, rng)[0]

    return sample


def problem_loss(problem: Problem, value: float) -> float:
    """The loss Hyperband minimises: ``-sign * value`` (``sign = +1`` for maximisation)."""
    return -problem.sign * float(value)


@dataclass(frozen=True)
class MethodOutcome:
    """Result of one method in the comparison.

    ``final_value`` is the incumbent's raw problem value at the final maximum budget
    ``max_budget`` (in the problem's direction); ``full_charge`` / ``continuation`` are the total
    costs of all runs of the method.
    """

    method: str
    max_budget: int
    final_value: float
    incumbent: dict[str, Any]
    full_charge: int
    continuation: int
    n_evaluations: int


@dataclass
class IDHBComparison:
    """Outcomes of HB, IH-HB and the ID-HB variants on one problem and seed."""

    problem: str
    task: str
    direction: str
    seed: int
    eta: int
    initial_max_budget: int
    final_max_budget: int
    outcomes: dict[str, MethodOutcome] = field(default_factory=dict)

    def budget_ratio(self, method: str) -> float:
        """Full-charge cost of ``method`` divided by IH-HB's (Figure 3, bottom)."""
        return self.outcomes[method].full_charge / self.outcomes["ih-hb"].full_charge

    def value_gap(self, method: str) -> float:
        """``method``'s final value minus IH-HB's, positive = better (Figure 3, top)."""
        sign = 1.0 if self.direction == "max" else -1.0
        return sign * (self.outcomes[method].final_value - self.outcomes["ih-hb"].final_value)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["outcomes"] = {k: asdict(v) for k, v in self.outcomes.items()}
        return d


def idhb_budget_comparison(
    problem: Problem,
    seed: int = 0,
    eta: int = 2,
    initial_max_budget: int | None = None,
    variants: Sequence[str] = VARIANTS,
) -> IDHBComparison:
    """Run HB(R0), IH-HB and ID-HB (each variant) on ``problem`` with the same sampler seed.

    Args:
        problem: the benchmark problem (fidelity ``1..problem.max_budget``).
        seed: seed of every optimiser (same per-bracket sampling streams).
        eta: reduction factor.
        initial_max_budget: ``R0``; default ``problem.max_budget // eta`` (see
            :func:`idhb_protocol`). ``eta * R0`` must not exceed ``problem.max_budget``.
        variants: ID-HB variants to run.

    Returns:
        An :class:`IDHBComparison` with outcomes ``"hb"``, ``"ih-hb"`` and one per variant
        (labels in :data:`VARIANT_LABELS`).
    """
    if initial_max_budget is None:
        r0, r1 = idhb_protocol(problem.max_budget, eta, problem.min_budget)
    else:
        r0, r1 = int(initial_max_budget), eta * int(initial_max_budget)
        if r1 > problem.max_budget:
            raise ValueError(
                f"eta * initial_max_budget = {r1} exceeds the problem's max_budget "
                f"{problem.max_budget}; use initial_max_budget <= {problem.max_budget // eta}"
            )
    for v in variants:
        if v not in VARIANTS:
            raise ValueError(f"variants must be taken from {VARIANTS}, got {v!r}")
    sample = problem_sampler(problem)
    memo: dict[tuple[str, int], float] = {}

    def raw(config: dict[str, Any], budget: int) -> float:
        k = (json.dumps(config, sort_keys=True, default=str), int(budget))
        if k not in memo:
            memo[k] = float(problem.evaluate(config, int(budget)))
        return memo[k]

    def loss(config: dict[str, Any], budget: int) -> float:
        return problem_loss(problem, raw(config, budget))

    def make(r: int, variant: str = "efficient") -> IterativeDeepeningHyperband:
        return IterativeDeepeningHyperband(
            r, eta, variant, min_budget=problem.min_budget, mode="min", seed=seed
        )

    def outcome(
        label: str, hb: IterativeDeepeningHyperband, extra: tuple[int, int, int]
    ) -> MethodOutcome:
        inc = hb.incumbent
        if inc is None:  # pragma: no cover - every bracket ends at R unless all evaluations fail
            raise RuntimeError(f"{label}: no configuration reached R={hb.max_budget}")
        return MethodOutcome(
            method=label,
            max_budget=hb.max_budget,
            final_value=raw(inc.config, inc.budget),
            incumbent=dict(inc.config),
            full_charge=hb.ledger.full_charge + extra[0],
            continuation=hb.ledger.continuation + extra[1],
            n_evaluations=hb.ledger.n_evaluations + extra[2],
        )

    result = IDHBComparison(
        problem=problem.name,
        task=str(problem.task),
        direction=problem.direction,
        seed=int(seed),
        eta=int(eta),
        initial_max_budget=r0,
        final_max_budget=r1,
    )
    first = make(r0)
    first.run(sample, loss)
    result.outcomes["hb"] = outcome("hb", first, (0, 0, 0))
    fresh = make(r1)
    fresh.run(sample, loss)
    led = first.ledger
    result.outcomes["ih-hb"] = outcome(
        "ih-hb", fresh, (led.full_charge, led.continuation, led.n_evaluations)
    )
    for v in variants:
        hb = make(r0, v)
        hb.run(sample, loss)
        hb.deepen()
        hb.run(sample, loss)
        label = VARIANT_LABELS[v]
        result.outcomes[label] = outcome(label, hb, (0, 0, 0))
    if not all(math.isfinite(o.final_value) for o in result.outcomes.values()):
        raise RuntimeError("a method's final value is not finite")
    return result

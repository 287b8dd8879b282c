"""The object a benchmark method talks to: evaluations go through the run's budget ledger.

A method receives a :class:`RunContext` and calls :meth:`RunContext.evaluate` for every
evaluation it wants. The context

* charges the ledger (continuation by default, ``restart=True`` for retraining from scratch),
* returns the monotone envelope ``v(c, b) = best_{b' <= b} A(c, b')`` of the trial's curve
  (the raw value where partial results are not usable models),
* raises :class:`~uvp_plugins.bench.ledger.BudgetExhausted` when the run's budget ``B`` is spent,
  after paying and scoring the affordable part of the last step.

Methods must let ``BudgetExhausted`` propagate (or catch it and return); the runner records the
anytime curve either way.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

import numpy as np

from uvp_plugins.bench import progress
from uvp_plugins.bench.ledger import BudgetExhausted, BudgetLedger
from uvp_plugins.bench.problems.base import Problem

__all__ = ["RunContext", "BudgetExhausted"]


class RunContext:
    """Budgeted access to a problem for one run of one method with one seed.

    Args:
        problem: the problem.
        total_budget: ``B`` in fidelity units (default ``20 * T``).
        seed: the run's seed; methods derive all their randomness from it.
    """

    def __init__(self, problem: Problem, total_budget: float | None = None, seed: int = 0) -> None:
        self.problem = problem
        self.seed = int(seed)
        budget = 20 * problem.max_budget if total_budget is None else total_budget
        self.ledger = BudgetLedger(budget, problem.max_budget, problem.direction)
        self._curves: dict[Hashable, np.ndarray] = {}
        self._lock = threading.RLock()
        self.started = time.perf_counter()
        self.extra_eval_seconds = 0.0
        #: wall seconds of named optimizer steps (e.g. ``"ask"``), recorded by :meth:`timed`
        self.timings: dict[str, list[float]] = {}
        #: facts a method records for the run's summary (e.g. what a first phase spent)
        self.notes: dict[str, Any] = {}
        #: for CASH problems (a ``selector`` parameter names the model class): evaluations per arm
        self.arm_evaluations: dict[str, int] = {}
        #: method-specific facts (JSON-serialisable) written to the run's summary as ``extras``
        self.extras: dict[str, Any] = {}
        self._selector: str | None = getattr(problem, "selector", None)

    # ------------------------------------------------------------------ facts
    @property
    def max_budget(self) -> int:
        return self.problem.max_budget

    @property
    def total_budget(self) -> float:
        return self.ledger.total_budget

    @property
    def remaining(self) -> float:
        return self.ledger.remaining

    @property
    def exhausted(self) -> bool:
        return self.ledger.exhausted

    @property
    def direction(self) -> str:
        return self.problem.direction

    def rng(self, offset: int = 0) -> np.random.Generator:
        return np.random.default_rng(self.seed * 1_000_003 + offset)

    # ----------------------------------------------------------- evaluations
    def _raw_curve(self, trial: Hashable, config: Mapping[str, Any], budget: int) -> np.ndarray:
        """Raw values at budgets 1..>=budget for this trial (cached; computed to T at once when
        the problem says its curves are cheap, e.g. surrogates)."""
        cached = self._curves.get(trial)
        if cached is None or len(cached) < budget:
            top = self.problem.max_budget if self.problem.curve_is_cheap else budget
            cached = np.asarray(self.problem.curve(config, top), dtype=float)
            self._curves[trial] = cached
        return cached

    def _envelope(self, trial: Hashable, config: Mapping[str, Any], budget: int) -> float:
        """``v(c, b) = best_{b' <= b} A(c, b')``: every epoch up to ``b`` was paid (trained).
        For a problem whose partial results are not usable models (a low fidelity is another
        function, ``Problem.partial_results_usable``), the raw value ``A(c, b)``."""
        raw = self._raw_curve(trial, config, budget)
        if not self.problem.partial_results_usable:
            return float(raw[budget - 1])
        return self.problem.best_of(raw[:budget])

    def evaluate(
        self, trial: Hashable, config: Mapping[str, Any], budget: int, restart: bool = False
    ) -> float:
        """Pay for and return the envelope value of ``config`` (trial id ``trial``) at ``budget``.

        With continuation, a trial's earlier budgets are already paid and a continuation from
        ``b0`` to ``b`` pays ``b - b0``. Training to ``b`` passes through every epoch below it, so
        the returned (and scored) value is the envelope over all of ``A(c, 1..b)``.
        """
        budget = self.problem.check_budget(budget)
        with self._lock:
            if restart:
                self._curves.pop(trial, None)
            try:
                value = self.ledger.pay_and_evaluate(
                    trial, budget, lambda b: self._envelope(trial, config, b), restart=restart
                )
            finally:
                progress.update(self.ledger.spent / self.ledger.total_budget)
            if self._selector is not None and self._selector in config:
                arm = str(config[self._selector])
                self.arm_evaluations[arm] = self.arm_evaluations.get(arm, 0) + 1
            return value

    def evaluate_curve(
        self, trial: Hashable, config: Mapping[str, Any], budget: int
    ) -> list[float]:
        """Train step by step from the trial's paid budget to ``budget``; returns the envelope
        values at every step (each step paid; stops with BudgetExhausted mid-way)."""
        budget = self.problem.check_budget(budget)
        with self._lock:
            start = self.ledger.paid.get(trial, 0) + 1
        return [self.evaluate(trial, config, b) for b in range(start, budget + 1)]

    def paid(self, trial: Hashable) -> int:
        return self.ledger.paid.get(trial, 0)

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Record the wall time of the ``with`` block under ``name`` (e.g. each ``ask`` of an
        optimizer); the runner reports calls, mean and median per name."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings.setdefault(name, []).append(time.perf_counter() - t0)

    def overhead_seconds(self) -> float:
        """Wall time of the run so far spent outside problem evaluations."""
        wall = time.perf_counter() - self.started
        return max(0.0, wall - self.ledger.eval_seconds - self.extra_eval_seconds)

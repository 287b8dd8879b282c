"""Hyperband and Iterative-Deepening Hyperband, framework-free.

* :class:`HyperbandSchedule` – bracket arithmetic of Li et al. (2018) with integers only.
* :class:`IterativeDeepeningHyperband` – Hyperband whose maximum budget ``R`` can be deepened to
  ``eta R`` reusing every earlier evaluation (Brandt et al., *Iterative Deepening Hyperband*,
  variants efficient / preserving / discarding, :data:`VARIANTS`), with an ask/tell interface, a
  two-convention cost ledger and a JSON-serialisable state.
* :func:`deepening_ladder` – the maximum budgets ``R, eta R, eta^2 R, ...`` one run passes.
"""

from uvp_plugins.hyperband.bracket import VARIANTS, select_promotions
from uvp_plugins.hyperband.idhb import Evaluator, IterativeDeepeningHyperband, Sampler
from uvp_plugins.hyperband.ladder import deepening_ladder, power_of
from uvp_plugins.hyperband.records import CostLedger, Incumbent, Job
from uvp_plugins.hyperband.schedule import (
    BracketSpec,
    HyperbandSchedule,
    RungSpec,
    integer_log,
)

__all__ = [
    "BracketSpec",
    "CostLedger",
    "Evaluator",
    "HyperbandSchedule",
    "Incumbent",
    "IterativeDeepeningHyperband",
    "Job",
    "RungSpec",
    "Sampler",
    "VARIANTS",
    "deepening_ladder",
    "integer_log",
    "power_of",
    "select_promotions",
]

"""Ray Tune adapters of uvp-plugins.

* :class:`IterativeDeepeningHyperBandScheduler` - Iterative-Deepening Hyperband (Brandt et al.)
  as a ``TrialScheduler``, driven by :mod:`uvp_plugins.hyperband`.
* :class:`EnhancedAdaCentSearch` - Enhanced-AdaCent's center selection (Bateni et al.) as a
  ``Searcher``, driven by :class:`uvp_plugins.adacent.online.OnlineEnhancedAdaCent`.
* :class:`PredStoppingScheduler` - the Pred stopping rule of AdaCent / Enhanced-AdaCent
  (Bateni et al.) as an asynchronous per-trial scheduler, driven by :mod:`uvp_plugins.adacent.pred`.
* :func:`resume_with_larger_budget` - continue a finished experiment at ``max_t = eta * R``.

``VARIANTS`` and ``deepening_ladder`` are the core's (:mod:`uvp_plugins.hyperband`), re-exported.
"""

from raytune_ext._adacent_search import EnhancedAdaCentSearch
from raytune_ext._pred_scheduler import PRED_STATE_FILE_NAME, PredStoppingScheduler
from raytune_ext._resume import resume_with_larger_budget, scheduler_for_resume
from raytune_ext._scheduler import STATE_FILE_NAME, IterativeDeepeningHyperBandScheduler
from uvp_plugins.hyperband import VARIANTS, deepening_ladder

__all__ = [
    "EnhancedAdaCentSearch",
    "IterativeDeepeningHyperBandScheduler",
    "PredStoppingScheduler",
    "PRED_STATE_FILE_NAME",
    "resume_with_larger_budget",
    "scheduler_for_resume",
    "deepening_ladder",
    "STATE_FILE_NAME",
    "VARIANTS",
]

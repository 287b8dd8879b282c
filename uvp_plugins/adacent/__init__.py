"""Enhanced-AdaCent and its building blocks (Bateni et al., *Budget Allocation for Unknown Value
Functions in a Lipschitz Space*), framework-free.

* :mod:`~uvp_plugins.adacent.kcenter` - greedy k-center (Alg. 1), enhanced distance and
  Enhanced-KCenter (Alg. 4), batch form.
* :mod:`~uvp_plugins.adacent.center_distances` - the same Enhanced-KCenter step with cached
  candidate-to-center distances, for one step per new center.
* :mod:`~uvp_plugins.adacent.curves` - monotone envelope, PRED (Alg. 6), tail fit, epsilon (Sec. 4.1).
* :mod:`~uvp_plugins.adacent.histories` - dense histories from sparse, possibly non-finite reports.
* :mod:`~uvp_plugins.adacent.value_scale` - objective values to the positive scale of the ratios.
* :mod:`~uvp_plugins.adacent.allocators` - the offline allocators FullCent, Enhanced-FullCent,
  AdaCent, Enhanced-AdaCent (Alg. 3, 5, 7, 8).
"""

from uvp_plugins.adacent.allocators import (
    UVPResult,
    adacent,
    enhanced_adacent,
    enhanced_fullcent,
    fullcent,
    predict_final,
)
from uvp_plugins.adacent.center_distances import CenterDistances
from uvp_plugins.adacent.curves import (
    estimate_lipschitz,
    monotone_envelope,
    pairwise_lipschitz,
    pred_last_slope,
    resolve_epsilon,
    tail_fit_bound,
)
from uvp_plugins.adacent.histories import best_value, dense_history, value_at_depth
from uvp_plugins.adacent.kcenter import (
    enhanced_distances,
    first_center,
    greedy_kcenter,
    next_enhanced_center,
)
from uvp_plugins.adacent.value_scale import positive_scores

__all__ = [
    "CenterDistances",
    "UVPResult",
    "adacent",
    "best_value",
    "dense_history",
    "enhanced_adacent",
    "enhanced_distances",
    "enhanced_fullcent",
    "estimate_lipschitz",
    "first_center",
    "fullcent",
    "greedy_kcenter",
    "monotone_envelope",
    "next_enhanced_center",
    "pairwise_lipschitz",
    "positive_scores",
    "pred_last_slope",
    "predict_final",
    "resolve_epsilon",
    "tail_fit_bound",
    "value_at_depth",
]

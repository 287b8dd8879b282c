"""Enhanced-AdaCent and its building blocks (Bateni et al., *Budget Allocation for Unknown Value
Functions in a Lipschitz Space*), framework-free.

The core objects (what the adapters drive; :mod:`uvp_plugins.contract`):

* :class:`OnlineEnhancedAdaCent` - the online sampler, ask/tell (Alg. 8 one trial at a time);
* :class:`PredStoppingRule` - the Pred stopping rule (Alg. 6), observe/decide;
* :class:`Guidance` - the model-guided choice among candidates that the sampler and the rule
  share (its settings).

The offline allocators :func:`fullcent`, :func:`enhanced_fullcent`, :func:`adacent`,
:func:`enhanced_adacent` (Alg. 3, 5, 7, 8) run one allocation over given candidates. The modules
below hold the building blocks; their names are importable from here as before but are not the
package's public surface (``__all__``):

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
)
from uvp_plugins.adacent.allocators import predict_final as predict_final
from uvp_plugins.adacent.center_distances import CenterDistances as CenterDistances
from uvp_plugins.adacent.curves import estimate_lipschitz as estimate_lipschitz
from uvp_plugins.adacent.curves import monotone_envelope as monotone_envelope
from uvp_plugins.adacent.curves import pairwise_lipschitz as pairwise_lipschitz
from uvp_plugins.adacent.curves import pred_last_slope as pred_last_slope
from uvp_plugins.adacent.curves import resolve_epsilon as resolve_epsilon
from uvp_plugins.adacent.curves import tail_fit_bound as tail_fit_bound
from uvp_plugins.adacent.guidance import Guidance
from uvp_plugins.adacent.histories import best_value as best_value
from uvp_plugins.adacent.histories import dense_history as dense_history
from uvp_plugins.adacent.histories import value_at_depth as value_at_depth
from uvp_plugins.adacent.kcenter import enhanced_distances as enhanced_distances
from uvp_plugins.adacent.kcenter import first_center as first_center
from uvp_plugins.adacent.kcenter import greedy_kcenter as greedy_kcenter
from uvp_plugins.adacent.kcenter import next_enhanced_center as next_enhanced_center
from uvp_plugins.adacent.online import OnlineEnhancedAdaCent
from uvp_plugins.adacent.pred import PredStoppingRule
from uvp_plugins.adacent.value_scale import positive_scores as positive_scores

# the core objects first; the building blocks imported above (``x as x``) stay importable from
# here as before but are not the public surface
__all__ = [
    "OnlineEnhancedAdaCent",
    "PredStoppingRule",
    "Guidance",
    "UVPResult",
    "adacent",
    "enhanced_adacent",
    "enhanced_fullcent",
    "fullcent",
]

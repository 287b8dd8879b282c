"""Configurations x problem instances: the model input and the objective over instances.

In algorithm configuration (Eggensperger et al., "Sequential Model-based Optimization Using
Censoring Strategies"; Hutter et al. 2011) the surrogate models the runtime of a configuration
*on an instance*, with the instance described by its features: an input row is
``[configuration, instance features]``. The optimiser, however, compares configurations by their
cost over all instances, the mean runtime. Two formulas connect the two, and they live here once:

* :func:`pair_rows` -- every configuration row combined with every instance's features (the rows
  the model is evaluated on), configuration-major.
* :func:`marginal_over_instances` -- the model's predictions on those rows reduced to one value per
  configuration: the arithmetic mean over instances, taken in the original units. With a model of
  ``log(runtime)`` that is ``log(mean_i exp(mu_i))`` (a log-mean-exp), not the mean of the logs:
  the configurator's cost is the mean runtime, which one slow instance dominates. SMAC's
  random forest with ``log_y`` marginalises the same way ("the response values are decompressed
  before averaging").

Example:
    >>> import numpy as np
    >>> configs = np.array([[0.0], [1.0]])
    >>> features = np.array([[10.0], [20.0], [30.0]])
    >>> pair_rows(configs, features).tolist()[:4]
    [[0.0, 10.0], [0.0, 20.0], [0.0, 30.0], [1.0, 10.0]]
    >>> log_rt = np.log([[1.0, 2.0, 3.0], [4.0, 4.0, 4.0]])   # (configs, instances)
    >>> np.exp(marginal_over_instances(log_rt, log_y=True)).round(6).tolist()
    [2.0, 4.0]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

__all__ = ["marginal_over_instances", "pair_rows"]


def pair_rows(configs: ArrayLike, features: ArrayLike) -> NDArray[np.float64]:
    """Rows ``[configs[j], features[i]]`` for every configuration ``j`` and instance ``i``, shape
    ``(n_configs * n_instances, d_config + d_features)``; row ``j * n_instances + i``."""
    C = np.asarray(configs, dtype=float)
    F = np.asarray(features, dtype=float)
    if C.ndim != 2 or F.ndim != 2:
        raise ValueError(
            f"configs and features must be 2-d arrays, got shapes {C.shape} and {F.shape}"
        )
    if F.shape[0] < 1:
        raise ValueError("features must describe at least one instance (one row)")
    n, k = C.shape[0], F.shape[0]
    return np.hstack((np.repeat(C, k, axis=0), np.tile(F, (n, 1))))


def marginal_over_instances(values: ArrayLike, *, log_y: bool) -> NDArray[np.float64]:
    """Reduce predictions over the last axis (instances) to the mean in the original units.

    Args:
        values: predictions with instances on the last axis, e.g. ``(members, configs,
            instances)``; in log units when ``log_y``.
        log_y: the values are logs of the modelled quantity: return ``log(mean(exp(values)))``
            (computed stably); otherwise the plain mean.
    """
    v = np.asarray(values, dtype=float)
    if v.shape[-1] < 1:
        raise ValueError("values need at least one instance on their last axis")
    if log_y:
        return np.asarray(logsumexp(v, axis=-1) - np.log(v.shape[-1]))
    return np.asarray(v.mean(axis=-1))

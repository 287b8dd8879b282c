"""What every trial says about its *final* value: the targets of the guided sampler's surrogate.

The exploitation step of :mod:`uvp_plugins.adacent.guidance` ranks configurations by a Gaussian
process. Issue 17 fitted it to every trial's value at the exploration depth ``floor(delta T)``
(Bateni et al.'s ``H_last`` at ``T_explore``, Alg. 8): the quantity that ranks configurations
where early values rank like final ones. Where they do not (crossing curves, biased low
fidelities) or once the budget allows many complete trials, the quantity a user wants is the
final value. :func:`final_targets` gives each trial a target on one scale, the normal scores of
the complete trials' final values:

* a **complete** trial: the normal score of its final value among the complete trials' final
  values (:func:`~uvp_plugins.adacent.guidance.copula`), known exactly;
* a **pruned or running** trial: what its value at the deepest rung it reached (``depth *
  eta^k``, :func:`~uvp_plugins.adacent.reliability.rung_steps`; below the depth, its last step)
  says about its final value - its normal score among the complete trials' values at that
  rung, times the rank agreement measured there on the complete trials (a negative agreement
  counts as none), with the variance that
  agreement leaves (:func:`~uvp_plugins.adacent.reliability.pseudo_final`: a bivariate normal
  copula of the value at the rung and the final value). Where early values rank like final
  ones (agreement near 1) the pruned trials count almost as much as complete ones, as in issue
  17; where they do not (agreement near 0) they count for almost nothing and the model learns
  from the complete trials, as Optuna's GPSampler does.

Until a trial completes there is nothing to calibrate against: the targets are the issue-17
ones, every trial's value at the depth (``calibrated = False``; the caller ranks them itself).

Example:
    >>> trials = [
    ...     ({1: 0.5, 2: 0.6, 10: 0.9}, "complete", 0.9),
    ...     ({1: 0.4, 2: 0.5, 10: 0.7}, "complete", 0.7),
    ...     ({1: 0.45, 2: 0.55}, "pruned", None),
    ... ]
    >>> mean, var, calibrated = final_targets(trials, max_resource=10, delta=0.2)
    >>> calibrated, [round(m, 2) for m in mean], [round(v, 2) for v in var]
    (True, [0.67, -0.67, 0.0], [0.0, 0.0, 0.34])
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from uvp_plugins.adacent.histories import final_value, value_at, value_at_depth
from uvp_plugins.adacent.reliability import pseudo_final, rank_agreement, rung_steps
from uvp_plugins.adacent.scores import rank_scores

__all__ = ["TrialEvidence", "final_targets", "final_value"]

#: a trial as the targets read it: its curve, its status and its final value (complete trials)
TrialEvidence = tuple[Mapping[int, float], str, "float | None"]


def final_targets(
    trials: Sequence[TrialEvidence],
    max_resource: int | None,
    delta: float,
    maximize: bool = True,
    eta: float = 3.0,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Targets (higher is better) and their variances for ``trials`` (module doc), and whether
    they are calibrated on complete trials. A trial with nothing to say has ``nan``.

    Without complete trials (or without a known ``max_resource``) the targets are the values at
    the depth ``floor(delta T)`` (oriented higher-is-better, variance 0, ``calibrated=False``).
    """
    sign = 1.0 if maximize else -1.0
    n = len(trials)
    mean = np.full(n, math.nan)
    var = np.zeros(n)
    complete = [i for i, (_, status, _) in enumerate(trials) if status == "complete"]
    finals = [final_value(trials[i][0], trials[i][2], maximize) for i in complete]
    ok = [i for i, f in zip(complete, finals, strict=True) if math.isfinite(f)]
    if not ok or max_resource is None:
        depth = 0 if max_resource is None else int(math.floor(delta * max_resource))
        for i, (curve, status, final) in enumerate(trials):
            if curve:
                v = value_at_depth(curve, depth, maximize) if depth >= 1 else value_at_depth(
                    curve, max(int(s) for s in curve), maximize
                )
            elif status == "complete":
                v = final_value(curve, final, maximize)
            else:
                v = math.nan
            mean[i] = sign * v
        return mean, var, False
    ok_finals = np.array([f for f in finals if math.isfinite(f)])
    final_scores = rank_scores(sign * ok_finals)
    mean[ok] = final_scores
    depth = int(math.floor(delta * max_resource))
    rungs = rung_steps(depth, max_resource, eta)
    complete_curves = [trials[i][0] for i in ok]
    memo: dict[int, tuple[float, list[float]]] = {}
    for i, (curve, status, _) in enumerate(trials):
        if status == "complete" or not curve:
            continue
        last = max(int(s) for s in curve)
        below = [r for r in rungs if r <= last]
        step = below[-1] if below else last
        if step not in memo:  # a reversed ranking measured on few trials is not trusted
            memo[step] = (
                max(0.0, rank_agreement(complete_curves, ok_finals.tolist(), step, maximize)),
                [value_at(c, step, maximize) for c in complete_curves],
            )
        agreement, reference = memo[step]
        m, v = pseudo_final(
            value_at(curve, step, maximize), reference, final_scores, agreement, maximize
        )
        mean[i], var[i] = m, v
    return mean, var, True

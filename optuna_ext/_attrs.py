"""Names of the trial attributes through which our Optuna sampler and pruner agree.

The sampler and the pruner never import each other (issue 33): what one tells the other goes
through the study's storage, so it holds across processes and on every storage.
"""

from __future__ import annotations

__all__ = ["ATTR_PROMISING"]

#: system attribute the guided sampler sets on a trial whose configuration its model of the
#: final value predicts to beat the best final value (``Proposal.promising``); ``PredPruner``
#: with ``trust_sampler=True`` then leaves it to PRED, not to the successive-halving cut
ATTR_PROMISING = "uvp:promising"

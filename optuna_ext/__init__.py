"""Optuna adapters of uvp-plugins: EnhancedAdaCentSampler, PredPruner,
IterativeDeepeningHyperbandPruner and MaxUCBCashSampler.

Drop-in usage (Bateni et al., Enhanced-AdaCent, Alg. 8)::

    import optuna
    from optuna_ext import EnhancedAdaCentSampler, PredPruner

    study = optuna.create_study(
        direction="maximize",
        sampler=EnhancedAdaCentSampler(seed=0),
        pruner=PredPruner(max_resource=T),  # T = the largest step the objective reports
    )
"""

from optuna_ext._cash_sampler import MaxUCBCashSampler
from optuna_ext._idhb_pruner import IterativeDeepeningHyperbandPruner
from optuna_ext._pruner import PredPruner
from optuna_ext._sampler import EnhancedAdaCentSampler
from optuna_ext._space import OptunaSpace, to_distributions

__all__ = [
    "EnhancedAdaCentSampler",
    "IterativeDeepeningHyperbandPruner",
    "MaxUCBCashSampler",
    "PredPruner",
    "OptunaSpace",
    "to_distributions",
]

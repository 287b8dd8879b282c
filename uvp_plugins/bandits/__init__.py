"""Max K-armed bandit policies for CASH (Balef et al., *Put CASH on Bandits*), framework-free.

* :mod:`~uvp_plugins.bandits.policies` - MaxUCB (Alg. 1), burn-in (Alg. E.1) and the baselines
  UCB, Quantile-UCB and round-robin, with JSON state.
"""

from uvp_plugins.bandits.policies import (
    POLICIES,
    REWARD_RANGE,
    UCB,
    BanditPolicy,
    IndexPolicy,
    MaxUCB,
    QuantileUCB,
    RoundRobin,
    policy_from_state_dict,
    scale_rewards,
)

__all__ = [
    "POLICIES",
    "REWARD_RANGE",
    "UCB",
    "BanditPolicy",
    "IndexPolicy",
    "MaxUCB",
    "QuantileUCB",
    "RoundRobin",
    "policy_from_state_dict",
    "scale_rewards",
]

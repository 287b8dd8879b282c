"""Max K-armed bandit policies for CASH (Balef et al., *Put CASH on Bandits*), framework-free.

* :mod:`~uvp_plugins.bandits.policies` - MaxUCB (Alg. 1), burn-in (Alg. E.1) and the baselines
  UCB, Quantile-UCB and round-robin, with JSON state.
* :mod:`~uvp_plugins.bandits.cash_bandit` - :class:`CashBandit`, the upper level of two-level
  CASH as one online object: a policy choosing among the *available* arms (ask/tell/fail), the
  crash rule that retires an arm, versioned JSON state. Framework adapters build on it.
"""

from uvp_plugins.bandits.cash_bandit import (
    ALPHA_POLICIES,
    CASH_DESIGN,
    CASH_FLOOR,
    CASH_MAXUCB_ALPHA,
    RETIRE_REASONS,
    CashBandit,
    CashSettings,
    PullRecord,
    paper_design_size,
)
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
    "ALPHA_POLICIES",
    "CASH_DESIGN",
    "CASH_FLOOR",
    "CASH_MAXUCB_ALPHA",
    "CashSettings",
    "PullRecord",
    "paper_design_size",
    "POLICIES",
    "RETIRE_REASONS",
    "REWARD_RANGE",
    "UCB",
    "BanditPolicy",
    "CashBandit",
    "IndexPolicy",
    "MaxUCB",
    "QuantileUCB",
    "RoundRobin",
    "policy_from_state_dict",
    "scale_rewards",
]

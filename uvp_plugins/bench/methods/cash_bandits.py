"""CASH benchmark methods of the core (framework-free): joint random search and bandit policies.

Every method spends one budget unit per iteration (``ctx.evaluate(i, config, 1)`` on a
:class:`~uvp_plugins.bench.problems.cash.CashProblem`) until the run's budget ``T`` is used up.

* ``cash-random``: random search on the joint conditional space — a uniform arm, then uniform
  parameters of that arm (:meth:`CashProblem.joint_sample`).
* ``bandit-maxucb``, ``bandit-ucb``, ``bandit-quantileucb``, ``bandit-roundrobin``: the two-level
  approach of Balef et al. (*Put CASH on Bandits*, Fig. 1 right): each iteration the policy of
  :mod:`uvp_plugins.bandits` picks an arm (``policy.select()``), that arm's own HPO proposes a
  configuration, it is evaluated, and the loss is credited to the arm (``policy.update``).
  The per-arm HPO is the same for every policy (so the methods differ only in the arm
  allocation): :class:`ArmSearch` with ``strategy="random"`` — uniform random search in the arm's
  own space, which makes each arm's reward distribution stationary (the paper's assumption) and
  makes ``bandit-*`` directly comparable with ``cash-random``. The model-based version
  (SMAC's random forest per arm) is ``smac-maxucb`` of ``smac_ext``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from uvp_plugins.bandits import UCB, IndexPolicy, MaxUCB, QuantileUCB, RoundRobin
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.ledger import BudgetExhausted
from uvp_plugins.bench.registry import register_method
from uvp_plugins.space import SearchSpace

__all__ = ["ArmSearch", "run_cash_random", "run_bandit", "cash_problem"]


class ArmSearch:
    """Framework-free HPO inside one arm's space (the lower level of the two-level approach).

    Args:
        space: the arm's search space (may be empty: every proposal is then ``{}``).
        rng: the random generator (seeded by the caller).
        strategy: ``"random"`` — uniform samples in unit coordinates; ``"local"`` — the first
            ``n_init`` proposals are uniform, later ones are uniform with probability
            ``explore`` and otherwise a Gaussian step (``sigma`` in unit coordinates, clipped to
            the cube) around the best configuration seen so far.
    """

    def __init__(
        self,
        space: SearchSpace,
        rng: np.random.Generator,
        strategy: str = "random",
        n_init: int = 3,
        explore: float = 0.3,
        sigma: float = 0.15,
    ) -> None:
        if strategy not in ("random", "local"):
            raise ValueError(f"strategy must be 'random' or 'local', got {strategy!r}")
        if not 0.0 <= explore <= 1.0:
            raise ValueError(f"explore must be in [0, 1], got {explore!r}")
        if not sigma > 0:
            raise ValueError(f"sigma must be > 0, got {sigma!r}")
        self.space = space
        self.rng = rng
        self.strategy = strategy
        self.n_init = int(n_init)
        self.explore = float(explore)
        self.sigma = float(sigma)
        self._best_u: np.ndarray | None = None
        self._best_loss = np.inf
        self.n_told = 0

    def ask(self) -> dict[str, Any]:
        """The next configuration of this arm (prefixed parameter names)."""
        d = len(self.space)
        if d == 0:
            return {}
        local = (
            self.strategy == "local"
            and self._best_u is not None
            and self.n_told >= self.n_init
            and self.rng.random() >= self.explore
        )
        if local:
            assert self._best_u is not None
            u = np.clip(self._best_u + self.sigma * self.rng.standard_normal(d), 0.0, 1.0)
        else:
            u = self.rng.random(d)
        return self.space.from_unit(u[None, :])[0]

    def tell(self, config: dict[str, Any], loss: float) -> None:
        """Record the loss of a configuration proposed by :meth:`ask`."""
        self.n_told += 1
        if len(self.space) and loss < self._best_loss:
            self._best_loss = float(loss)
            self._best_u = self.space.to_unit([config])[0]


def cash_problem(ctx: RunContext) -> Any:
    """The run's problem, checked to be a CASH problem (clear error otherwise)."""
    from uvp_plugins.bench.problems.cash import CashProblem

    problem = ctx.problem
    if not isinstance(problem, CashProblem):
        raise TypeError(
            f"CASH methods need a CashProblem (cash-sklearn, cash-yahpo, cash-synthetic), got "
            f"{type(problem).__name__} ({getattr(problem, 'name', '?')})"
        )
    return problem


@register_method(
    "cash-random",
    "random search on the joint CASH space (uniform arm, then uniform parameters)",
    kind="core",
    problem_kinds=("cash",),
)
def run_cash_random(ctx: RunContext) -> None:
    problem = cash_problem(ctx)
    rng = ctx.rng()
    i = 0
    try:
        while not ctx.exhausted:
            ctx.evaluate(i, problem.joint_sample(rng), 1)
            i += 1
    except BudgetExhausted:
        return


def run_bandit(
    ctx: RunContext,
    make_policy: Callable[[int, int], IndexPolicy],
    strategy: str = "random",
) -> IndexPolicy:
    """Two-level CASH: ``policy.select()`` -> the arm's :class:`ArmSearch` -> evaluate -> update.

    ``make_policy(n_arms, seed)`` builds the policy. Returns the policy (its ``n_pulls`` and
    ``history()`` show the allocation).
    """
    problem = cash_problem(ctx)
    policy = make_policy(len(problem.arms), ctx.seed)
    searches = [
        ArmSearch(problem.arm_spaces[arm], ctx.rng(1 + k), strategy=strategy)
        for k, arm in enumerate(problem.arms)
    ]
    i = 0
    try:
        while not ctx.exhausted:
            k = policy.select()
            arm = problem.arms[k]
            params = searches[k].ask()
            loss = ctx.evaluate(i, problem.arm_config(arm, params), 1)
            searches[k].tell(params, loss)
            policy.update(k, loss)
            i += 1
    except BudgetExhausted:
        pass
    return policy


def _register(name: str, desc: str, make: Callable[[int, int], IndexPolicy]) -> None:
    def run(ctx: RunContext) -> None:
        run_bandit(ctx, make)

    run.__name__ = f"run_{name.replace('-', '_')}"
    register_method(name, desc, kind="core", problem_kinds=("cash",))(run)


_register(
    "bandit-maxucb",
    "MaxUCB (alpha=0.5) over per-arm random search",
    lambda k, seed: MaxUCB(k, alpha=0.5, seed=seed),
)
_register(
    "bandit-maxucb-burnin",
    "MaxUCB-Burn-in (alpha=0.5, C=5; Alg. E.1) over per-arm random search",
    lambda k, seed: MaxUCB(k, alpha=0.5, burn_in=5, seed=seed),
)
_register(
    "bandit-ucb",
    "classic UCB (alpha=0.5) over per-arm random search",
    lambda k, seed: UCB(k, alpha=0.5, seed=seed),
)
_register(
    "bandit-quantileucb",
    "Quantile UCB (alpha=0.5, tau=0.95) over per-arm random search",
    lambda k, seed: QuantileUCB(k, alpha=0.5, tau=0.95, seed=seed),
)
_register(
    "bandit-roundrobin",
    "round-robin arm allocation over per-arm random search",
    lambda k, seed: RoundRobin(k, seed=seed),
)

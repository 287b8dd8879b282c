"""Max K-armed bandit policies for CASH: MaxUCB (Balef et al., Alg. 1 and E.1) and baselines.

A policy chooses which *arm* (model class) gets the next hyperparameter-optimisation step
(:meth:`select`) and is told the loss that step reached (:meth:`update`, lower is better).

Conventions (from the paper and the authors' reference code ``amirbalef/CASH_with_Bandits``,
``Bandits/policies/MaxUCB.py``; see ``shared/papers/README.md``):

* **Rewards.** ``r = -loss``, min-max scaled to ``(0.01, 0.99)`` over *all* recorded observations
  of *all* arms and rescaled after every update. When all recorded losses are equal the scaled
  rewards are all ``0.01`` (scikit-learn's ``MinMaxScaler`` convention for a zero range).
* **Time.** ``t = (number of recorded observations) + 1`` (plus pending pulls, see below).
* **Initial phase.** Every arm is pulled once, round-robin in index order (Alg. 1, lines 2-4).
* **Index.** MaxUCB: ``U_i = max_j r_ij + (alpha * ln t / n_i)^2`` (Alg. 1, line 7), default
  ``alpha = 0.5`` (paper, Table D.5). Ties go to the lowest arm index (``numpy.argmax``).
* **Burn-in** (Alg. E.1, ``burn_in = C``): the first ``C * K`` pulls are round-robin in index
  order and their results are discarded; afterwards ``t`` restarts (it counts recorded
  observations only) and the initial phase follows.

Parallel use (several :meth:`select` calls before the results arrive) — deterministic rule:

* A selected pull is *pending* until :meth:`update` (result) or :meth:`cancel` (crash, no
  result) is called for that arm. Pending (non-burn-in) pulls count as pulls: ``n_i`` is the
  number of recorded observations of arm ``i`` plus its pending pulls, and ``t`` is the number of
  recorded observations plus all pending pulls plus 1. The maxima/means/quantiles use recorded
  rewards only. Hence repeated selects spread over the arms like virtual pulls ("the result is on its
  way"), and in sequential use (select, update, select, ...) nothing is ever pending at selection
  time, so the choices are exactly Alg. 1.
* While some arm has no recorded observation (initial phase), :meth:`select` returns the arm with
  the fewest recorded-plus-pending pulls, ties to the lowest index: sequentially this is the
  round-robin ``0, 1, ..., K-1`` of Alg. 1; in parallel it keeps cycling until results arrive.
* Results are credited to the arm passed to :meth:`update`, so out-of-order arrival is fine. A
  result for an arm without a pending pull (e.g. a result told without a select) is recorded as
  a normal observation. During burn-in, a result for an arm with a pending *burn-in* pull is
  discarded (per arm, so out-of-order burn-in results are discarded correctly); a cancelled
  burn-in pull is not re-issued.

Non-finite losses raise ``ValueError`` in :meth:`update`: a crashed or diverged trial must be
reported with :meth:`cancel` (it then releases its pending pull and is never credited as a
reward). Every policy's state is a JSON-serialisable dict (:meth:`state_dict`), restored with
``Policy.from_state_dict(d)`` or :func:`policy_from_state_dict`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

import numpy as np

from uvp_plugins.contract import StateFormat
from uvp_plugins.validation import check_int

__all__ = [
    "BanditPolicy",
    "IndexPolicy",
    "MaxUCB",
    "UCB",
    "QuantileUCB",
    "RoundRobin",
    "POLICIES",
    "policy_from_state_dict",
    "scale_rewards",
]

#: Range of the min-max scaled rewards (authors' code: ``MinMaxScaler(feature_range=(0.01, 0.99))``).
REWARD_RANGE = (0.01, 0.99)

_P = TypeVar("_P", bound="IndexPolicy")


def _policy_v1_to_v2(state: dict[str, Any]) -> dict[str, Any]:
    """Version 2 added ``params["min_pulls"]`` and ``params["floor"]``: a version-1 state has
    neither and is read as written (Alg. 1's single initial pull per arm, no floor)."""
    params = state.get("params")
    if isinstance(params, dict):
        added = sorted({"min_pulls", "floor"} & set(params))
        if added:
            raise ValueError(f"state['params'] of a version-1 state has no {added} (added in "
                             "version 2)")
        state = {**state, "params": {**params, "min_pulls": 1, "floor": 0.0}}
    return state


def _policy_v2_to_v3(state: dict[str, Any]) -> dict[str, Any]:
    """Version 3 is version 2 under the ``"format"`` tag instead of ``"version": 2``."""
    return state


#: the format of :meth:`IndexPolicy.state_dict` (:mod:`uvp_plugins.contract`). Versions 1 and 2
#: carried an integer ``"version"`` key instead of the ``"format"`` tag (both still read);
#: 2 added ``params["min_pulls"]`` and ``params["floor"]``; 3 is 2 under the tag.
STATE_FORMAT = StateFormat(
    "uvp-bandit-policy",
    3,
    upgrades={1: _policy_v1_to_v2, 2: _policy_v2_to_v3},
    legacy_key="version",
)


def scale_rewards(
    losses: np.ndarray, low: float = REWARD_RANGE[0], high: float = REWARD_RANGE[1]
) -> np.ndarray:
    """Rewards ``-loss`` min-max scaled to ``[low, high]`` over all given losses.

    The smallest loss maps to ``high`` and the largest to ``low``. A zero range (all losses
    equal, or a single loss) maps every reward to ``low``, as scikit-learn's ``MinMaxScaler``
    does in the authors' code.
    """
    r = -np.asarray(losses, dtype=float)
    if r.size == 0:
        return r
    lo, hi = float(r.min()), float(r.max())
    span = hi - lo
    if span == 0.0:
        return np.full(r.shape, low)
    factor = (high - low) / span
    if math.isfinite(span) and math.isfinite(factor):
        return low + (r - lo) * factor
    # Extreme ranges (issue 19): ``hi - lo`` overflows (losses near +-1.8e308), or the range is so
    # small (subnormal losses) that ``(high - low) / span`` overflows and ``0 * inf`` gave NaN.
    # Halve before subtracting, or divide first, so every reward stays finite and the order is
    # kept. Ordinary ranges never get here: their rewards are bit for bit the formula above.
    if math.isfinite(span):
        frac = (r - lo) / span
    else:
        frac = (r * 0.5 - lo * 0.5) / (hi * 0.5 - lo * 0.5)
    return low + np.clip(frac, 0.0, 1.0) * (high - low)


@runtime_checkable
class BanditPolicy(Protocol):
    """What every arm-selection policy offers (lower loss is better)."""

    n_arms: int

    def select(self, available: Any = None) -> int:
        """The arm to pull next (among the ``available`` ones, a mask); records it as pending."""
        ...

    def update(self, arm: int, loss: float) -> None:
        """Record the (finite) loss of a pull of ``arm``."""
        ...

    def cancel(self, arm: int) -> None:
        """Release a pending pull of ``arm`` without a result (crash)."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state."""
        ...


def _check_nonneg_float(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a finite float >= 0, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite float >= 0, got {value!r}")
    return v


def _state_field(state: Mapping[str, Any], key: str) -> Any:
    if key not in state:
        raise ValueError(f"state is missing {key!r} (not a state_dict() of this module?)")
    return state[key]


def _state_counts(state: Mapping[str, Any], key: str, n_arms: int) -> list[int]:
    """A per-arm list of counts ``>= 0`` from a state dict, each entry checked."""
    value = _state_field(state, key)
    if not isinstance(value, list) or len(value) != n_arms:
        raise ValueError(
            f"state[{key!r}] must be a list of {n_arms} ints >= 0 (one per arm), got {value!r}"
        )
    return [check_int(f"state[{key!r}][{i}]", c, low=0) for i, c in enumerate(value)]


def _state_pairs(state: Mapping[str, Any], key: str, n_arms: int) -> list[tuple[int, float]]:
    """A list of ``[arm, loss]`` pairs from a state dict: arms in range, losses finite."""
    value = _state_field(state, key)
    if not isinstance(value, list):
        raise TypeError(
            f"state[{key!r}] must be a list of [arm, loss] pairs, got {type(value).__name__}"
        )
    out = []
    for j, pair in enumerate(value):
        where = f"state[{key!r}][{j}]"
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"{where} must be an [arm, loss] pair, got {pair!r}")
        arm, loss = pair
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)):
            raise TypeError(f"{where}: arm must be an int in [0, {n_arms - 1}], got {arm!r}")
        if not 0 <= arm < n_arms:
            raise ValueError(f"{where}: arm must be an int in [0, {n_arms - 1}], got {arm!r}")
        if isinstance(loss, bool) or not isinstance(loss, (int, float, np.integer, np.floating)):
            raise TypeError(f"{where}: loss must be a finite float, got {loss!r}")
        if not math.isfinite(float(loss)):
            raise ValueError(f"{where}: loss must be finite, got {loss!r}")
        out.append((int(arm), float(loss)))
    return out


class IndexPolicy(abc.ABC):
    """Shared bookkeeping of the policies: observations, pending pulls, burn-in, state.

    Subclasses implement :meth:`_index` (the per-arm index once every arm has a recorded
    observation); :meth:`select` takes the arg-max with ties to the lowest index.

    Args:
        n_arms: number of arms ``K >= 1``.
        burn_in: burn-in rounds ``C >= 0`` (Alg. E.1): the first ``C*K`` pulls are round-robin
            and their results discarded.
        seed: kept for reproducible randomised policies; the policies here are deterministic.
        min_pulls: recorded pulls every arm gets, round robin, before the index decides
            (``>= 1``; Alg. 1 lines 2-4 pull each arm once: ``1``). Their rewards are observed
            (unlike a burn-in's): with ``min_pulls = m`` no arm is judged on fewer than ``m`` of
            its own results.
        floor: an exploration floor ``c >= 0``: after the initial phase, an arm with fewer than
            ``c ln t`` pulls (recorded plus pending) is pulled before the index is consulted
            (the fewest first, ties to the lowest index). ``0`` (Alg. 1) never forces a pull.
            The index alone cannot bring back an arm whose first results were the worst of all:
            its scaled maximum is near the bottom of the range and its bonus
            ``(alpha ln t / n)^2`` passes the leader's index only when ``alpha ln t > n``
            (``t > e^{2n}`` for ``alpha = 0.5``: ``t > 403`` after three pulls); the floor keeps
            pulling every arm at a logarithmic rate, as UCB's exploration does.
    """

    #: name used in state dicts and by :func:`policy_from_state_dict`
    kind: ClassVar[str] = "IndexPolicy"

    def __init__(
        self,
        n_arms: int,
        burn_in: int = 0,
        seed: int | None = None,
        min_pulls: int = 1,
        floor: float = 0.0,
    ) -> None:
        self.n_arms = check_int("n_arms", n_arms, low=1)
        self.burn_in = check_int("burn_in", burn_in, low=0)
        self.min_pulls = check_int("min_pulls", min_pulls, low=1)
        self.floor = _check_nonneg_float("floor", floor)
        if seed is not None:
            seed = check_int("seed", seed, low=0)
        self.seed = seed
        #: recorded (arm, loss) pairs in arrival order
        self._history: list[tuple[int, float]] = []
        self._losses: list[list[float]] = [[] for _ in range(self.n_arms)]
        self._pending = [0] * self.n_arms
        self._burn_pending = [0] * self.n_arms
        self._burn_issued = 0
        self._burn_discarded: list[tuple[int, float]] = []

    # ------------------------------------------------------------ parameters
    def _params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms, "burn_in": self.burn_in, "seed": self.seed,
                "min_pulls": self.min_pulls, "floor": self.floor}

    # ----------------------------------------------------------------- facts
    @property
    def n_pulls(self) -> list[int]:
        """Recorded observations per arm (burn-in results and pending pulls excluded)."""
        return [len(x) for x in self._losses]

    @property
    def pending(self) -> list[int]:
        """Pending (selected, not yet updated or cancelled) pulls per arm, burn-in included."""
        return [p + q for p, q in zip(self._pending, self._burn_pending, strict=True)]

    @property
    def n_observations(self) -> int:
        """Total number of recorded observations."""
        return len(self._history)

    @property
    def in_burn_in(self) -> bool:
        """True while the next :meth:`select` is a burn-in pull."""
        return self._burn_issued < self.burn_in * self.n_arms

    @property
    def burn_issued(self) -> int:
        """Burn-in slots issued so far (Alg. E.1): slot ``s`` in ``[0, burn_in * K)`` is a pull of
        arm ``s mod K``; a slot of an unavailable arm is skipped (issued without a pull)."""
        return self._burn_issued

    @property
    def t(self) -> int:
        """``t`` of the index: recorded observations + pending non-burn-in pulls + 1."""
        return len(self._history) + sum(self._pending) + 1

    def observations(self, arm: int) -> list[float]:
        """The recorded losses of ``arm`` in arrival order."""
        return list(self._losses[self._check_arm(arm)])

    def history(self) -> list[tuple[int, float]]:
        """All recorded ``(arm, loss)`` pairs in arrival order (burn-in results excluded)."""
        return list(self._history)

    def scaled_rewards(self) -> list[np.ndarray]:
        """Per arm, the recorded rewards min-max scaled over all arms (see :func:`scale_rewards`)."""
        if not self._history:
            return [np.empty(0) for _ in range(self.n_arms)]
        arms = np.fromiter((a for a, _ in self._history), dtype=np.int64, count=len(self._history))
        scaled = scale_rewards(np.fromiter((x for _, x in self._history), dtype=float))
        return [scaled[arms == i] for i in range(self.n_arms)]

    def indices(self) -> np.ndarray:
        """The current index ``U_i`` of every arm (NaN for arms without a recorded observation)."""
        counts = np.array(self.n_pulls) + np.array(self._pending)
        rewards = self.scaled_rewards()
        out = np.full(self.n_arms, np.nan)
        for i in range(self.n_arms):
            if rewards[i].size:
                out[i] = self._index(rewards[i], int(counts[i]), self.t)
        return out

    @abc.abstractmethod
    def _index(self, rewards: np.ndarray, n: int, t: int) -> float:
        """The index ``U_i`` of one arm from its scaled rewards, pull count ``n`` and time ``t``."""

    # ---------------------------------------------------------------- policy
    def _check_arm(self, arm: Any) -> int:
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)):
            raise TypeError(f"arm must be an int in [0, {self.n_arms - 1}], got {arm!r}")
        if not 0 <= arm < self.n_arms:
            raise ValueError(f"arm must be an int in [0, {self.n_arms - 1}], got {arm!r}")
        return int(arm)

    def _choose(self, among: np.ndarray) -> int:
        """The policy's rule restricted to the arms ``among`` (ascending indices)."""
        recorded = np.asarray(self.n_pulls)[among]
        counts = recorded + np.asarray(self.pending)[among]
        if recorded.min() < self.min_pulls:
            # initial phase (Alg. 1 lines 2-4, min_pulls rounds): fewest pulls (recorded +
            # pending), lowest index
            return int(among[int(np.argmin(counts))])
        if self.floor > 0 and counts.min() < self.floor * math.log(self.t):
            # exploration floor: the arm furthest below c ln t first
            return int(among[int(np.argmin(counts))])
        return int(among[int(np.nanargmax(self.indices()[among]))])

    def _available_arms(self, available: Any) -> np.ndarray:
        if available is None:
            return np.arange(self.n_arms)
        mask = np.asarray(available)
        if mask.dtype != bool or mask.shape != (self.n_arms,):
            raise ValueError(
                f"available must be a sequence of {self.n_arms} bools (one per arm), got {available!r}"
            )
        if not mask.any():
            raise ValueError("available: at least one arm must be available")
        return np.flatnonzero(mask)

    def select(self, available: Any = None) -> int:
        """The arm to pull next (recorded as pending until :meth:`update` / :meth:`cancel`).

        Args:
            available: optional mask of ``K`` bools; the choice is then the policy's own rule
                restricted to the available arms: burn-in pulls of unavailable arms are skipped
                (their slot is used up, Alg. E.1's round robin goes on with the next arm), the
                initial phase pulls the available arm with the fewest pulls, and afterwards the
                available arm with the largest index ``U_i``. With every arm available this is
                exactly the unrestricted rule.
        """
        among = self._available_arms(available)
        ok = np.zeros(self.n_arms, dtype=bool)
        ok[among] = True
        while self.in_burn_in:
            arm = self._burn_issued % self.n_arms
            self._burn_issued += 1
            if ok[arm]:
                self._burn_pending[arm] += 1
                return arm
        arm = self._choose(among)
        self._pending[arm] += 1
        return arm

    def update(self, arm: int, loss: float) -> None:
        """Record ``loss`` (lower is better) of a pull of ``arm``.

        Raises:
            TypeError / ValueError: ``arm`` not an int in ``[0, K-1]``; ``loss`` not a finite
                number (report crashed trials with :meth:`cancel` instead).
        """
        arm = self._check_arm(arm)
        if isinstance(loss, bool) or not isinstance(loss, (int, float, np.integer, np.floating)):
            raise TypeError(f"loss must be a finite float, got {loss!r}")
        value = float(loss)
        if not math.isfinite(value):
            raise ValueError(
                f"loss must be finite, got {loss!r} for arm {arm}; report crashed trials with "
                "cancel(arm) so they are not credited as rewards"
            )
        if self._burn_pending[arm] > 0:
            self._burn_pending[arm] -= 1
            self._burn_discarded.append((arm, value))
            return
        if self._pending[arm] > 0:
            self._pending[arm] -= 1
        self._history.append((arm, value))
        self._losses[arm].append(value)

    def add_pending(self, arm: int, burn_in_slot: int | None = None) -> None:
        """Register a running pull of ``arm`` that was not selected by this policy (e.g. a
        trial found running when the state is rebuilt); its result is then taken by
        :meth:`update` like any pending pull's.

        Args:
            arm: the pulled arm.
            burn_in_slot: ``None`` for a pull after the burn-in; else the burn-in slot ``s`` the
                pull took (Alg. E.1: ``s`` in ``[0, burn_in * K)`` with ``s mod K == arm``): it is
                pending as a burn-in pull (its result will be discarded) and the slots up to
                ``s`` count as issued, so the round robin goes on after it.
        """
        arm = self._check_arm(arm)
        if burn_in_slot is None:
            self._pending[arm] += 1
            return
        if self.burn_in == 0:
            raise ValueError(f"burn_in_slot={burn_in_slot!r} needs a policy with burn_in >= 1 "
                             "(this policy has burn_in=0)")
        slot = check_int("burn_in_slot", burn_in_slot, low=0, high=self.burn_in * self.n_arms - 1)
        if slot % self.n_arms != arm:
            raise ValueError(f"burn_in_slot {slot} is a slot of arm {slot % self.n_arms} "
                             f"(slot mod {self.n_arms}), not of arm {arm}")
        self._burn_pending[arm] += 1
        self._burn_issued = max(self._burn_issued, slot + 1)

    def cancel(self, arm: int) -> None:
        """Release one pending pull of ``arm`` without a result (a crashed trial is not credited).

        Burn-in pulls are released first; cancelling an arm with nothing pending is a no-op.
        """
        arm = self._check_arm(arm)
        if self._burn_pending[arm] > 0:
            self._burn_pending[arm] -= 1
        elif self._pending[arm] > 0:
            self._pending[arm] -= 1

    # ----------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state (parameters, recorded history, pending pulls, burn-in)."""
        return STATE_FORMAT.stamp({
            "type": self.kind,
            "params": self._params(),
            "history": [[a, x] for a, x in self._history],
            "pending": list(self._pending),
            "burn_pending": list(self._burn_pending),
            "burn_issued": self._burn_issued,
            "burn_discarded": [[a, x] for a, x in self._burn_discarded],
        })

    @classmethod
    def from_state_dict(cls: type[_P], state: Mapping[str, Any]) -> _P:
        """Rebuild a policy from :meth:`state_dict` output (the ``type`` must match ``cls``).

        Every field is checked before it is used (a state file may be hand-edited or corrupt):
        losses must be finite, arms in ``[0, K-1]``, pending counts ints ``>= 0`` (one per arm),
        ``burn_issued`` in ``[0, burn_in * K]``; the error names the offending field, e.g.
        ``state['pending'][1] must be an int >= 0, got -1``.
        """
        if not isinstance(state, Mapping):
            raise TypeError(f"state must be a mapping (from state_dict()), got {type(state).__name__}")
        if state.get("type") != cls.kind:
            raise ValueError(f"state is for policy {state.get('type')!r}, not {cls.kind!r}")
        params = _state_field(state, "params")
        if not isinstance(params, dict):
            raise TypeError(f"state['params'] must be a dict, got {type(params).__name__}")
        state = STATE_FORMAT.read(state)  # version 1: min_pulls = 1 and floor = 0 (Alg. 1)
        obj = cls(**state["params"])
        k = obj.n_arms
        for arm, x in _state_pairs(state, "history", k):
            obj._history.append((arm, x))
            obj._losses[arm].append(x)
        obj._pending = _state_counts(state, "pending", k)
        obj._burn_pending = _state_counts(state, "burn_pending", k)
        obj._burn_issued = check_int(
            "state['burn_issued']", _state_field(state, "burn_issued"), low=0, high=obj.burn_in * k
        )
        obj._burn_discarded = _state_pairs(state, "burn_discarded", k)
        return obj

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({params})"


class _AlphaPolicy(IndexPolicy):
    """An index policy with an exploration parameter ``alpha >= 0`` (paper default 0.5)."""

    def __init__(
        self,
        n_arms: int,
        alpha: float = 0.5,
        burn_in: int = 0,
        seed: int | None = None,
        min_pulls: int = 1,
        floor: float = 0.0,
    ) -> None:
        self.alpha = _check_nonneg_float("alpha", alpha)
        super().__init__(n_arms, burn_in=burn_in, seed=seed, min_pulls=min_pulls, floor=floor)

    def _params(self) -> dict[str, Any]:
        return {**super()._params(), "alpha": self.alpha}


class MaxUCB(_AlphaPolicy):
    """MaxUCB (Balef, Vernade, Eggensperger: *Put CASH on Bandits*, Alg. 1; burn-in Alg. E.1).

    Index ``U_i = max_j r_ij + (alpha * ln(t) / n_i)^2`` on rewards ``r = -loss`` min-max scaled
    to (0.01, 0.99) over all observations; see the module docstring for ``t``, ties, burn-in and
    parallel (pending) pulls.

    Args:
        n_arms: number of arms (model classes) ``K >= 1``.
        alpha: exploration parameter ``alpha >= 0`` (paper default 0.5 for rewards in [0, 1]).
        burn_in: burn-in rounds ``C >= 0`` (Alg. E.1; 0 = plain Alg. 1).
        seed: accepted for a uniform interface; MaxUCB is deterministic.
        min_pulls, floor: see :class:`IndexPolicy` (defaults: Alg. 1's one pull per arm, no
            floor; the CASH settings of :mod:`uvp_plugins.bandits.cash_bandit` add a floor).

    Example:
        >>> b = MaxUCB(2)
        >>> b.update(b.select(), 0.3); b.update(b.select(), 0.1)
        >>> b.select()  # arm 1 has the higher max reward, equal bonus
        1
    """

    kind: ClassVar[str] = "MaxUCB"

    def _index(self, rewards: np.ndarray, n: int, t: int) -> float:
        return float(rewards.max()) + (self.alpha * math.log(t) / n) ** 2


class UCB(_AlphaPolicy):
    """Classic UCB1 (Auer, 2002) on the same scaled rewards: ``mean_i + sqrt(alpha ln t / n_i)``.

    The paper's baseline (Table D.5: ``alpha = 0.5``); same initial phase, ties, burn-in and
    pending-pull conventions as :class:`MaxUCB`.
    """

    kind: ClassVar[str] = "UCB"

    def _index(self, rewards: np.ndarray, n: int, t: int) -> float:
        return float(rewards.mean()) + math.sqrt(self.alpha * math.log(t) / n)


class QuantileUCB(_AlphaPolicy):
    """Quantile UCB (Balef et al., 2024; paper Table D.5: ``alpha = 0.5``, ``tau = 0.95``).

    Index ``q_tau(r_i) + sqrt(alpha ln t / n_i)`` with the empirical ``tau``-quantile (linear
    interpolation, ``numpy.quantile``) of the arm's scaled rewards; conventions as :class:`MaxUCB`.
    """

    kind: ClassVar[str] = "QuantileUCB"

    def __init__(
        self,
        n_arms: int,
        alpha: float = 0.5,
        tau: float = 0.95,
        burn_in: int = 0,
        seed: int | None = None,
        min_pulls: int = 1,
        floor: float = 0.0,
    ) -> None:
        t = _check_nonneg_float("tau", tau)
        if t > 1.0:
            raise ValueError(f"tau must be a float in [0, 1], got {tau!r}")
        self.tau = t
        super().__init__(n_arms, alpha=alpha, burn_in=burn_in, seed=seed, min_pulls=min_pulls,
                         floor=floor)

    def _params(self) -> dict[str, Any]:
        return {**super()._params(), "tau": self.tau}

    def _index(self, rewards: np.ndarray, n: int, t: int) -> float:
        return float(np.quantile(rewards, self.tau)) + math.sqrt(self.alpha * math.log(t) / n)


class RoundRobin(IndexPolicy):
    """Uniform allocation: arms in turn ``0, 1, ..., K-1, 0, ...`` by number of selections.

    With pending pulls the next arm is the one with the fewest recorded-plus-pending pulls (ties
    to the lowest index), which in sequential use is exactly the cycle.
    """

    kind: ClassVar[str] = "RoundRobin"

    def _choose(self, among: np.ndarray) -> int:
        counts = (np.asarray(self.n_pulls) + np.asarray(self.pending))[among]
        return int(among[int(np.argmin(counts))])

    def _index(self, rewards: np.ndarray, n: int, t: int) -> float:
        return -float(n)


#: policy classes by their state-dict ``type``
POLICIES: dict[str, type[IndexPolicy]] = {
    cls.kind: cls for cls in (MaxUCB, UCB, QuantileUCB, RoundRobin)
}


def policy_from_state_dict(state: Mapping[str, Any]) -> IndexPolicy:
    """Rebuild any policy of this module from its :meth:`~IndexPolicy.state_dict`."""
    if not isinstance(state, Mapping):
        raise TypeError(f"a policy state must be a mapping (from state_dict()), got "
                        f"{type(state).__name__}")
    kind = state.get("type")
    if kind not in POLICIES:
        raise ValueError(f"unknown policy type {kind!r}; known: {', '.join(POLICIES)}")
    return POLICIES[kind].from_state_dict(state)

"""The upper level of two-level CASH: which model class gets the next HPO step, framework-free.

Balef, Vernade & Eggensperger (*Put CASH on Bandits*, 2025) split combined algorithm selection
and hyperparameter optimisation into a max-K-armed bandit over the model classes (the *arms*)
and one HPO per class (Fig. 1 right). :class:`CashBandit` is that bandit as one online object,
shaped for an adapter that translates a framework's events (SMAC's intensifier today, an Optuna
sampler tomorrow):

* :meth:`~CashBandit.ask` -- the arm of the next trial, chosen by an index policy of
  :mod:`uvp_plugins.bandits.policies` (MaxUCB, Alg. 1, with the burn-in of Alg. E.1 by default)
  among the arms that are still *available*; the pull is pending until its result arrives.
* :meth:`~CashBandit.tell` -- the finite loss of a trial, credited to the arm it is told for
  (results may arrive in any order: parallel workers).
* :meth:`~CashBandit.fail` -- a trial of that arm crashed (or produced no usable loss): it is
  never credited as a reward. An arm whose last ``max_consecutive_crashes`` results were all
  failures is *retired* (reason ``"crashed"``), so an arm that always fails cannot absorb the
  whole budget.
* :meth:`~CashBandit.release` -- a pull that produced no trial at all (e.g. the adapter could not
  build a configuration, or a trial was discarded); no reward, no crash.
* :meth:`~CashBandit.add_pending` -- a running trial the adapter found rather than asked for (a
  state rebuilt from a storage): its pull counts as pending like an asked one.
* :meth:`~CashBandit.retire` -- the adapter takes an arm out of the choice (e.g. ``"exhausted"``:
  the arm's HPO has no new configuration, as an arm without hyperparameters after its one
  evaluation). A retired arm's observations keep counting in the statistics (they are part of
  the rewards' min-max scaling and of ``t``).
* :meth:`~CashBandit.state_dict` / :meth:`~CashBandit.from_state_dict` -- the whole state as
  versioned JSON (format :data:`STATE_FORMAT`, ``"uvp-cash-bandit/2"``): the policy's state (observations, pending
  pulls, burn-in; policy state format ``uvp-bandit-policy/3``, versions 1-2 still read), the retired arms and the crash
  streaks.

Every rule an adapter needs is here, so the adapters translate only:

* :class:`CashSettings` and :meth:`~CashBandit.from_settings` -- which policy, which policies
  take ``alpha``, the burn-in, ``min_pulls``, the exploration floor and the per-arm design size
  (:meth:`CashSettings.design_size`, :func:`paper_design_size`), with the CASH defaults
  (:data:`CASH_MAXUCB_ALPHA`, :data:`CASH_FLOOR`, :data:`CASH_DESIGN`; chosen on declared tuning
  tasks, ``docs/results/cash_yahpo6.md``).
* :meth:`~CashBandit.rebuild` -- the bandit from a store of trials (:class:`PullRecord`), in one
  replay order (Optuna's storage).
* :meth:`~CashBandit.reconcile` -- a restored state brought in line with the store it was saved
  beside (SMAC's ``intensifier.json`` and ``runhistory.json``).

Choice among the available arms (the policy's own rule restricted to them,
:meth:`IndexPolicy.select <uvp_plugins.bandits.policies.IndexPolicy.select>` with a mask): a
burn-in pull of a retired arm is skipped (its round-robin slot is used up), the initial phase
pulls the available arm with the fewest pulls (recorded plus pending; ties to the lowest index),
afterwards the available arm with the largest index ``U_i``. With every arm available the choices
are exactly Alg. 1 (and Alg. E.1). Every chosen pull is registered as pending, so asks made ahead
of results (parallel workers) spread over the arms as the policy's pending-pull rule says.

Example (Balef et al., Alg. 1: one pull per arm first, then the largest
``max_j r_ij + (alpha ln t / n_i)^2``; arm 2 always crashes: as it still has no observation it is
pulled again in the initial phase, and retired after its second failure in a row; from then on
Alg. 1 runs on arms 0 and 1, and after the 7th trial arm 0's exploration bonus wins):

    >>> bandit = CashBandit(3, policy="MaxUCB", alpha=0.5, max_consecutive_crashes=2)
    >>> losses = {0: [0.40, 0.35, 0.38], 1: [0.20, 0.50, 0.30, 0.25]}
    >>> arms = []
    >>> for _ in range(7):
    ...     arm = bandit.ask()
    ...     arms.append(arm)
    ...     if arm == 2:
    ...         bandit.fail(arm)                  # a crash: never a reward
    ...     else:
    ...         bandit.tell(arm, losses[arm].pop(0))
    >>> arms
    [0, 1, 2, 2, 1, 1, 1]
    >>> bandit.retired, bandit.n_pulls
    ({2: 'crashed'}, [1, 4, 0])
    >>> state = bandit.state_dict()
    >>> import json
    >>> restored = CashBandit.from_state_dict(json.loads(json.dumps(state)))
    >>> restored.ask(), bandit.ask()
    (0, 0)
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from uvp_plugins.bandits.policies import POLICIES, IndexPolicy, policy_from_state_dict
from uvp_plugins.contract import StateFormat
from uvp_plugins.validation import check_choice, check_float, check_int

__all__ = [
    "ALPHA_POLICIES",
    "CASH_DESIGN",
    "CASH_FLOOR",
    "CASH_MAXUCB_ALPHA",
    "CashBandit",
    "CashSettings",
    "PullRecord",
    "RETIRE_REASONS",
    "paper_design_size",
]



def _policy_tagged(state: dict[str, Any]) -> dict[str, Any]:
    """Version 2 is version 1 with the policy's part tagged ``"uvp-bandit-policy/<v>"``
    instead of carrying ``"version": <v>``; the policy's reader takes both, so a version-1
    state reads as it is."""
    return state


#: the state format (:mod:`uvp_plugins.contract`). The policy's part has its own format
#: (:data:`uvp_plugins.bandits.policies.STATE_FORMAT`, read by
#: :func:`~uvp_plugins.bandits.policies.policy_from_state_dict`); version 1 held it with an
#: integer ``"version"`` (1 or 2), version 2 under its format tag.
STATE_FORMAT = StateFormat("uvp-cash-bandit", 2, upgrades={1: _policy_tagged})

#: why an arm is no longer offered: its HPO has nothing new, or it crashed too often in a row
RETIRE_REASONS = ("exhausted", "crashed")

#: the policies with an exploration parameter ``alpha`` (``RoundRobin`` has none)
ALPHA_POLICIES = ("MaxUCB", "UCB", "QuantileUCB")

#: MaxUCB's ``alpha`` when the settings give none (the policy's own default is the paper's 0.5):
#: the paper's sensitivity study (App. D.4, Table D.6) finds larger values better at T = 200 on
#: YaHPOGym (alpha 0.8: 75/0/28 against combined search, 0.5: 64/0/39), and ``alpha = 1`` makes
#: the bonus ``(alpha ln t / n)^2`` bring back any arm with ``n < ln t`` pulls, whatever its
#: rewards; chosen on the tuning tasks of docs/results/cash_yahpo6.md
CASH_MAXUCB_ALPHA = 1.0

#: the exploration floor ``c`` when the settings give none: an arm below ``2 ln t`` pulls is
#: pulled first (about 11 pulls by t = 200), so a class whose HPO starts in a bad region keeps
#: getting trials until its own model has data to leave it (docs/results/cash_yahpo6.md: with
#: ``c = 1`` xgboost was still locked out in 3 of 10 seeds of cash-yahpo task 40966)
CASH_FLOOR = 2.0

#: configurations in each arm's initial design after its default when the settings give none:
#: none, each arm's HPO models from its default configuration on. Random designs cost most early
#: (six designs of 50 / (K - 1) + 1 configurations take a third of 200 trials) and were the
#: costliest choice on the tuning tasks of docs/results/cash_yahpo6.md
CASH_DESIGN = 0

#: the configurations of the paper's initial designs (App. D): ``50 - K`` for combined search,
#: ``50 / (K - 1)`` per arm for the two-level approach
PAPER_DESIGN_TOTAL = 50


def paper_design_size(n_arms: int, n_trials: int | None = None) -> int:
    """Configurations in each arm's initial design after its default (App. D).

    "[W]e always evaluate the default configuration for each model first and then allow SMAC to
    run an initial design of 50 - #arms configurations in the upper level and 50 / (#arms - 1) in
    the lower level": ``floor(50 / (K - 1))`` (50 for a single arm), capped when the number of
    trials is known so that the ``K`` designs, defaults included, fit into it (at most
    ``n_trials // K - 1`` each, never below 0).

    Example:
        >>> paper_design_size(6), paper_design_size(6, n_trials=200), paper_design_size(8, 30)
        (10, 10, 2)
    """
    k = check_int("n_arms", n_arms, low=1)
    size = PAPER_DESIGN_TOTAL // max(1, k - 1)
    if n_trials is not None:
        size = min(size, check_int("n_trials", n_trials, low=1) // k - 1)
    return max(0, size)


@dataclass(frozen=True)
class CashSettings:
    """How the CASH bandit is set up, independent of the number of arms: one object for every
    adapter, resolved for ``K`` arms (and, where known, the number of trials) by
    :meth:`CashBandit.from_settings`.

    Args:
        policy: a policy name of :data:`~uvp_plugins.bandits.POLICIES`.
        alpha: the exploration parameter of the policies in :data:`ALPHA_POLICIES`
            (``None``: the policy's default, 0.5); a policy without one (``RoundRobin``) refuses
            a value.
        burn_in: burn-in rounds ``C`` (Alg. E.1, results discarded), or ``"design"``: one round
            per configuration of an arm's initial design, its default included
            (``1 + design_size``).
        min_pulls: recorded pulls per arm before the index decides (Alg. 1: 1), or
            ``"design"``: ``1 + design_size``, the arm's whole initial design observed.
        floor: the exploration floor ``c`` of the policy (an arm below ``c ln t`` pulls is
            pulled first; ``0``: none, Alg. 1).
        design: configurations in each arm's initial design after its default (default
            :data:`CASH_DESIGN`, 0: each arm's HPO models from its default on; ``None``: the
            paper's :func:`paper_design_size`); the adapters size their per-arm HPO with
            :meth:`design_size`.
        max_consecutive_crashes: retire an arm after this many failures in a row (``None``:
            never).

    Raises:
        ValueError / TypeError: a setting outside its range, named in the message.
    """

    policy: str = "MaxUCB"
    alpha: float | None = None
    burn_in: int | str = 0
    min_pulls: int | str = 1
    floor: float = CASH_FLOOR
    design: int | None = CASH_DESIGN
    max_consecutive_crashes: int | None = 5

    def __post_init__(self) -> None:
        check_choice("policy", self.policy, tuple(POLICIES))
        if self.alpha is not None:
            if self.policy not in ALPHA_POLICIES:
                raise ValueError(f"alpha is not a parameter of policy {self.policy!r} (it has no "
                                 "exploration term); leave alpha unset (None)")
            object.__setattr__(self, "alpha", check_float("alpha", self.alpha, low=0.0))
        for name in ("burn_in", "min_pulls"):
            value = getattr(self, name)
            if isinstance(value, str):
                check_choice(name, value, ("design",))
            else:
                object.__setattr__(self, name, check_int(name, value, low=0 if name == "burn_in" else 1))
        object.__setattr__(self, "floor", check_float("floor", self.floor, low=0.0))
        if self.design is not None:
            object.__setattr__(self, "design", check_int("design", self.design, low=0))
        if self.max_consecutive_crashes is not None:
            object.__setattr__(self, "max_consecutive_crashes",
                               check_int("max_consecutive_crashes", self.max_consecutive_crashes, low=1))

    def design_size(self, n_arms: int, n_trials: int | None = None) -> int:
        """Configurations of each arm's initial design after its default (``design``, else
        :func:`paper_design_size`; capped by ``n_trials // K - 1`` when ``n_trials`` is known)."""
        if self.design is None:
            return paper_design_size(n_arms, n_trials)
        if n_trials is None:
            return self.design
        return max(0, min(self.design, check_int("n_trials", n_trials, low=1) // n_arms - 1))

    def policy_kwargs(self, n_arms: int, n_trials: int | None = None) -> dict[str, Any]:
        """The keyword arguments of the policy for ``n_arms`` arms (``"design"`` resolved)."""
        per_arm = 1 + self.design_size(n_arms, n_trials)
        kwargs: dict[str, Any] = {
            "burn_in": per_arm if self.burn_in == "design" else self.burn_in,
            "min_pulls": per_arm if self.min_pulls == "design" else self.min_pulls,
            "floor": self.floor,
        }
        if self.policy in ALPHA_POLICIES and self.alpha is not None:
            kwargs["alpha"] = self.alpha
        elif self.policy == "MaxUCB":
            kwargs["alpha"] = CASH_MAXUCB_ALPHA
        return kwargs

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (:meth:`from_dict` reads it back)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CashSettings:
        unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"unknown CASH settings {unknown}")
        return cls(**data)


@dataclass(frozen=True)
class PullRecord:
    """One trial as an adapter finds it in its framework's store, for :meth:`CashBandit.rebuild`.

    Args:
        arm: the trial's arm.
        state: ``"running"``, ``"complete"`` (a finite loss to credit) or ``"failed"`` (crashed,
            pruned, no usable loss).
        loss: the loss of a complete trial (lower is better), else ``None``.
        finished: the finish time's sort key (e.g. a timestamp; ``None`` sorts first) and
        number: the trial's number, the tie-breaker: finished trials are replayed in this order.
        burn_in_slot: the burn-in slot the pull took (Alg. E.1), or ``None``.
        exhausted: a complete trial of an arm whose HPO has nothing new after it (an arm
            without hyperparameters): the arm is retired as ``"exhausted"``.
    """

    arm: int
    state: str
    loss: float | None = None
    finished: float | None = None
    number: int = 0
    burn_in_slot: int | None = None
    exhausted: bool = False

    def __post_init__(self) -> None:
        check_choice("state", self.state, ("running", "complete", "failed"))
        if self.state == "complete" and (self.loss is None or not math.isfinite(float(self.loss))):
            raise ValueError(f"a complete pull needs a finite loss, got {self.loss!r} (a trial "
                             "without one is 'failed')")


class CashBandit:
    """An index policy choosing among the available arms, with the crash rule and JSON state.

    An ask/tell object of the core contract (:class:`uvp_plugins.contract.AskTell`): its state
    is :data:`STATE_FORMAT` (``"uvp-cash-bandit/2"``).

    Args:
        n_arms: number of arms (model classes) ``K >= 1``; arms are ``0 .. K-1``.
        policy: a policy name of :data:`uvp_plugins.bandits.POLICIES` (``"MaxUCB"``,
            ``"UCB"``, ``"QuantileUCB"``, ``"RoundRobin"``), built as
            ``POLICIES[policy](n_arms, **policy_kwargs)``, or an
            :class:`~uvp_plugins.bandits.IndexPolicy` instance with ``n_arms`` arms (then no
            ``policy_kwargs``).
        max_consecutive_crashes: retire an arm after this many failures in a row
            (:meth:`fail`); ``None`` never retires for crashes.
        **policy_kwargs: the policy's parameters, e.g. ``alpha=0.5, burn_in=0`` for MaxUCB.

    See the module docstring for the rules and an example.
    """

    #: the format of :meth:`state_dict` (``"uvp-cash-bandit/2"``)
    STATE_FORMAT: ClassVar[StateFormat] = STATE_FORMAT

    def __init__(
        self,
        n_arms: int,
        policy: str | IndexPolicy = "MaxUCB",
        *,
        max_consecutive_crashes: int | None = 5,
        **policy_kwargs: Any,
    ) -> None:
        k = check_int("n_arms", n_arms, low=1)
        if isinstance(policy, IndexPolicy):
            if policy_kwargs:
                raise TypeError("policy_kwargs are only accepted with a policy name, got "
                                f"{sorted(policy_kwargs)} with a {type(policy).__name__} instance")
            if policy.n_arms != k:
                raise ValueError(f"policy has {policy.n_arms} arms, but n_arms={k}")
            self._policy = policy
        else:
            name = check_choice("policy", policy, tuple(POLICIES))
            self._policy = POLICIES[name](k, **policy_kwargs)
        if max_consecutive_crashes is not None:
            max_consecutive_crashes = check_int(
                "max_consecutive_crashes", max_consecutive_crashes, low=1
            )
        self.max_consecutive_crashes = max_consecutive_crashes
        self._retired: list[str | None] = [None] * k
        self._crash_streak = [0] * k
        self._last_burn_in_slot: int | None = None

    # ------------------------------------------------------------------ facts
    @property
    def n_arms(self) -> int:
        """Number of arms ``K``."""
        return self._policy.n_arms

    @property
    def policy(self) -> IndexPolicy:
        """The wrapped index policy (its statistics: ``n_pulls``, ``history()``, ``indices()``)."""
        return self._policy

    @property
    def available(self) -> list[bool]:
        """Per arm: True while it can still be chosen by :meth:`ask`."""
        return [r is None for r in self._retired]

    @property
    def retired(self) -> dict[int, str]:
        """The retired arms with their reason (``"exhausted"`` or ``"crashed"``)."""
        return {i: r for i, r in enumerate(self._retired) if r is not None}

    @property
    def crash_streak(self) -> list[int]:
        """Per arm: failures since its last credited result."""
        return list(self._crash_streak)

    @property
    def n_pulls(self) -> list[int]:
        """Credited results per arm (failures, releases and burn-in results excluded)."""
        return self._policy.n_pulls

    @property
    def pending(self) -> list[int]:
        """Per arm: pulls asked for and not yet told, failed or released."""
        return self._policy.pending

    # --------------------------------------------------------------- ask/tell
    def ask(self) -> int | None:
        """The arm of the next trial (a pending pull), or ``None`` when every arm is retired."""
        available = self.available
        self._last_burn_in_slot = None
        if not any(available):
            return None
        issued = self._policy.burn_issued
        arm = self._policy.select(available=available)
        last = self._policy.burn_issued - 1
        if last >= issued and last % self.n_arms == arm:
            # the select ended on a burn-in slot of the arm it returned (skipped slots belong to
            # unavailable arms, a choice after the burn-in to an available one)
            self._last_burn_in_slot = last
        return arm

    @property
    def last_burn_in_slot(self) -> int | None:
        """The burn-in slot (Alg. E.1 round robin, ``0 .. burn_in*K - 1``) the last :meth:`ask`
        took, or ``None`` if that pull was not a burn-in pull. An adapter that keeps pulls in an
        external store records it and gives it back to :meth:`add_pending` when it rebuilds."""
        return self._last_burn_in_slot

    def tell(self, arm: int, loss: float) -> None:
        """Credit the finite ``loss`` (lower is better) of a trial of ``arm``; ends its crash
        streak. Results may arrive in any order and for retired arms (they still count).

        Raises:
            TypeError / ValueError: ``arm`` not an int in ``[0, K-1]``; ``loss`` not a finite
                number (report a crashed trial with :meth:`fail`).
        """
        self._policy.update(arm, loss)
        self._crash_streak[int(arm)] = 0

    def fail(self, arm: int) -> None:
        """A trial of ``arm`` crashed: release its pull, never credit it; retire the arm after
        ``max_consecutive_crashes`` failures in a row (reason ``"crashed"``)."""
        arm = self._check_arm(arm)
        self._policy.cancel(arm)
        self._crash_streak[arm] += 1
        limit = self.max_consecutive_crashes
        if limit is not None and self._crash_streak[arm] >= limit and self._retired[arm] is None:
            self._retired[arm] = "crashed"

    def release(self, arm: int) -> None:
        """Release one pending pull of ``arm`` that produced no trial (no reward, no crash)."""
        self._policy.cancel(self._check_arm(arm))

    def add_pending(self, arm: int, burn_in_slot: int | None = None) -> None:
        """Register a running trial of ``arm`` that was not asked through this object (e.g.
        found running when an adapter rebuilds the bandit from a storage or a run history);
        its :meth:`tell` / :meth:`fail` / :meth:`release` then ends that pull. A pull that was
        a burn-in pull gives its slot (:attr:`last_burn_in_slot` of the ask that made it), see
        :meth:`IndexPolicy.add_pending <uvp_plugins.bandits.policies.IndexPolicy.add_pending>`."""
        self._policy.add_pending(arm, burn_in_slot)

    def retire(self, arm: int, reason: str = "exhausted") -> None:
        """Stop offering ``arm`` (an arm already retired keeps its first reason). Pending pulls
        are not released: their results are still credited when they arrive."""
        arm = self._check_arm(arm)
        reason = check_choice("reason", reason, RETIRE_REASONS)
        if self._retired[arm] is None:
            self._retired[arm] = reason

    # --------------------------------------------------------------- settings
    @classmethod
    def from_settings(
        cls, n_arms: int, settings: CashSettings | None = None, n_trials: int | None = None
    ) -> CashBandit:
        """The bandit ``settings`` describe, for ``n_arms`` arms and, where the adapter knows
        it, ``n_trials`` trials (it caps the per-arm design, :meth:`CashSettings.design_size`).

        Example:
            >>> b = CashBandit.from_settings(6, CashSettings(min_pulls="design", design=None),
            ...                              n_trials=200)
            >>> b.policy.min_pulls, b.policy.alpha, b.policy.floor
            (11, 1.0, 2.0)
        """
        settings = CashSettings() if settings is None else settings
        if not isinstance(settings, CashSettings):
            raise TypeError(f"settings must be a CashSettings, got {type(settings).__name__}")
        return cls(n_arms, settings.policy, max_consecutive_crashes=settings.max_consecutive_crashes,
                   **settings.policy_kwargs(n_arms, n_trials))

    @classmethod
    def rebuild(
        cls,
        n_arms: int,
        pulls: Iterable[PullRecord],
        settings: CashSettings | None = None,
        n_trials: int | None = None,
    ) -> CashBandit:
        """The bandit as an external store of trials says (an adapter that keeps no state of its
        own, e.g. Optuna's storage): one fixed replay order, so every process that reads the
        same trials builds the same bandit.

        Finished burn-in pulls are replayed first (each registered at its slot, then told or
        failed: its result is discarded, Alg. E.1), then the other finished pulls, each group in
        the order the trials finished (``(finished, number)``: the crash rule counts failures in
        a row), then the running pulls as pending (burn-in ones at their slot); an arm with an
        ``exhausted`` complete pull is retired as ``"exhausted"``.
        """
        bandit = cls.from_settings(n_arms, settings, n_trials)
        records = list(pulls)
        finished = [r for r in records if r.state != "running"]

        def order(r: PullRecord) -> tuple[bool, bool, float, int]:
            return (r.burn_in_slot is None, r.finished is not None,
                    -math.inf if r.finished is None else r.finished, r.number)

        for r in sorted(finished, key=order):
            if r.burn_in_slot is not None:
                bandit.add_pending(r.arm, burn_in_slot=r.burn_in_slot)
            if r.state == "complete":
                bandit.tell(r.arm, float(r.loss))  # type: ignore[arg-type]
            else:
                bandit.fail(r.arm)
        for r in records:
            if r.state == "running":
                bandit.add_pending(r.arm, burn_in_slot=r.burn_in_slot)
        for arm in sorted({r.arm for r in finished if r.exhausted and r.state == "complete"}):
            bandit.retire(arm, "exhausted")
        return bandit

    def reconcile(self, successes: list[list[float]], running: list[int]) -> list[tuple[int, float]]:
        """Bring a restored state in line with the store of trials it was saved beside (an
        adapter that persists this state next to its framework's own record of the trials, e.g.
        SMAC's ``intensifier.json`` beside ``runhistory.json``, which a killed process may have
        written one without the other).

        * Every finite loss of ``successes[arm]`` (the store's credited results of that arm) that
          the state lacks (compared as a multiset with the recorded and burn-in results of the
          arm) is credited now, smallest first.
        * Each arm's pending pulls are set to ``running[arm]`` (the store's running trials):
          surplus pending pulls (asked before the process stopped, never run) are released,
          missing ones registered.

        Returns the ``(arm, loss)`` pairs credited now.
        """
        k = self.n_arms
        if len(successes) != k or len(running) != k:
            raise ValueError(f"successes and running must have one entry per arm ({k})")
        state = self._policy.state_dict()
        taken: list[Counter[float]] = [Counter() for _ in range(k)]
        for arm, value in state["history"] + state["burn_discarded"]:
            taken[arm][float(value)] += 1
        credited = []
        for arm, values in enumerate(successes):
            missing = Counter(float(v) for v in values) - taken[arm]
            for value in sorted(missing.elements()):
                self.tell(arm, value)
                credited.append((arm, value))
        for arm in range(k):
            target = check_int(f"running[{arm}]", running[arm], low=0)
            while self.pending[arm] > target:
                self.release(arm)
            while self.pending[arm] < target:
                self.add_pending(arm)
        return credited

    # ------------------------------------------------------------ persistence
    def state_dict(self) -> dict[str, Any]:
        """The complete state as JSON-serialisable data (format :data:`STATE_FORMAT`,
        ``"uvp-cash-bandit/2"``)."""
        return STATE_FORMAT.stamp({
            "max_consecutive_crashes": self.max_consecutive_crashes,
            "policy": self._policy.state_dict(),
            "retired": list(self._retired),
            "crash_streak": list(self._crash_streak),
        })

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> CashBandit:
        """Rebuild a bandit from :meth:`state_dict` output; every field is checked and named in
        the error if it is invalid."""
        if not isinstance(state, Mapping):
            raise TypeError(f"state must be a mapping (from state_dict()), got {type(state).__name__}")
        state = STATE_FORMAT.read(state)
        for key in ("max_consecutive_crashes", "policy", "retired", "crash_streak"):
            if key not in state:
                raise ValueError(f"state is missing {key!r}")
        policy = policy_from_state_dict(state["policy"])
        bandit = cls(
            policy.n_arms, policy, max_consecutive_crashes=state["max_consecutive_crashes"]
        )
        k = policy.n_arms
        retired, streak = state["retired"], state["crash_streak"]
        if not isinstance(retired, list) or len(retired) != k:
            raise ValueError(f"state['retired'] must be a list of {k} entries (None or one of "
                             f"{RETIRE_REASONS}), got {retired!r}")
        bandit._retired = [
            None if r is None else check_choice(f"state['retired'][{i}]", r, RETIRE_REASONS)
            for i, r in enumerate(retired)
        ]
        if not isinstance(streak, list) or len(streak) != k:
            raise ValueError(f"state['crash_streak'] must be a list of {k} ints >= 0, got {streak!r}")
        bandit._crash_streak = [
            check_int(f"state['crash_streak'][{i}]", c, low=0) for i, c in enumerate(streak)
        ]
        return bandit

    # -------------------------------------------------------------- internals
    def _check_arm(self, arm: Any) -> int:
        return self._policy._check_arm(arm)

    def __repr__(self) -> str:
        return (f"CashBandit({self._policy!r}, max_consecutive_crashes="
                f"{self.max_consecutive_crashes!r}, retired={self.retired})")

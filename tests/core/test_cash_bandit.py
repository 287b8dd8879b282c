"""CashBandit: an index policy choosing among the available arms, the crash rule, JSON state."""

from __future__ import annotations

import doctest
import json

import numpy as np
import pytest

import uvp_plugins.bandits.cash_bandit as cash_bandit_module
from uvp_plugins.bandits import POLICIES, CashBandit, MaxUCB, QuantileUCB, RoundRobin


def _oracle(core: MaxUCB, available: list[bool]) -> int:
    """The documented rule written out: the policy's arm if it is available, else the policy's
    rule on the available arms (round robin while one has no observation, then the largest
    index). Sequential use only (nothing pending when it is called)."""
    choice = core.select()
    if available[choice]:
        return choice
    core.cancel(choice)
    idx = [i for i, a in enumerate(available) if a]
    n = core.n_pulls
    if min(n[i] for i in idx) == 0:
        return min(idx, key=lambda i: (n[i], i))
    index = core.indices()
    pick = max(idx, key=lambda i: (index[i], -i))
    core._pending[pick] += 1  # the oracle's pick is now the pending pull
    return pick


def test_docstring_example_runs() -> None:
    result = doctest.testmod(cash_bandit_module, raise_on_error=True)
    assert result.attempted >= 8


@pytest.mark.parametrize("name", list(POLICIES))
def test_with_every_arm_available_it_is_exactly_the_policy(name: str) -> None:
    rng = np.random.default_rng(1)
    kwargs = {"burn_in": 2} if name != "RoundRobin" else {}
    bandit = CashBandit(4, name, **kwargs)
    plain = POLICIES[name](4, **kwargs)
    for _ in range(80):
        arm = bandit.ask()
        assert arm == plain.select()
        loss = float(rng.normal(0.1 * arm, 0.05))
        bandit.tell(arm, loss)
        plain.update(arm, loss)
    assert bandit.policy.state_dict() == plain.state_dict()


def test_retired_arms_are_never_chosen_and_the_rule_is_restricted() -> None:
    rng = np.random.default_rng(2)
    bandit = CashBandit(4, "MaxUCB", alpha=0.5)
    core = MaxUCB(4, alpha=0.5)
    available = [True] * 4
    for step in range(120):
        if step == 2:  # before arm 3's first pull: retired with no observation at all
            bandit.retire(3, "exhausted")
            available[3] = False
        if step == 30:  # the best arm (lowest losses) goes away
            bandit.retire(0, "exhausted")
            available[0] = False
        arm = bandit.ask()
        assert arm is not None and available[arm]
        assert arm == _oracle(core, available)
        loss = float(rng.normal([0.1, 0.3, 0.35, 0.0][arm], 0.1))
        bandit.tell(arm, loss)
        core.update(arm, loss)
    assert bandit.n_pulls[3] == 0 and bandit.retired == {0: "exhausted", 3: "exhausted"}
    assert bandit.n_pulls[0] > 0  # arm 0's observations still count in the statistics
    bandit.retire(1)
    bandit.retire(2, "crashed")
    assert bandit.ask() is None and bandit.available == [False] * 4


def test_burn_in_skips_the_slots_of_retired_arms() -> None:
    bandit = CashBandit(3, "MaxUCB", burn_in=2)
    bandit.retire(1)
    asked = []
    for _ in range(6):
        arm = bandit.ask()
        asked.append(arm)
        bandit.tell(arm, 0.5)
    # burn-in slots 0 1 2 0 1 2 -> arms 0 2 0 2 (results discarded), then Alg. 1 on {0, 2}
    assert asked == [0, 2, 0, 2, 0, 2]
    assert bandit.n_pulls == [1, 0, 1] and len(bandit.policy.state_dict()["burn_discarded"]) == 4


def test_crash_rule_retires_after_consecutive_failures_only() -> None:
    bandit = CashBandit(2, max_consecutive_crashes=3)
    for _ in range(2):
        assert bandit.ask() == 0
        bandit.fail(0)
    assert bandit.crash_streak == [2, 0] and bandit.available == [True, True]
    bandit.ask()  # arm 0 again (still no observation, fewest pulls)
    bandit.tell(0, 0.3)  # a success ends the streak
    assert bandit.crash_streak == [0, 0]
    for _ in range(3):
        bandit.fail(0)  # failures reported without an ask release nothing, still count
    assert bandit.retired == {0: "crashed"} and bandit.pending == [0, 0]
    assert bandit.n_pulls == [1, 0]  # never credited
    assert [bandit.ask() for _ in range(2)] == [1, 1]
    # a release is neither a reward nor a crash
    bandit.release(1)
    assert bandit.crash_streak == [3, 0] and bandit.pending == [0, 1]
    never = CashBandit(2, max_consecutive_crashes=None)
    for _ in range(50):
        never.fail(never.ask())
    assert never.retired == {}


def test_pulls_asked_ahead_are_pending_also_when_the_choice_is_restricted() -> None:
    bandit = CashBandit(3, "MaxUCB")
    for arm, loss in ((0, 0.1), (1, 0.2), (2, 0.3)):
        assert bandit.ask() == arm
        bandit.tell(arm, loss)
    bandit.retire(0)
    first, second = bandit.ask(), bandit.ask()
    # both restricted choices are registered: arm 1 (max reward 0.5) is asked twice, its second
    # index sees n_1 = 2 and t = 5 (the first pull is "on its way")
    assert (first, second) == (1, 1) and bandit.pending == [0, 2, 0]
    assert bandit.policy.t == 6
    third = bandit.ask()
    assert third == 2 and bandit.pending == [0, 2, 1]  # the pending pulls shifted the choice
    bandit.tell(third, 0.05)  # out of order
    bandit.fail(second)
    bandit.tell(first, 0.25)
    assert bandit.pending == [0, 0, 0] and bandit.n_pulls == [1, 2, 2]


def test_state_round_trip_mid_run_continues_identically() -> None:
    rng = np.random.default_rng(5)
    bandit = CashBandit(3, "QuantileUCB", burn_in=1, max_consecutive_crashes=2)
    for _ in range(9):
        arm = bandit.ask()
        if arm == 2:
            bandit.fail(arm)
        else:
            bandit.tell(arm, float(rng.random()))
    pending = bandit.ask()
    state = json.loads(json.dumps(bandit.state_dict()))
    assert state["format"] == "uvp-cash-bandit/1"
    twin = CashBandit.from_state_dict(state)
    assert twin.state_dict() == bandit.state_dict() and twin.retired == {2: "crashed"}
    twin.tell(pending, 0.2)
    bandit.tell(pending, 0.2)
    for _ in range(20):
        a, b = bandit.ask(), twin.ask()
        assert a == b
        loss = float(rng.random())
        bandit.tell(a, loss)
        twin.tell(b, loss)


@pytest.mark.parametrize(
    ("key", "value", "error", "message"),
    [
        ("format", "uvp-cash-bandit/0", ValueError, "state format must be 'uvp-cash-bandit/1'"),
        ("retired", [None, "broken", None], ValueError, r"state\['retired'\]\[1\] must be one of"),
        ("retired", [None], ValueError, r"state\['retired'\] must be a list of 3"),
        ("crash_streak", [0, -1, 0], ValueError, r"state\['crash_streak'\]\[1\] must be an int >= 0"),
        ("max_consecutive_crashes", 0, ValueError, "max_consecutive_crashes must be an int >= 1"),
    ],
)
def test_corrupt_state_is_rejected_naming_the_field(
    key: str, value: object, error: type, message: str
) -> None:
    state = CashBandit(3).state_dict()
    state[key] = value
    with pytest.raises(error, match=message):
        CashBandit.from_state_dict(state)
    state = CashBandit(3).state_dict()
    state["policy"]["pending"] = [0, -2, 0]
    with pytest.raises(ValueError, match=r"state\['pending'\]\[1\] must be an int >= 0"):
        CashBandit.from_state_dict(state)


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="n_arms must be an int >= 1"):
        CashBandit(0)
    with pytest.raises(ValueError, match="policy must be one of"):
        CashBandit(2, "Thompson")
    with pytest.raises(ValueError, match="alpha"):
        CashBandit(2, alpha=-1.0)
    with pytest.raises(ValueError, match="max_consecutive_crashes must be an int >= 1"):
        CashBandit(2, max_consecutive_crashes=0)
    with pytest.raises(ValueError, match="policy has 3 arms, but n_arms=2"):
        CashBandit(2, RoundRobin(3))
    with pytest.raises(TypeError, match="policy_kwargs"):
        CashBandit(2, QuantileUCB(2), tau=0.5)
    bandit = CashBandit(2)
    with pytest.raises(ValueError, match=r"arm must be an int in \[0, 1\]"):
        bandit.fail(2)
    with pytest.raises(ValueError, match="reason must be one of"):
        bandit.retire(0, "bored")
    with pytest.raises(ValueError, match="finite.*cancel"):
        bandit.tell(0, float("nan"))
    with pytest.raises(ValueError, match="available must be a sequence of 2 bools"):
        bandit.policy.select(available=[True])


def test_add_pending_registers_a_found_running_trial() -> None:
    bandit = CashBandit(2, "MaxUCB")
    bandit.add_pending(1)
    assert bandit.pending == [0, 1] and bandit.ask() == 0  # arm 1's pull is on its way
    bandit.tell(1, 0.2)
    bandit.tell(0, 0.3)
    assert bandit.pending == [0, 0] and bandit.n_pulls == [1, 1]
    with pytest.raises(ValueError, match=r"arm must be an int in \[0, 1\]"):
        bandit.add_pending(5)


def test_last_burn_in_slot_and_add_pending_rebuild_the_burn_in() -> None:
    # Alg. E.1 with C = 2, K = 3: slots 0..5 are round robin; arm 2 is retired after slot 2, so
    # slot 5 (arm 2) is skipped and the 6th ask is the first pull after the burn-in
    bandit = CashBandit(3, "MaxUCB", burn_in=2, max_consecutive_crashes=1)
    pulls = []
    for _ in range(6):
        arm = bandit.ask()
        pulls.append((arm, bandit.last_burn_in_slot))
        if arm == 2:
            bandit.fail(2)  # retired at once (max_consecutive_crashes=1)
    assert pulls == [(0, 0), (1, 1), (2, 2), (0, 3), (1, 4), (0, None)]
    # an adapter that stored the running pulls rebuilds the same state from them
    rebuilt = CashBandit(3, "MaxUCB", burn_in=2, max_consecutive_crashes=1)
    rebuilt.add_pending(2, burn_in_slot=2)
    rebuilt.fail(2)
    for arm, slot in pulls:
        if arm != 2:
            rebuilt.add_pending(arm, burn_in_slot=slot)
    assert rebuilt.pending == bandit.pending == [3, 2, 0]
    assert rebuilt.retired == bandit.retired == {2: "crashed"}
    # the skipped slot 5 after the last held one is not known to the rebuild; it is skipped
    # again, so both go on alike: burn-in results are discarded, the others credited (t restarts)
    assert (rebuilt.policy.burn_issued, bandit.policy.burn_issued) == (5, 6)
    for b in (bandit, rebuilt):
        for arm, loss in ((0, 0.5), (1, 0.1), (0, 0.4), (1, 0.3), (0, 0.2)):
            b.tell(arm, loss)
        assert b.n_pulls == [1, 0, 0] and b.policy.t == 2
    asks = [(b.ask(), b.last_burn_in_slot, b.ask(), b.policy.burn_issued) for b in (bandit, rebuilt)]
    assert asks[0] == asks[1] == (1, None, 0, 6)


def test_add_pending_burn_in_slot_is_checked() -> None:
    with pytest.raises(ValueError, match="needs a policy with burn_in >= 1"):
        CashBandit(2, "MaxUCB").add_pending(0, burn_in_slot=0)
    bandit = CashBandit(2, "MaxUCB", burn_in=1)
    with pytest.raises(ValueError, match="slot 1 is a slot of arm 1"):
        bandit.add_pending(0, burn_in_slot=1)
    with pytest.raises(ValueError, match=r"burn_in_slot must be an int in \[0, 1\]"):
        bandit.add_pending(0, burn_in_slot=2)
    # slots may be registered out of order (parallel workers): the round robin goes on after
    # the largest, and the hole (slot 0, still to be asked by nobody) is not reissued
    bandit.add_pending(1, burn_in_slot=1)
    assert bandit.policy.burn_issued == 2 and bandit.ask() == 0
    assert bandit.last_burn_in_slot is None

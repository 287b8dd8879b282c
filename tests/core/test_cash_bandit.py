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
    assert state["format"] == "uvp-cash-bandit/2"
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
        ("format", "uvp-cash-bandit/0", ValueError, "state format must be 'uvp-cash-bandit/2'"),
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


# ------------------------------------------------------------------ settings, rebuild, reconcile
def test_paper_design_size_and_settings_resolve_per_arm_count() -> None:
    from uvp_plugins.bandits import CashSettings, paper_design_size

    # App. D: 50 / (K - 1) per arm after its default, capped so that K designs fit into T
    assert [paper_design_size(k) for k in (1, 2, 6, 7)] == [50, 50, 10, 8]
    assert paper_design_size(2, n_trials=60) == 29 and paper_design_size(8, 8) == 0
    # the CASH defaults: MaxUCB with alpha 1 and the exploration floor 2 ln t, no random design
    assert CashSettings().policy_kwargs(6) == {"burn_in": 0, "min_pulls": 1, "floor": 2.0,
                                               "alpha": 1.0}
    assert CashSettings().design_size(6) == 0 == CashSettings(min_pulls="design").design_size(6)
    s = CashSettings(min_pulls="design", design=None)  # the paper's per-arm design
    assert s.policy_kwargs(6) == {"burn_in": 0, "min_pulls": 11, "floor": 2.0, "alpha": 1.0}
    assert s.policy_kwargs(7, n_trials=40)["min_pulls"] == 5  # 40 // 7 - 1 = 4 after the default
    assert CashSettings(design=3, burn_in="design", floor=0, alpha=0.5).policy_kwargs(4) == {
        "burn_in": 4, "min_pulls": 1, "floor": 0.0, "alpha": 0.5}
    assert CashSettings(policy="UCB").policy_kwargs(2) == {"burn_in": 0, "min_pulls": 1,
                                                           "floor": 2.0}  # UCB's own alpha
    assert CashSettings(alpha=2.0).policy_kwargs(3)["alpha"] == 2.0
    assert "alpha" not in CashSettings(policy="RoundRobin").policy_kwargs(3)
    assert CashSettings.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    bandit = CashBandit.from_settings(6, CashSettings(alpha=2.0, min_pulls="design", design=4))
    assert (bandit.policy.alpha, bandit.policy.min_pulls, bandit.max_consecutive_crashes) == (2.0, 5, 5)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"policy": "RoundRobin", "alpha": 0.5}, "alpha is not a parameter of policy 'RoundRobin'"),
    ({"alpha": -0.1}, "alpha must be"),
    ({"min_pulls": 0}, "min_pulls must be an int >= 1"),
    ({"min_pulls": "all"}, "min_pulls must be one of 'design'"),
    ({"burn_in": "initial"}, "burn_in must be one of 'design'"),
    ({"design": -1}, "design must be an int >= 0"),
    ({"max_consecutive_crashes": 0}, "max_consecutive_crashes must be an int >= 1"),
    ({"policy": "Thompson"}, "policy must be one of"),
])
def test_settings_refuse_bad_values_by_name(kwargs: dict, message: str) -> None:
    from uvp_plugins.bandits import CashSettings

    with pytest.raises(ValueError, match=message):
        CashSettings(**kwargs)
    with pytest.raises(ValueError, match="unknown CASH settings"):
        CashSettings.from_dict({"alpha": 0.5, "gamma": 1})


def test_min_pulls_observes_every_arms_first_pulls_before_the_index() -> None:
    # arm 1's first three results are the worst seen; with Alg. 1 (min_pulls = 1) it is never
    # pulled again in this run, with min_pulls = 4 it gets its 4 pulls and then wins
    losses = {0: [0.30] + [0.29] * 40, 1: [0.90, 0.88, 0.87, 0.05] + [0.04] * 40}
    for min_pulls, expected_arm1 in ((1, 1), (4, 30)):
        policy = MaxUCB(2, min_pulls=min_pulls)
        feed = {a: list(v) for a, v in losses.items()}
        for _ in range(36):
            arm = policy.select()
            policy.update(arm, feed[arm].pop(0))
        if min_pulls == 1:
            assert policy.n_pulls[1] <= 3  # locked out after its first unlucky draws
        else:
            assert policy.n_pulls[1] >= expected_arm1 and policy.history()[:8] == [
                (0, 0.30), (1, 0.90), (0, 0.29), (1, 0.88), (0, 0.29), (1, 0.87), (0, 0.29), (1, 0.05)]


def test_rebuild_replays_in_the_one_order_every_adapter_uses() -> None:
    from uvp_plugins.bandits import CashSettings, PullRecord

    settings = CashSettings(burn_in=1, max_consecutive_crashes=2)
    records = [  # listed out of order; finished times decide, burn-in pulls first
        PullRecord(1, "complete", 0.2, finished=5.0, number=4),
        PullRecord(0, "complete", 0.9, finished=1.0, number=0, burn_in_slot=0),
        PullRecord(2, "failed", finished=3.0, number=2, burn_in_slot=2),
        PullRecord(1, "complete", 0.5, finished=2.0, number=1, burn_in_slot=1),
        PullRecord(2, "failed", finished=4.0, number=3),
        PullRecord(2, "failed", finished=6.0, number=5),
        PullRecord(0, "running", number=6),
        PullRecord(1, "complete", 0.3, finished=7.0, number=7, exhausted=True),
    ]
    bandit = CashBandit.rebuild(3, records, settings)
    # the same events fed by hand, in that order
    by_hand = CashBandit.from_settings(3, settings)
    for arm, slot, loss in ((0, 0, 0.9), (1, 1, 0.5), (2, 2, None)):
        by_hand.add_pending(arm, burn_in_slot=slot)
        if loss is None:
            by_hand.fail(arm)
        else:
            by_hand.tell(arm, loss)
    by_hand.fail(2)
    by_hand.tell(1, 0.2)
    by_hand.fail(2)
    by_hand.tell(1, 0.3)
    by_hand.add_pending(0)
    by_hand.retire(1, "exhausted")
    assert bandit.state_dict() == by_hand.state_dict()
    assert bandit.retired == {1: "exhausted", 2: "crashed"} and bandit.pending == [1, 0, 0]
    assert bandit.policy.history() == [(1, 0.2), (1, 0.3)]  # burn-in results discarded
    with pytest.raises(ValueError, match="a complete pull needs a finite loss"):
        PullRecord(0, "complete")
    with pytest.raises(ValueError, match="state must be one of"):
        PullRecord(0, "pruned")


def test_reconcile_credits_what_the_store_has_and_follows_its_running_trials() -> None:
    bandit = CashBandit(3, "MaxUCB")
    for arm, loss in ((0, 0.4), (1, 0.2), (2, 0.3)):
        bandit.ask()
        bandit.tell(arm, loss)
    bandit.ask()
    bandit.ask()  # two pulls asked, never run (the process stopped)
    # the store holds a result of arm 2 the state lacks, and one running trial of arm 0
    credited = bandit.reconcile([[0.4], [0.2], [0.3, 0.1]], [1, 0, 0])
    assert credited == [(2, 0.1)]
    assert bandit.pending == [1, 0, 0] and bandit.n_pulls == [1, 1, 2]
    assert bandit.reconcile([[0.4], [0.2], [0.3, 0.1]], [1, 0, 0]) == []  # idempotent
    with pytest.raises(ValueError, match="one entry per arm"):
        bandit.reconcile([[0.4]], [0, 0, 0])


def test_a_state_written_before_min_pulls_is_read_as_alg_1() -> None:
    # the layout of uvp-plugins before issue 30 (policy state version 1, no min_pulls)
    old = {
        "format": "uvp-cash-bandit/1", "max_consecutive_crashes": 5,
        "policy": {"type": "MaxUCB", "version": 1,
                   "params": {"n_arms": 2, "burn_in": 0, "seed": None, "alpha": 0.5},
                   "history": [[0, 0.4], [1, 0.2]], "pending": [0, 0], "burn_pending": [0, 0],
                   "burn_issued": 0, "burn_discarded": []},
        "retired": [None, None], "crash_streak": [0, 0],
    }
    bandit = CashBandit.from_state_dict(json.loads(json.dumps(old)))
    twin = CashBandit(2, "MaxUCB", alpha=0.5)
    for arm, loss in ((0, 0.4), (1, 0.2)):
        twin.ask()
        twin.tell(arm, loss)
    assert bandit.policy.min_pulls == 1 and bandit.state_dict() == twin.state_dict()
    assert bandit.state_dict()["policy"]["format"] == "uvp-bandit-policy/3"
    old["policy"]["params"]["min_pulls"] = 3
    with pytest.raises(ValueError, match=r"version-1 state has no \['min_pulls'\]"):
        CashBandit.from_state_dict(old)


def test_three_unlucky_draws_no_longer_lock_an_arm_out() -> None:
    # issue 30, cash-yahpo task 40966: xgboost's first three configurations scored 0.87-0.88
    # (loss), rpart's first results 0.27-0.40; xgboost's own HPO would have reached 0.01. Alg. 1
    # (alpha 0.5, no floor) never pulls xgboost a fourth time in 200 trials (its scaled maximum
    # is the bottom of the range, its bonus (0.5 ln t / 3)^2 < 1 until t > 403); the default
    # settings' exploration floor pulls it again (a fourth time by t = e^3), and then its HPO
    # takes over.
    from uvp_plugins.bandits import CashSettings

    def run(bandit: CashBandit) -> list[int]:
        rpart = [0.40, 0.27, 0.30, 0.29] + [0.27 - 0.0004 * i for i in range(200)]
        xgboost = [0.881, 0.868, 0.870] + [0.30, 0.10] + [0.02] * 200
        for _ in range(200):
            arm = bandit.ask()
            assert arm is not None
            bandit.tell(arm, (rpart, xgboost)[arm].pop(0))
        return bandit.n_pulls

    paper = run(CashBandit.from_settings(2, CashSettings(alpha=0.5, floor=0.0)))
    assert paper[1] == 3  # locked out
    ours = run(CashBandit.from_settings(2, CashSettings()))
    assert ours[1] > 150  # xgboost found again and then chosen

"""MaxUCB (Balef et al., Alg. 1 / E.1) and the baseline policies of ``uvp_plugins.bandits``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from uvp_plugins.bandits import (
    POLICIES,
    UCB,
    BanditPolicy,
    MaxUCB,
    QuantileUCB,
    RoundRobin,
    policy_from_state_dict,
    scale_rewards,
)


def _reference_maxucb(history: list[tuple[int, float]], n_arms: int, alpha: float) -> int:
    """Alg. 1 written out directly, with the authors' conventions (independent of the module)."""
    t = len(history) + 1
    counts = [sum(1 for a, _ in history if a == i) for i in range(n_arms)]
    if min(counts) == 0:
        return (t - 1) % n_arms  # the authors' round-robin initial pulls
    rewards = [-x for _, x in history]
    lo, hi = min(rewards), max(rewards)
    scaled = [0.01 if hi == lo else 0.01 + 0.98 * (r - lo) / (hi - lo) for r in rewards]
    best_u, best_i = -math.inf, -1
    for i in range(n_arms):
        mx = max(s for (a, _), s in zip(history, scaled, strict=True) if a == i)
        u = mx + (alpha * math.log(t) / counts[i]) ** 2
        if u > best_u:  # strict: ties stay with the lowest index
            best_u, best_i = u, i
    return best_i


# ------------------------------------------------------------------------------ Alg. 1 by hand
def test_maxucb_hand_computed_steps() -> None:
    b = MaxUCB(3, alpha=0.5)
    losses = {0: 0.5, 1: 0.2, 2: 0.4}
    for expected in (0, 1, 2):  # initial round-robin pulls (Alg. 1 lines 2-4)
        arm = b.select()
        assert arm == expected
        b.update(arm, losses[arm])
    # t = 4; rewards -0.5, -0.2, -0.4 scaled to 0.01, 0.99, 0.01 + 0.98 / 3
    bonus = (0.5 * math.log(4) / 1) ** 2
    expected_u = [0.01 + bonus, 0.99 + bonus, 0.01 + 0.98 / 3 + bonus]
    np.testing.assert_allclose(b.indices(), expected_u)
    assert b.indices()[1] == pytest.approx(1.470453, abs=1e-6)
    assert b.t == 4
    assert b.select() == 1
    b.update(1, 0.3)
    # t = 5; scaling unchanged (0.3 lies inside [0.2, 0.5]); n_1 = 2
    b5, b5_2 = (0.5 * math.log(5)) ** 2, (0.5 * math.log(5) / 2) ** 2
    np.testing.assert_allclose(b.indices(), [0.01 + b5, 0.99 + b5_2, 0.01 + 0.98 / 3 + b5])
    assert b.select() == 1  # 1.1519 > 0.9842 > 0.6576
    b.update(1, 0.6)  # a new worst loss rescales every reward
    np.testing.assert_allclose(
        b.scaled_rewards()[0], [0.01 + 0.98 * (0.1 / 0.4)]
    )
    assert b.n_pulls == [1, 3, 1]
    assert b.observations(1) == [0.2, 0.3, 0.6]


@pytest.mark.parametrize("alpha", [0.0, 0.5, 2.0])
def test_maxucb_matches_reference_step_by_step(alpha: float) -> None:
    rng = np.random.default_rng(7)
    b = MaxUCB(4, alpha=alpha)
    history: list[tuple[int, float]] = []
    for _ in range(120):
        arm = b.select()
        assert arm == _reference_maxucb(history, 4, alpha)
        loss = float(np.round(rng.uniform(0, 1) * (1 + 0.2 * arm), 2))  # rounding creates ties
        b.update(arm, loss)
        history.append((arm, loss))


def test_ties_go_to_lowest_index() -> None:
    b = MaxUCB(3)
    for arm in range(3):
        assert b.select() == arm
        b.update(arm, 0.3)  # all equal: every scaled reward is 0.01, equal bonuses
    np.testing.assert_allclose(b.scaled_rewards()[2], [0.01])
    assert b.select() == 0
    c = MaxUCB(3)
    for arm, loss in zip(range(3), (0.9, 0.2, 0.2), strict=True):
        assert c.select() == arm
        c.update(arm, loss)
    assert c.indices()[1] == c.indices()[2]
    assert c.select() == 1


def test_scale_rewards_authors_convention() -> None:
    np.testing.assert_allclose(scale_rewards(np.array([1.0, 3.0, 2.0])), [0.99, 0.01, 0.5])
    np.testing.assert_allclose(scale_rewards(np.array([0.4, 0.4])), [0.01, 0.01])
    assert scale_rewards(np.array([])).size == 0


def test_alpha_zero_is_greedy_on_the_maximum() -> None:
    b = MaxUCB(2, alpha=0.0)
    b.update(b.select(), 0.2)
    b.update(b.select(), 0.1)
    assert b.indices()[1] == pytest.approx(0.99) and b.indices()[0] == pytest.approx(0.01)
    assert b.select() == 1


# ------------------------------------------------------------------------------------ burn-in
def test_burn_in_discards_results_and_restarts_t() -> None:
    b = MaxUCB(2, alpha=0.5, burn_in=2)
    burn = []
    for _ in range(4):  # C*K = 4 round-robin pulls, results discarded
        assert b.in_burn_in
        arm = b.select()
        burn.append(arm)
        b.update(arm, 100.0 + arm)  # extreme values must not enter the scaling
    assert burn == [0, 1, 0, 1]
    assert not b.in_burn_in
    assert b.n_pulls == [0, 0] and b.t == 1
    # then the initial phase and Alg. 1 with t restarted
    plain = MaxUCB(2, alpha=0.5)
    for loss in (0.4, 0.1, 0.3, 0.2, 0.25):
        arm = b.select()
        assert arm == plain.select()
        b.update(arm, loss)
        plain.update(arm, loss)
        np.testing.assert_allclose(b.indices(), plain.indices())
    assert b.t == plain.t == 6
    assert b.history() == plain.history()


def test_burn_in_out_of_order_results_discarded_per_arm() -> None:
    b = MaxUCB(2, burn_in=1)
    a0, a1 = b.select(), b.select()
    assert (a0, a1) == (0, 1)
    c = b.select()  # main phase (initial pull of arm 0) while burn-in results are pending
    assert c == 0
    b.update(1, 5.0)  # burn-in result of arm 1: discarded
    b.update(0, 5.0)  # first result of arm 0: its burn-in pull, discarded
    b.update(0, 0.3)  # then the real one
    assert b.n_pulls == [1, 0] and b.observations(0) == [0.3]
    assert b.pending == [0, 0]


# --------------------------------------------------------------------------- parallel use
def test_pending_pulls_are_counted_deterministically() -> None:
    b = MaxUCB(3)
    assert [b.select() for _ in range(5)] == [0, 1, 2, 0, 1]  # no results yet: round-robin
    assert b.pending == [2, 2, 1]
    b2 = MaxUCB(3)
    assert [b2.select() for _ in range(5)] == [0, 1, 2, 0, 1]

    c = MaxUCB(2)
    c.update(c.select(), 0.1)
    c.update(c.select(), 0.2)
    assert c.select() == 0  # pending now: n_0 = 2, t = 4
    assert c.t == 4
    np.testing.assert_allclose(
        c.indices(), [0.99 + (0.5 * math.log(4) / 2) ** 2, 0.01 + (0.5 * math.log(4)) ** 2]
    )


def test_out_of_order_updates_are_credited_to_their_arm() -> None:
    b = MaxUCB(3)
    arms = [b.select() for _ in range(3)]
    assert arms == [0, 1, 2]
    b.update(2, 0.1)
    b.update(0, 0.5)
    b.update(1, 0.3)
    assert b.observations(0) == [0.5] and b.observations(1) == [0.3] and b.observations(2) == [0.1]
    assert b.pending == [0, 0, 0]
    seq = MaxUCB(3)
    for arm, loss in ((0, 0.5), (1, 0.3), (2, 0.1)):
        seq.update(seq.select(), loss)
        assert seq.observations(arm) == [loss]
    assert b.select() == seq.select() == 2


def test_cancel_releases_a_pending_pull_without_credit() -> None:
    b = MaxUCB(2)
    b.update(b.select(), 0.3)
    arm = b.select()
    assert arm == 1 and b.pending == [0, 1]
    b.cancel(1)
    assert b.pending == [0, 0] and b.n_pulls == [1, 0]
    assert b.select() == 1  # still needs its initial pull
    b.cancel(0)  # nothing pending on arm 0: no-op
    assert b.pending == [0, 1]
    b.update(0, 0.2)  # a result without a select is recorded normally
    assert b.observations(0) == [0.3, 0.2] and b.pending == [0, 1]


# ------------------------------------------------------------------------------ concentration
def _left_skewed_losses(rng: np.random.Generator, arm: int) -> float:
    # bounded rewards M * U^(1/a) on [0, M]: left-skewed for a > 1. Arm 1 has the highest maximum
    # (0.9), arm 2 the highest mean (0.686 > 0.675).
    maxima, shapes = (0.7, 0.9, 0.8, 0.6), (6.0, 3.0, 6.0, 2.0)
    return 1.0 - maxima[arm] * rng.random() ** (1.0 / shapes[arm])


def _fraction_on_best(cls: type, horizon: int, seeds: range) -> float:
    fracs = []
    for s in seeds:
        rng = np.random.default_rng(s)
        b = cls(4)
        for _ in range(horizon):
            arm = b.select()
            b.update(arm, _left_skewed_losses(rng, arm))
        fracs.append(b.n_pulls[1] / horizon)
    return float(np.mean(fracs))


def test_maxucb_concentrates_on_the_arm_with_the_highest_maximum() -> None:
    short = _fraction_on_best(MaxUCB, 60, range(8))
    long = _fraction_on_best(MaxUCB, 600, range(8))
    assert long > short
    assert long > 0.9
    # classic UCB follows the mean and does not find the arm with the highest maximum
    assert _fraction_on_best(UCB, 600, range(8)) < 0.6


# ----------------------------------------------------------------------------------- state
@pytest.mark.parametrize("cls", list(POLICIES.values()))
def test_state_dict_round_trip(cls: type) -> None:
    rng = np.random.default_rng(3)
    kwargs = {"burn_in": 1} if cls is not RoundRobin else {}
    b = cls(3, **kwargs)
    for _ in range(10):
        b.update(b.select(), float(rng.random()))
    b.select()  # leave one pull pending
    state = json.loads(json.dumps(b.state_dict()))
    c = policy_from_state_dict(state)
    assert type(c) is cls and c.state_dict() == b.state_dict()
    d = cls.from_state_dict(state)
    assert d.state_dict() == state
    for _ in range(15):
        arm_b, arm_c = b.select(), c.select()
        assert arm_b == arm_c
        loss = float(rng.random())
        b.update(arm_b, loss)
        c.update(arm_c, loss)
    assert b.state_dict() == c.state_dict()
    assert isinstance(c, BanditPolicy)


def test_state_dict_type_mismatch_is_rejected() -> None:
    state = MaxUCB(2).state_dict()
    with pytest.raises(ValueError, match="MaxUCB"):
        UCB.from_state_dict(state)
    with pytest.raises(ValueError, match="unknown policy type"):
        policy_from_state_dict({**state, "type": "Nope"})


def test_policy_states_of_every_earlier_version_are_read() -> None:
    """Versions 1 and 2 carried ``"version": <v>`` (1 without ``min_pulls``/``floor``: Alg. 1);
    version 3 is 2 under the ``"format"`` tag. Each reads to the same policy."""
    b = MaxUCB(2, alpha=0.5)
    b.update(b.select(), 0.4)
    b.update(b.select(), 0.2)
    now = b.state_dict()
    assert now["format"] == "uvp-bandit-policy/3" and "version" not in now
    body = {k: v for k, v in now.items() if k != "format"}
    v2 = {**body, "version": 2}
    params1 = {k: v for k, v in body["params"].items() if k not in ("min_pulls", "floor")}
    v1 = {**body, "version": 1, "params": params1}
    for old in (v1, v2):
        assert MaxUCB.from_state_dict(json.loads(json.dumps(old))).state_dict() == now
    for bad in ({**body, "version": 4}, {**body, "format": "uvp-bandit-policy/4"}, body):
        with pytest.raises(ValueError, match="state format must be 'uvp-bandit-policy/3'"):
            MaxUCB.from_state_dict(bad)


# ----------------------------------------------------------------------------------- errors
def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="alpha"):
        MaxUCB(3, alpha=-0.1)
    with pytest.raises(ValueError, match="alpha"):
        MaxUCB(3, alpha=float("nan"))
    with pytest.raises(ValueError, match="n_arms"):
        MaxUCB(0)
    with pytest.raises(ValueError, match="n_arms must be an int >= 1, got 2.5"):
        MaxUCB(2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="n_arms"):
        MaxUCB("2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="burn_in"):
        MaxUCB(2, burn_in=-1)
    with pytest.raises(ValueError, match="tau"):
        QuantileUCB(2, tau=1.5)
    b = MaxUCB(2)
    b.select()
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match="finite.*cancel"):
            b.update(0, bad)
    with pytest.raises(ValueError, match=r"arm must be an int in \[0, 1\]"):
        b.update(2, 0.1)
    with pytest.raises(TypeError, match="arm"):
        b.update(True, 0.1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="loss"):
        b.update(0, "0.1")  # type: ignore[arg-type]
    assert b.n_pulls == [0, 0] and b.pending == [1, 0]  # failed updates change nothing


# -------------------------------------------------------------------------------- baselines
def test_ucb_quantile_ucb_and_round_robin_indices() -> None:
    losses = [(0, 0.5), (1, 0.2), (2, 0.4), (1, 0.3), (0, 0.45)]
    ucb, qucb, rr = UCB(3), QuantileUCB(3, tau=0.5), RoundRobin(3)
    for arm, loss in losses:
        for p in (ucb, qucb, rr):
            p.update(arm, loss)
    t = 6
    r = scale_rewards(np.array([x for _, x in losses]))
    per_arm = [r[[i for i, (a, _) in enumerate(losses) if a == k]] for k in range(3)]
    n = [2, 2, 1]
    np.testing.assert_allclose(
        ucb.indices(), [per_arm[k].mean() + math.sqrt(0.5 * math.log(t) / n[k]) for k in range(3)]
    )
    np.testing.assert_allclose(
        qucb.indices(),
        [np.quantile(per_arm[k], 0.5) + math.sqrt(0.5 * math.log(t) / n[k]) for k in range(3)],
    )
    assert ucb.select() == int(np.argmax(ucb.indices()))
    assert rr.select() == 2  # the arm with the fewest pulls
    fresh = RoundRobin(3)
    seq = []
    for _ in range(7):
        arm = fresh.select()
        seq.append(arm)
        fresh.update(arm, 0.1 * arm)
    assert seq == [0, 1, 2, 0, 1, 2, 0]


# ------------------------------------------------------------------ extreme and corrupt input
@pytest.mark.parametrize(
    "losses",
    [
        [1e308, -1e308],  # the range overflows to inf
        [-1.7e308, 1.7e308, 0.0],
        [0.0, 5e-324],  # a subnormal range: 0.98 / range overflows
        [1e-310, 3e-310, 2e-310],
    ],
)
def test_rewards_and_indices_stay_finite_for_extreme_loss_ranges(losses: list[float]) -> None:
    scaled = scale_rewards(np.array(losses))
    assert np.all(np.isfinite(scaled))
    assert scaled.min() == pytest.approx(0.01) and scaled.max() == pytest.approx(0.99)
    # the order is kept: the smallest loss gets the largest reward
    assert int(np.argmax(scaled)) == int(np.argmin(losses))
    for cls in POLICIES.values():
        b = cls(len(losses))
        for i, x in enumerate(losses):
            b.update(b.select(), x)
            assert b.n_pulls[i] == 1
        assert np.all(np.isfinite(b.indices())), cls.__name__
        if cls is MaxUCB:  # equal bonus: the arm of the smallest loss has the largest index
            assert b.select() == int(np.argmin(losses))


def test_scale_rewards_is_unchanged_for_ordinary_ranges() -> None:
    rng = np.random.default_rng(0)
    for _ in range(100):
        losses = rng.normal(size=int(rng.integers(2, 20))) * 10 ** rng.uniform(-6, 6)
        r = -losses
        expected = 0.01 + (r - r.min()) * (0.98 / (r.max() - r.min()))
        assert np.array_equal(scale_rewards(losses), expected)  # bit for bit


def _state_with_history() -> dict:
    b = MaxUCB(3, burn_in=1)
    for _ in range(3):
        b.update(b.select(), 0.5)
    for loss in (0.1, 0.2, 0.3, 0.4):
        b.update(b.select(), loss)
    b.select()
    return json.loads(json.dumps(b.state_dict()))


@pytest.mark.parametrize(
    ("path", "value", "error", "message"),
    [
        (("history", 0, 1), float("nan"), ValueError, r"state\['history'\]\[0\]: loss must be finite"),
        (("history", 1, 1), float("inf"), ValueError, r"state\['history'\]\[1\]: loss must be finite"),
        (("history", 0, 0), 3, ValueError, r"state\['history'\]\[0\]: arm must be an int in \[0, 2\]"),
        (("history", 0, 0), 0.5, TypeError, r"state\['history'\]\[0\]: arm must be an int"),
        (("history", 2), [1], ValueError, r"state\['history'\]\[2\] must be an \[arm, loss\] pair"),
        (("pending", 1), -1, ValueError, r"state\['pending'\]\[1\] must be an int >= 0, got -1"),
        (("pending", 0), 1.5, ValueError, r"state\['pending'\]\[0\] must be an int >= 0"),
        (("pending",), [0, 0], ValueError, r"state\['pending'\] must be a list of 3 ints"),
        (("burn_pending", 2), -3, ValueError, r"state\['burn_pending'\]\[2\] must be an int >= 0"),
        (("burn_issued",), -1, ValueError, r"state\['burn_issued'\] must be an int in \[0, 3\]"),
        (("burn_issued",), 4, ValueError, r"state\['burn_issued'\] must be an int in \[0, 3\]"),
        (("burn_discarded", 0, 1), float("nan"), ValueError,
         r"state\['burn_discarded'\]\[0\]: loss must be finite"),
        (("params", "alpha"), -1.0, ValueError, "alpha must be a finite float >= 0"),
        (("history",), "nope", TypeError, r"state\['history'\] must be a list"),
    ],
)
def test_restored_state_is_validated_with_errors_naming_the_field(
    path: tuple, value: object, error: type, message: str
) -> None:
    state = _state_with_history()
    target = state
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(error, match=message):
        MaxUCB.from_state_dict(state)


def test_restored_state_missing_fields_are_named() -> None:
    state = _state_with_history()
    del state["pending"]
    with pytest.raises(ValueError, match=r"state is missing 'pending'"):
        MaxUCB.from_state_dict(state)
    with pytest.raises(TypeError, match="state must be a mapping"):
        MaxUCB.from_state_dict([1, 2])  # type: ignore[arg-type]

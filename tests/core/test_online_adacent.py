"""The online Enhanced-AdaCent object (Bateni et al., Alg. 4 inside Alg. 8): ask/tell, state."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from uvp_plugins.adacent.kcenter import enhanced_distances, first_center, pairwise_distances
from uvp_plugins.adacent.online import OnlineEnhancedAdaCent
from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace

SPACE = SearchSpace([FloatParam("x", 0.0, 1.0), FloatParam("y", 0.0, 1.0)])


def _acc(cfg: dict) -> float:
    return 0.9 - 0.5 * math.hypot(cfg["x"] - 0.3, cfg["y"] - 0.7)


def _run(ea: OnlineEnhancedAdaCent, n: int, T: int = 10) -> list[dict]:
    out = []
    for t in range(n):
        p = ea.ask()
        a = _acc(p.config)
        ea.tell(t, p.config, status="complete", curve={b: a * (1 - 0.5 ** b) for b in range(1, T + 1)})
        out.append(p.config)
    return out


def test_first_proposal_is_nearest_the_centroid_then_enhanced_kcenter_by_hand() -> None:
    ea = OnlineEnhancedAdaCent(SPACE, n_candidates=64, max_resource=10, epsilon=2.0, seed=3)
    mesh, _ = ea._ladder.free_mesh(set())
    first = ea.ask()
    assert first.candidate == first_center(mesh.Z)
    configs = _run(ea, 4)
    # the 5th proposal by hand: argmax over free candidates of min_c d~(x, c) (Alg. 4)
    C = SPACE.embed(configs)
    depth = math.floor(0.1 * 10)
    vals = np.array([_acc(c) * (1 - 0.5**depth) for c in configs])
    d = enhanced_distances(pairwise_distances(mesh.Z, C), vals, 2.0).min(axis=1)
    taken = {tuple(c.values()) for c in configs}
    d[[tuple(c.values()) in taken for c in mesh.configs]] = -np.inf
    assert ea.ask().candidate == int(np.argmax(d))


def test_plain_kcenter_ignores_values() -> None:
    a = OnlineEnhancedAdaCent(SPACE, n_candidates=64, enhanced=False, seed=0)
    b = OnlineEnhancedAdaCent(SPACE, n_candidates=64, enhanced=False, seed=0)
    for t in range(6):
        pa, pb = a.ask(), b.ask()
        assert pa == pb
        a.tell(t, pa.config, status="complete", final=float(t))
        b.tell(t, pb.config, status="complete", final=float(-t))  # other values, same choices


def test_taken_candidates_are_not_proposed_and_the_mesh_doubles() -> None:
    ea = OnlineEnhancedAdaCent(SPACE, n_candidates=8, seed=0)
    seen = set()
    for t in range(12):
        p = ea.ask(key=t)
        key = (p.config["x"], p.config["y"])
        assert key not in seen
        seen.add(key)
        ea.tell(t, p.config, status="failed" if t % 3 == 0 else "complete", final=0.5)
    assert p.mesh.endswith(":16")  # 8 taken -> 16 Sobol points


def test_a_configuration_is_free_again_once_no_trial_holds_it() -> None:
    one = SearchSpace([CategoricalParam("c", ("a",))])
    ea = OnlineEnhancedAdaCent(one, n_candidates=1, seed=0)
    ea.tell(0, {"c": "a"})
    ea.tell(1, {"c": "a"})  # two trials on one configuration
    assert not ea.ask().free
    ea.forget(0)
    assert not ea.ask().free  # trial 1 still holds it
    ea.forget(1)
    assert ea.ask().free
    two = SearchSpace([CategoricalParam("c", ("a", "b"))])
    ea = OnlineEnhancedAdaCent(two, n_candidates=2, seed=0)
    ea.tell(0, {"c": "a"})
    ea.tell(1, {"c": "b"})
    ea.tell(1, {"c": "a"})  # trial 1 moves: nobody holds "b" now
    p = ea.ask()
    assert p.free == (p.config == {"c": "b"})
    ea.tell(2, {"c": "b"}, status="failed")  # a failed trial holds its configuration too
    assert not ea.ask().free


def test_a_small_discrete_space_repeats_once_exhausted() -> None:
    space = SearchSpace([CategoricalParam("c", ("a", "b")), IntParam("k", 1, 2)])
    ea = OnlineEnhancedAdaCent(space, n_candidates=8, seed=0)
    got = []
    for t in range(6):
        p = ea.ask()
        ea.tell(t, p.config, status="complete", final=1.0)
        got.append((p.config["c"], p.config["k"]))
    assert len(set(got[:4])) == 4 and set(got[4:]) <= set(got[:4])


def test_pending_workers_get_distinct_candidates_in_the_same_order() -> None:
    ea = OnlineEnhancedAdaCent(SPACE, n_candidates=64, seed=1)
    _run(ea, 3)
    mine = ea.ask(pending=2)
    # what the two earlier workers take, one after the other
    w1 = ea.ask(key="w1")
    w2 = ea.ask(key="w2")
    third = ea.ask()
    assert mine == third and len({w1.candidate, w2.candidate, third.candidate}) == 3


def test_center_value_depth_vs_last_and_inferred_T() -> None:
    depth = OnlineEnhancedAdaCent(SPACE, n_candidates=32, delta=0.5, seed=0)
    last = OnlineEnhancedAdaCent(SPACE, n_candidates=32, delta=0.5, seed=0, center_value="last")
    curve = {b: b / 10 for b in range(1, 11)}
    for ea in (depth, last):
        ea.tell("a", {"x": 0.1, "y": 0.1}, status="complete", curve=curve)
    assert depth.resolved_max_resource() == 10 and depth.depth() == 5
    t = depth._trials["a"]
    assert depth._center_value(t, depth.depth()) == 0.5
    assert last._center_value(last._trials["a"], last.depth()) == 1.0


def test_state_round_trip_makes_the_same_choices() -> None:
    ea = OnlineEnhancedAdaCent(SPACE, n_candidates=64, max_resource=10, seed=4)
    _run(ea, 7)
    ea.tell("r", {"x": 0.5, "y": 0.5}, status="running", curve={1: 0.2})
    state = json.loads(json.dumps(ea.state_dict()))
    copy = OnlineEnhancedAdaCent.from_state_dict(state, space=SPACE)
    assert copy.ask() == ea.ask()
    with pytest.raises(ValueError, match="format"):
        OnlineEnhancedAdaCent.from_state_dict({"format": "x"}, space=SPACE)


def test_candidate_array_and_user_candidates() -> None:
    Z = np.array([[0.0], [0.5], [1.0]])
    ea = OnlineEnhancedAdaCent(candidate_array=Z, enhanced=False, first=0)
    order = []
    for t in range(3):
        p = ea.ask(key=t)
        order.append(p.config["index"])
    assert order == [0, 2, 1]
    user = [{"x": 0.1, "y": 0.1}, {"x": 0.9, "y": 0.9}]
    eu = OnlineEnhancedAdaCent(SPACE, candidates=user, seed=0)
    assert eu.ask().config in user and eu.ask().mesh == "user"


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"n_candidates": 0}, ValueError, "n_candidates must be an int >= 1"),
        ({"epsilon": 0.0}, ValueError, "epsilon must be a float > 0"),
        ({"epsilon": "fast"}, ValueError, "epsilon must be one of 'auto'"),
        ({"delta": 1.0}, ValueError, "delta"),
        ({"seed": -1}, ValueError, "seed must be an int >= 0, got -1"),
        ({"center_value": "mean"}, ValueError, "center_value must be one of 'depth', 'last'"),
        ({"max_resource": 1}, ValueError, "max_resource must be an int >= 2"),
    ],
)
def test_bad_arguments(kwargs: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        OnlineEnhancedAdaCent(SPACE, **kwargs)


def test_bad_tells_are_clear() -> None:
    ea = OnlineEnhancedAdaCent(SPACE, n_candidates=8)
    with pytest.raises(ValueError, match="status must be one of"):
        ea.tell(0, {"x": 0.1, "y": 0.2}, status="done")
    with pytest.raises(KeyError, match="lacks parameter 'y'"):
        ea.tell(0, {"x": 0.1}, status="running")
    with pytest.raises(ValueError):
        ea.tell(0, {"x": 2.0, "y": 0.2}, status="running")

"""Search-space encoding (round trips, categorical metric) and Sobol meshes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace, config_key


def _space() -> SearchSpace:
    return SearchSpace(
        [
            FloatParam("lr", 1e-5, 1e-1, log=True),
            FloatParam("dropout", 0.0, 0.9),
            IntParam("units", 16, 1024, log=True),
            IntParam("layers", 1, 5),
            CategoricalParam("act", ("relu", "tanh", "sigmoid")),
            CategoricalParam("flag", (True, False)),
        ]
    )


@given(st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6))
@settings(max_examples=200, deadline=None)
def test_decode_encode_decode_is_identity(u: list[float]) -> None:
    space = _space()
    config = space.from_unit(np.array([u]))[0]
    again = space.from_unit(space.to_unit([config]))[0]
    for name in space.names:
        if isinstance(config[name], float):
            assert math.isclose(config[name], again[name], rel_tol=1e-9, abs_tol=1e-12)
        else:
            assert config[name] == again[name]


@given(st.lists(st.lists(st.floats(0.0, 1.0), min_size=7, max_size=7), min_size=1, max_size=20))
@settings(max_examples=100, deadline=None)
def test_decode_unit_equals_from_unit_then_embed(rows: list[list[float]]) -> None:
    # a duplicated categorical choice (1 == 1.0) is embedded at the first equal choice's index
    space = SearchSpace(list(_space().params) + [CategoricalParam("dup", (1, 1.0, "z"))])
    u = np.array(rows)
    configs, Z = space.decode_unit(u)
    assert configs == space.from_unit(u)
    assert np.array_equal(Z, space.embed(configs))


@given(
    lr=st.floats(1e-5, 1e-1),
    dropout=st.floats(0.0, 0.9),
    units=st.integers(16, 1024),
    layers=st.integers(1, 5),
    act=st.sampled_from(["relu", "tanh", "sigmoid"]),
    flag=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_encode_decode_round_trip_of_configs(lr, dropout, units, layers, act, flag) -> None:  # type: ignore[no-untyped-def]
    space = _space()
    config = {"lr": lr, "dropout": dropout, "units": units, "layers": layers, "act": act, "flag": flag}
    u = space.to_unit([config])
    assert np.all((u >= 0) & (u <= 1))
    back = space.from_unit(u)[0]
    assert math.isclose(back["lr"], lr, rel_tol=1e-9)
    assert math.isclose(back["dropout"], dropout, rel_tol=1e-9, abs_tol=1e-12)
    assert back["units"] == units and back["layers"] == layers
    assert back["act"] == act and back["flag"] is flag


def test_categorical_metric_is_zero_one_and_numeric_axes_have_unit_length() -> None:
    space = SearchSpace([FloatParam("x", 0.0, 10.0), CategoricalParam("c", ("a", "b", "c"))])
    z = space.embed([{"x": 0.0, "c": "a"}, {"x": 0.0, "c": "b"}, {"x": 10.0, "c": "a"}, {"x": 0.0, "c": "a"}])
    d = np.linalg.norm(z[:, None, :] - z[None, :, :], axis=-1)
    assert d[0, 1] == pytest.approx(1.0)  # different choices
    assert d[0, 2] == pytest.approx(1.0)  # two ends of a numeric axis
    assert d[0, 3] == 0.0
    assert space.embedding_dim == 4


def test_log_scale_puts_geometric_midpoint_at_half() -> None:
    p = FloatParam("lr", 1e-4, 1e-2, log=True)
    assert p.to_unit(np.array([1e-3]))[0] == pytest.approx(0.5)
    q = IntParam("n", 1, 100, log=True)
    assert q.from_unit(np.array([0.5]))[0] == 10


def test_sobol_mesh_is_deterministic_per_seed_and_differs_across_seeds() -> None:
    space = _space()
    c1, z1 = space.sobol_mesh(256, seed=3)
    c2, z2 = space.sobol_mesh(256, seed=3)
    c3, _ = space.sobol_mesh(256, seed=4)
    assert c1 == c2 and np.array_equal(z1, z2)
    assert c1 != c3
    assert z1.shape == (len(c1), space.embedding_dim)


def test_sobol_mesh_deduplicates_after_rounding() -> None:
    space = SearchSpace([IntParam("a", 0, 2), CategoricalParam("b", ("x", "y"))])
    configs, z = space.sobol_mesh(100, seed=0)
    keys = {(c["a"], c["b"]) for c in configs}
    assert len(configs) == len(keys) == 6
    assert z.shape == (6, 3)


def test_true_and_one_are_different_choices_in_keys_and_meshes() -> None:
    # issue 19 (5): config_key conflated True with 1 (equal and same hash in a tuple), so a
    # mesh over the choices (1, True, "a") lost True to deduplication
    space = SearchSpace([CategoricalParam("c", (1, True, "a"))])
    configs, z = space.sobol_mesh(16, seed=0)
    assert sorted(repr(c["c"]) for c in configs) == ["'a'", "1", "True"]
    assert z.shape == (3, 3)
    assert config_key({"c": True}, ["c"]) != config_key({"c": 1}, ["c"])
    assert config_key({"c": False}, ["c"]) != config_key({"c": 0.0}, ["c"])
    assert config_key({"c": 1}, ["c"]) == config_key({"c": 1.0}, ["c"])  # as CategoricalParam
    assert config_key({"c": True}, ["c"]) == config_key({"c": True}, ["c"])


def test_mesh_covers_the_cube_evenly() -> None:
    space = SearchSpace([FloatParam("x", 0.0, 1.0), FloatParam("y", 0.0, 1.0)])
    _, z = space.sobol_mesh(1000, seed=0)
    counts, _, _ = np.histogram2d(z[:, 0], z[:, 1], bins=4, range=[[0, 1], [0, 1]])
    assert counts.min() >= 50  # 62.5 expected per cell; a Sobol mesh is close to uniform


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: FloatParam("x", 1.0, 0.0), "low <= high"),
        (lambda: FloatParam("x", 0.0, 1.0, log=True), "low > 0"),
        (lambda: FloatParam("x", 0.0, math.inf), "finite"),
        (lambda: IntParam("n", 0.5, 3), "int bounds"),
        (lambda: CategoricalParam("c", ()), "must not be empty"),
        (lambda: SearchSpace([FloatParam("x", 0, 1), IntParam("x", 0, 1)]), "duplicate"),
    ],
)
def test_bad_parameters_are_rejected_with_the_name(build, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        build()


def test_bad_values_and_shapes_are_rejected() -> None:
    space = _space()
    with pytest.raises(ValueError, match="'act'"):
        space.to_unit([{**space.sample(1, 0)[0], "act": "gelu"}])
    with pytest.raises(ValueError, match="outside"):
        space.to_unit([{**space.sample(1, 0)[0], "layers": 9}])
    with pytest.raises(KeyError, match="lacks parameter"):
        space.to_unit([{"lr": 0.01}])
    with pytest.raises(ValueError, match="shape"):
        space.from_unit(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="empty search space"):
        SearchSpace([]).sobol_mesh(10)

"""smac_ext.configspace_from_space: the one SearchSpace -> ConfigSpace conversion."""

from __future__ import annotations

import doctest

import pytest
from ConfigSpace import (
    CategoricalHyperparameter,
    Constant,
    UniformFloatHyperparameter,
    UniformIntegerHyperparameter,
)

import smac_ext._space as space_module
from smac_ext import cash_configspace, configspace_from_space
from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace

pytestmark = pytest.mark.smac


def test_docstring_example_runs() -> None:
    assert doctest.testmod(space_module, raise_on_error=True).attempted >= 3


def test_every_parameter_kind_keeps_its_range_scale_and_choices() -> None:
    space = SearchSpace([
        FloatParam("lr", 1e-4, 1e-1, log=True), FloatParam("momentum", 0.0, 0.99),
        IntParam("units", 16, 512, log=True), IntParam("layers", 1, 4),
        CategoricalParam("act", ["relu", "tanh", "gelu"]), FloatParam("fixed", 0.5, 0.5),
        IntParam("one", 3, 3),
    ])
    cs = configspace_from_space(space, seed=4)
    lr, mom, units, layers = cs["lr"], cs["momentum"], cs["units"], cs["layers"]
    assert isinstance(lr, UniformFloatHyperparameter) and lr.log and (lr.lower, lr.upper) == (1e-4, 1e-1)
    assert isinstance(mom, UniformFloatHyperparameter) and not mom.log
    assert isinstance(units, UniformIntegerHyperparameter) and units.log
    assert isinstance(layers, UniformIntegerHyperparameter) and (layers.lower, layers.upper) == (1, 4)
    act = cs["act"]
    assert isinstance(act, CategoricalHyperparameter) and list(act.choices) == ["relu", "tanh", "gelu"]
    assert isinstance(cs["fixed"], Constant) and cs["fixed"].value == 0.5
    assert isinstance(cs["one"], Constant) and cs["one"].value == 3
    # sampled configurations are valid points of the uvp space
    for config in cs.sample_configuration(20):
        for p in space.params:
            p.validate(config[p.name])  # raises outside the uvp parameter's range
    # the seed makes sampling reproducible
    first, again = (configspace_from_space(space, seed=4) for _ in range(2))
    assert [dict(c) for c in first.sample_configuration(5)] == [
        dict(c) for c in again.sample_configuration(5)]


def test_cash_spaces_use_the_same_conversion() -> None:
    arm = SearchSpace([FloatParam("C", 1e-2, 1e2, log=True), IntParam("k", 1, 1)])
    joint = cash_configspace({"svc": arm, "nb": SearchSpace([])})
    plain = configspace_from_space(arm)
    assert joint["svc:C"].log and (joint["svc:C"].lower, joint["svc:C"].upper) == (
        plain["C"].lower, plain["C"].upper)
    assert isinstance(joint["svc:k"], Constant)


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="space must be a uvp_plugins.space.SearchSpace"):
        configspace_from_space({"x": (0, 1)})  # type: ignore[arg-type]

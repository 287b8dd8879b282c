"""Splitting CASH ConfigSpaces into per-arm subspaces, and building them from SearchSpaces."""

from __future__ import annotations

import pytest
from ConfigSpace import (
    AndConjunction,
    Categorical,
    Configuration,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    ForbiddenAndConjunction,
    ForbiddenEqualsClause,
    InCondition,
    Integer,
    OrConjunction,
)

from smac_ext import arm_params, cash_configspace, detect_selector, plain_config, split_cash_space
from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace


def _space() -> ConfigurationSpace:
    """svc (C, kernel, degree | kernel == poly), rf (n_estimators), nb (nothing); shared 'scale'."""
    cs = ConfigurationSpace(seed=1)
    algo = Categorical("algorithm", ["svc", "rf", "nb"])
    c = Float("C", (1e-3, 1e3), log=True)
    kernel = Categorical("kernel", ["rbf", "poly"])
    degree = Integer("degree", (2, 5))
    n = Integer("n_estimators", (10, 100))
    scale = Categorical("scale", [True, False])
    cs.add([algo, c, kernel, degree, n, scale])
    cs.add([
        EqualsCondition(c, algo, "svc"),
        EqualsCondition(kernel, algo, "svc"),
        EqualsCondition(degree, kernel, "poly"),
        EqualsCondition(n, algo, "rf"),
    ])
    return cs


def test_split_keeps_nested_conditions_shared_params_and_empty_arms() -> None:
    cs = _space()
    cash = split_cash_space(cs)
    assert cash.selector == "algorithm"
    assert cash.arms == ("svc", "rf", "nb")
    svc, rf, nb = cash.subspaces
    assert set(svc.keys()) == {"C", "kernel", "degree", "scale"}
    assert set(rf.keys()) == {"n_estimators", "scale"}
    assert set(nb.keys()) == {"scale"}
    # the selector condition is gone, the nested one is kept
    assert set(svc.unconditional_hyperparameters) == {"C", "kernel", "scale"}
    (cond,) = svc.conditions
    assert isinstance(cond, EqualsCondition) and cond.parent.name == "kernel"
    # the joint space is untouched and still samples valid configurations
    assert len(cs.conditions) == 4
    cs.sample_configuration(5)


def test_round_trip_joint_arm_joint() -> None:
    cs = _space()
    cash = split_cash_space(cs)
    seen = set()
    for config in cs.sample_configuration(60):
        arm, sub = cash.to_arm(config)
        seen.add(arm)
        assert sub.config_space is cash.subspaces[arm]
        assert cash.arms[arm] == config["algorithm"]
        back = cash.to_joint(arm, sub)
        assert back == config
        assert back.config_space is cs
    assert seen == {0, 1, 2}


def test_arm_without_hyperparameters_has_one_configuration() -> None:
    cs = ConfigurationSpace(seed=0)
    algo = Categorical("algorithm", ["svc", "nb"])
    c = Float("svc:C", (1e-3, 1e3), log=True)
    cs.add([algo, c, EqualsCondition(c, algo, "svc")])
    cash = split_cash_space(cs)
    assert cash.is_empty(1) and not cash.is_empty(0)
    joint = cash.to_joint(1, {})
    assert dict(joint) == {"algorithm": "nb"}
    assert cash.to_arm(joint) == (1, Configuration(cash.subspaces[1], values={}))


def test_or_and_in_conditions_are_reduced_per_arm() -> None:
    cs = ConfigurationSpace()
    algo = Categorical("algorithm", ["a", "b", "c"])
    shared = Float("lr", (0.01, 1.0))  # active for a and b
    kind = Categorical("kind", ["x", "y"])  # active for a only
    deep = Float("deep", (0.0, 1.0))  # active for a when kind == y
    inn = Integer("width", (1, 8))  # In-condition on the selector: b and c
    cs.add([algo, shared, kind, deep, inn])
    cs.add([
        OrConjunction(EqualsCondition(shared, algo, "a"), EqualsCondition(shared, algo, "b")),
        EqualsCondition(kind, algo, "a"),
        AndConjunction(EqualsCondition(deep, algo, "a"), EqualsCondition(deep, kind, "y")),
        InCondition(inn, algo, ["b", "c"]),
    ])
    cash = split_cash_space(cs)
    a, b, c = cash.subspaces
    assert set(a.keys()) == {"lr", "kind", "deep"}
    assert set(b.keys()) == {"lr", "width"}
    assert set(c.keys()) == {"width"}
    assert set(a.unconditional_hyperparameters) == {"lr", "kind"}
    (cond,) = a.conditions
    assert isinstance(cond, EqualsCondition)
    assert cond.parent.name == "kind" and cond.value == "y"
    for config in cs.sample_configuration(40):
        arm, sub = cash.to_arm(config)
        assert cash.to_joint(arm, sub) == config


def test_forbidden_clauses_are_reduced_and_a_forbidden_arm_is_an_error() -> None:
    cs = _space()
    algo, scale = cs["algorithm"], cs["scale"]
    cs.add(ForbiddenAndConjunction(ForbiddenEqualsClause(algo, "rf"),
                                   ForbiddenEqualsClause(scale, False)))
    cash = split_cash_space(cs)
    assert len(cash.subspaces[1].forbidden_clauses) == 1
    assert not cash.subspaces[0].forbidden_clauses
    assert all(c["scale"] for c in cash.subspaces[1].sample_configuration(30))

    cs2 = _space()
    cs2.add(ForbiddenEqualsClause(cs2["algorithm"], "nb"))
    with pytest.raises(ValueError, match="forbids the arm algorithm='nb'"):
        split_cash_space(cs2)


def test_selector_detection_and_bad_spaces() -> None:
    assert detect_selector(_space()) == "algorithm"
    # no top-level categorical with conditional children
    flat = ConfigurationSpace({"x": (0.0, 1.0), "algorithm": ["a", "b"]})
    with pytest.raises(ValueError, match="not a CASH space"):
        split_cash_space(flat)
    # explicit selector on the same space: every arm without hyperparameters but 'x' shared
    cash = split_cash_space(flat, selector="algorithm")
    assert [set(s.keys()) for s in cash.subspaces] == [{"x"}, {"x"}]
    # a single categorical alone is a CASH space of empty arms
    assert detect_selector(ConfigurationSpace({"algorithm": ["a", "b"]})) == "algorithm"
    # two candidates: ambiguous
    cs = _space()
    other = Categorical("prep", ["none", "pca"])
    comp = Integer("n_components", (1, 5))
    cs.add([other, comp, EqualsCondition(comp, other, "pca")])
    with pytest.raises(ValueError, match="several top-level categoricals"):
        split_cash_space(cs)
    assert split_cash_space(cs, selector="algorithm").arms == ("svc", "rf", "nb")
    # wrong explicit selectors
    with pytest.raises(ValueError, match="not a hyperparameter"):
        split_cash_space(_space(), selector="model")
    with pytest.raises(ValueError, match="must be a categorical"):
        split_cash_space(_space(), selector="C")
    with pytest.raises(ValueError, match="top-level"):
        split_cash_space(_space(), selector="kernel")
    with pytest.raises(TypeError):
        split_cash_space({"algorithm": ["a"]})  # type: ignore[arg-type]


def test_unknown_selector_values_and_arm_indices_are_errors() -> None:
    cash = split_cash_space(_space())
    assert cash.arm_index("rf") == 1
    assert cash.arm_index({"algorithm": "nb"}) == 2
    with pytest.raises(ValueError, match="'xgb' of 'algorithm' is not an arm"):
        cash.arm_index("xgb")
    with pytest.raises(ValueError, match="no value for the selector"):
        cash.arm_index({"C": 1.0})
    with pytest.raises(ValueError, match=r"arm must be an int in \[0, 2\]"):
        cash.to_joint(3, {})
    with pytest.raises(ValueError):  # a value of another arm's parameter
        cash.to_joint(1, {"C": 1.0})


def test_cash_configspace_from_search_spaces() -> None:
    spaces = {
        "svc": SearchSpace([FloatParam("C", 1e-2, 1e2, log=True)]),
        "knn": SearchSpace([IntParam("k", 1, 30, log=True),
                            CategoricalParam("weights", ("uniform", "distance"))]),
        "nb": SearchSpace([]),
        "rf": SearchSpace([IntParam("k", 5, 5), FloatParam("f", 0.5, 0.5)]),  # constants
    }
    cs = cash_configspace(spaces, seed=3)
    assert set(cs.keys()) == {"algorithm", "svc:C", "knn:k", "knn:weights", "rf:k", "rf:f"}
    cash = split_cash_space(cs)
    assert cash.arms == ("svc", "knn", "nb", "rf")
    assert [len(s) for s in cash.subspaces] == [1, 2, 0, 2]
    for config in cs.sample_configuration(40):
        params = arm_params(config)
        arm = params.pop("algorithm")
        space = spaces[arm]
        assert set(params) == set(space.names)
        for p in space.params:  # values are valid, plain python values of the original names
            assert p.validate(params[p.name]) == params[p.name]
            assert type(params[p.name]) in (int, float, str)
        assert plain_config(config) == {k: config[k] for k in config}
    # order, prefix and errors
    assert split_cash_space(cash_configspace(spaces, arms=["nb", "svc", "knn", "rf"])).arms[0] == "nb"
    with pytest.raises(ValueError, match="missing subspace for \\['xgb'\\]"):
        cash_configspace(spaces, arms=["svc", "knn", "nb", "rf", "xgb"])
    with pytest.raises(ValueError, match="not listed \\['rf'\\]"):
        cash_configspace(spaces, arms=["svc", "knn", "nb"])
    with pytest.raises(ValueError, match="'k' of arm 'rf' is already used"):
        cash_configspace(spaces, prefix=False)
    with pytest.raises(ValueError, match="at least one arm"):
        cash_configspace({})

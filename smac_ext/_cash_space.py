"""CASH configuration spaces: split a joint ConfigSpace into one subspace per model class.

A CASH (combined algorithm selection and hyperparameter optimisation) space is a ConfigSpace
``ConfigurationSpace`` with one top-level (unconditional) categorical hyperparameter, the
*selector* (e.g. ``"algorithm"``), whose values are the model classes; every model's
hyperparameters are conditioned on the selector taking that model's value. The two-level approach
of Balef, Vernade & Eggensperger (*Put CASH on Bandits*, 2025, Sec. 4 and Alg. 1) runs one HPO per
model class, on that class's subspace, and lets a max-K-armed bandit choose the class; this module
provides the subspaces and the maps between the joint space and the arm subspaces.

Splitting rule. For a selector value ``v``, the arm subspace holds every hyperparameter (except
the selector) that can be active when ``selector == v``: unconditional hyperparameters shared by
all arms, and conditional ones whose conditions can hold with ``selector == v``. Conditions are
*reduced* with the selector fixed to ``v`` (a literal condition on the selector becomes true or
false; conjunctions are simplified; a condition on a hyperparameter that is not in the arm is
false), so a hyperparameter that depended only on ``selector == v`` becomes unconditional in the
arm, and deeper conditions (``kernel == "poly"`` for ``degree``) are kept. Forbidden clauses are
reduced the same way; a forbidden clause that forbids a selector value outright is an error.

A selector value with no conditional children is a valid arm *without hyperparameters*: its
subspace is empty and holds exactly one configuration.

Example:
    >>> from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float
    >>> cs = ConfigurationSpace(seed=0)
    >>> algo = Categorical("algorithm", ["svc", "nb"])
    >>> c = Float("svc:C", (1e-3, 1e3), log=True)
    >>> cs.add([algo, c, EqualsCondition(c, algo, "svc")])
    >>> cash = split_cash_space(cs)
    >>> cash.selector, cash.arms, [len(s) for s in cash.subspaces]
    ('algorithm', ('svc', 'nb'), [1, 0])
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ConfigSpace import (
    AndConjunction,
    Categorical,
    Configuration,
    ConfigurationSpace,
    EqualsCondition,
    OrConjunction,
)
from ConfigSpace.conditions import Condition, Conjunction
from ConfigSpace.forbidden import (
    ForbiddenAndConjunction,
    ForbiddenClause,
    ForbiddenConjunction,
    ForbiddenRelation,
)
from ConfigSpace.hyperparameters import CategoricalHyperparameter, Hyperparameter

from smac_ext._space import hyperparameter_from_param
from uvp_plugins.space import SearchSpace

__all__ = [
    "CashSpace",
    "detect_selector",
    "split_cash_space",
    "cash_configspace",
    "arm_params",
    "plain_config",
]

_Reduced = Any  # bool or True / False / a reduced condition or forbidden clause


# --------------------------------------------------------------------------------- detection
def detect_selector(configspace: ConfigurationSpace) -> str:
    """Name of the top-level categorical that selects the model class.

    The selector is the unique unconditional categorical hyperparameter that other
    hyperparameters are conditioned on. A space whose only hyperparameter is one categorical
    (every arm without hyperparameters) also qualifies.

    Raises:
        ValueError: if there is no such hyperparameter or more than one (pass ``selector=``).
    """
    unconditional = set(configspace.unconditional_hyperparameters)
    candidates = [
        name
        for name, hp in configspace.items()
        if name in unconditional
        and isinstance(hp, CategoricalHyperparameter)
        and len(configspace.children_of[name]) > 0
    ]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        names = list(configspace.keys())
        if len(names) == 1 and isinstance(configspace[names[0]], CategoricalHyperparameter):
            return names[0]
        raise ValueError(
            "configspace has no top-level categorical hyperparameter with conditional children, so "
            "it is not a CASH space; expected e.g. Categorical('algorithm', [...]) with each model's "
            "hyperparameters conditioned on it (or pass selector=<name>)"
        )
    raise ValueError(
        f"configspace has several top-level categoricals with conditional children {candidates}; "
        "pass selector=<name> to say which one selects the model class"
    )


# ------------------------------------------------------------------------- condition logic
def _reduce_condition(cond: Any, selector: str, value: Any, members: set[str]) -> _Reduced:
    """Simplify a condition with ``selector == value`` fixed; see the module docstring."""
    if isinstance(cond, Condition):
        parent = cond.parent.name
        if parent == selector:
            return bool(cond.satisfied_by_value({selector: value}))
        if parent not in members:
            return False  # parent is never active in this arm, so the child is never active
        return cond
    if isinstance(cond, Conjunction):
        parts = [_reduce_condition(c, selector, value, members) for c in cond.components]
        is_and = isinstance(cond, AndConjunction)
        if is_and and any(p is False for p in parts):
            return False
        if not is_and and any(p is True for p in parts):
            return True
        rest = [p for p in parts if not isinstance(p, bool)]
        if not rest:
            return is_and  # And of all-true -> True; Or of all-false -> False
        if len(rest) == 1:
            return rest[0]
        return AndConjunction(*rest) if is_and else OrConjunction(*rest)
    raise TypeError(f"unsupported condition type {type(cond).__name__}")


def _copy_condition(cond: Any) -> Any:
    """A fresh condition object (ConfigSpace mutates conditions when they are added)."""
    if isinstance(cond, Condition):
        return copy.copy(cond)
    parts = [_copy_condition(c) for c in cond.components]
    return AndConjunction(*parts) if isinstance(cond, AndConjunction) else OrConjunction(*parts)


def _reduce_forbidden(clause: Any, selector: str, value: Any, members: set[str]) -> _Reduced:
    if isinstance(clause, ForbiddenClause):
        name = clause.hyperparameter.name
        if name == selector:
            return bool(clause.is_forbidden_value({selector: value}))
        if name not in members:
            return False
        return copy.copy(clause)
    if isinstance(clause, ForbiddenRelation):
        names = {clause.left.name, clause.right.name}
        if selector in names:
            raise ValueError(
                f"forbidden relation {clause} involves the selector {selector!r}; not supported"
            )
        if not names <= members:
            return False
        return copy.copy(clause)
    if isinstance(clause, ForbiddenAndConjunction):
        parts = [_reduce_forbidden(c, selector, value, members) for c in clause.components]
        if any(p is False for p in parts):
            return False
        rest = [p for p in parts if not isinstance(p, bool)]
        if not rest:
            return True
        return rest[0] if len(rest) == 1 else ForbiddenAndConjunction(*rest)
    if isinstance(clause, ForbiddenConjunction):
        raise ValueError(f"forbidden conjunction type {type(clause).__name__} is not supported")
    raise TypeError(f"unsupported forbidden clause type {type(clause).__name__}")


# ------------------------------------------------------------------------------ the split
@dataclass(frozen=True)
class CashSpace:
    """A CASH space split into per-arm subspaces (see :func:`split_cash_space`).

    Attributes:
        joint: the joint ConfigSpace (the scenario's).
        selector: name of the top-level categorical selecting the model class.
        arms: the selector's values, in the categorical's order; arm ``i`` is ``arms[i]``.
        subspaces: ``subspaces[i]`` is arm ``i``'s ConfigSpace (hyperparameter names unchanged).
    """

    joint: ConfigurationSpace
    selector: str
    arms: tuple[Any, ...]
    subspaces: tuple[ConfigurationSpace, ...]

    @property
    def n_arms(self) -> int:
        return len(self.arms)

    def arm_index(self, value: Any) -> int:
        """Index of the arm whose selector value is ``value`` (a value or a joint config)."""
        if isinstance(value, Mapping):
            if self.selector not in value:
                raise ValueError(f"configuration has no value for the selector {self.selector!r}")
            value = value[self.selector]
        for i, arm in enumerate(self.arms):
            if arm == value and type(arm) is type(value):
                return i
        for i, arm in enumerate(self.arms):  # tolerate e.g. numpy scalars
            if arm == value:
                return i
        raise ValueError(
            f"selector value {value!r} of {self.selector!r} is not an arm; arms: {list(self.arms)}"
        )

    def is_empty(self, arm: int) -> bool:
        """True if arm ``arm`` has no hyperparameters (a single configuration)."""
        return len(self.subspaces[arm]) == 0

    def to_arm(self, config: Mapping[str, Any]) -> tuple[int, Configuration]:
        """``(arm index, configuration of that arm's subspace)`` for a joint configuration."""
        arm = self.arm_index(config)
        sub = self.subspaces[arm]
        getter = config.get
        values = {name: getter(name) for name in sub.keys() if getter(name) is not None}
        return arm, Configuration(sub, values=values)

    def to_joint(self, arm: int, config: Mapping[str, Any], origin: Any = None) -> Configuration:
        """The joint configuration of an arm-subspace configuration (selector set to the arm)."""
        if not 0 <= arm < self.n_arms:
            raise ValueError(f"arm must be an int in [0, {self.n_arms - 1}], got {arm!r}")
        values = {self.selector: self.arms[arm]}
        values.update({k: v for k, v in dict(config).items()})
        if self.selector in dict(config):
            raise ValueError(f"arm configuration must not set the selector {self.selector!r}")
        return Configuration(self.joint, values=values, origin=origin)


def split_cash_space(configspace: ConfigurationSpace, selector: str | None = None) -> CashSpace:
    """Split a CASH ConfigSpace into one subspace per selector value.

    Args:
        configspace: the joint space.
        selector: name of the top-level categorical; detected with :func:`detect_selector` if
            ``None``.

    Raises:
        ValueError: no/ambiguous selector, a selector that is not an unconditional categorical,
            a forbidden clause that forbids a whole arm or involves the selector in a relation.
    """
    if not isinstance(configspace, ConfigurationSpace):
        raise TypeError(f"configspace must be a ConfigurationSpace, got {type(configspace).__name__}")
    if selector is None:
        selector = detect_selector(configspace)
    if selector not in configspace:
        raise ValueError(f"selector {selector!r} is not a hyperparameter of the configspace; "
                         f"known: {list(configspace.keys())}")
    hp = configspace[selector]
    if not isinstance(hp, CategoricalHyperparameter):
        raise ValueError(f"selector {selector!r} must be a categorical hyperparameter, "
                         f"got {type(hp).__name__}")
    if selector not in configspace.unconditional_hyperparameters:
        raise ValueError(f"selector {selector!r} must be top-level (unconditional), but it has "
                         f"parents {[p.name for p in configspace.parents_of[selector]]}")

    arms = tuple(hp.choices)
    subspaces = []
    for value in arms:
        members: set[str] = set()
        hps: list[Hyperparameter] = []
        conds: list[Any] = []
        for name, h in configspace.items():  # topological order: parents before children
            if name == selector:
                continue
            parent_conds = configspace.parent_conditions_of[name]
            if not parent_conds:
                members.add(name)
                hps.append(h)
                continue
            # ConfigSpace stores one condition (possibly a conjunction) per child
            reduced = [_reduce_condition(c, selector, value, members) for c in parent_conds]
            if any(r is False for r in reduced):
                continue
            members.add(name)
            hps.append(h)
            conds.extend(_copy_condition(r) for r in reduced if not isinstance(r, bool))
        forb: list[Any] = []
        for clause in configspace.forbidden_clauses:
            r = _reduce_forbidden(clause, selector, value, members)
            if r is True:
                raise ValueError(f"forbidden clause {clause} forbids the arm {selector}={value!r}")
            if r is not False:
                forb.append(r)
        name = f"{configspace.name or 'cash'}[{selector}={value}]"
        sub = ConfigurationSpace(name=name)
        sub.add(hps)
        if conds:
            sub.add(conds)
        if forb:
            sub.add(forb)
        subspaces.append(sub)
    return CashSpace(configspace, selector, arms, tuple(subspaces))


# ------------------------------------------------------- uvp SearchSpace -> ConfigSpace CASH
def cash_configspace(
    arm_spaces: Mapping[Any, SearchSpace],
    selector: str = "algorithm",
    arms: Sequence[Any] | None = None,
    seed: int | None = None,
    separator: str = ":",
    prefix: bool = True,
    defaults: Mapping[Any, Mapping[str, Any]] | None = None,
) -> ConfigurationSpace:
    """A ConfigSpace CASH space from per-arm :class:`uvp_plugins.space.SearchSpace` objects.

    Arm ``a``'s parameter ``p`` becomes ``f"{a}{separator}{p}"`` (names may repeat across arms;
    with ``prefix=False`` the names are kept, e.g. when they are already prefixed as in
    :class:`uvp_plugins.bench.problems.cash.CashProblem`), conditioned on ``selector == a``; an
    empty ``SearchSpace`` gives an arm without hyperparameters. Use :func:`arm_params` to map a
    joint configuration of a prefixed space back to ``{selector: arm, **params}`` with the
    original parameter names.

    Args:
        arm_spaces: ``{arm value: its SearchSpace}``.
        selector: name of the top-level categorical.
        arms: the arm order (default: ``arm_spaces``' order); must be exactly its keys.
        seed: seed of the returned ConfigSpace.
        separator: between arm value and parameter name.
        prefix: prefix parameter names with the arm value (else names must be unique).
        defaults: optional ``{arm value: {parameter name: default value}}`` (names as in the
            arm's ``SearchSpace``): the hyperparameters' default values, so that an arm
            subspace's ``get_default_configuration()`` is the class's default configuration (the
            configuration the paper's protocol evaluates first, App. D); parameters left out keep
            ConfigSpace's default (the middle of the range, the first choice).

    Raises:
        ValueError: ``arms`` is not exactly the keys of ``arm_spaces``; with ``prefix=False``, a
            parameter name used by two arms or equal to the selector; a default for an arm or a
            parameter that does not exist, or outside its parameter's range.
    """
    order = list(arm_spaces) if arms is None else list(arms)
    defaults = {} if defaults is None else dict(defaults)
    unknown_arms = [a for a in defaults if a not in arm_spaces]
    if unknown_arms:
        raise ValueError(f"defaults has arms {unknown_arms} that are not keys of arm_spaces "
                         f"{list(arm_spaces)}")
    if not order:
        raise ValueError("arm_spaces must hold at least one arm")
    missing = [a for a in order if a not in arm_spaces]
    extra = [a for a in arm_spaces if a not in order]
    if missing or extra or len(set(order)) != len(order):
        raise ValueError(
            f"arms {order} must list every key of arm_spaces exactly once "
            f"(missing subspace for {missing}, not listed {extra})"
        )
    cs = ConfigurationSpace(name=f"cash[{selector}]", seed=seed)
    sel = Categorical(selector, order)
    items: list[Any] = [sel]
    seen = {selector: "the selector"}
    for arm in order:
        space = arm_spaces[arm]
        if not isinstance(space, SearchSpace):
            raise TypeError(f"arm_spaces[{arm!r}] must be a SearchSpace, got {type(space).__name__}")
        arm_defaults = dict(defaults.get(arm) or {})
        unknown = sorted(set(arm_defaults) - set(space.names))
        if unknown:
            raise ValueError(f"defaults[{arm!r}] names {unknown}, which are not parameters of "
                             f"arm {arm!r}; its parameters: {space.names}")
        for p in space.params:
            name = f"{arm}{separator}{p.name}" if prefix else p.name
            if name in seen:
                raise ValueError(f"parameter name {name!r} of arm {arm!r} is already used by "
                                 f"{seen[name]}; use prefix=True")
            seen[name] = f"arm {arm!r}"
            h = hyperparameter_from_param(p, name, arm_defaults.get(p.name))
            items += [h, EqualsCondition(h, sel, arm)]
    cs.add(items)
    return cs


def arm_params(
    config: Mapping[str, Any], selector: str = "algorithm", separator: str = ":"
) -> dict[str, Any]:
    """``{selector: arm, **params}`` (original parameter names) from a joint configuration built
    by :func:`cash_configspace`; integers come back as ``int``, floats as ``float``."""
    arm = config[selector]
    prefix = f"{arm}{separator}"
    out: dict[str, Any] = {selector: arm}
    for key in list(config.keys()):
        if key.startswith(prefix):
            out[key[len(prefix):]] = _plain(config.get(key))
    return out


def _plain(v: Any) -> Any:
    """numpy scalars -> python scalars."""
    item = getattr(v, "item", None)
    return item() if callable(item) else v


def plain_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The active values of a configuration as a dict of plain Python scalars."""
    return {k: _plain(config.get(k)) for k in list(config.keys()) if config.get(k) is not None}

"""Ray Tune search spaces (``param_space`` / a searcher's ``space``) -> :class:`uvp_plugins.space.SearchSpace`.

One :mod:`uvp_plugins.space` parameter per Ray domain, named by its path in the (nested) config
joined with ``"/"`` (Ray's ``flatten_dict`` delimiter), the parameters sorted by name (as Optuna's
relative search spaces are, so the same space gives the same mesh in both adapters):

==========================================  ==================================================
Ray domain                                  uvp_plugins parameter
==========================================  ==================================================
``tune.uniform(l, u)``                      ``FloatParam(l, u)``
``tune.loguniform(l, u)``                   ``FloatParam(l, u, log=True)``
``tune.quniform(l, u, q)``                  ``IntParam(0, K)`` over Ray's grid ``k q``,
                                            ``ceil(l/q) <= k <= floor(u/q)``
``tune.randint(l, u)`` (``u`` exclusive)    ``IntParam(l, u - 1)``
``tune.lograndint(l, u)``                   ``IntParam(l, u - 1, log=True)``
``tune.qrandint(l, u, q)``                  ``IntParam(0, K)`` over Ray's grid (``q = 1``:
                                            as ``randint``, Ray's own sampling rule)
``tune.choice(categories)``                 ``CategoricalParam`` over the choices' indices
==========================================  ==================================================

Categorical values are held by index, so any Python object Ray accepts as a choice works and the
core's JSON state holds only numbers. Quantized log scales (``qloguniform``, ``qlograndint`` with
``q > 1``), normal distributions (``randn``, ``qrandn``), ``sample_from`` and ``grid_search``
have no finite mesh here and are rejected with an error naming the parameter. (A ``Tuner``
replaces ``sample_from`` in its ``param_space`` by a placeholder constant before a searcher sees
the space and evaluates it per trial itself: there it is not a parameter of this space.)

The other direction, :func:`ray_param_space`, writes a :class:`SearchSpace` as Ray domains (for a
caller that holds a :class:`SearchSpace`, e.g. ``uvp-bench``); read back by :class:`RaySpace` it
gives the same numeric parameters (categoricals by index, as above).
"""

from __future__ import annotations

import base64
import json
import math
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ray.tune.search.sample import (
    Categorical,
    Domain,
    Float,
    Integer,
    LogUniform,
    Quantized,
    Uniform,
)
from ray.tune.search.variant_generator import parse_spec_vars

from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, Param, SearchSpace

__all__ = ["RaySpace", "ray_param_space"]

_DELIMITER = "/"


def _grid_index(bound: float, q: float, round_fn: Any) -> int:
    """``bound``'s index on Ray's grid of multiples of ``q``, rounded inwards (as Ray's
    ``Quantized`` sampler does: a bound within float tolerance of a grid point is that point)."""
    scaled = bound / q
    nearest = round(scaled)
    if math.isclose(scaled, nearest):
        return int(nearest)
    return int(round_fn(scaled))


@dataclass(frozen=True)
class _Dim:
    """One Ray domain: its path, its core parameter and how values map between them."""

    path: tuple[str, ...]
    param: Param
    q: float | None = None  # Ray grid step (value = (k_low + index) * q)
    k_low: int = 0
    choices: tuple[Any, ...] | None = None  # categorical values (the core holds indices)
    integer: bool = False  # an Integer domain (values handed to Ray as int)

    @property
    def name(self) -> str:
        return self.param.name

    def to_ray(self, value: Any) -> Any:
        if self.choices is not None:
            return self.choices[int(value)]
        if self.q is not None:
            v = (self.k_low + int(value)) * self.q
            return int(round(v)) if self.integer else float(v)
        return value

    def to_core(self, value: Any) -> Any:
        if self.choices is not None:
            for i, c in enumerate(self.choices):
                if c is value or (c == value and type(c) is type(value)):
                    return i
            for i, c in enumerate(self.choices):
                if c == value:
                    return i
            raise ValueError(f"parameter {self.name!r}: {value!r} is not one of {list(self.choices)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
            raise TypeError(f"parameter {self.name!r}: expected a number, got {value!r}")
        if self.q is not None:
            k = float(value) / self.q - self.k_low
            if not math.isclose(k, round(k), abs_tol=1e-9):
                raise ValueError(
                    f"parameter {self.name!r}: {value!r} is not on the grid of multiples of q={self.q}"
                )
            return self.param.validate(int(round(k)))
        return self.param.validate(value)


def _has_domain(value: Any) -> bool:
    if isinstance(value, Domain):
        return True
    if isinstance(value, Mapping):
        return any(_has_domain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_domain(v) for v in value)
    return False


def _dim(path: tuple[Any, ...], domain: Domain) -> _Dim:
    if not all(isinstance(p, str) for p in path):
        raise ValueError(
            f"parameter {path!r}: search domains inside lists are not supported; put them in a dict"
        )
    name = _DELIMITER.join(path)
    sampler = domain.get_sampler()
    q: float | None = None
    if isinstance(sampler, Quantized):
        q = sampler.q
        sampler = sampler.get_sampler()
    kind = type(domain).__name__
    if isinstance(domain, Categorical) and q is None:
        choices = tuple(domain.categories)
        if any(_has_domain(c) for c in choices):
            raise ValueError(
                f"parameter {name!r}: search domains nested inside tune.choice (conditional "
                "spaces) are not supported by EnhancedAdaCentSearch"
            )
        return _Dim(path, CategoricalParam(name, tuple(range(len(choices)))), choices=choices)
    if isinstance(domain, (Float, Integer)) and isinstance(sampler, (Uniform, LogUniform)):
        lo, hi = domain.lower, domain.upper
        log = isinstance(sampler, LogUniform)
        if isinstance(domain, Integer) and (q is None or q == 1):  # Ray: upper exclusive
            return _Dim(path, IntParam(name, int(lo), int(hi) - 1, log=log))
        if q is None:
            return _Dim(path, FloatParam(name, float(lo), float(hi), log=log))
        if not log:
            k_lo, k_hi = _grid_index(lo, q, math.ceil), _grid_index(hi, q, math.floor)
            if k_hi < k_lo:
                raise ValueError(
                    f"parameter {name!r}: no multiple of q={q} lies in [{lo}, {hi}]"
                )
            return _Dim(
                path, IntParam(name, 0, k_hi - k_lo), q=q, k_low=k_lo,
                integer=isinstance(domain, Integer),
            )
        raise ValueError(
            f"parameter {name!r}: a quantized log scale (tune.qloguniform / tune.qlograndint with "
            "q > 1) is not supported by EnhancedAdaCentSearch; use tune.loguniform, "
            "tune.lograndint or tune.choice over the grid values"
        )
    raise ValueError(
        f"parameter {name!r}: unsupported Ray search domain {kind} with sampler "
        f"{type(sampler).__name__} ({domain!r}); EnhancedAdaCentSearch supports tune.uniform, "
        "tune.quniform, tune.loguniform, tune.randint, tune.qrandint, tune.lograndint and "
        "tune.choice"
    )


class RaySpace:
    """The domains of a Ray config with their :class:`SearchSpace` encoding.

    Args:
        config: a Ray Tune search space (nested dict of ``tune.*`` domains and constants).

    Example:
        >>> from ray import tune
        >>> rs = RaySpace({"lr": tune.loguniform(1e-4, 1e-1), "net": {"units": tune.randint(16, 129)}})
        >>> rs.names
        ['lr', 'net/units']
        >>> rs.to_ray({"lr": 0.01, "net/units": 64})
        {'lr': 0.01, 'net': {'units': 64}}
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        if not isinstance(config, Mapping):
            raise TypeError(f"space must be a dict of Ray Tune search domains, got {type(config).__name__}")
        _, domain_vars, grid_vars = parse_spec_vars(dict(config))
        if grid_vars:
            names = sorted(_DELIMITER.join(map(str, p)) for p, _ in grid_vars)
            raise ValueError(
                f"parameters {names}: tune.grid_search cannot be used with EnhancedAdaCentSearch "
                "(it chooses every configuration itself); use tune.choice"
            )
        dims = sorted((_dim(tuple(p), d) for p, d in domain_vars), key=lambda d: d.name)
        if not dims:
            raise ValueError(
                "the search space has no Ray Tune search domains (tune.uniform, tune.choice, ...)"
            )
        self._dims = {d.name: d for d in dims}
        self.space = SearchSpace(d.param for d in dims)

    @property
    def names(self) -> list[str]:
        return list(self._dims)

    def to_json(self) -> list[dict[str, Any]]:
        """The space as JSON data (for checkpoints; :meth:`from_json` rebuilds it). Choices that
        do not survive JSON unchanged (tuples, objects) are stored pickled, base64-encoded."""
        return [_dim_to_json(d) for d in self._dims.values()]

    @classmethod
    def from_json(cls, data: Sequence[Mapping[str, Any]]) -> RaySpace:
        """The space :meth:`to_json` described."""
        obj = cls.__new__(cls)
        dims = [_dim_from_json(d) for d in data]
        obj._dims = {d.name: d for d in dims}
        obj.space = SearchSpace(d.param for d in dims)
        return obj

    def to_ray(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """A core configuration -> the nested config Ray hands to the trainable."""
        out: dict[str, Any] = {}
        for name, d in self._dims.items():
            node = out
            for part in d.path[:-1]:
                node = node.setdefault(part, {})
            node[d.path[-1]] = d.to_ray(config[name])
        return out

    def to_core(self, config: Mapping[str, Any], *, partial: bool = False) -> dict[str, Any]:
        """A Ray config (nested, or flat with ``"/"`` names) -> the core's configuration.

        With ``partial=True`` missing parameters are left out (for ``points_to_evaluate``)."""
        out: dict[str, Any] = {}
        for name, d in self._dims.items():
            found, value = _lookup(config, d.path, name)
            if not found:
                if partial:
                    continue
                raise KeyError(f"configuration lacks parameter {name!r}")
            out[name] = d.to_core(value)
        return out


def _dim_to_json(d: _Dim) -> dict[str, Any]:
    p = d.param
    if isinstance(p, CategoricalParam):
        param: dict[str, Any] = {"kind": "categorical"}
    else:
        param = {"kind": "int" if isinstance(p, IntParam) else "float", "low": p.low, "high": p.high, "log": p.log}
    out: dict[str, Any] = {"path": list(d.path), "param": param, "q": d.q, "k_low": d.k_low, "integer": d.integer}
    if d.choices is not None:
        choices = list(d.choices)
        try:
            as_json = json.loads(json.dumps(choices))
        except (TypeError, ValueError):
            as_json = None
        if as_json == choices and all(type(a) is type(b) for a, b in zip(as_json, choices, strict=True)):
            out["choices"] = choices
        else:
            out["choices_pickle"] = base64.b64encode(pickle.dumps(d.choices)).decode("ascii")
    return out


def _dim_from_json(data: Mapping[str, Any]) -> _Dim:
    path = tuple(data["path"])
    name = _DELIMITER.join(path)
    p = data["param"]
    choices: tuple[Any, ...] | None = None
    if p["kind"] == "categorical":
        if "choices_pickle" in data:
            choices = tuple(pickle.loads(base64.b64decode(data["choices_pickle"])))
        else:
            choices = tuple(data["choices"])
        param: Param = CategoricalParam(name, tuple(range(len(choices))))
    elif p["kind"] == "int":
        param = IntParam(name, p["low"], p["high"], log=p["log"])
    else:
        param = FloatParam(name, p["low"], p["high"], log=p["log"])
    return _Dim(path, param, q=data["q"], k_low=data["k_low"], choices=choices, integer=data["integer"])


def _lookup(config: Mapping[str, Any], path: tuple[str, ...], name: str) -> tuple[bool, Any]:
    if name in config:
        return True, config[name]
    node: Any = config
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def ray_param_space(space: SearchSpace) -> dict[str, Domain]:
    """``space`` as a Ray Tune ``param_space``: ``tune.uniform`` / ``tune.loguniform`` for a
    :class:`FloatParam`, ``tune.randint`` / ``tune.lograndint`` (upper bound exclusive) for an
    :class:`IntParam`, ``tune.choice`` for a :class:`CategoricalParam`.

    Example:
        >>> space = SearchSpace([FloatParam("lr", 1e-4, 1e-1, log=True), IntParam("units", 16, 128)])
        >>> RaySpace(ray_param_space(space)).space == space
        True
    """
    from ray import tune

    out: dict[str, Domain] = {}
    for p in space.params:
        if isinstance(p, FloatParam):
            out[p.name] = tune.loguniform(p.low, p.high) if p.log else tune.uniform(p.low, p.high)
        elif isinstance(p, IntParam):
            make = tune.lograndint if p.log else tune.randint
            out[p.name] = make(p.low, p.high + 1)
        elif isinstance(p, CategoricalParam):
            out[p.name] = tune.choice(list(p.choices))
        else:  # pragma: no cover - the three kinds above are all SearchSpace holds
            raise TypeError(f"parameter {p.name!r}: unknown kind {type(p).__name__}")
    return out

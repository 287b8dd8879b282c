"""Optuna distributions <-> :class:`uvp_plugins.space.SearchSpace`, and values both ways.

Mapping (one :mod:`uvp_plugins.space` parameter per Optuna parameter, same name):

===============================================  ==============================================
Optuna distribution                              uvp_plugins parameter
===============================================  ==============================================
``FloatDistribution(low, high, log=...)``        ``FloatParam(low, high, log=...)``
``FloatDistribution(low, high, step=s)``         ``IntParam(0, K)`` over the grid index,
                                                 ``K = round((high - low) / s)``, value
                                                 ``low + k s``
``IntDistribution(low, high, log=...)`` (step 1) ``IntParam(low, high, log=...)``
``IntDistribution(low, high, step=s > 1)``       ``IntParam(0, K)`` over the grid index
``CategoricalDistribution(choices)``             ``CategoricalParam(choices)``
===============================================  ==============================================

A categorical keeps only the choices Optuna can store: Optuna records a value as the index of
the first choice equal to it (``CategoricalDistribution.to_internal_repr``), so with
``choices=[1, True]`` a suggested ``True`` comes back as ``1`` (``1.0`` after ``1`` likewise).
Such a later choice is left out of the encoding - a mesh point holding it would be stored as the
earlier one while its distances still called it unexplored - and :meth:`OptunaSpace.encode_value`
maps every value to the choice Optuna stores for it.

Stepped distributions become a grid index so that every mesh point and every decoded value lies
exactly on Optuna's grid (``low + k * step``), uniformly in the unit cube, and distances are the
same as on the continuous range. Decoded values are plain Python ``float``/``int``/choice
objects, as Optuna requires.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from uvp_plugins.space import (
    CategoricalParam,
    FloatParam,
    IntParam,
    Param,
    SearchSpace,
    config_key,
)

__all__ = ["OptunaSpace", "storable_choices", "to_distributions"]


def _grid_size(low: float, high: float, step: float) -> int:
    return int(round((high - low) / step))


def _to_param(name: str, dist: BaseDistribution) -> Param:
    if isinstance(dist, FloatDistribution):
        if dist.step is not None:
            return IntParam(name, 0, _grid_size(dist.low, dist.high, dist.step))
        return FloatParam(name, dist.low, dist.high, log=dist.log)
    if isinstance(dist, IntDistribution):
        if dist.step != 1:
            return IntParam(name, 0, _grid_size(dist.low, dist.high, dist.step))
        return IntParam(name, dist.low, dist.high, log=dist.log)
    if isinstance(dist, CategoricalDistribution):
        return CategoricalParam(name, storable_choices(dist))
    raise TypeError(
        f"parameter {name!r}: unsupported distribution {type(dist).__name__}; expected "
        "FloatDistribution, IntDistribution or CategoricalDistribution"
    )


def storable_choices(dist: CategoricalDistribution) -> tuple[Any, ...]:
    """The choices of ``dist`` that Optuna stores as themselves, in order: a choice equal to an
    earlier one (``True`` after ``1``) is stored as the earlier one and is left out.

    Example:
        >>> storable_choices(CategoricalDistribution([1, True, "a", 1.0]))
        (1, 'a')
    """
    return tuple(c for i, c in enumerate(dist.choices) if dist.to_internal_repr(c) == i)


class OptunaSpace:
    """A fixed set of Optuna distributions with its :class:`SearchSpace` encoding.

    Args:
        distributions: ``{name: distribution}``; the order of the encoded coordinates is the
            order of this mapping (Optuna's relative search spaces are sorted by name).

    Example:
        >>> from optuna.distributions import FloatDistribution, IntDistribution
        >>> osp = OptunaSpace({"lr": FloatDistribution(1e-4, 1e-1, log=True),
        ...                    "units": IntDistribution(16, 128, step=16)})
        >>> osp.from_config(osp.to_config({"lr": 0.01, "units": 48}))
        {'lr': 0.01, 'units': 48}
    """

    def __init__(self, distributions: Mapping[str, BaseDistribution]) -> None:
        self.distributions: dict[str, BaseDistribution] = dict(distributions)
        self.space = SearchSpace(_to_param(n, d) for n, d in self.distributions.items())
        self._key = repr(sorted((n, repr(d)) for n, d in self.distributions.items()))

    @property
    def names(self) -> list[str]:
        return list(self.distributions)

    def __len__(self) -> int:
        return len(self.distributions)

    # ----------------------------------------------------------- one value
    def encode_value(self, name: str, value: Any) -> Any:
        """One Optuna value -> its :class:`SearchSpace` value (grid index for stepped ones)."""
        dist = self.distributions[name]
        if isinstance(dist, CategoricalDistribution):
            try:  # the choice Optuna stores for this value (module doc)
                return dist.choices[int(dist.to_internal_repr(value))]
            except (ValueError, TypeError):
                raise ValueError(
                    f"parameter {name!r}: {value!r} is not one of {list(dist.choices)}"
                ) from None
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"parameter {name!r}: expected a number, got {value!r}")
        v = float(value)
        if not (dist.low <= v <= dist.high) or not np.isfinite(v):  # type: ignore[attr-defined]
            raise ValueError(
                f"parameter {name!r}: {value!r} outside [{dist.low}, {dist.high}]"  # type: ignore[attr-defined]
            )
        step = dist.step  # type: ignore[attr-defined]
        if isinstance(dist, FloatDistribution) and step is not None:
            return int(round((v - dist.low) / step))
        if isinstance(dist, IntDistribution) and step != 1:
            return int(round((v - dist.low) / step))
        if isinstance(dist, IntDistribution):
            return int(round(v))
        return v

    def _decode(self, name: str, value: Any) -> Any:
        dist = self.distributions[name]
        if isinstance(dist, CategoricalDistribution):
            return value
        if isinstance(dist, FloatDistribution):
            if dist.step is not None:
                v = dist.low + int(value) * dist.step
                return float(min(max(v, dist.low), dist.high))
            return float(min(max(float(value), dist.low), dist.high))
        assert isinstance(dist, IntDistribution)
        if dist.step != 1:
            return int(min(max(dist.low + int(value) * dist.step, dist.low), dist.high))
        return int(value)

    # ------------------------------------------------------------- configs
    def to_config(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Optuna parameter values -> :class:`SearchSpace` configuration.

        Raises:
            KeyError: if a parameter of the space is missing.
            ValueError/TypeError: if a value is outside its distribution.
        """
        missing = [n for n in self.distributions if n not in params]
        if missing:
            raise KeyError(f"values lack parameters {missing}")
        return {n: self.encode_value(n, params[n]) for n in self.distributions}

    def from_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """:class:`SearchSpace` configuration -> Optuna parameter values (Python scalars)."""
        return {n: self._decode(n, config[n]) for n in self.distributions}

    def params_key(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        """The configuration key (:func:`uvp_plugins.space.config_key`) of Optuna parameter
        values: equal exactly for the values Optuna stores alike (``True`` and ``1`` of one
        categorical, see the module doc).

        Raises:
            KeyError/ValueError/TypeError: as :meth:`to_config`.
        """
        return config_key(self.to_config(params), self.names)

    def embed(self, params_list: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Distance embedding (:meth:`SearchSpace.embed`) of Optuna parameter values."""
        if len(params_list) == 0:
            return np.empty((0, self.space.embedding_dim))
        return self.space.embed([self.to_config(p) for p in params_list])

    def key(self) -> str:
        """A stable text key of the distributions (used to tag mesh indices in storage)."""
        return self._key


def to_distributions(space: SearchSpace) -> dict[str, BaseDistribution]:
    """Optuna distributions of a :class:`SearchSpace` (same bounds, log scales and choices)."""
    out: dict[str, BaseDistribution] = {}
    for p in space.params:
        if isinstance(p, FloatParam):
            out[p.name] = FloatDistribution(p.low, p.high, log=p.log)
        elif isinstance(p, IntParam):
            out[p.name] = IntDistribution(p.low, p.high, log=p.log)
        else:
            out[p.name] = CategoricalDistribution(p.choices)
    return out

"""The one conversion of a :class:`uvp_plugins.space.SearchSpace` into a ConfigSpace space.

Every SMAC-facing piece of uvp-plugins (the CASH spaces of :func:`smac_ext.cash_configspace`, the
ID-HB example, the ``uvp-bench`` SMAC methods) builds its ``ConfigurationSpace`` here, so a
parameter means the same thing everywhere:

* :class:`~uvp_plugins.space.FloatParam` -> ``Float(name, (low, high), log=log)``
  (a ``UniformFloatHyperparameter``; default: ConfigSpace's, the middle of the (log-)range);
* :class:`~uvp_plugins.space.IntParam` -> ``Integer(name, (low, high), log=log)``;
* :class:`~uvp_plugins.space.CategoricalParam` -> ``Categorical(name, choices)``;
* a numeric parameter with ``low == high`` -> ``Constant(name, low)`` (ConfigSpace rejects an
  empty range).

Example:
    >>> from uvp_plugins.space import FloatParam, IntParam, CategoricalParam, SearchSpace
    >>> space = SearchSpace([FloatParam("lr", 1e-4, 1e-1, log=True), IntParam("layers", 1, 4),
    ...                      CategoricalParam("act", ["relu", "tanh"])])
    >>> cs = configspace_from_space(space, seed=0)
    >>> list(cs.keys()), cs["lr"].log
    (['act', 'layers', 'lr'], True)
"""

from __future__ import annotations

from typing import Any

from ConfigSpace import Categorical, ConfigurationSpace, Constant, Float, Integer
from ConfigSpace.hyperparameters import Hyperparameter

from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace

__all__ = ["configspace_from_space", "hyperparameter_from_param"]


def hyperparameter_from_param(
    param: Any, name: str | None = None, default: Any = None
) -> Hyperparameter:
    """The ConfigSpace hyperparameter of one parameter of a :class:`SearchSpace` (named
    ``name``, default the parameter's own name; ``default``: its default value, ``None`` for
    ConfigSpace's); see the module docstring for the mapping.

    Raises:
        ValueError: ``default`` is not a value of the parameter (named in the message).
    """
    name = param.name if name is None else name
    # ConfigSpace's own default when none is given: the keyword is left out (ConfigSpace 1.2.2's
    # Categorical refuses an explicit default=None)
    given: dict[str, Any] = {} if default is None else {"default": param.validate(default)}
    if isinstance(param, FloatParam):
        if param.low == param.high:
            return Constant(name, param.low)
        return Float(name, (param.low, param.high), log=param.log, **given)
    if isinstance(param, IntParam):
        if param.low == param.high:
            return Constant(name, param.low)
        return Integer(name, (param.low, param.high), log=param.log, **given)
    if isinstance(param, CategoricalParam):
        return Categorical(name, list(param.choices), **given)
    raise TypeError(f"unsupported parameter type {type(param).__name__}")


def configspace_from_space(space: SearchSpace, seed: int | None = None) -> ConfigurationSpace:
    """A ``ConfigurationSpace`` (seeded with ``seed``) with the parameters of ``space``."""
    if not isinstance(space, SearchSpace):
        raise TypeError(f"space must be a uvp_plugins.space.SearchSpace, got {type(space).__name__}")
    cs = ConfigurationSpace(seed=seed)
    cs.add([hyperparameter_from_param(p) for p in space.params])
    return cs

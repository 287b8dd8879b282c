"""Mixed search spaces encoded into the unit cube, and candidate meshes over them.

Every plugin of the suite works on the same normalised representation, defined here once:

* **Unit coordinates** ``u`` (one coordinate per parameter, ``u in [0, 1]^p``) are what meshes and
  random samples are drawn in.

  - float: ``u = (v - low) / (high - low)``; with ``log=True`` the same on ``log(v)``.
  - int: as float, on the integer value (``log`` on ``log(v)``); decoding rounds to the nearest
    integer and clips to ``[low, high]``.
  - categorical with ``k`` choices: choice ``i`` owns the bin ``[i/k, (i+1)/k)`` and is encoded at
    the bin centre ``(i + 0.5) / k``; decoding takes ``floor(u * k)``.

* **Embedding** ``z`` (what distances are measured in, ``z in [0, 1]^D``): numeric parameters
  keep their unit coordinate; a categorical parameter with ``k`` choices becomes ``k`` one-hot
  coordinates scaled by ``1/sqrt(2)``. Hence the metric for categoricals is the *0/1 metric*:
  two different choices are at Euclidean distance exactly 1, the same as the two ends of a
  numeric axis, and equal choices at distance 0. This is the ``||x - c||_2`` of the k-center
  algorithms (Bateni et al., Alg. 1 and 4) on mixed spaces.

Meshes are scrambled Sobol points (``scipy.stats.qmc.Sobol``), seedable, mapped to
configurations and deduplicated after rounding integers and categoricals (the AdaCent reference
code uses n = 1000 such points in the normalised space).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "FloatParam",
    "IntParam",
    "CategoricalParam",
    "Param",
    "SearchSpace",
    "range_centre",
]

_SQRT_HALF = 1.0 / math.sqrt(2.0)


def _is_nan(value: Any) -> bool:
    """Whether ``value`` is a float NaN (of any float type)."""
    return isinstance(value, (float, np.floating)) and math.isnan(value)


_N = TypeVar("_N", int, float)


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"parameter name must be a non-empty str, got {name!r}")
    return name


def _check_bounds(name: str, low: float, high: float, log: bool) -> None:
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"parameter {name!r}: low and high must be finite, got [{low}, {high}]")
    if low > high:
        raise ValueError(f"parameter {name!r}: expected low <= high, got low={low} > high={high}")
    if log and low <= 0:
        raise ValueError(f"parameter {name!r}: log=True needs low > 0, got low={low}")


def _within(name: str, value: Any, v: _N, low: float, high: float) -> _N:
    """``v`` (``value`` as the parameter's type) if it lies in ``[low, high]``, else the one
    out-of-range message of every numeric parameter."""
    if not (low <= v <= high):
        raise ValueError(f"parameter {name!r}: {value!r} outside [{low}, {high}]")
    return v


def range_centre(
    low: float, high: float, log: bool = False, integer: bool = False, step: float | None = None
) -> float | int:
    """The default value of a numeric range when nobody gave one: its middle.

    The rule ConfigSpace applies to a hyperparameter without an explicit default (so a CASH
    class's "default configuration" means the same in SMAC and in the Optuna CASH sampler): the
    midpoint ``(low + high) / 2``, on the log scale (``sqrt(low * high)``) if ``log``; an integer
    range rounds it half to even; with a ``step`` the value is the grid point
    ``low + k * step`` nearest to it.

    Example:
        >>> range_centre(1e-3, 1e3, log=True), range_centre(1, 30, integer=True)
        (1.0, 16)
        >>> range_centre(0.0, 1.0, step=0.3)
        0.6
    """
    if log:
        mid = math.exp((math.log(low) + math.log(high)) / 2.0)
    else:
        mid = (low + high) / 2.0
    if step is not None:
        k = round((mid - low) / step)
        mid = min(high, low + k * step)
        mid = round(mid, 12)
    if integer:
        return int(min(high, max(low, round(mid))))
    return float(min(high, max(low, mid)))


@dataclass(frozen=True)
class FloatParam:
    """A real-valued parameter on ``[low, high]`` (log-uniform scale if ``log``)."""

    name: str
    low: float
    high: float
    log: bool = False

    def __post_init__(self) -> None:
        _check_name(self.name)
        object.__setattr__(self, "low", float(self.low))
        object.__setattr__(self, "high", float(self.high))
        _check_bounds(self.name, self.low, self.high, self.log)

    @property
    def width(self) -> int:
        return 1

    def _scale(self, v: Any) -> Any:
        return np.log(v) if self.log else v

    def to_unit(self, values: np.ndarray) -> np.ndarray:
        lo, hi = self._scale(np.float64(self.low)), self._scale(np.float64(self.high))
        if hi == lo:
            return np.full(values.shape, 0.5)
        return np.clip((self._scale(values.astype(float)) - lo) / (hi - lo), 0.0, 1.0)

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        lo, hi = self._scale(np.float64(self.low)), self._scale(np.float64(self.high))
        v = lo + np.clip(u, 0.0, 1.0) * (hi - lo)
        out = np.exp(v) if self.log else v
        return np.clip(out, self.low, self.high)

    def validate(self, value: Any) -> float:
        v = float(value)
        return _within(self.name, value, v, self.low, self.high)


@dataclass(frozen=True)
class IntParam:
    """An integer parameter on ``[low, high]`` (log scale if ``log``)."""

    name: str
    low: int
    high: int
    log: bool = False

    def __post_init__(self) -> None:
        _check_name(self.name)
        if int(self.low) != self.low or int(self.high) != self.high:
            raise ValueError(f"parameter {self.name!r}: int bounds expected, got [{self.low}, {self.high}]")
        object.__setattr__(self, "low", int(self.low))
        object.__setattr__(self, "high", int(self.high))
        _check_bounds(self.name, self.low, self.high, self.log)

    @property
    def width(self) -> int:
        return 1

    def _float(self) -> FloatParam:
        return FloatParam(self.name, self.low, self.high, self.log)

    def to_unit(self, values: np.ndarray) -> np.ndarray:
        return self._float().to_unit(values.astype(float))

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        v = np.rint(self._float().from_unit(u))
        return np.clip(v, self.low, self.high).astype(np.int64)

    def validate(self, value: Any) -> int:
        if isinstance(value, bool) or int(value) != value:
            raise ValueError(f"parameter {self.name!r}: expected an int, got {value!r}")
        v = int(value)
        return _within(self.name, value, v, self.low, self.high)


@dataclass(frozen=True)
class CategoricalParam:
    """A categorical parameter; choices are compared with ``==`` (0/1 metric, see module doc)."""

    name: str
    choices: tuple[Any, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        _check_name(self.name)
        choices = tuple(self.choices)
        if len(choices) == 0:
            raise ValueError(f"parameter {self.name!r}: choices must not be empty")
        object.__setattr__(self, "choices", choices)

    @property
    def width(self) -> int:
        return len(self.choices)

    def index(self, value: Any) -> int:
        """The position of ``value`` among the choices: equal (``==``), with ``True`` never
        equal to ``1`` and a float NaN equal to a float NaN choice (Optuna accepts NaN as a
        choice; ``nan == nan`` is false)."""
        for i, c in enumerate(self.choices):
            if c is value or (c == value and isinstance(c, bool) == isinstance(value, bool)):
                return i
        if _is_nan(value):
            for i, c in enumerate(self.choices):
                if _is_nan(c):
                    return i
        raise ValueError(f"parameter {self.name!r}: {value!r} is not one of {list(self.choices)}")

    def to_unit(self, indices: np.ndarray) -> np.ndarray:
        return (indices.astype(float) + 0.5) / len(self.choices)

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        k = len(self.choices)
        return np.clip(np.floor(np.clip(u, 0.0, 1.0) * k), 0, k - 1).astype(np.int64)

    def validate(self, value: Any) -> Any:
        return self.choices[self.index(value)]


Param = FloatParam | IntParam | CategoricalParam


class SearchSpace:
    """An ordered, immutable collection of parameters with unit-cube encodings.

    Args:
        params: the parameters, in the order of the encoded coordinates. Names must be unique.

    Example:
        >>> space = SearchSpace([FloatParam("lr", 1e-4, 1e-1, log=True),
        ...                      IntParam("layers", 1, 5),
        ...                      CategoricalParam("act", ("relu", "tanh"))])
        >>> configs, z = space.sobol_mesh(64, seed=0)
        >>> z.shape[1] == space.embedding_dim == 4
        True
    """

    def __init__(self, params: Iterable[Param]) -> None:
        self.params: tuple[Param, ...] = tuple(params)
        names = [p.name for p in self.params]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate parameter names: {dup}")
        for p in self.params:
            if not isinstance(p, (FloatParam, IntParam, CategoricalParam)):
                raise TypeError(f"expected FloatParam, IntParam or CategoricalParam, got {type(p).__name__}")

    # ------------------------------------------------------------------ basics
    def __len__(self) -> int:
        return len(self.params)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.params)

    def __repr__(self) -> str:
        return f"SearchSpace({list(self.params)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SearchSpace) and self.params == other.params

    def __hash__(self) -> int:
        return hash(self.params)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    @property
    def embedding_dim(self) -> int:
        """Number of coordinates of the distance embedding ``z``."""
        return sum(p.width for p in self.params)

    def __getitem__(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"unknown parameter {name!r}; known: {self.names}")

    # ------------------------------------------------------------- unit coords
    def _raw_column(self, p: Param, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        try:
            vals = [c[p.name] for c in configs]
        except KeyError as exc:
            raise KeyError(f"configuration lacks parameter {p.name!r}") from exc
        if isinstance(p, CategoricalParam):
            return np.array([p.index(v) for v in vals], dtype=np.int64)
        return np.array([p.validate(v) for v in vals], dtype=float)

    def to_unit(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Unit coordinates, shape ``(n, len(self))``."""
        u = np.empty((len(configs), len(self.params)))
        for j, p in enumerate(self.params):
            u[:, j] = p.to_unit(self._raw_column(p, configs))
        return u

    def from_unit(self, u: np.ndarray) -> list[dict[str, Any]]:
        """Configurations from unit coordinates (ints rounded, categoricals binned)."""
        return self._decode(u)[0]

    def decode_unit(self, u: np.ndarray) -> tuple[list[dict[str, Any]], np.ndarray]:
        """``(from_unit(u), embed(from_unit(u)))`` in one pass, without reading the
        configurations back (the samplers decode hundreds of candidates per step).

        Example:
            >>> space = SearchSpace([FloatParam("x", 1e-3, 1.0, log=True), IntParam("k", 1, 9)])
            >>> configs, Z = space.decode_unit(np.array([[0.5, 0.5]]))
            >>> configs[0]["k"], round(configs[0]["x"], 4), bool(np.array_equal(Z, space.embed(configs)))
            (5, 0.0316, True)
        """
        configs, raw = self._decode(u)
        return configs, self._embed_columns(raw, len(configs))

    def _decode(self, u: np.ndarray) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
        """Configurations from unit coordinates, and each parameter's column as
        :meth:`_raw_column` reads it back from them."""
        u = np.atleast_2d(np.asarray(u, dtype=float))
        if u.shape[1] != len(self.params):
            raise ValueError(f"expected unit coordinates of shape (n, {len(self.params)}), got {u.shape}")
        cols: list[list[Any]] = []
        raws: list[np.ndarray] = []
        for j, p in enumerate(self.params):
            raw = p.from_unit(u[:, j])
            if isinstance(p, CategoricalParam):
                cols.append([p.choices[int(i)] for i in raw])
                # the index embed() reads back: the first choice equal to the decoded one
                canonical = np.array([p.index(c) for c in p.choices], dtype=np.int64)
                raws.append(canonical[raw])
            elif isinstance(p, IntParam):
                cols.append([int(v) for v in raw])
                raws.append(raw.astype(float))
            else:
                cols.append([float(v) for v in raw])
                raws.append(np.asarray(raw, dtype=float))
        configs = [{p.name: cols[j][i] for j, p in enumerate(self.params)} for i in range(u.shape[0])]
        return configs, raws

    # --------------------------------------------------------------- embedding
    def embed(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Distance embedding ``z`` (numeric: unit coordinate; categorical: one-hot / sqrt 2)."""
        return self._embed_columns([self._raw_column(p, configs) for p in self.params], len(configs))

    def _embed_columns(self, raws: Sequence[np.ndarray], n: int) -> np.ndarray:
        z = np.zeros((n, self.embedding_dim))
        col = 0
        for p, raw in zip(self.params, raws, strict=True):
            if isinstance(p, CategoricalParam):
                z[np.arange(n), col + raw.astype(np.int64)] = _SQRT_HALF
            else:
                z[:, col] = p.to_unit(raw)
            col += p.width
        return z

    def unit_to_embedding(self, u: np.ndarray) -> np.ndarray:
        """Embed unit coordinates directly (after rounding ints and binning categoricals)."""
        return self.embed(self.from_unit(u))

    # ----------------------------------------------------------------- meshes
    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> list[dict[str, Any]]:
        """``n`` independent uniform samples in unit coordinates, decoded."""
        gen = np.random.default_rng(rng)
        return self.from_unit(gen.random((int(n), len(self.params))))

    def sobol_mesh(
        self, n: int, seed: int | None = 0, deduplicate: bool = True
    ) -> tuple[list[dict[str, Any]], np.ndarray]:
        """A scrambled Sobol mesh of ``n`` points: ``(configs, embedding)``.

        Points are drawn with ``scipy.stats.qmc.Sobol(d, scramble=True, seed=seed)`` (``n`` need
        not be a power of two), decoded, and deduplicated after rounding (first occurrence kept,
        order preserved), so fewer than ``n`` configurations are returned on small discrete spaces.
        """
        if int(n) != n or n < 1:
            raise ValueError(f"n must be a positive int, got {n!r}")
        if len(self.params) == 0:
            raise ValueError("cannot build a mesh over an empty search space")
        from scipy.stats import qmc  # imported here: scipy.stats takes seconds to import

        sobol = qmc.Sobol(d=len(self.params), scramble=True, seed=seed)
        m = int(math.ceil(math.log2(max(int(n), 2))))
        u = sobol.random_base2(m)[: int(n)]
        configs = self.from_unit(u)
        if deduplicate:
            configs = deduplicate_configs(configs, self.names)
        return configs, self.embed(configs)


@dataclass(frozen=True)
class _BoolValue:
    """A ``bool`` inside a configuration key: it never equals ``1``/``0`` there, just as
    :meth:`CategoricalParam.index` keeps the choices ``True`` and ``1`` apart."""

    value: bool


def config_key(config: Mapping[str, Any], names: Sequence[str]) -> tuple[Any, ...]:
    """A hashable key of a configuration (values in ``names`` order); equal keys mean equal
    configurations in the sense of :meth:`CategoricalParam.index` (``True`` is not ``1``).

    Example:
        >>> config_key({"c": True}, ["c"]) == config_key({"c": 1}, ["c"])
        False
    """
    values = [config[n] for n in names]
    if bool in map(type, values):  # (a C-level scan: keys are built for every candidate)
        return tuple(_BoolValue(v) if isinstance(v, bool) else v for v in values)
    return tuple(values)


def deduplicate_configs(
    configs: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> list[dict[str, Any]]:
    """Drop repeated configurations, keeping the first occurrence and the order."""
    seen: set[tuple[Any, ...]] = set()
    out: list[dict[str, Any]] = []
    for c in configs:
        key = config_key(c, names)
        if key not in seen:
            seen.add(key)
            out.append(dict(c))
    return out

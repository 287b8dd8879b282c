"""The contract of the core algorithms: what every online object offers, and one naming of
state formats with readers for their earlier versions.

Every algorithm of the papers is one framework-free object that an adapter drives with the
framework's events and persists wherever the framework keeps state (Optuna's storage, Ray's
experiment directory, SMAC's ``intensifier.json``):

* :class:`AskTell` - the object proposes work and is told its outcome: ``ask()`` the next
  configuration (or job, or arm), ``tell(...)`` its result (Iterative-Deepening Hyperband, the
  CASH bandit, online Enhanced-AdaCent);
* :class:`ObserveDecide` - the object watches reported values and decides about a trial:
  ``observe(trial, step, value)``, ``decide(trial)`` (the Pred stopping rule);
* :class:`Persistent` - both kinds, and models such as the Tobit ensemble, give their complete
  state as JSON-serialisable data (``state_dict()``) and are rebuilt from it
  (``from_state_dict(state, ...)``; a few take context that is configuration rather than state,
  e.g. the search space). The rebuilt object decides exactly as the original would have.

**One naming of state versions.** A state carries ``"format": "uvp-<name>/<version>"``
(:class:`StateFormat`, which each core object declares as its ``STATE_FORMAT`` and writes and
reads its state through: :meth:`StateFormat.stamp`, :meth:`StateFormat.read`); the version is
an int that grows when the layout changes, and the format's reader upgrades every version ever
written, so a state saved by any earlier release still loads.

=============================================  ========================  =================
core object                                    protocol                  state format
=============================================  ========================  =================
``hyperband.IterativeDeepeningHyperband``      ask/tell                  ``uvp-idhb``
``bandits.CashBandit``                         ask/tell                  ``uvp-cash-bandit``
``adacent.online.OnlineEnhancedAdaCent``       ask/tell                  ``uvp-online-adacent``
``adacent.pred.PredStoppingRule``              observe/decide            ``uvp-pred-rule``
``censored.TobitEnsemble``                     state only (fit/predict)  ``uvp-tobit-ensemble``
=============================================  ========================  =================

The parts and adapters that persist state of their own name it the same way:
``uvp-bandit-policy`` (an index policy, inside ``uvp-cash-bandit``), ``uvp-ray-idhb-scheduler``,
``uvp-ray-pred-scheduler``, ``uvp-ray-adacent-search``, ``uvp-smac-idhb`` and
``uvp-optuna-idhb-trial`` (the Optuna ID-HB pruner's record of a trial). Where an earlier
release wrote an integer version key instead of the tag (``"version"``, ``"v"``), the
format's ``legacy_key`` reads it.

Example:
    >>> FORMAT = StateFormat("uvp-example", 2, upgrades={1: lambda s: {**s, "seed": 0}})
    >>> FORMAT.stamp({"seed": 3})
    {'format': 'uvp-example/2', 'seed': 3}
    >>> FORMAT.read({"format": "uvp-example/1"})   # an earlier version, upgraded
    {'format': 'uvp-example/2', 'seed': 0}
    >>> FORMAT.read({"format": "uvp-other/2"})
    Traceback (most recent call last):
    ...
    ValueError: state format must be 'uvp-example/2' (or 'uvp-example/1', read and upgraded), got 'uvp-other/2'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "AskTell",
    "FORMAT_KEY",
    "ObserveDecide",
    "Persistent",
    "StateFormat",
    "parse_format",
]

#: the key of a state that names its format
FORMAT_KEY = "format"
#: ``uvp-<name>/<version>``: lower-case words joined by ``-``, a version int >= 1
_TAG = re.compile(r"^(uvp(?:-[a-z0-9]+)+)/([1-9][0-9]*)$")

#: upgrades a state of one version to the next (it receives and returns plain data)
Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


@runtime_checkable
class Persistent(Protocol):
    """An object whose complete state is JSON-serialisable data with a named, versioned format.

    ``from_state_dict`` is a classmethod; it may take arguments that are configuration rather
    than state (e.g. the :class:`~uvp_plugins.space.SearchSpace` of online Enhanced-AdaCent,
    which the caller has and the state does not repeat).
    """

    def state_dict(self) -> dict[str, Any]:
        """The complete state, ``{"format": "uvp-<name>/<version>", ...}``."""
        ...

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        """An object that decides exactly as the one whose :meth:`state_dict` gave ``state``."""
        ...


@runtime_checkable
class AskTell(Persistent, Protocol):
    """An online algorithm that proposes work and is told its outcome."""

    def ask(self, *args: Any, **kwargs: Any) -> Any:
        """The next unit of work (a configuration, a job, an arm); ``None`` where there is none."""
        ...

    def tell(self, *args: Any, **kwargs: Any) -> Any:
        """The outcome of a unit of work."""
        ...


@runtime_checkable
class ObserveDecide(Persistent, Protocol):
    """An online rule that watches the values trials report and decides about a trial."""

    def observe(self, trial: Any, step: int, value: float) -> None:
        """Record ``value`` reported by ``trial`` at ``step``."""
        ...

    def decide(self, trial: Any) -> bool:
        """The decision about ``trial`` given everything observed (e.g. stop it)."""
        ...


def parse_format(tag: Any) -> tuple[str, int]:
    """``"uvp-<name>/<version>"`` as ``(name, version)``.

    Example:
        >>> parse_format("uvp-idhb/1")
        ('uvp-idhb', 1)
    """
    match = _TAG.match(tag) if isinstance(tag, str) else None
    if match is None:
        raise ValueError(
            f"a state format is 'uvp-<name>/<version>' (lower-case words joined by '-', "
            f"a version int >= 1), got {tag!r}"
        )
    return match.group(1), int(match.group(2))


@dataclass(frozen=True)
class StateFormat:
    """A state format: its name, its current version and how earlier versions are read.

    Args:
        name: ``uvp-<words>`` (lower case, joined by ``-``).
        version: the version written now (int >= 1).
        upgrades: ``{v: f}`` for every earlier version ``v`` that was ever written: ``f`` turns
            a state of version ``v`` into one of version ``v + 1``.
        legacy_key: the key under which states written before the format tag existed carried
            their version (e.g. ``"version"``); such states are read as that version.
    """

    name: str
    version: int
    upgrades: Mapping[int, Upgrade] = field(default_factory=dict)
    legacy_key: str | None = None

    def __post_init__(self) -> None:
        parse_format(f"{self.name}/{self.version}")
        for v in self.upgrades:
            if not (isinstance(v, int) and 1 <= v < self.version):
                raise ValueError(
                    f"{self.name}: upgrades are keyed by an earlier version (1 <= v < "
                    f"{self.version}), got {v!r}"
                )

    @property
    def tag(self) -> str:
        """``"<name>/<version>"``, the value of a state's ``"format"`` key."""
        return f"{self.name}/{self.version}"

    @property
    def readable_versions(self) -> tuple[int, ...]:
        """The versions :meth:`read` accepts: every one from which upgrades lead to the current."""
        ok = [self.version]
        v = self.version - 1
        while v in self.upgrades:
            ok.append(v)
            v -= 1
        return tuple(sorted(ok))

    def stamp(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``body`` as a state of this format (the format key first)."""
        return {FORMAT_KEY: self.tag, **body}

    def version_of(self, state: Mapping[str, Any]) -> int:
        """The version of ``state`` if it is a readable state of this format, else a
        ``ValueError`` naming what is accepted."""
        if not isinstance(state, Mapping):
            raise ValueError(f"a {self.name} state must be a mapping, got {type(state).__name__}")
        version: int | None = None
        tag = state.get(FORMAT_KEY)
        if tag is not None:
            try:
                name, v = parse_format(tag)
            except ValueError:
                name, v = "", 0
            if name == self.name:
                version = v
        elif self.legacy_key is not None and self.legacy_key in state:
            legacy = state[self.legacy_key]
            if isinstance(legacy, int) and not isinstance(legacy, bool):
                version = legacy
            tag = f"{self.legacy_key}={legacy!r}"
        if version is None or version not in self.readable_versions:
            older = [f"{self.name}/{v}" for v in self.readable_versions if v != self.version]
            also = f" (or {', '.join(map(repr, older))}, read and upgraded)" if older else ""
            raise ValueError(f"state format must be {self.tag!r}{also}, got {tag!r}")
        return version

    def read(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """``state`` as a state of the current version: earlier versions are upgraded step by
        step; anything else is a ``ValueError`` naming the accepted formats."""
        version = self.version_of(state)
        out = {k: v for k, v in state.items() if k not in (FORMAT_KEY, self.legacy_key)}
        while version < self.version:
            out = self.upgrades[version](out)
            out.pop(FORMAT_KEY, None)
            version += 1
        return self.stamp(out)

"""The contract of the core algorithms (:mod:`uvp_plugins.contract`), checked on every core
object: the protocol it offers, a JSON state with a ``uvp-<name>/<version>`` format, a restored
object that decides as the original, a wrong format refused, and every stored state - written by
the current code and by every earlier commit whose layout differed - still loading with nothing
lost (fixtures in ``tests/core/states/``, see the README there).
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from uvp_plugins.adacent.online import OnlineEnhancedAdaCent
from uvp_plugins.adacent.pred import PredStoppingRule
from uvp_plugins.bandits import CashBandit
from uvp_plugins.censored import TobitEnsemble
from uvp_plugins.contract import AskTell, ObserveDecide, Persistent, StateFormat, parse_format
from uvp_plugins.hyperband import IterativeDeepeningHyperband

STATES = Path(__file__).resolve().parent / "states"
_spec = importlib.util.spec_from_file_location("make_states", STATES / "make_states.py")
assert _spec is not None and _spec.loader is not None
make_states = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_states)


def _sample(rng: np.random.Generator) -> dict[str, float]:
    return {"x": float(rng.uniform())}


def _idhb_steps(hb: IterativeDeepeningHyperband) -> list[Any]:
    out = []
    for _ in range(6):
        job = hb.ask(_sample)
        if job is None:
            break
        out.append(job.to_dict())
        hb.tell(job, (job.config["x"] - 0.3) ** 2 + 1.0 / job.budget)
    return out


def _online_steps(ea: OnlineEnhancedAdaCent) -> list[Any]:
    out = []
    for t in range(3):
        p = ea.ask()
        out.append((p.config, p.source))
        ea.tell(f"next-{t}", p.config, status="complete", curve={1: 0.5, 10: 0.8 - 0.1 * t})
    return out


def _bandit_steps(bandit: CashBandit) -> list[Any]:
    out = []
    for i in range(6):
        arm = bandit.ask()
        out.append(arm)
        if arm is not None:
            bandit.tell(arm, 0.1 * ((i * 7) % 5))
    return out


def _pred_steps(rule: PredStoppingRule) -> list[Any]:
    out = []
    for t in range(7):
        rule.observe(f"trial-{t}", 12, 0.45 + 0.02 * t)
        out.append(rule.decide(f"trial-{t}"))
    return out


def _tobit_steps(model: TobitEnsemble) -> list[Any]:
    X = np.random.default_rng(1).uniform(size=(4, 2))
    mean, var = model.predict(X)
    return [mean.tolist(), var.tolist()]


#: fixture / format name -> (class, the protocol it offers, extra from_state_dict args, steps)
CASES: dict[str, tuple[type, type, Callable[[], tuple[Any, ...]], Callable[[Any], list[Any]]]] = {
    "uvp-idhb": (IterativeDeepeningHyperband, AskTell, tuple, _idhb_steps),
    "uvp-cash-bandit": (CashBandit, AskTell, tuple, _bandit_steps),
    "uvp-online-adacent": (
        OnlineEnhancedAdaCent, AskTell, lambda: (make_states.online_space(),), _online_steps
    ),
    "uvp-online-adacent-guided": (
        OnlineEnhancedAdaCent, AskTell, lambda: (make_states.online_space(),), _online_steps
    ),
    "uvp-pred-rule": (PredStoppingRule, ObserveDecide, tuple, _pred_steps),
    "uvp-tobit-ensemble": (TobitEnsemble, Persistent, tuple, _tobit_steps),
}

def _json(state: Any) -> Any:
    return json.loads(json.dumps(state, allow_nan=True))


def _subset(stored: Any, loaded: Any, where: str = "state") -> None:
    """Everything in ``stored`` is in ``loaded``: equal values, where a dict may have gained
    keys (parameters added later, with the value that reproduces the old behaviour) and the
    format's version (and a nested part's ``version``) may have grown. Key sets are never compared exactly, so that a later
    version adding a field (e.g. a new flag of the Pred rule, old states reading as off) keeps
    these fixtures valid."""
    if isinstance(stored, dict):
        assert isinstance(loaded, dict), where
        for key, value in stored.items():
            if key == "version" and key not in loaded and "format" in loaded:
                # a nested part that carried an integer version, now under its format tag
                later = parse_format(loaded["format"])[1]
                assert isinstance(value, int) and later >= value, f"{where}: {value} read as {later}"
                continue
            assert key in loaded, f"{where}[{key!r}] lost"
            if where == "state" and key == "format":  # read by a later version: upgraded
                (name, version), (now, later) = parse_format(value), parse_format(loaded[key])
                assert now == name and later >= version, f"{value!r} read as {loaded[key]!r}"
                continue
            if key == "version" and isinstance(value, int) and isinstance(loaded[key], int):
                # a nested versioned part (e.g. a bandit policy's state) read by a later version
                assert loaded[key] >= value, f"{where}[{key!r}]: {value} read as {loaded[key]}"
                continue
            _subset(value, loaded[key], f"{where}[{key!r}]")
    elif isinstance(stored, list):
        assert isinstance(loaded, list) and len(loaded) == len(stored), where
        for i, (a, b) in enumerate(zip(stored, loaded, strict=True)):
            _subset(a, b, f"{where}[{i}]")
    elif isinstance(stored, float) and math.isnan(stored):
        assert isinstance(loaded, float) and math.isnan(loaded), where
    else:
        assert stored == loaded, f"{where}: {stored!r} != {loaded!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_core_object_keeps_the_contract(name: str) -> None:
    cls, protocol, context, steps = CASES[name]
    obj = make_states.MAKERS[name]()
    assert isinstance(obj, cls) and isinstance(obj, protocol)

    state = obj.state_dict()
    fmt, version = parse_format(state["format"])
    assert fmt == name.removesuffix("-guided") and version >= 1
    assert _json(state) == state  # plain JSON data, nothing that only Python can read

    twin = cls.from_state_dict(_json(state), *context())
    assert _json(twin.state_dict()) == _json(state)
    assert steps(twin) == steps(obj)  # the restored object decides as the original

    for bad in (f"{fmt}/{version + 1}", "uvp-something-else/1", None):
        with pytest.raises(ValueError, match="format"):
            cls.from_state_dict({**_json(state), "format": bad}, *context())


def _fixtures() -> list[Path]:
    return sorted(STATES.glob("*.json"))


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.stem)
def test_stored_state_loads_with_nothing_lost(path: Path) -> None:
    name = path.name.split(".v")[0]
    cls, _protocol, context, steps = CASES[name]
    stored = json.loads(path.read_text())
    assert f".v{parse_format(stored['format'])[1]}." in path.name
    loaded = cls.from_state_dict(stored, *context())
    state = _json(loaded.state_dict())
    _subset(stored, state)
    # it goes on, and what it writes now restores to an object that decides as it does
    twin = cls.from_state_dict(state, *context())
    assert steps(twin) == steps(loaded)


def test_every_format_version_has_a_stored_state() -> None:
    """A fixture for every current format version (so the next version's reader is tested
    against what this one wrote) and for every earlier version a reader accepts."""
    stored = {(p.name.split(".v")[0], int(p.name.split(".v")[1].split(".")[0])) for p in _fixtures()}
    for name, (cls, *_rest) in CASES.items():
        current = parse_format(make_states.MAKERS[name]().state_dict()["format"])[1]
        assert (name, current) in stored, f"store a {name} state of version {current}"
        for v in cls.STATE_FORMAT.readable_versions:
            assert (name, v) in stored, f"store a {name} state of version {v}"


@pytest.mark.parametrize("cls", sorted({c[0] for c in CASES.values()}, key=lambda c: c.__name__))
def test_the_state_format_is_declared_once(cls: type) -> None:
    declared = getattr(cls, "STATE_FORMAT", None)
    assert isinstance(declared, StateFormat), f"{cls.__name__} declares no STATE_FORMAT"
    name = next(n for n, c in CASES.items() if c[0] is cls)
    assert declared.name == name.removesuffix("-guided")
    assert make_states.MAKERS[name]().state_dict()["format"] == declared.tag


@pytest.mark.parametrize("name", sorted(CASES))
def test_any_mapping_restores_and_anything_else_is_refused_by_name(name: str) -> None:
    """``from_state_dict`` takes any mapping (a read-only view of a loaded state, say), as the
    protocol promises, and refuses what is not one with a ``TypeError`` that says so."""
    cls, _protocol, context, steps = CASES[name]
    obj = make_states.MAKERS[name]()
    state = _json(obj.state_dict())
    twin = cls.from_state_dict(MappingProxyType(state), *context())
    assert steps(twin) == steps(make_states.MAKERS[name]())
    with pytest.raises((TypeError, ValueError), match="mapping"):
        cls.from_state_dict(json.dumps(state), *context())

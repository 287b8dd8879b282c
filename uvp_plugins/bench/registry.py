"""Registries of benchmark problems and methods.

A *method* is a function ``run(ctx: RunContext) -> None`` that spends ``ctx``'s budget by calling
``ctx.evaluate``. Register one with :func:`register_method`; framework imports happen inside the
function, so the registry itself imports no framework. ``requires`` lists the importable modules
the method needs; methods whose requirements are missing are listed as unavailable.

A *problem family* is a factory ``make(task: str | None, **options) -> Problem`` registered with
:func:`register_problem`, together with its list of tasks.

Plugin modules add their methods in ``uvp_plugins/bench/methods/<name>.py``; every module in that
package is imported by :func:`load_all` (the import is cheap: it only registers functions).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from uvp_plugins.bench.suggest import unknown_name

if TYPE_CHECKING:
    from uvp_plugins.bench.context import RunContext
    from uvp_plugins.bench.problems.base import Problem

__all__ = [
    "MethodSpec",
    "ProblemSpec",
    "register_method",
    "register_problem",
    "get_method",
    "get_problem",
    "methods",
    "problems",
    "load_all",
    "install_hint",
]


@dataclass(frozen=True)
class MethodSpec:
    name: str
    run: Callable[[RunContext], None]
    description: str
    requires: tuple[str, ...] = ()
    #: "ours" for the suite's plugins, "native" for the frameworks' methods, "core" for offline
    kind: str = "native"
    #: the problem kinds the method handles ("multi-fidelity", "cash", ...)
    problem_kinds: tuple[str, ...] = ("multi-fidelity",)

    def missing(self) -> list[str]:
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    @property
    def available(self) -> bool:
        return not self.missing()


@dataclass(frozen=True)
class ProblemSpec:
    name: str
    make: Callable[..., Problem]
    tasks: Callable[..., Sequence[str]]
    description: str
    requires: tuple[str, ...] = ()
    kind: str = "multi-fidelity"
    options: dict[str, Any] = field(default_factory=dict)


_LIST_HINT = "see 'uvp-bench list'"

#: the pyproject extra that installs each module a method or problem may require
EXTRA_OF_MODULE = {
    "optuna": "optuna",
    "ray": "ray",
    "smac": "smac",
    "ConfigSpace": "smac",
    "sklearn": "bench",
    "onnxruntime": "bench",
    "matplotlib": "bench",
    "torch": "peers",
    "dehb": "peers",
    "ortools": "solvers",
    "cocoex": "bench",
}


def install_hint(modules: Sequence[str]) -> str:
    """``"needs torch, dehb: install the extra 'peers' (pip install -e '.[peers]' in a clone, or
    pip install 'uvp-plugins[peers]')"`` for missing ``modules``."""
    extras = sorted({EXTRA_OF_MODULE.get(m, "all") for m in modules})
    spec = ",".join(extras)
    which = "the extra" if len(extras) == 1 else "the extras"
    return (
        f"needs {', '.join(modules)}: install {which} {spec!r} "
        f"(pip install -e '.[{spec}]' in a clone, or pip install 'uvp-plugins[{spec}]')"
    )

_METHODS: dict[str, MethodSpec] = {}
_PROBLEMS: dict[str, ProblemSpec] = {}


def register_method(
    name: str,
    description: str,
    requires: Sequence[str] = (),
    kind: str = "native",
    problem_kinds: Sequence[str] = ("multi-fidelity",),
) -> Callable[[Callable[[RunContext], None]], Callable[[RunContext], None]]:
    """Decorator registering a benchmark method under ``name``."""

    def deco(fn: Callable[[RunContext], None]) -> Callable[[RunContext], None]:
        if name in _METHODS and _METHODS[name].run is not fn:
            raise ValueError(f"method {name!r} is already registered")
        _METHODS[name] = MethodSpec(name, fn, description, tuple(requires), kind, tuple(problem_kinds))
        return fn

    return deco


def register_problem(spec: ProblemSpec) -> ProblemSpec:
    if spec.name in _PROBLEMS and _PROBLEMS[spec.name] is not spec:
        raise ValueError(f"problem {spec.name!r} is already registered")
    _PROBLEMS[spec.name] = spec
    return spec


def load_all() -> None:
    """Import every module of ``uvp_plugins.bench.methods`` and ``...problems`` (registration)."""
    for pkg_name in ("uvp_plugins.bench.problems", "uvp_plugins.bench.methods"):
        pkg = importlib.import_module(pkg_name)
        for mod in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{pkg_name}.{mod.name}")


def methods() -> dict[str, MethodSpec]:
    load_all()
    return dict(sorted(_METHODS.items()))


def problems() -> dict[str, ProblemSpec]:
    load_all()
    return dict(sorted(_PROBLEMS.items()))


def get_method(name: str) -> MethodSpec:
    all_methods = methods()
    if name not in all_methods:
        raise ValueError(unknown_name("method", name, list(all_methods), hint=_LIST_HINT))
    spec = all_methods[name]
    missing = spec.missing()
    if missing:
        raise ValueError(f"method {name!r} {install_hint(missing)}")
    return spec


def get_problem(name: str) -> ProblemSpec:
    all_problems = problems()
    if name not in all_problems:
        raise ValueError(unknown_name("problem", name, list(all_problems), hint=_LIST_HINT))
    return all_problems[name]

"""YAHPO Gym surrogate benchmarks (``lcbench``, ``rbv2_rpart``, ``rbv2_xgboost``, ``iaml_glmnet``).

The surrogates are read with onnxruntime directly from YAHPO Gym's data folders
(:mod:`uvp_plugins.bench.problems.yahpo_surrogate`); the ``yahpo-gym`` package is not needed
(its declared pins, numpy<2 and ConfigSpace<=0.6.1, conflict with SMAC 2.x; the tests compare our
values with yahpo-gym 1.0.2's).

Data (:func:`resolve_yahpo_data`): the directory given by ``--yahpo-data`` / ``yahpo_data=``, else
the environment variable ``UVP_YAHPO_DATA``, else ``shared/yahpo_data`` beside the repository
clone this package is installed from (the editable install of the README's set-up commands),
else ``~/.local/share/yahpo_data`` (``$XDG_DATA_HOME/yahpo_data``). None of them depends on the
working directory. The first-generation rbv2 surrogates of ``cash-yahpo6``
(:func:`resolve_yahpo_data_v0`) are found the same way: ``--yahpo-data-v0`` /
``yahpo_data_v0=``, else ``UVP_YAHPO_DATA_V0``, else ``yahpo_data_v0`` beside the directory
``UVP_YAHPO_DATA`` names, else ``shared/yahpo_data_v0`` beside the clone, else
``$XDG_DATA_HOME/yahpo_data_v0``. The data are not part of this project.

Protocols (documented in ``docs/benchmarks.md`` too):

* ``lcbench``: metric ``val_accuracy`` (%, maximise), fidelity ``epoch`` 1..52 (T = 52). The
  search space is YAHPO's own (``weight_decay`` uniform on [1e-5, 0.1]; every method gets the same
  space).
* ``rbv2_rpart`` / ``rbv2_xgboost`` / ``iaml_glmnet``: metric ``acc`` (maximise; in [0, 1];
  ``iaml_glmnet`` predicts the misclassification rate ``mmce``, and ``acc = 1 - mmce``),
  fidelity ``trainsize`` on a discrete grid of ``T = 20`` levels, level ``b`` = trainsize
  ``b / 20`` (0.05, 0.10, ..., 1.0); ``repl`` fixed at 10.
* ``max_budget=R`` changes the fidelity grid (the ID-HB paper's protocol, Brandt et al. Sec. 7.1):
  trainsize level ``r`` becomes ``r / R``; on ``lcbench``, budget ``r`` is epoch ``r`` when
  ``R <= 52`` (curves truncated at epoch ``R``) and epoch ``ceil(52 r / R)`` when ``R > 52``. Conditional hyperparameters
  (``rbv2_xgboost``'s booster-specific ones) are part of the flat search space and dropped before
  querying the surrogate when their condition does not hold.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.problems.yahpo_surrogate import YahpoSurrogate, load_surrogate
from uvp_plugins.bench.registry import ProblemSpec, register_problem
from uvp_plugins.bench.suggest import unknown_name
from uvp_plugins.space import FloatParam, IntParam, Param, SearchSpace

__all__ = [
    "YAHPO_PROBLEMS",
    "YAHPO_SCENARIOS",
    "YahpoProblem",
    "default_yahpo_data_dirs",
    "default_yahpo_data_v0_dirs",
    "resolve_yahpo_data",
    "resolve_yahpo_data_v0",
    "yahpo_surrogate",
]

#: scenario -> (metric, fidelity parameter, T, instance parameter)
YAHPO_SCENARIOS: dict[str, tuple[str, str, int, str]] = {
    "lcbench": ("val_accuracy", "epoch", 52, "OpenML_task_id"),
    "rbv2_rpart": ("acc", "trainsize", 20, "task_id"),
    "rbv2_xgboost": ("acc", "trainsize", 20, "task_id"),
    "iaml_glmnet": ("acc", "trainsize", 20, "task_id"),
}

#: the YAHPO problems of the harness (``--log-params`` applies to these)
YAHPO_PROBLEMS = tuple(YAHPO_SCENARIOS)

#: metrics a scenario does not predict itself: (scenario, metric) -> (target, a, b), value = a + b * target
_DERIVED_METRICS: dict[tuple[str, str], tuple[str, float, float]] = {
    ("iaml_glmnet", "acc"): ("mmce", 1.0, -1.0),
}


def _beside_the_clone(folder: str) -> Path:
    """``shared/<folder>`` beside the repository clone this package is installed from."""
    return Path(__file__).resolve().parents[3].parent / "shared" / folder


def _xdg(folder: str) -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")) / folder


def default_yahpo_data_dirs() -> list[Path]:
    """Where the data are looked for without ``--yahpo-data``, in order (module docstring)."""
    out = []
    env = os.environ.get("UVP_YAHPO_DATA")
    if env:
        out.append(Path(env))
    out.append(_beside_the_clone("yahpo_data"))
    out.append(_xdg("yahpo_data"))
    return out


def default_yahpo_data_v0_dirs() -> list[Path]:
    """Where the first-generation data (``yahpo_data_v0``) are looked for without
    ``--yahpo-data-v0``, in order: the environment variable ``UVP_YAHPO_DATA_V0``; a folder
    ``yahpo_data_v0`` beside the directory ``UVP_YAHPO_DATA`` names (CI sets that variable to
    ``../shared/yahpo_data``, so ``../shared/yahpo_data_v0`` is found); ``shared/yahpo_data_v0``
    beside the repository clone; ``$XDG_DATA_HOME/yahpo_data_v0``."""
    out = []
    env = os.environ.get("UVP_YAHPO_DATA_V0")
    if env:
        out.append(Path(env))
    current = os.environ.get("UVP_YAHPO_DATA")
    if current:
        out.append(Path(current).parent / "yahpo_data_v0")
    out.append(_beside_the_clone("yahpo_data_v0"))
    out.append(_xdg("yahpo_data_v0"))
    return list(dict.fromkeys(out))


def _resolve(
    tried: list[Path], scenario: str | None, what: str, option: str, env: str
) -> Path:
    for cand in tried:
        if cand.is_dir() and (scenario is None or (cand / scenario / "model.onnx").is_file()):
            return cand.resolve()
    where = ", ".join(str(p) for p in tried)
    need = f" with {scenario}/model.onnx" if scenario else ""
    raise FileNotFoundError(
        f"{what} directory{need} not found (looked in: {where}). Point to your copy with "
        f"{option} PATH (or the environment variable {env})."
    )


def resolve_yahpo_data(path: str | os.PathLike[str] | None = None, scenario: str | None = None) -> Path:
    """Find the YAHPO data directory; a clear error says where it looked and how to point to it."""
    tried = [Path(path)] if path is not None else default_yahpo_data_dirs()
    return _resolve(tried, scenario, "YAHPO Gym data (yahpo_data)", "--yahpo-data", "UVP_YAHPO_DATA")


def resolve_yahpo_data_v0(
    path: str | os.PathLike[str] | None = None, scenario: str | None = None
) -> Path:
    """Find the first-generation YAHPO data directory (``yahpo_data_v0``: rbv2_svm, rbv2_ranger,
    rbv2_aknn, rbv2_glmnet, rbv2_xgboost; :func:`default_yahpo_data_v0_dirs`)."""
    tried = [Path(path)] if path is not None else default_yahpo_data_v0_dirs()
    return _resolve(tried, scenario, "first-generation YAHPO Gym data (yahpo_data_v0)",
                    "--yahpo-data-v0", "UVP_YAHPO_DATA_V0")


def yahpo_surrogate(scenario: str, yahpo_data: str | os.PathLike[str] | None = None) -> YahpoSurrogate:
    """The scenario's surrogate from the resolved data directory (cached per process)."""
    return load_surrogate(scenario, str(resolve_yahpo_data(yahpo_data, scenario)))


def _log_scaled(params: list[Param], log_params: Sequence[str], scenario: str) -> list[Param]:
    """``params`` with the float/int parameters named in ``log_params`` on a log scale (same
    bounds): a different parameterisation of the same space, e.g. lcbench's ``weight_decay``,
    which YAHPO samples uniformly and the AdaCent authors' code log-uniformly."""
    wanted = set(log_params)
    names = {p.name for p in params}
    unknown = sorted(wanted - names)
    if unknown:
        raise ValueError(
            f"log_params {unknown} are not parameters of {scenario}; parameters: {sorted(names)}"
        )
    out: list[Param] = []
    for p in params:
        if p.name in wanted:
            if not isinstance(p, (FloatParam, IntParam)) or p.low <= 0:
                raise ValueError(f"log_params: {p.name} must be a numeric parameter with a positive lower bound")
            p = (
                FloatParam(p.name, p.low, p.high, True)
                if isinstance(p, FloatParam)
                else IntParam(p.name, p.low, p.high, True)
            )
        out.append(p)
    return out


class YahpoProblem(Problem):
    """One task of a YAHPO Gym scenario as a multi-fidelity problem (see module doc)."""

    direction = "max"
    curve_is_cheap = True

    def __init__(
        self,
        scenario: str,
        task: str | None = None,
        yahpo_data: str | os.PathLike[str] | None = None,
        max_budget: int | None = None,
        log_params: Sequence[str] = (),
    ) -> None:
        if scenario not in YAHPO_SCENARIOS:
            raise ValueError(f"unknown YAHPO scenario {scenario!r}; valid: {list(YAHPO_SCENARIOS)}")
        self.scenario = scenario
        self.name = scenario
        self.data_path = resolve_yahpo_data(yahpo_data, scenario)
        self.surrogate = load_surrogate(scenario, str(self.data_path))
        self.metric, self.fidelity, self.native_max_budget, self.instance_param = YAHPO_SCENARIOS[scenario]
        if max_budget is not None and (int(max_budget) != max_budget or max_budget < 1):
            raise ValueError(f"max_budget must be a positive int, got {max_budget!r}")
        self.max_budget = self.native_max_budget if max_budget is None else int(max_budget)
        instances = self.surrogate.instances
        task = instances[0] if task is None else str(task)
        if task not in instances:
            raise ValueError(unknown_name(
                "task", task, instances, context=f" for {scenario}",
                hint=f"see 'uvp-bench list --tasks {scenario}'",
            ))
        self.task = task
        self.space = SearchSpace(_log_scaled(self.surrogate.params, log_params, scenario))
        self._fixed: dict[str, Any] = {self.instance_param: self.task}
        if "repl" in self.surrogate.layout.fidelities:
            self._fixed["repl"] = 10
        target, self._offset, self._scale = _DERIVED_METRICS.get(
            (scenario, self.metric), (self.metric, 0.0, 1.0)
        )
        self._column = self.surrogate.target_index(target)

    def _query(self, config: Mapping[str, Any], budgets: Sequence[int]) -> np.ndarray:
        base = {k: v for k, v in config.items() if k in self.space.names}
        base.update(self._fixed)
        xs = [{**base, self.fidelity: self._fidelity_value(int(b))} for b in budgets]
        return self._offset + self._scale * self.surrogate.predict(xs)[:, self._column]

    def _fidelity_value(self, b: int) -> float | int:
        if self.fidelity != "epoch":
            return b / self.max_budget
        if self.max_budget <= self.native_max_budget:
            return b
        return int(math.ceil(self.native_max_budget * b / self.max_budget))

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        return float(self._query(config, [self.check_budget(budget)])[0])

    def curve(self, config: Mapping[str, Any], max_budget: int | None = None) -> np.ndarray:
        top = self.max_budget if max_budget is None else self.check_budget(max_budget)
        return self._query(config, range(1, top + 1))


def _maker(scenario: str):  # type: ignore[no-untyped-def]
    def make(
        task: str | None = None,
        yahpo_data: str | None = None,
        max_budget: int | None = None,
        log_params: Sequence[str] = (),
        **_: Any,
    ) -> Problem:
        return YahpoProblem(scenario, task, yahpo_data, max_budget, log_params)

    def tasks(yahpo_data: str | None = None, **_: Any) -> list[str]:
        return list(yahpo_surrogate(scenario, yahpo_data).instances)

    return make, tasks


for _scenario, (_metric, _fid, _T, _) in YAHPO_SCENARIOS.items():
    _make, _tasks = _maker(_scenario)
    register_problem(
        ProblemSpec(
            _scenario,
            _make,
            _tasks,
            f"YAHPO Gym {_scenario} surrogate, {_metric} (max), {_fid} fidelity T={_T}",
            requires=("onnxruntime",),
        )
    )

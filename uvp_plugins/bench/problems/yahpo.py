"""YAHPO Gym surrogate benchmarks (``lcbench``, ``rbv2_rpart``, ``rbv2_xgboost``, ``iaml_glmnet``).

Loaded with the ``yahpo-gym`` package 1.0.2 (installed with ``--no-deps``: its declared pins,
numpy<2 and ConfigSpace<=0.6.1, conflict with SMAC 2.x). With ConfigSpace 1.x, YAHPO's
``BenchmarkSet`` needs ``ConfigurationSpace._sort_hyperparameters`` to be a no-op; that shim lives
in :func:`_apply_configspace_shim`, the only place that sets it.

Data: the surrogate files are read from a path given by ``--yahpo-data`` / ``yahpo_data=``, else
the environment variable ``UVP_YAHPO_DATA``, else ``../shared/yahpo_data`` (relative to the working
directory) when it exists. The data are not part of this project.

Protocols (documented in ``docs/benchmarks.md`` too):

* ``lcbench``: metric ``val_accuracy`` (%, maximise), fidelity ``epoch`` 1..52 (T = 52). The
  search space is YAHPO's own (``weight_decay`` uniform on [1e-5, 0.1]; every method gets the same
  space).
* ``rbv2_rpart`` / ``rbv2_xgboost`` / ``iaml_glmnet``: metric ``acc`` (maximise; in [0, 1]),
  fidelity ``trainsize`` on a discrete grid of ``T = 20`` levels, level ``b`` = trainsize
  ``b / 20`` (0.05, 0.10, ..., 1.0); ``repl`` fixed at 10.
* ``max_budget=R`` changes the fidelity grid (the ID-HB paper's protocol, Brandt et al. Sec. 7.1):
  trainsize level ``r`` becomes ``r / R``; on ``lcbench``, budget ``r`` is epoch ``r`` when
  ``R <= 52`` (curves truncated at epoch ``R``) and epoch ``ceil(52 r / R)`` when ``R > 52``. Conditional hyperparameters
  (``rbv2_xgboost``'s booster-specific ones) are part of the flat search space and dropped before
  querying the surrogate when their condition does not hold.
"""

from __future__ import annotations

import functools
import math
import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import ProblemSpec, register_problem
from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, Param, SearchSpace

__all__ = ["YahpoProblem", "resolve_yahpo_data", "yahpo_benchmark", "yahpo_param", "YAHPO_SCENARIOS"]

#: scenario -> (metric, fidelity parameter, T, instance parameter)
YAHPO_SCENARIOS: dict[str, tuple[str, str, int, str]] = {
    "lcbench": ("val_accuracy", "epoch", 52, "OpenML_task_id"),
    "rbv2_rpart": ("acc", "trainsize", 20, "task_id"),
    "rbv2_xgboost": ("acc", "trainsize", 20, "task_id"),
    "iaml_glmnet": ("acc", "trainsize", 20, "task_id"),
}

_LOCK = threading.Lock()


def _default_candidates() -> list[Path]:
    out = []
    env = os.environ.get("UVP_YAHPO_DATA")
    if env:
        out.append(Path(env))
    out.append(Path.cwd().parent / "shared" / "yahpo_data")
    out.append(Path.cwd() / "shared" / "yahpo_data")
    return out


def resolve_yahpo_data(path: str | os.PathLike[str] | None = None, scenario: str | None = None) -> Path:
    """Find the YAHPO data directory; a clear error says where it looked and how to point to it."""
    tried = [Path(path)] if path is not None else _default_candidates()
    for cand in tried:
        if cand.is_dir() and (scenario is None or (cand / scenario / "model.onnx").is_file()):
            return cand.resolve()
    where = ", ".join(str(p) for p in tried)
    need = f" with {scenario}/model.onnx" if scenario else ""
    raise FileNotFoundError(
        f"YAHPO Gym data directory{need} not found (looked in: {where}). Point to your copy of "
        "yahpo_data with --yahpo-data PATH (or the environment variable UVP_YAHPO_DATA)."
    )


def _apply_configspace_shim() -> None:
    """YAHPO 1.0.2 with ConfigSpace 1.x: make ``_sort_hyperparameters`` a no-op (the one place)."""
    import ConfigSpace

    ConfigSpace.ConfigurationSpace._sort_hyperparameters = lambda self: None  # type: ignore[attr-defined]


def _use_private_yahpo_settings(data_path: str) -> None:
    """Point YAHPO's settings file at a file private to this process, holding ``data_path``.

    ``yahpo_gym.local_config`` keeps the data path in a YAML file (``~/.config/yahpo_gym``)
    that ``init_config`` truncates and rewrites: parallel benchmark workers rewriting the shared
    file raced (a worker reading it mid-write died with "Could not load local_config"), and the
    user's own setting was overwritten. Each process now writes its own file in the temporary
    directory (removed at exit) and never touches the user's.
    """
    import atexit
    import tempfile

    from yahpo_gym import local_config

    settings = Path(tempfile.gettempdir()) / f"uvp-bench-yahpo-gym-{os.getpid()}.yaml"
    if local_config.settings_path != settings:
        atexit.register(settings.unlink, missing_ok=True)
        local_config.settings_path = settings
    local_config.init_config(data_path)
    local_config._config = None  # re-read: init_config does not reset the cached settings


@functools.lru_cache(maxsize=16)
def yahpo_benchmark(scenario: str, data_path: str) -> Any:
    """A cached ``yahpo_gym.BenchmarkSet`` (single-threaded ONNX session, no config check)."""
    with _LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _apply_configspace_shim()
        import contextlib
        import io

        from yahpo_gym import benchmark_set

        _use_private_yahpo_settings(data_path)
        with contextlib.redirect_stdout(io.StringIO()):  # YAHPO prints citation notes
            return benchmark_set.BenchmarkSet(scenario, multithread=False, check=False)


def yahpo_param(hp: Any) -> Param | None:
    """Convert one ConfigSpace hyperparameter (YAHPO space) to ours; constants -> None."""
    kind = type(hp).__name__
    if kind == "UniformFloatHyperparameter":
        return FloatParam(hp.name, float(hp.lower), float(hp.upper), bool(hp.log))
    if kind == "UniformIntegerHyperparameter":
        return IntParam(hp.name, int(hp.lower), int(hp.upper), bool(hp.log))
    if kind == "CategoricalHyperparameter":
        return CategoricalParam(hp.name, tuple(hp.choices))
    if kind in ("Constant", "OrdinalHyperparameter"):
        return None
    raise TypeError(f"unsupported YAHPO hyperparameter type {kind} ({hp.name})")


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
        self.bench = yahpo_benchmark(scenario, str(self.data_path))
        self.metric, self.fidelity, self.native_max_budget, self.instance_param = YAHPO_SCENARIOS[scenario]
        if max_budget is not None and (int(max_budget) != max_budget or max_budget < 1):
            raise ValueError(f"max_budget must be a positive int, got {max_budget!r}")
        self.max_budget = self.native_max_budget if max_budget is None else int(max_budget)
        instances = [str(i) for i in self.bench.instances]
        task = instances[0] if task is None else str(task)
        if task not in instances:
            raise ValueError(
                f"unknown task {task!r} for {scenario}; valid tasks: {', '.join(instances)}"
            )
        self.task = task
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs = self.bench.get_opt_space(drop_fidelity_params=True)
        params = []
        for hp in cs.values():
            if hp.name == self.instance_param:
                continue
            p = yahpo_param(hp)
            if p is not None:
                params.append(p)
        self.space = SearchSpace(_log_scaled(params, log_params, scenario))
        self._conditions = [
            (c.child.name, c.parent.name, set(getattr(c, "values", None) or [c.value]))
            for c in cs.conditions
        ]
        self._fixed: dict[str, Any] = {self.instance_param: self.task}
        if "repl" in self.bench.config.fidelity_params:
            self._fixed["repl"] = 10

    def _query(self, config: Mapping[str, Any], budgets: Sequence[int]) -> np.ndarray:
        base = {k: v for k, v in config.items() if k in self.space.names}
        for child, parent, allowed in self._conditions:
            if child in base and base.get(parent) not in allowed:
                del base[child]
        base.update(self._fixed)
        xs = []
        for b in budgets:
            x = dict(base)
            x[self.fidelity] = self._fidelity_value(int(b))
            xs.append(x)
        with _LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = self.bench.objective_function(xs)
        return np.array([float(r[self.metric]) for r in out], dtype=float)

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
        path = resolve_yahpo_data(yahpo_data, scenario)
        return [str(i) for i in yahpo_benchmark(scenario, str(path)).instances]

    return make, tasks


for _scenario, (_metric, _fid, _T, _) in YAHPO_SCENARIOS.items():
    _make, _tasks = _maker(_scenario)
    register_problem(
        ProblemSpec(
            _scenario,
            _make,
            _tasks,
            f"YAHPO Gym {_scenario} surrogate, {_metric} (max), {_fid} fidelity T={_T}",
            requires=("yahpo_gym", "onnxruntime"),
        )
    )

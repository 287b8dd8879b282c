"""YAHPO Gym surrogates read with onnxruntime directly from a scenario's data folder.

A YAHPO Gym scenario folder holds ``config_space.json`` (ConfigSpace's JSON: the hyperparameters,
their ranges and conditions, the instance ids), ``encoding.json`` (categorical value -> integer
code) and ``model.onnx`` (the surrogate network, inputs ``x_cat`` int32 and ``x_cont`` float32,
output: one column per target). This module reads those three files; it needs neither the
``yahpo-gym`` package nor ConfigSpace (whose pins conflict with SMAC 2.x).

What the model expects (yahpo-gym 1.0.2, ``BenchmarkSet._config_to_xs``, and its scenario
definitions): the columns of ``x_cont`` and ``x_cat`` in a fixed order per scenario
(:data:`LAYOUTS`: that order, and the order of the output targets, are not in the data folder);
numeric values as they are (the network normalises its inputs itself) cast to float32;
categorical values by their code in ``encoding.json``; a parameter that is not set (inactive under
a condition) as ``0`` if numeric and as the code of ``"#na#"`` if categorical. The instance id is
a categorical column. ``tests/bench/test_yahpo_surrogate.py`` checks that the values equal
yahpo-gym 1.0.2's on sampled configurations of every scenario here.

Two generations of data folders are read (``generation=``): ``"current"``, the folders of
yahpo-gym 1.0.2 (:data:`LAYOUTS`), and ``"v0"``, the first-generation rbv2 surrogates of
``yahpo_data_v0`` (:data:`LAYOUTS_V0`: same input layout, 6 outputs, column 0 the
misclassification rate ``mmce``). A folder of the other generation is refused when it is opened
(its network's input or output widths differ), with an error that says so.

Search spaces are built from ``config_space.json`` as ConfigSpace 1.x reads it: float bounds are
rounded to 13 decimal places (ConfigSpace's ``ROUND_PLACES``), the parameters keep the file's
order, so spaces (and hence every seeded run) are the ones earlier results were measured on.

Example:
    >>> s = load_surrogate("lcbench", "/work/shared/yahpo_data")   # doctest: +SKIP
    >>> s.predict([{"OpenML_task_id": "3945", "epoch": 52, "batch_size": 64, ...}])  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, Param

__all__ = [
    "GENERATIONS",
    "LAYOUTS",
    "LAYOUTS_V0",
    "MISSING_CATEGORY",
    "ScenarioLayout",
    "YahpoSurrogate",
    "load_surrogate",
]

#: the code ``encoding.json`` gives a categorical parameter that is not set
MISSING_CATEGORY = "#na#"
#: ConfigSpace 1.x rounds float bounds to this many decimal places when it reads a space
_ROUND_PLACES = 13


@dataclass(frozen=True)
class ScenarioLayout:
    """The column layout of one scenario's surrogate (yahpo-gym 1.0.2's scenario definitions)."""

    cont_names: tuple[str, ...]
    cat_names: tuple[str, ...]
    targets: tuple[str, ...]
    instance: str
    fidelities: tuple[str, ...]


_RBV2_TARGETS = ("acc", "bac", "auc", "brier", "f1", "logloss", "timetrain", "timepredict", "memory")
_IAML_TARGETS = (
    "mmce", "f1", "auc", "logloss", "ramtrain", "rammodel", "rampredict", "timetrain",
    "timepredict", "mec", "ias", "nf",
)


def _rbv2_layout(
    cont_names: tuple[str, ...], cat_names: tuple[str, ...], targets: tuple[str, ...]
) -> ScenarioLayout:
    """An rbv2 scenario's layout: every rbv2 surrogate is indexed by ``task_id`` and has the
    fidelities ``trainsize`` and ``repl``."""
    return ScenarioLayout(cont_names, cat_names, targets, "task_id", ("trainsize", "repl"))


#: scenario -> layout of its ONNX model's inputs and outputs
LAYOUTS: dict[str, ScenarioLayout] = {
    "lcbench": ScenarioLayout(
        cont_names=("epoch", "batch_size", "learning_rate", "momentum", "weight_decay",
                    "num_layers", "max_units", "max_dropout"),
        cat_names=("OpenML_task_id",),
        targets=("time", "val_accuracy", "val_cross_entropy", "val_balanced_accuracy",
                 "test_cross_entropy", "test_balanced_accuracy"),
        instance="OpenML_task_id",
        fidelities=("epoch",),
    ),
    "rbv2_rpart": _rbv2_layout(
        cont_names=("cp", "maxdepth", "minbucket", "minsplit", "trainsize", "repl"),
        cat_names=("task_id", "num.impute.selected.cpo"),
        targets=_RBV2_TARGETS,
    ),
    "rbv2_xgboost": _rbv2_layout(
        cont_names=("nrounds", "eta", "gamma", "lambda", "alpha", "subsample", "max_depth",
                    "min_child_weight", "colsample_bytree", "colsample_bylevel", "rate_drop",
                    "skip_drop", "trainsize", "repl"),
        cat_names=("task_id", "booster", "num.impute.selected.cpo"),
        targets=_RBV2_TARGETS,
    ),
    "iaml_glmnet": ScenarioLayout(
        cont_names=("alpha", "s", "trainsize"),
        cat_names=("task_id",),
        targets=_IAML_TARGETS,
        instance="task_id",
        fidelities=("trainsize",),
    ),
}

#: The first-generation rbv2 surrogates (``yahpo_data_v0``: slds-lmu/yahpo_data at its initial
#: commit 3a646b8, the networks ``new_model.onnx`` renamed ``model.onnx``). Their inputs have
#: yahpo-gym 1.0.2's column order for these scenarios (the widths match it); their output has 6
#: columns, not 9: column 0 is the misclassification rate ``mmce`` (the data folder's README:
#: correlation -0.96 with the current surrogate's ``acc``); the others are, most likely, the
#: names given here (checked only by correlation with the current targets).
_RBV2_V0_TARGETS = ("mmce", "f1", "auc", "logloss", "timetrain", "timepredict")

#: scenario -> layout of the first-generation surrogates (``generation="v0"``)
LAYOUTS_V0: dict[str, ScenarioLayout] = {
    "rbv2_svm": _rbv2_layout(
        cont_names=("cost", "gamma", "tolerance", "degree", "trainsize", "repl"),
        cat_names=("task_id", "kernel", "num.impute.selected.cpo"),
        targets=_RBV2_V0_TARGETS,
    ),
    "rbv2_ranger": _rbv2_layout(
        cont_names=("num.trees", "sample.fraction", "mtry.power", "min.node.size",
                    "num.random.splits", "trainsize", "repl"),
        cat_names=("task_id", "respect.unordered.factors", "splitrule", "num.impute.selected.cpo"),
        targets=_RBV2_V0_TARGETS,
    ),
    "rbv2_aknn": _rbv2_layout(
        cont_names=("k", "M", "ef", "ef_construction", "trainsize", "repl"),
        cat_names=("task_id", "distance", "num.impute.selected.cpo"),
        targets=_RBV2_V0_TARGETS,
    ),
    "rbv2_glmnet": _rbv2_layout(
        cont_names=("alpha", "s", "trainsize", "repl"),
        cat_names=("task_id", "num.impute.selected.cpo"),
        targets=_RBV2_V0_TARGETS,
    ),
    "rbv2_xgboost": dataclasses.replace(LAYOUTS["rbv2_xgboost"], targets=_RBV2_V0_TARGETS),
}

#: data generation -> its layouts (``"current"``: ``yahpo_data``; ``"v0"``: ``yahpo_data_v0``)
GENERATIONS: dict[str, dict[str, ScenarioLayout]] = {"current": LAYOUTS, "v0": LAYOUTS_V0}


@dataclass(frozen=True)
class Condition:
    """``child`` is active only when ``parent`` takes one of ``values`` (ConfigSpace EQ / IN)."""

    child: str
    parent: str
    values: frozenset[Any]

    def holds(self, config: Mapping[str, Any]) -> bool:
        return config.get(self.parent) in self.values


def _number(value: Any) -> float:
    """A numeric model input; an unset (inactive) parameter is 0."""
    return 0.0 if value is None else float(value)


def _param(hp: Mapping[str, Any]) -> Param:
    kind, name = hp["type"], hp["name"]
    if kind == "uniform_float":
        low, high = (float(np.round(hp[k], _ROUND_PLACES)) for k in ("lower", "upper"))
        return FloatParam(name, low, high, bool(hp.get("log", False)))
    if kind == "uniform_int":
        return IntParam(name, int(hp["lower"]), int(hp["upper"]), bool(hp.get("log", False)))
    if kind == "categorical":
        return CategoricalParam(name, tuple(hp["choices"]))
    raise ValueError(f"unsupported hyperparameter type {kind!r} ({name}) in a YAHPO config_space.json")


def _condition(c: Mapping[str, Any]) -> Condition:
    if c.get("type") == "EQ":
        return Condition(c["child"], c["parent"], frozenset([c["value"]]))
    if c.get("type") == "IN":
        return Condition(c["child"], c["parent"], frozenset(c["values"]))
    raise ValueError(f"unsupported condition {c!r} in a YAHPO config_space.json (EQ and IN are read)")


class YahpoSurrogate:
    """One YAHPO Gym scenario: its search space, instances and surrogate (see module doc).

    Args:
        scenario: a key of the generation's layouts (:data:`LAYOUTS`, :data:`LAYOUTS_V0`).
        folder: the scenario's data folder (``<yahpo_data>/<scenario>``).
        generation: ``"current"`` (the data folders of yahpo-gym 1.0.2) or ``"v0"`` (the
            first-generation rbv2 surrogates, :data:`LAYOUTS_V0`). A folder of the other
            generation is refused (its network has other input or output widths).
    """

    def __init__(
        self, scenario: str, folder: str | os.PathLike[str], generation: str = "current"
    ) -> None:
        if generation not in GENERATIONS:
            raise ValueError(f"generation must be one of {list(GENERATIONS)}, got {generation!r}")
        layouts = GENERATIONS[generation]
        if scenario not in layouts:
            raise ValueError(f"unknown YAHPO scenario {scenario!r} of generation {generation!r}; "
                             f"valid: {', '.join(layouts)}")
        self.scenario = scenario
        self.generation = generation
        self.layout = layouts[scenario]
        folder = Path(folder)
        files = {name: folder / name for name in ("config_space.json", "encoding.json", "model.onnx")}
        missing = [str(p) for p in files.values() if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"YAHPO scenario {scenario}: missing {', '.join(missing)}")
        space = json.loads(files["config_space.json"].read_text())
        self.encoding: dict[str, dict[str, int]] = json.loads(files["encoding.json"].read_text())
        hps = space["hyperparameters"]
        by_name = {hp["name"]: hp for hp in hps}
        lay = self.layout
        unknown = sorted(set(lay.cont_names + lay.cat_names) - set(by_name))
        if unknown:
            raise ValueError(f"YAHPO scenario {scenario}: config_space.json lacks {unknown}")
        #: instance ids (tasks), in the file's order (yahpo-gym's ``BenchmarkSet.instances``)
        self.instances: list[str] = [str(c) for c in by_name[lay.instance]["choices"]]
        skip = {lay.instance, *lay.fidelities}
        #: the search space's parameters (instance and fidelities excluded), in the file's order
        self.params: list[Param] = [_param(hp) for hp in hps if hp["name"] not in skip]
        #: the default value ``config_space.json`` gives each of those parameters (mlr3's
        #: defaults in the rbv2 scenarios), where it gives one
        self.defaults: dict[str, Any] = {
            p.name: p.validate(by_name[p.name]["default"])
            for p in self.params if by_name[p.name].get("default") is not None
        }
        self.conditions: list[Condition] = [_condition(c) for c in space.get("conditions", [])]
        self._folder = str(folder)
        self._session = self._open(files["model.onnx"])

    def __reduce__(self) -> tuple[Any, tuple[str, str, str]]:
        # an ONNX session does not pickle: a copy (e.g. in a Ray worker) reopens the folder,
        # once per process (the cache of _surrogate_in)
        return _surrogate_in, (self.scenario, self._folder, self.generation)

    def _open(self, model: Path) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.inter_op_num_threads = 1  # small networks: one thread per worker process
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        inputs = {i.name: i.shape[-1] for i in session.get_inputs()}
        # the first-generation networks were exported with a fixed batch size of 1
        batch = {i.shape[0] for i in session.get_inputs()}
        self._one_row_at_a_time = batch == {1}
        want = {"x_cat": len(self.layout.cat_names), "x_cont": len(self.layout.cont_names)}
        n_out = session.get_outputs()[0].shape[-1]
        if inputs != want or n_out != len(self.layout.targets):
            other = "v0" if self.generation == "current" else "current"
            raise ValueError(
                f"YAHPO scenario {self.scenario}: {model} has inputs {inputs} and {n_out} outputs, "
                f"expected {want} and {len(self.layout.targets)} for the {self.generation!r} "
                f"generation (a data folder of another version? e.g. the {other!r} generation)"
            )
        return session

    def active(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``config`` without the parameters whose condition does not hold."""
        out = dict(config)
        for c in self.conditions:
            if c.child in out and not c.holds(out):
                del out[c.child]
        return out

    def _code(self, name: str, value: Any) -> int:
        codes = self.encoding[name]
        key = MISSING_CATEGORY if value is None else str(value)
        if key not in codes:
            valid = ", ".join(k for k in codes if k != MISSING_CATEGORY)
            raise ValueError(f"{self.scenario}: {name}={value!r} is not a known value; valid: {valid}")
        return int(codes[key])

    def encode(self, configs: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        """``(x_cat, x_cont)`` model inputs for full configurations (instance and fidelities
        included; unset parameters count as inactive)."""
        lay = self.layout
        x_cat = np.array(
            [[self._code(n, c.get(n)) for n in lay.cat_names] for c in configs], dtype=np.int32
        ).reshape(len(configs), len(lay.cat_names))
        x_cont = np.array(
            [[_number(c.get(n)) for n in lay.cont_names] for c in configs], dtype=np.float64
        ).astype(np.float32).reshape(len(configs), len(lay.cont_names))
        return x_cat, x_cont

    def predict(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Surrogate values, shape ``(len(configs), len(targets))`` (columns in the order of
        ``layout.targets``), for full configurations; inactive parameters are dropped first."""
        if not configs:
            return np.zeros((0, len(self.layout.targets)))
        x_cat, x_cont = self.encode([self.active(c) for c in configs])
        if self._one_row_at_a_time:
            rows = [self._session.run(None, {"x_cat": x_cat[i:i + 1], "x_cont": x_cont[i:i + 1]})[0]
                    for i in range(len(configs))]
            return np.asarray(np.concatenate(rows), dtype=float)
        out = self._session.run(None, {"x_cat": x_cat, "x_cont": x_cont})[0]
        return np.asarray(out, dtype=float)

    def target_index(self, name: str) -> int:
        try:
            return self.layout.targets.index(name)
        except ValueError:
            raise ValueError(
                f"{self.scenario} has no target {name!r}; targets: {', '.join(self.layout.targets)}"
            ) from None


def load_surrogate(scenario: str, data_path: str, generation: str = "current") -> YahpoSurrogate:
    """The scenario's surrogate from ``<data_path>/<scenario>`` (cached per process)."""
    return _surrogate_in(scenario, str(Path(data_path) / scenario), generation)


@functools.lru_cache(maxsize=16)
def _surrogate_in(scenario: str, folder: str, generation: str = "current") -> YahpoSurrogate:
    return YahpoSurrogate(scenario, folder, generation)

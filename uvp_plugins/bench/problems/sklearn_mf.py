"""Real training on scikit-learn's bundled datasets, as multi-fidelity problems.

* ``sklearn-mlp``: ``MLPClassifier`` trained epoch by epoch with ``partial_fit`` (one pass over
  the training split per epoch, mini-batches of ``batch_size``), fidelity = epoch 1..T (T = 30).
* ``sklearn-gb``: ``HistGradientBoostingClassifier`` grown by boosting iterations with
  ``warm_start``; fidelity level ``b`` = ``5 b`` iterations, ``b`` = 1..T (T = 20, i.e. up to 100
  iterations).

Tasks: ``digits``, ``breast_cancer``, ``wine``. Metric: validation accuracy in % (maximise) on a
stratified 30 % hold-out split fixed by ``split_seed`` (default 0) and standardised features.
Training is deterministic: each configuration trains with ``random_state`` derived from its
values and the split seed, so the same configuration has the same curve in every method and
every process. Partially trained models are cached per configuration (training continues from
where it stopped; this is what makes a continuation cost ``b - b0`` in wall time too).
"""

from __future__ import annotations

import abc
import hashlib
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import ProblemSpec, register_problem
from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace

__all__ = ["SklearnMLPProblem", "SklearnGBProblem", "load_split", "SKLEARN_TASKS"]

SKLEARN_TASKS = ("digits", "breast_cancer", "wine")


def load_split(task: str, split_seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Standardised, stratified 70/30 split of a bundled dataset: ``X_tr, X_va, y_tr, y_va``."""
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    loaders = {
        "digits": datasets.load_digits,
        "breast_cancer": datasets.load_breast_cancer,
        "wine": datasets.load_wine,
    }
    if task not in loaders:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(SKLEARN_TASKS)}")
    X, y = loaders[task](return_X_y=True)
    X_tr, X_va, y_tr, y_va = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=split_seed
    )
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_va), y_tr, y_va


def _config_seed(config: Mapping[str, Any], split_seed: int) -> int:
    text = repr(sorted((k, repr(v)) for k, v in config.items())) + f"|{split_seed}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


class _CachedTrainingProblem(Problem):
    """Shared plumbing: per-configuration cache of (model, curve so far), LRU-bounded."""

    direction = "max"
    metric = "val_accuracy"
    curve_is_cheap = False
    cache_size = 512

    def __init__(self, task: str, split_seed: int = 0) -> None:
        self.task = task
        self.split_seed = int(split_seed)
        self.X_tr, self.X_va, self.y_tr, self.y_va = load_split(task, self.split_seed)
        self.classes = np.unique(np.concatenate([self.y_tr, self.y_va]))
        self._cache: OrderedDict[tuple[Any, ...], tuple[Any, list[float]]] = OrderedDict()

    def _key(self, config: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(self.space[n].validate(config[n]) for n in self.space.names)

    @abc.abstractmethod
    def _new_model(self, config: Mapping[str, Any], seed: int) -> Any:
        """A fresh, untrained model for ``config``."""

    @abc.abstractmethod
    def _advance(self, model: Any, config: Mapping[str, Any], level: int, seed: int) -> None:
        """Train ``model`` from level ``level - 1`` to ``level``."""

    def curve(self, config: Mapping[str, Any], max_budget: int | None = None) -> np.ndarray:
        top = self.max_budget if max_budget is None else self.check_budget(max_budget)
        key = self._key(config)
        seed = _config_seed(dict(zip(self.space.names, key, strict=False)), self.split_seed)
        if key in self._cache:
            model, values = self._cache.pop(key)
        else:
            model, values = self._new_model(config, seed), []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            while len(values) < top:
                self._advance(model, config, len(values) + 1, seed)
                values.append(100.0 * float(np.mean(model.predict(self.X_va) == self.y_va)))
        self._cache[key] = (model, values)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return np.array(values[:top], dtype=float)

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        return float(self.curve(config, self.check_budget(budget))[-1])


class SklearnMLPProblem(_CachedTrainingProblem):
    """MLP trained epoch by epoch with ``partial_fit`` (see module doc)."""

    name = "sklearn-mlp"
    fidelity = "epoch"

    def __init__(self, task: str = "digits", split_seed: int = 0, max_budget: int = 30) -> None:
        super().__init__(task, split_seed)
        self.max_budget = int(max_budget)
        self.space = SearchSpace(
            [
                IntParam("hidden_units", 16, 256, log=True),
                IntParam("n_layers", 1, 3),
                FloatParam("alpha", 1e-6, 1e-1, log=True),
                FloatParam("learning_rate_init", 1e-4, 1e-1, log=True),
                IntParam("batch_size", 16, 256, log=True),
                CategoricalParam("activation", ("relu", "tanh")),
            ]
        )

    def _new_model(self, config: Mapping[str, Any], seed: int) -> Any:
        from sklearn.neural_network import MLPClassifier

        return MLPClassifier(
            hidden_layer_sizes=(int(config["hidden_units"]),) * int(config["n_layers"]),
            alpha=float(config["alpha"]),
            learning_rate_init=float(config["learning_rate_init"]),
            batch_size=int(config["batch_size"]),
            activation=str(config["activation"]),
            random_state=seed % (2**31),
        )

    def _advance(self, model: Any, config: Mapping[str, Any], level: int, seed: int) -> None:
        # one epoch = one pass over a seeded permutation, in mini-batches
        rng = np.random.default_rng(seed + level)
        order = rng.permutation(len(self.y_tr))
        bs = int(config["batch_size"])
        for start in range(0, len(order), bs):
            idx = order[start : start + bs]
            model.partial_fit(self.X_tr[idx], self.y_tr[idx], classes=self.classes)


class SklearnGBProblem(_CachedTrainingProblem):
    """Histogram gradient boosting grown 5 iterations per fidelity level (see module doc)."""

    name = "sklearn-gb"
    fidelity = "iterations/5"
    iterations_per_level = 5

    def __init__(self, task: str = "digits", split_seed: int = 0, max_budget: int = 20) -> None:
        super().__init__(task, split_seed)
        self.max_budget = int(max_budget)
        self.space = SearchSpace(
            [
                FloatParam("learning_rate", 1e-3, 1.0, log=True),
                IntParam("max_leaf_nodes", 4, 64, log=True),
                IntParam("min_samples_leaf", 1, 64, log=True),
                FloatParam("l2_regularization", 1e-6, 10.0, log=True),
                IntParam("max_bins", 16, 255, log=True),
            ]
        )

    def _new_model(self, config: Mapping[str, Any], seed: int) -> Any:
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(
            learning_rate=float(config["learning_rate"]),
            max_leaf_nodes=int(config["max_leaf_nodes"]),
            min_samples_leaf=int(config["min_samples_leaf"]),
            l2_regularization=float(config["l2_regularization"]),
            max_bins=int(config["max_bins"]),
            early_stopping=False,
            warm_start=True,
            max_iter=self.iterations_per_level,
            random_state=seed % (2**31),
        )

    def _advance(self, model: Any, config: Mapping[str, Any], level: int, seed: int) -> None:
        model.set_params(max_iter=self.iterations_per_level * level)
        model.fit(self.X_tr, self.y_tr)


def _tasks(**_: Any) -> list[str]:
    return list(SKLEARN_TASKS)


def _make_mlp(task: str | None = None, split_seed: int = 0, max_budget: int = 30, **_: Any) -> Problem:
    return SklearnMLPProblem(task or "digits", split_seed, max_budget)


def _make_gb(task: str | None = None, split_seed: int = 0, max_budget: int = 20, **_: Any) -> Problem:
    return SklearnGBProblem(task or "digits", split_seed, max_budget)


register_problem(
    ProblemSpec(
        "sklearn-mlp",
        _make_mlp,
        _tasks,
        "real MLPClassifier training (partial_fit per epoch) on bundled datasets, val. accuracy %, T=30",
        requires=("sklearn",),
    )
)
register_problem(
    ProblemSpec(
        "sklearn-gb",
        _make_gb,
        _tasks,
        "real HistGradientBoosting training (5 iterations per level) on bundled datasets, val. accuracy %, T=20",
        requires=("sklearn",),
    )
)

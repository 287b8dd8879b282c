"""CASH problems (combined algorithm selection and hyperparameter optimisation) for the harness.

A CASH problem has ``K`` *arms* (model classes), each with its own search space. A configuration
is a dict ``{"algorithm": arm, **arm_params}``: the selector ``"algorithm"`` names the arm, and the
arm's parameters follow. Parameter names are made unique across arms by prefixing them with the
arm name (``"svc:C"``, ``"random_forest:max_depth"``; the style of auto-sklearn), so one flat
:class:`~uvp_plugins.space.SearchSpace` (:attr:`CashProblem.space`: the selector plus every arm's
parameters) exists as well; it is conditional in truth (only the selected arm's parameters are
active), which ``SearchSpace`` does not model, so :attr:`CashProblem.arm_spaces` is the source of
truth and :meth:`CashProblem.joint_sample` samples the conditional space correctly (uniform arm,
then the arm's parameters). An arm without hyperparameters has an empty ``SearchSpace``.

Every evaluation is one HPO iteration: ``max_budget = 1`` (fidelity ``"iteration"``), and a run's
budget is the number of iterations ``T`` (``default_total_budget = 200``; pass
``RunContext(problem, total_budget=T)``). ``direction = "min"``: the value is a loss.

Problems (registered with ``kind="cash"``):

* ``cash-sklearn`` — real training on every classification dataset scikit-learn bundles
  (tasks ``digits``, ``breast_cancer``, ``wine``, ``iris``); 7 arms, the classes with
  hyperparameters: SVC (RBF), random forest, extra trees, k-NN, logistic regression, MLP,
  histogram gradient boosting. Loss = 1 - balanced accuracy, the mean over a stratified 5-fold
  cross-validation of the whole dataset (folds shuffled with ``split_seed``, default 0; features
  standardised on each training fold).
* ``cash-sklearn-holdout`` — ``cash-sklearn`` before issue 30, kept so that earlier results
  repeat: tasks ``digits``, ``breast_cancer``, ``wine``; the 7 arms plus Gaussian naive Bayes
  (no hyperparameters); loss = 1 - accuracy on the stratified 30 % hold-out of
  :func:`uvp_plugins.bench.problems.sklearn_mf.load_split` (standardised features; split fixed
  by ``split_seed``).

  In both, fits are kept fast (n_estimators <= 60, max_iter caps) and deterministic
  (``random_state`` derived from the configuration and the split seed); results are cached per
  configuration.
* ``cash-yahpo`` — YAHPO Gym ``rbv2_rpart`` and ``rbv2_xgboost`` as two arms on the tasks the two
  scenarios share, at full ``trainsize = 1.0`` and ``repl = 10``; loss = 1 - ``acc``. The
  xgboost arm is *flattened*: ``booster`` (gblinear / gbtree / dart) is one of its categorical
  parameters and the booster-specific parameters are always present in the arm's space; those
  whose YAHPO condition does not hold are dropped before querying the surrogate (they have no
  effect). Numeric ranges and log scales are YAHPO's own.
* ``cash-yahpo6`` — the CASH paper's six YAHPO classes (glmnet, rpart, svm, aknn, ranger,
  xgboost) at trainsize 0.525, loss mmce: :mod:`uvp_plugins.bench.problems.cash_yahpo6`.
* ``cash-synthetic`` — fast noise-free arms with known per-arm minima (see
  :class:`SyntheticCash`), several of them with left-skewed reward distributions (rewards pile up
  near the arm's maximum with a long lower tail, as in the paper's Fig. 1), where the arm with
  the best mean is not the arm with the best optimum.
"""

from __future__ import annotations

import abc
import hashlib
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.registry import ProblemSpec, register_problem
from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, Param, SearchSpace

__all__ = [
    "CashProblem",
    "SklearnCash",
    "YahpoCash",
    "SyntheticCash",
    "SKLEARN_CASH_ARMS",
    "SKLEARN_CASH_TASKS",
    "SKLEARN_CASH_TUNABLE_ARMS",
    "SELECTOR",
    "split_config",
    "yahpo_cash_tasks",
    "YAHPO_CASH_ARMS",
]

#: name of the top-level categorical that selects the arm
SELECTOR = "algorithm"


def _prefixed(arm: str, params: Sequence[Param]) -> SearchSpace:
    """The arm's space with parameter names ``"<arm>:<name>"``."""
    out: list[Param] = []
    for p in params:
        name = f"{arm}:{p.name}"
        if isinstance(p, FloatParam):
            out.append(FloatParam(name, p.low, p.high, p.log))
        elif isinstance(p, IntParam):
            out.append(IntParam(name, p.low, p.high, p.log))
        else:
            out.append(CategoricalParam(name, p.choices))
    return SearchSpace(out)


def split_config(config: Mapping[str, Any], selector: str = SELECTOR) -> tuple[str, dict[str, Any]]:
    """``(arm, params)`` of a joint configuration, the arm prefix stripped from the names."""
    arm = str(config[selector])
    prefix = f"{arm}:"
    return arm, {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}


class CashProblem(Problem):
    """Base class of the CASH problems (see the module docstring for the conventions).

    Subclasses set :attr:`arms` and :attr:`arm_spaces` (through :meth:`_set_arms`) and implement
    :meth:`_loss` on validated, unprefixed arm parameters.
    """

    max_budget = 1
    min_budget = 1
    direction = "min"
    metric = "loss"
    fidelity = "iteration"
    curve_is_cheap = True
    selector: str = SELECTOR
    #: iterations of a run when the runner does not say otherwise (the paper's T = 200)
    default_total_budget: int = 200

    arms: list[str]
    arm_spaces: dict[str, SearchSpace]
    #: the best loss reachable with each arm, where known (else None)
    arm_optima: dict[str, float | None]
    #: each arm's default configuration (prefixed names) where the problem defines one (e.g.
    #: ``cash-yahpo6``: the scenarios' own defaults); ``None``: the optimisers' own rule (the
    #: centre of every range, ConfigSpace's default and the Optuna CASH sampler's)
    arm_defaults: dict[str, dict[str, Any]] | None = None

    def _set_arms(self, arm_params: Mapping[str, Sequence[Param]]) -> None:
        if not arm_params:
            raise ValueError("a CASH problem needs at least one arm")
        self.arms = list(arm_params)
        self.arm_spaces = {arm: _prefixed(arm, ps) for arm, ps in arm_params.items()}
        flat: list[Param] = [CategoricalParam(self.selector, tuple(self.arms))]
        for arm in self.arms:
            flat.extend(self.arm_spaces[arm].params)
        self.space = SearchSpace(flat)
        self.arm_optima = {arm: None for arm in self.arms}

    # ------------------------------------------------------------- sampling
    def joint_sample(self, rng: np.random.Generator | int | None = None) -> dict[str, Any]:
        """A sample of the conditional joint space: a uniform arm, then its parameters."""
        gen = np.random.default_rng(rng)
        arm = self.arms[int(gen.integers(len(self.arms)))]
        return self.arm_config(arm, self.arm_spaces[arm].sample(1, gen)[0])

    def arm_config(self, arm: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The joint configuration ``{"algorithm": arm, **params}`` (params with prefixed names)."""
        return {self.selector: arm, **params}

    # ------------------------------------------------------------ validation
    def check_config(self, config: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """Validate a joint configuration; returns ``(arm, params)`` with unprefixed names.

        Parameters of other arms (inactive) are ignored; unknown names and missing parameters of
        the selected arm raise ``ValueError``.
        """
        if self.selector not in config:
            raise ValueError(
                f"configuration lacks the selector {self.selector!r}; valid arms: {', '.join(self.arms)}"
            )
        arm = config[self.selector]
        if arm not in self.arm_spaces:
            raise ValueError(
                f"unknown arm {arm!r} for {self.name}; valid arms: {', '.join(self.arms)}"
            )
        known = set(self.space.names)
        unknown = sorted(k for k in config if k not in known)
        if unknown:
            raise ValueError(f"unknown parameters {unknown} for {self.name}")
        space = self.arm_spaces[arm]
        missing = [n for n in space.names if n not in config]
        if missing:
            raise ValueError(f"arm {arm!r} needs parameters {missing}")
        prefix = f"{arm}:"
        params = {p.name[len(prefix):]: p.validate(config[p.name]) for p in space.params}
        return str(arm), params

    def evaluate(self, config: Mapping[str, Any], budget: int = 1) -> float:
        """The loss of ``config`` (one HPO iteration; ``budget`` must be 1)."""
        self.check_budget(budget)
        arm, params = self.check_config(config)
        return float(self._loss(arm, params))

    @abc.abstractmethod
    def _loss(self, arm: str, params: dict[str, Any]) -> float:
        """The loss of ``arm`` with (unprefixed) ``params``."""

    def describe(self) -> str:
        return (
            f"{self.name}[{self.task}] {self.metric} (min), {len(self.arms)} arms: "
            + ", ".join(f"{a}({len(self.arm_spaces[a])})" for a in self.arms)
        )


# =============================================================================== scikit-learn
def _sk_arms() -> dict[str, list[Param]]:
    return {
        "svc": [FloatParam("C", 1e-2, 1e3, log=True), FloatParam("gamma", 1e-4, 1.0, log=True)],
        "random_forest": [
            IntParam("n_estimators", 10, 60, log=True),
            IntParam("max_depth", 2, 20),
            IntParam("min_samples_leaf", 1, 10),
            FloatParam("max_features", 0.05, 1.0),
        ],
        "extra_trees": [
            IntParam("n_estimators", 10, 60, log=True),
            IntParam("max_depth", 2, 20),
            IntParam("min_samples_leaf", 1, 10),
            FloatParam("max_features", 0.05, 1.0),
        ],
        "knn": [
            IntParam("n_neighbors", 1, 30, log=True),
            CategoricalParam("weights", ("uniform", "distance")),
            CategoricalParam("p", (1, 2)),
        ],
        "logreg": [FloatParam("C", 1e-4, 1e2, log=True)],
        "mlp": [
            IntParam("hidden", 8, 128, log=True),
            FloatParam("alpha", 1e-6, 1e-1, log=True),
            FloatParam("learning_rate_init", 1e-4, 1e-1, log=True),
        ],
        "hist_gb": [
            FloatParam("learning_rate", 1e-2, 1.0, log=True),
            IntParam("max_iter", 10, 50, log=True),
            IntParam("max_leaf_nodes", 4, 32, log=True),
            FloatParam("l2_regularization", 1e-6, 1.0, log=True),
        ],
        "gaussian_nb": [],
    }


#: arms of ``cash-sklearn`` in index order
SKLEARN_CASH_ARMS: tuple[str, ...] = tuple(_sk_arms())


def _sk_seed(arm: str, params: Mapping[str, Any], split_seed: int) -> int:
    text = arm + "|" + repr(sorted((k, repr(v)) for k, v in params.items())) + f"|{split_seed}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def _sk_estimator(arm: str, p: Mapping[str, Any], seed: int) -> Any:
    from sklearn import ensemble, linear_model, naive_bayes, neighbors, neural_network, svm

    if arm == "svc":
        return svm.SVC(C=p["C"], gamma=p["gamma"], kernel="rbf")
    if arm in ("random_forest", "extra_trees"):
        cls = ensemble.RandomForestClassifier if arm == "random_forest" else ensemble.ExtraTreesClassifier
        return cls(
            n_estimators=p["n_estimators"],
            max_depth=p["max_depth"],
            min_samples_leaf=p["min_samples_leaf"],
            max_features=p["max_features"],
            random_state=seed,
            n_jobs=1,
        )
    if arm == "knn":
        return neighbors.KNeighborsClassifier(n_neighbors=p["n_neighbors"], weights=p["weights"], p=p["p"])
    if arm == "logreg":
        return linear_model.LogisticRegression(C=p["C"], max_iter=200)
    if arm == "mlp":
        return neural_network.MLPClassifier(
            hidden_layer_sizes=(p["hidden"],),
            alpha=p["alpha"],
            learning_rate_init=p["learning_rate_init"],
            max_iter=60,
            random_state=seed,
        )
    if arm == "hist_gb":
        return ensemble.HistGradientBoostingClassifier(
            learning_rate=p["learning_rate"],
            max_iter=p["max_iter"],
            max_leaf_nodes=p["max_leaf_nodes"],
            l2_regularization=p["l2_regularization"],
            early_stopping=False,
            random_state=seed,
        )
    if arm == "gaussian_nb":
        return naive_bayes.GaussianNB()
    raise ValueError(f"unknown arm {arm!r}; valid arms: {', '.join(SKLEARN_CASH_ARMS)}")


#: every classification dataset scikit-learn bundles (nothing is downloaded)
SKLEARN_CASH_TASKS: tuple[str, ...] = ("digits", "breast_cancer", "wine", "iris")

#: the arms of ``cash-sklearn``: every class of :data:`SKLEARN_CASH_ARMS` with hyperparameters
SKLEARN_CASH_TUNABLE_ARMS: tuple[str, ...] = tuple(a for a in SKLEARN_CASH_ARMS if a != "gaussian_nb")


def _sk_dataset(task: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    loaders = {"digits": datasets.load_digits, "breast_cancer": datasets.load_breast_cancer,
               "wine": datasets.load_wine, "iris": datasets.load_iris}
    return loaders[task](return_X_y=True)  # type: ignore[no-any-return]


class SklearnCash(CashProblem):
    """Real training of scikit-learn model classes: ``cash-sklearn`` and, with
    ``protocol="holdout"``, ``cash-sklearn-holdout`` (module docstring).

    Args:
        task: one of :data:`SKLEARN_CASH_TASKS` (default ``"digits"``; the hold-out protocol
            has digits, breast_cancer and wine).
        split_seed: seed of the folds (or of the hold-out split).
        arms: optional subset of :data:`SKLEARN_CASH_ARMS`, in that order by default; default:
            the protocol's (``"cv"``: :data:`SKLEARN_CASH_TUNABLE_ARMS`, the 7 classes with
            hyperparameters; ``"holdout"``: all 8).
        protocol: ``"cv"``: loss = 1 - balanced accuracy, the mean over a stratified 5-fold
            cross-validation of the whole dataset (shuffled with ``split_seed``; features
            standardised on each training fold); ``"holdout"``: loss = 1 - accuracy on the
            stratified 30 % hold-out of :func:`uvp_plugins.bench.problems.sklearn_mf.load_split`
            (the problem before issue 30).
        cache_size: number of evaluated configurations remembered (deterministic results).
    """

    name = "cash-sklearn"
    metric = "1-balanced_acc"
    #: folds of the cross-validation protocol
    n_folds = 5

    def __init__(
        self,
        task: str | None = None,
        split_seed: int = 0,
        arms: Sequence[str] | None = None,
        cache_size: int = 4096,
        protocol: str = "cv",
    ) -> None:
        from uvp_plugins.bench.problems.sklearn_mf import SKLEARN_TASKS, load_split

        if protocol not in ("cv", "holdout"):
            raise ValueError(f"protocol must be 'cv' or 'holdout', got {protocol!r}")
        tasks = SKLEARN_CASH_TASKS if protocol == "cv" else SKLEARN_TASKS
        task = "digits" if task is None else str(task)
        if task not in tasks:
            raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(tasks)}")
        all_arms = _sk_arms()
        default_arms = SKLEARN_CASH_TUNABLE_ARMS if protocol == "cv" else SKLEARN_CASH_ARMS
        chosen = list(default_arms) if arms is None else list(arms)
        bad = [a for a in chosen if a not in all_arms]
        if bad or not chosen:
            raise ValueError(f"arms must be a non-empty subset of {list(all_arms)}, got {arms!r}")
        self.task = task
        self.protocol = protocol
        if protocol == "holdout":
            self.name = "cash-sklearn-holdout"
            self.metric = "1-acc"
        self.split_seed = int(split_seed)
        self._data: tuple[np.ndarray, ...] = (
            load_split(task, self.split_seed) if protocol == "holdout" else _sk_dataset(task)
        )
        self._set_arms({a: all_arms[a] for a in chosen})
        self._cache: OrderedDict[tuple[Any, ...], float] = OrderedDict()
        self._cache_size = int(cache_size)
        self._lock = threading.Lock()

    def _fit_score(self, arm: str, params: dict[str, Any]) -> float:
        seed = _sk_seed(arm, params, self.split_seed)
        if self.protocol == "holdout":
            X_tr, X_va, y_tr, y_va = self._data
            est = _sk_estimator(arm, params, seed)
            est.fit(X_tr, y_tr)
            return float(np.mean(est.predict(X_va) == y_va))
        from sklearn.model_selection import StratifiedKFold, cross_val_score
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        X, y = self._data
        folds = StratifiedKFold(self.n_folds, shuffle=True, random_state=self.split_seed)
        model = make_pipeline(StandardScaler(), _sk_estimator(arm, params, seed))
        scores = cross_val_score(model, X, y, cv=folds, scoring="balanced_accuracy", n_jobs=1)
        return float(np.mean(scores))

    def _loss(self, arm: str, params: dict[str, Any]) -> float:
        key = (arm, *sorted(params.items()))
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings of capped max_iter
            loss = 1.0 - self._fit_score(arm, params)
        with self._lock:
            self._cache[key] = loss
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return loss


# ===================================================================================== YAHPO
YAHPO_CASH_ARMS = {"rpart": "rbv2_rpart", "xgboost": "rbv2_xgboost"}


def _yahpo_data_path(yahpo_data: str | os.PathLike[str] | None) -> str:
    """The YAHPO data directory (:func:`uvp_plugins.bench.problems.yahpo.resolve_yahpo_data`)."""
    from uvp_plugins.bench.problems.yahpo import resolve_yahpo_data

    path = resolve_yahpo_data(yahpo_data)
    for scenario in YAHPO_CASH_ARMS.values():
        if not (path / scenario / "model.onnx").is_file():
            raise FileNotFoundError(
                f"YAHPO data at {path} lacks {scenario}/model.onnx; point to a yahpo_data copy "
                "containing rbv2_rpart and rbv2_xgboost with yahpo_data=PATH (or UVP_YAHPO_DATA)"
            )
    return str(path)


def yahpo_cash_tasks(yahpo_data: str | os.PathLike[str] | None = None) -> list[str]:
    """The task ids shared by ``rbv2_rpart`` and ``rbv2_xgboost`` (in rpart's order)."""
    path = _yahpo_data_path(yahpo_data)
    from uvp_plugins.bench.problems.yahpo_surrogate import load_surrogate

    lists = [load_surrogate(s, path).instances for s in YAHPO_CASH_ARMS.values()]
    shared = set(lists[1])
    return [t for t in lists[0] if t in shared]


class YahpoCash(CashProblem):
    """``cash-yahpo``: rbv2_rpart + rbv2_xgboost surrogates as two arms (module docstring).

    Args:
        task: an OpenML task id shared by both scenarios (default: the first shared one).
        yahpo_data: the YAHPO data directory (default: see
            :func:`uvp_plugins.bench.problems.yahpo.resolve_yahpo_data`).
    """

    name = "cash-yahpo"
    metric = "1-acc"

    def __init__(
        self, task: str | None = None, yahpo_data: str | os.PathLike[str] | None = None
    ) -> None:
        path = _yahpo_data_path(yahpo_data)
        shared = yahpo_cash_tasks(path)
        task = shared[0] if task is None else str(task)
        if task not in shared:
            raise ValueError(
                f"unknown task {task!r} for cash-yahpo; valid (shared) tasks: {', '.join(shared)}"
            )
        self.task = task
        self.data_path = path
        from uvp_plugins.bench.problems.yahpo_surrogate import load_surrogate

        self._surrogates = {arm: load_surrogate(sc, path) for arm, sc in YAHPO_CASH_ARMS.items()}
        self._set_arms({arm: list(sur.params) for arm, sur in self._surrogates.items()})
        self._acc = {arm: sur.target_index("acc") for arm, sur in self._surrogates.items()}

    def _loss(self, arm: str, params: dict[str, Any]) -> float:
        x = {**params, "task_id": self.task, "trainsize": 1.0, "repl": 10}
        return 1.0 - float(self._surrogates[arm].predict([x])[0, self._acc[arm]])


# ================================================================================= synthetic
#: per task arm definitions: (name, minimum loss m, spread s, skew exponent p, n params)
_SYNTH_ARMS: tuple[tuple[str, float, float, float, int], ...] = (
    # the best arm: the lowest minimum, approached slowly (P(loss < m + e) ~ e^2), broad
    ("peaky", 0.02, 0.20, 1.0, 2),
    # a better mean loss than 'peaky' but a worse best value: losses pile up near 0.10
    ("steady", 0.10, 0.06, 3.0, 2),
    # strongly left-skewed rewards, mediocre best value
    ("skewed", 0.12, 0.40, 6.0, 2),
    # a poor arm
    ("weak", 0.30, 0.40, 1.5, 1),
    # no hyperparameters: a single fixed loss
    ("constant", 0.20, 0.0, 1.0, 0),
)


class SyntheticCash(CashProblem):
    """``cash-synthetic``: noise-free arms with known minima, for fast tests.

    Arm ``i`` has ``d_i`` parameters ``x`` in ``[0, 1]`` and loss ``m_i + s_i * h^p_i`` with
    ``h = max_j |x_j - c_ij| / max(c_ij, 1 - c_ij)`` in ``[0, 1]`` (a normalised Chebyshev distance
    to the arm's centre ``c_i``, drawn per task in ``[0.2, 0.8]^d``), so the arm's minimum ``m_i``
    (:attr:`arm_optima`) is attained at ``c_i`` (:meth:`arm_centre`). A large exponent ``p_i``
    makes most random configurations nearly optimal for that arm: the reward ``-loss`` is
    left-skewed (mass near the arm's maximum, long lower tail). The arm with the best mean
    (``steady``) is not the arm with the best optimum (``peaky``); ``constant`` has no
    hyperparameters.

    Args:
        task: a seed string (``"0"`` .. ``"4"`` registered); it permutes the arm order and
            draws the centres.
    """

    name = "cash-synthetic"

    def __init__(self, task: str | None = None) -> None:
        self.task = "0" if task is None else str(task)
        try:
            seed = int(self.task)
        except ValueError as exc:
            raise ValueError(f"task must be an int-like string (e.g. '0'), got {task!r}") from exc
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(_SYNTH_ARMS)) if seed else np.arange(len(_SYNTH_ARMS))
        self._defs: dict[str, tuple[float, float, float, np.ndarray]] = {}
        arm_params: dict[str, list[Param]] = {}
        for idx in order:
            arm, m, s, p, d = _SYNTH_ARMS[int(idx)]
            centre = rng.uniform(0.2, 0.8, size=d)
            self._defs[arm] = (m, s, p, centre)
            arm_params[arm] = [FloatParam(f"x{j}", 0.0, 1.0) for j in range(d)]
        self._set_arms(arm_params)
        self.arm_optima = {arm: self._defs[arm][0] for arm in self.arms}
        self.optimum = min(v for v in self.arm_optima.values() if v is not None)
        self.best_arm = min(self.arms, key=lambda a: self._defs[a][0])

    def arm_centre(self, arm: str) -> dict[str, Any]:
        """The optimal configuration of ``arm`` (joint form)."""
        centre = self._defs[arm][3]
        return self.arm_config(arm, {f"{arm}:x{j}": float(v) for j, v in enumerate(centre)})

    def _loss(self, arm: str, params: dict[str, Any]) -> float:
        m, s, p, centre = self._defs[arm]
        if centre.size == 0:
            return m
        x = np.array([params[f"x{j}"] for j in range(centre.size)], dtype=float)
        far = np.maximum(centre, 1.0 - centre)  # the largest distance per coordinate
        h = float(np.max(np.abs(x - centre) / far))
        return m + s * h**p


# =================================================================================== registry
def _sk_make(task: str | None = None, split_seed: int = 0, **_: Any) -> Problem:
    return SklearnCash(task, split_seed=split_seed)


def _sk_tasks(**_: Any) -> list[str]:
    return list(SKLEARN_CASH_TASKS)


def _sk_holdout_make(task: str | None = None, split_seed: int = 0, **_: Any) -> Problem:
    return SklearnCash(task, split_seed=split_seed, protocol="holdout")


def _sk_holdout_tasks(**_: Any) -> list[str]:
    from uvp_plugins.bench.problems.sklearn_mf import SKLEARN_TASKS

    return list(SKLEARN_TASKS)


def _yahpo_make(task: str | None = None, yahpo_data: str | None = None, **_: Any) -> Problem:
    return YahpoCash(task, yahpo_data)


def _yahpo_tasks(yahpo_data: str | None = None, **_: Any) -> list[str]:
    return yahpo_cash_tasks(yahpo_data)


def _synth_make(task: str | None = None, **_: Any) -> Problem:
    return SyntheticCash(task)


_SPECS: list[tuple[str, Callable[..., Problem], Callable[..., Sequence[str]], str, tuple[str, ...]]] = [
    (
        "cash-sklearn",
        _sk_make,
        _sk_tasks,
        "CASH, real scikit-learn training of 7 tunable model classes on every bundled "
        "classification dataset, loss 1 - balanced accuracy of a 5-fold CV (min)",
        ("sklearn",),
    ),
    (
        "cash-sklearn-holdout",
        _sk_holdout_make,
        _sk_holdout_tasks,
        "CASH, real scikit-learn training of 8 model classes, loss 1-acc on a 30 % hold-out "
        "(min; cash-sklearn before issue 30)",
        ("sklearn",),
    ),
    (
        "cash-yahpo",
        _yahpo_make,
        _yahpo_tasks,
        "CASH, YAHPO rbv2_rpart + rbv2_xgboost arms (trainsize 1), loss 1-acc (min)",
        ("onnxruntime",),
    ),
    (
        "cash-synthetic",
        _synth_make,
        lambda **_: [str(i) for i in range(5)],
        "CASH, synthetic arms with known minima and left-skewed rewards (min)",
        (),
    ),
]

for _name, _make, _tasks, _desc, _req in _SPECS:
    register_problem(ProblemSpec(_name, _make, _tasks, _desc, requires=_req, kind="cash"))

"""MaxUCBCashSampler with real Optuna: MaxUCB's choices step by step, per-class samplers, losses,
parallel use (threads, two processes on one storage), restart from storage, bad input."""

from __future__ import annotations

import math
import os
import pickle
import re
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState
from shared_helpers import wait_for_workers

from optuna_ext import MaxUCBCashSampler
from optuna_ext._cash_sampler import ATTR_PULL
from uvp_plugins.bandits import CashBandit, CashSettings

pytestmark = pytest.mark.optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)

REPO = Path(__file__).resolve().parents[2]
CLASSES = ("a", "b", "c")


def _pull(t: optuna.trial.FrozenTrial) -> dict[str, Any]:
    record = t.system_attrs[ATTR_PULL]
    assert record["state"] == "won"
    return dict(record["params"])


def _list_objective(
    losses: dict[str, list[float]], *, crash: str | None = None, sign: float = 1.0
) -> Any:
    """Each class's losses in turn; class ``crash`` fails (``"fail:c"``) or is pruned
    (``"prune:c"``) after reporting a very good intermediate value."""
    kind, _, bad = (crash or "::").partition(":")

    def objective(trial: optuna.Trial) -> float:
        model = trial.suggest_categorical("model", list(CLASSES))
        trial.suggest_float(f"{model}:x", 0.0, 1.0)
        if model == bad:
            if kind == "prune":
                trial.report(sign * -100.0, 1)
                raise optuna.TrialPruned()
            raise RuntimeError("this class always crashes")
        return sign * losses[model].pop(0)

    return objective


# ------------------------------------------------------------------ MaxUCB step by step
@pytest.mark.parametrize("direction", ["minimize", "maximize"])
@pytest.mark.parametrize("crash", ["fail:c", "prune:c"])
def test_classes_follow_maxucb_step_by_step(direction: str, crash: str) -> None:
    """The hand-computed sequence of the CashBandit docstring (Alg. 1: alpha = 0.5, no
    exploration floor; 2 crashes in a row retire a class): round robin a, b, c; c crashes (or is pruned: its last value is not a
    loss), so it is pulled again and then retired; then Alg. 1 on a and b:
    after a = 0.40, b = 0.20 (rewards 0.01, 0.99), t = 3: U_a = 0.01 + (0.5 ln 3)^2 = 0.31,
    U_b = 1.29 -> b (0.50; a's reward 0.337): t = 4, U_a = 0.817, U_b = 0.99 + (0.5 ln 4 / 2)^2
    = 1.11 -> b (0.30): t = 5, U_a = 0.984, U_b = 1.062 -> b (0.25): t = 6, U_a = 0.337 +
    (0.5 ln 6)^2 = 1.139 > U_b = 1.040 -> a."""
    sign = 1.0 if direction == "minimize" else -1.0
    losses = {"a": [0.40, 0.35], "b": [0.20, 0.50, 0.30, 0.25]}
    sampler = MaxUCBCashSampler(max_consecutive_crashes=2, alpha=0.5, floor=0.0, seed=0)
    study = optuna.create_study(direction=direction, sampler=sampler)
    study.optimize(_list_objective(losses, crash=crash, sign=sign), n_trials=8,
                   catch=(RuntimeError,))
    assert [t.params["model"] for t in study.trials] == list("abccbbba")
    bandit = sampler.bandit(study)
    assert bandit.retired == {2: "crashed"} and bandit.n_pulls == [2, 4, 0]
    assert sampler.pulls(study) == {"a": 2, "b": 4, "c": 0}
    # the same losses fed to the core object
    core = CashBandit(3, "MaxUCB", alpha=0.5, max_consecutive_crashes=2)
    again = {"a": [0.40, 0.35], "b": [0.20, 0.50, 0.30, 0.25]}
    arms = []
    for _ in range(8):
        arm = core.ask()
        arms.append(CLASSES[arm])
        if arm == 2:
            core.fail(arm)
        else:
            core.tell(arm, again[CLASSES[arm]].pop(0))
    assert arms == list("abccbbba")
    assert sorted(bandit.policy.history()) == sorted(core.policy.history())


@pytest.mark.parametrize("burn_in", [0, 2])
@pytest.mark.parametrize("policy", ["MaxUCB", "UCB", "QuantileUCB", "RoundRobin"])
def test_long_sequence_equals_cash_bandit_fed_the_same_losses(burn_in: int, policy: str) -> None:
    rng = np.random.default_rng(3)
    tables = {c: list(rng.beta(5, 2 + i, size=60)) for i, c in enumerate(CLASSES)}
    study = optuna.create_study(sampler=MaxUCBCashSampler(burn_in=burn_in, policy=policy, seed=1))
    queue = {c: list(v) for c, v in tables.items()}
    study.optimize(_list_objective(queue), n_trials=40)
    # the sampler's defaults are the core's CASH settings (MaxUCB: alpha 1, floor ln t)
    core = CashBandit.from_settings(3, CashSettings(policy=policy, burn_in=burn_in))
    queue = {c: list(v) for c, v in tables.items()}
    expected = []
    for _ in range(40):
        arm = core.ask()
        expected.append(CLASSES[arm])
        core.tell(arm, queue[CLASSES[arm]].pop(0))
    got = [t.params["model"] for t in study.trials]
    assert got == expected
    if policy == "MaxUCB":
        assert len(set(got)) == 3 and Counter(got).most_common(1)[0][1] >= 15  # not round robin
    slots = [_pull(t)["burn_in_slot"] for t in study.trials]
    assert slots == list(range(3 * burn_in)) + [None] * (40 - 3 * burn_in)


# ------------------------------------------------------------------ per-class samplers
class RecordingSampler(optuna.samplers.RandomSampler):
    """Optuna's RandomSampler that notes which trials its study view holds at every call."""

    def __init__(self, cls: str, seen: list[tuple[str, set[Any], str]]) -> None:
        super().__init__(seed=len(cls))
        self.cls, self.seen = cls, seen

    def _note(self, study: optuna.Study, where: str) -> None:
        views = (
            study.get_trials(deepcopy=False),
            study._get_trials(deepcopy=False, use_cache=True),
            study.trials,
        )
        for trials in views:
            self.seen.append((self.cls, {t.params.get("model") for t in trials}, where))

    def infer_relative_search_space(self, study: optuna.Study, trial: Any) -> dict[str, Any]:
        self._note(study, "relative")
        space = optuna.search_space.intersection_search_space(
            study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        )
        assert "model" not in space or set(space) > {"model"}
        return {n: d for n, d in space.items() if not d.single()}

    def sample_relative(self, study: optuna.Study, trial: Any, search_space: dict) -> dict:
        assert "model" not in search_space  # the class is already chosen
        return {n: self.sample_independent(study, trial, n, d) for n, d in search_space.items()}

    def sample_independent(self, study: optuna.Study, trial: Any, name: str, dist: Any) -> Any:
        self._note(study, name)
        return super().sample_independent(study, trial, name, dist)


def test_each_class_sampler_sees_only_its_class_and_shared_params_see_all() -> None:
    seen: list[tuple[str, set[Any], str]] = []

    def objective(trial: optuna.Trial) -> float:
        scale = trial.suggest_float("scale", 0.5, 2.0)  # before the selector: shared
        model = trial.suggest_categorical("model", ["svc", "knn", "nb"])
        if model == "svc":
            return scale * abs(math.log10(trial.suggest_float("svc_c", 1e-2, 1e2, log=True)))
        if model == "knn":
            return scale * abs(trial.suggest_int("knn_k", 1, 20) - 4) / 20
        return 0.5

    sampler = MaxUCBCashSampler(
        "model",
        class_samplers=lambda value: RecordingSampler(value, seen),
        shared_sampler=RecordingSampler("shared", seen),
        seed=0,
    )
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=25)
    classes = {cls for cls, _, _ in seen}
    assert classes == {"svc", "knn", "shared"}  # nb has no parameters: its sampler is never asked
    for cls, models, where in seen:
        if cls == "shared":
            assert where == "scale"  # each on its own, never the classes' parameters
            continue
        assert models == {cls}, (cls, models, where)  # the view holds that class's trials only
        assert where in ("relative", f"{cls}_c" if cls == "svc" else f"{cls}_k")
    # nb's trials have the shared parameter: nb has a search space and stays a normal class
    assert sampler.bandit(study).retired == {}


def test_class_without_hyperparameters_is_evaluated_once() -> None:
    sampler = MaxUCBCashSampler(seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        model = trial.suggest_categorical("model", ["nb", "svc"])
        if model == "svc":
            return 0.5 - abs(math.log10(trial.suggest_float("svc_c", 1e-2, 1e2, log=True)))
        return 0.9  # the best class, and it has no hyperparameters

    study.optimize(objective, n_trials=15)
    assert [t.params["model"] for t in study.trials].count("nb") == 1
    assert sampler.bandit(study).retired == {0: "exhausted"}
    assert sampler.pulls(study) == {"nb": 1, "svc": 14}


def test_class_sampler_mapping_and_default_tpe_views() -> None:
    seen: list[tuple[str, set[Any], str]] = []
    sampler = MaxUCBCashSampler(class_samplers={"b": RecordingSampler("b", seen)}, seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(_list_objective({c: [0.5] * 30 for c in CLASSES}), n_trials=12)
    assert seen and all(models == {"b"} for _, models, _ in seen)
    # classes a and c use TPE seeded per (seed, class, trial number): a class's parameters do not
    # depend on the other classes' trials
    assert all(f"{t.params['model']}:x" in t.params for t in study.trials)


def test_each_class_starts_with_its_default_configuration() -> None:
    # Alg. 1 line 3 / App. D: a class's first trial evaluates its default configuration: the
    # values class_defaults gives, else the centre of each distribution (ConfigSpace's rule)
    def objective(trial: optuna.Trial) -> float:
        model = trial.suggest_categorical("model", ["svc", "knn", "tree"])
        if model == "svc":
            c = trial.suggest_float("svc:C", 1e-3, 1e3, log=True)
            trial.suggest_categorical("svc:kernel", ["rbf", "linear"])
            return abs(math.log10(c))
        if model == "knn":
            return trial.suggest_int("knn:k", 1, 30) / 30
        trial.suggest_float("tree:frac", 0.0, 0.9, step=0.3)
        return trial.suggest_int("tree:depth", 1, 9, step=2) / 10

    sampler = MaxUCBCashSampler("model", class_defaults={"knn": {"knn:k": 5}}, seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=30)
    first = {}
    for t in study.trials:
        first.setdefault(t.params["model"], t.params)
    assert first["svc"] == {"model": "svc", "svc:C": 1.0, "svc:kernel": "rbf"}
    assert first["knn"] == {"model": "knn", "knn:k": 5}
    assert first["tree"] == {"model": "tree", "tree:frac": 0.6, "tree:depth": 5}
    # later trials are the class sampler's (not the default again)
    later = [t.params for t in study.trials if t.params["model"] == "svc"][1:]
    assert later and all(p != first["svc"] for p in later)
    # default_first=False: the class sampler proposes every trial, the first included
    study = optuna.create_study(sampler=MaxUCBCashSampler("model", default_first=False, seed=0))
    study.optimize(objective, n_trials=3)
    assert study.trials[0].params != first["svc"]


def test_class_defaults_are_checked() -> None:
    def objective(trial: optuna.Trial) -> float:
        trial.suggest_categorical("model", ["a", "b"])
        return trial.suggest_float("x", 0.0, 1.0)

    study = optuna.create_study(sampler=MaxUCBCashSampler(class_defaults={"c": {"x": 0.5}}))
    with pytest.raises(ValueError, match=re.escape(
            "class_defaults has the key 'c', which is not a choice of the selector 'model'")):
        study.optimize(objective, n_trials=1)
    study = optuna.create_study(sampler=MaxUCBCashSampler(class_defaults={"a": {"x": 2.0}}))
    with pytest.raises(ValueError, match=r"class_defaults gives x=2.0, which is not a value of its "
                       r"distribution FloatDistribution\(high=1.0"):
        study.optimize(objective, n_trials=1)
    with pytest.raises(TypeError, match="class_defaults must be a mapping"):
        MaxUCBCashSampler(class_defaults=[("a", {})])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"class_defaults\['a'\] must be a mapping"):
        MaxUCBCashSampler(class_defaults={"a": 0.5})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="default_first must be a bool"):
        MaxUCBCashSampler(default_first=1)  # type: ignore[arg-type]


def test_class_view_best_trial_is_the_class_best() -> None:
    best: dict[str, float] = {}

    class BestNoting(optuna.samplers.RandomSampler):
        def __init__(self, cls: str) -> None:
            super().__init__(seed=0)
            self.cls = cls

        def sample_independent(self, study: Any, trial: Any, name: str, dist: Any) -> Any:
            if any(t.state == TrialState.COMPLETE for t in study.get_trials(deepcopy=False)):
                best[self.cls] = study.best_trial.params["model"], study.best_value
            return super().sample_independent(study, trial, name, dist)

    study = optuna.create_study(
        sampler=MaxUCBCashSampler(class_samplers=lambda v: BestNoting(v), alpha=5.0, seed=0)
    )
    study.optimize(_list_objective({"a": [0.9, 0.8] * 10, "b": [0.1] * 20, "c": [0.5] * 20}),
                   n_trials=9)
    assert best["a"] == ("a", 0.8) and best["c"] == ("c", 0.5)


# ------------------------------------------------------------------ results, ask/tell, pruning
def test_results_are_credited_to_their_trials_class_in_any_order() -> None:
    sampler = MaxUCBCashSampler(seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.enqueue_trial({"model": "c"})
    trials = [study.ask() for _ in range(4)]
    models = [t.suggest_categorical("model", list(CLASSES)) for t in trials]
    # the enqueued trial is c's; the others spread over the classes (running pulls are pending)
    assert models == ["c", "a", "b", "a"]
    assert sampler.bandit(study).pending == [2, 1, 1]
    for trial, value in zip(reversed(trials), (0.9, 0.7, 0.6, 0.3), strict=True):
        study.tell(trial, value)
    bandit = sampler.bandit(study)
    assert bandit.pending == [0, 0, 0]
    assert sorted(bandit.policy.history()) == sorted([(0, -0.9), (1, -0.7), (0, -0.6), (2, -0.3)])
    # a pruned trial with a good last value is not credited
    trial = study.ask()
    model = trial.suggest_categorical("model", list(CLASSES))
    trial.report(100.0, 1)
    study.tell(trial, state=TrialState.PRUNED)
    assert sampler.pulls(study) == {"a": 2, "b": 1, "c": 1}
    assert sampler.bandit(study).crash_streak[CLASSES.index(model)] == 1


def test_infinite_value_is_a_failure_and_every_class_out_falls_back() -> None:
    sampler = MaxUCBCashSampler(max_consecutive_crashes=1, seed=0)
    study = optuna.create_study(sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        trial.suggest_categorical("model", ["a", "b"])
        return math.inf

    study.optimize(objective, n_trials=4)
    assert [t.params["model"] for t in study.trials][:2] == ["a", "b"]
    bandit = sampler.bandit(study)
    assert bandit.retired == {0: "crashed", 1: "crashed"} and bandit.n_pulls == [0, 0]
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


# ------------------------------------------------------------------ parallel use
@pytest.mark.parametrize(("n_jobs", "burn_in"), [(2, 0), (3, 2)])
def test_threads_share_the_sampler_and_burn_in_slots_are_unique(n_jobs: int, burn_in: int) -> None:
    sampler = MaxUCBCashSampler(burn_in=burn_in, seed=0)
    study = optuna.create_study(sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        model = trial.suggest_categorical("model", list(CLASSES))
        x = trial.suggest_float(f"{model}:x", 0.0, 1.0)
        time.sleep(0.005)
        return (x - 0.3) ** 2 + CLASSES.index(model) * 0.1

    study.optimize(objective, n_trials=30, n_jobs=n_jobs)
    _check_consistent(sampler, study, burn_in=burn_in, n=30)


def _check_consistent(sampler: MaxUCBCashSampler, study: optuna.Study, burn_in: int, n: int) -> None:
    trials = study.get_trials()
    assert len(trials) == n and all(t.state == TrialState.COMPLETE for t in trials)
    pulls = [_pull(t) for t in trials]
    assert all(CLASSES[p["arm"]] == t.params["model"] for p, t in zip(pulls, trials, strict=True))
    slots = sorted(p["burn_in_slot"] for p in pulls if p["burn_in_slot"] is not None)
    assert slots == list(range(burn_in * len(CLASSES)))  # each burn-in slot taken exactly once
    credited = Counter(t.params["model"] for t, p in zip(trials, pulls, strict=True)
                       if p["burn_in_slot"] is None)
    assert sampler.pulls(study) == {c: credited[c] for c in CLASSES}
    assert sampler.bandit(study).pending == [0, 0, 0]


WORKER = textwrap.dedent(
    """
    import sys, time
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from optuna_ext import MaxUCBCashSampler
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    backend, where, start, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    storage = JournalStorage(JournalFileBackend(where)) if backend == "journal" else where
    study = optuna.load_study(study_name="cash", storage=storage,
                              sampler=MaxUCBCashSampler(burn_in=3, seed=0))

    def objective(trial):
        model = trial.suggest_categorical("model", ["a", "b", "c"])
        x = trial.suggest_float(model + ":x", 0.0, 1.0)
        time.sleep(0.002)
        return (x - 0.3) ** 2 + ["a", "b", "c"].index(model) * 0.1

    while time.time() < start:  # both workers ask at once
        time.sleep(0.002)
    study.optimize(objective, n_trials=n)
    """
)


@pytest.mark.parametrize("backend", ["sqlite", "journal", "postgresql"])
def test_two_processes_on_one_storage(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "postgresql":  # a real server on loopback (tests/optuna_ext/conftest.py)
        where = request.getfixturevalue("postgres_url")
    elif backend == "journal":
        where = str(tmp_path / "cash.log")
    else:
        where = f"sqlite:///{tmp_path / 'cash.db'}"
    storage: Any = JournalStorage(JournalFileBackend(where)) if backend == "journal" else where
    optuna.create_study(study_name="cash", storage=storage)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    start = time.time() + 3.0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen([sys.executable, str(script), backend, where, str(start), "15"],
                         stderr=subprocess.PIPE, env=env)
        for _ in range(2)
    ]
    wait_for_workers(procs, timeout=120)
    sampler = MaxUCBCashSampler(burn_in=3, seed=0)
    study = optuna.load_study(study_name="cash", storage=storage, sampler=sampler)
    _check_consistent(sampler, study, burn_in=3, n=30)


# ------------------------------------------------------------------ restart and determinism
RESTART_WORKER = textwrap.dedent(
    """
    import sys
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    sys.path.insert(0, sys.argv[2])
    from test_optuna_cash_sampler import restart_objective
    from optuna_ext import MaxUCBCashSampler
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = JournalStorage(JournalFileBackend(sys.argv[1]))
    study = optuna.load_study(study_name="s", storage=storage,
                              sampler=MaxUCBCashSampler(burn_in=1, seed=5))
    study.optimize(restart_objective, n_trials=12, catch=(RuntimeError,))
    """
)


def restart_objective(trial: optuna.Trial) -> float:
    model = trial.suggest_categorical("model", ["svc", "knn", "tree", "nb"])
    if model == "svc":
        c = trial.suggest_float("svc_c", 1e-2, 1e2, log=True)
        return abs(math.log10(c) - 0.5) / 4
    if model == "knn":
        k = trial.suggest_int("knn_k", 1, 30)
        if k > 25:
            raise RuntimeError("k too large")
        return 0.1 + abs(k - 7) / 30
    if model == "tree":
        d = trial.suggest_int("depth", 1, 12)
        trial.report(1.0 / d, 1)
        if d < 3:
            raise optuna.TrialPruned()
        return 0.15 + abs(d - 6) / 20
    return 0.3


def test_restart_from_storage_gives_the_uninterrupted_sequence(tmp_path: Path) -> None:
    def run(name: str, n: int) -> optuna.Study:
        storage = JournalStorage(JournalFileBackend(str(tmp_path / f"{name}.log")))
        study = optuna.create_study(study_name="s", storage=storage,
                                    sampler=MaxUCBCashSampler(burn_in=1, seed=5))
        study.optimize(restart_objective, n_trials=n, catch=(RuntimeError,))
        return study

    once = run("once", 30)
    run("twice", 0)  # an empty study on the storage the restart uses
    # the worker imports this module, which imports tests/helpers/shared_helpers
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests" / "helpers")])}
    done = subprocess.run(  # the first 12 trials in another process
        [sys.executable, "-c", RESTART_WORKER, str(tmp_path / "twice.log"), str(Path(__file__).parent)],
        capture_output=True, env=env, timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    sampler = MaxUCBCashSampler(burn_in=1, seed=5)  # a new process: nothing but the seed
    storage = JournalStorage(JournalFileBackend(str(tmp_path / "twice.log")))
    again = optuna.load_study(study_name="s", storage=storage, sampler=sampler)
    assert len(again.trials) == 12
    again.optimize(restart_objective, n_trials=18, catch=(RuntimeError,))
    a = [(t.params, t.state, t.value) for t in once.trials]
    b = [(t.params, t.state, t.value) for t in again.trials]
    assert [p["model"] for p, _, _ in a] == [p["model"] for p, _, _ in b]  # the class sequence
    assert a == b  # and, with the default per-class TPE, every parameter
    states = Counter(s for _, s, _ in a)
    assert states[TrialState.PRUNED] + states[TrialState.FAIL] > 0  # failures were replayed


def test_inside_hyperband_brackets_and_pickling() -> None:
    sampler = MaxUCBCashSampler(seed=0)
    study = optuna.create_study(
        sampler=sampler,
        pruner=optuna.pruners.HyperbandPruner(min_resource=1, max_resource=9, reduction_factor=3),
    )

    def objective(trial: optuna.Trial) -> float:
        model = trial.suggest_categorical("model", list(CLASSES))
        x = trial.suggest_float(f"{model}:x", 0.0, 1.0)
        v = 1.0
        for step in range(1, 10):
            v = (x - 0.5) ** 2 + CLASSES.index(model) * 0.1 + 1.0 / step
            trial.report(v, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return v

    study.optimize(objective, n_trials=25)
    states = Counter(t.state for t in study.trials)
    assert states[TrialState.PRUNED] > 0 and states[TrialState.COMPLETE] > 0
    clone = pickle.loads(pickle.dumps(sampler))
    assert clone.pulls(study) == sampler.pulls(study)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"alpha": -0.1}, ValueError, "alpha must be a float >= 0"),
        ({"alpha": math.nan}, ValueError, "alpha must be a finite float >= 0"),
        ({"burn_in": -1}, ValueError, "burn_in must be an int >= 0"),
        ({"policy": "greedy"}, ValueError, "policy must be one of"),
        ({"policy": "RoundRobin", "alpha": 1.0}, ValueError,
         "alpha is not a parameter of policy 'RoundRobin'"),
        ({"max_consecutive_crashes": 0}, ValueError, "max_consecutive_crashes must be an int >= 1"),
        ({"seed": -1}, ValueError, "seed must be"),
        ({"selector": ""}, TypeError, "selector must be a non-empty str"),
        ({"class_samplers": optuna.samplers.TPESampler()}, TypeError,
         "one sampler object cannot serve every class"),
        ({"class_samplers": {"a": "tpe"}}, TypeError, r"class_samplers\['a'\] must be"),
        ({"class_samplers": 3}, TypeError, "class_samplers must be a mapping"),
        ({"shared_sampler": "tpe"}, TypeError, "shared_sampler must be"),
    ],
)
def test_bad_arguments_fail_at_construction(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        MaxUCBCashSampler(**kwargs)


def test_unknown_selector_is_reported_after_the_first_trial() -> None:
    study = optuna.create_study(sampler=MaxUCBCashSampler("model", seed=0))

    def objective(trial: optuna.Trial) -> float:
        trial.suggest_categorical("classifier", ["svc", "knn"])
        return 0.0

    with pytest.raises(ValueError, match=r"selector='model' is not a parameter of this study.*"
                                         r"\['classifier'\]"):
        study.optimize(objective, n_trials=5)
    assert len(study.trials) == 1 and study.trials[0].state == TrialState.COMPLETE


def test_selector_value_not_in_the_choices_and_a_non_categorical_selector() -> None:
    study = optuna.create_study(
        sampler=MaxUCBCashSampler(class_samplers={"xgb": optuna.samplers.RandomSampler()})
    )
    objective = _list_objective({c: [0.1] * 5 for c in CLASSES})
    with pytest.raises(ValueError, match=re.escape(
        "class_samplers has the key 'xgb', which is not a choice of the selector 'model'; its "
        "choices are ['a', 'b', 'c']"
    )):
        study.optimize(objective, n_trials=1)
    assert study.trials[0].state == TrialState.FAIL
    study = optuna.create_study(sampler=MaxUCBCashSampler("lr"))
    with pytest.raises(ValueError, match="selector 'lr' must be suggested with trial.suggest_categ"):
        study.optimize(lambda t: t.suggest_float("lr", 0.1, 1.0), n_trials=1)


@pytest.mark.parametrize(("choices", "first", "later"), [
    ([None, True, 1, "a"], "True (position 1)", "1 (position 2)"),
    (["x", 0, 0.0, False], "0 (position 1)", "0.0 (position 2)"),
    ([1.0, "b", True], "1.0 (position 0)", "True (position 2)"),
])
def test_choices_optuna_stores_as_equal_are_refused_by_name(choices: list, first: str, later: str) -> None:
    # Optuna stores a categorical value as choices.index(value), found with ==: a trial of the
    # later of two equal-comparing classes came back from the storage as one of the earlier,
    # its pull was never credited and that class was chosen again and again (issue 30: with
    # [None, True, 1, "a"], class 1 was chosen 18 times in a row and "a" never)
    study = optuna.create_study(sampler=MaxUCBCashSampler("model", seed=0))

    def objective(trial: optuna.Trial) -> float:
        trial.suggest_categorical("model", choices)
        return trial.suggest_float("x", 0.0, 1.0)

    with pytest.raises(ValueError, match=re.escape(
        f"the selector 'model' has the choices {first} and {later}, which Optuna stores as the "
        "same value"
    )):
        study.optimize(objective, n_trials=len(choices) + 2)
    assert [t.state for t in study.trials] == [TrialState.FAIL]


def test_empty_choices_fail_the_trial_with_optunas_error_and_one_class_works() -> None:
    # Optuna's CategoricalDistribution refuses empty choices before any sampler is asked
    study = optuna.create_study(sampler=MaxUCBCashSampler("model", seed=0))
    with pytest.raises(ValueError, match="choices` must contain one or more elements"):
        study.optimize(lambda t: float(len(t.suggest_categorical("model", []))), n_trials=1)
    assert study.trials[0].state == TrialState.FAIL
    sampler = MaxUCBCashSampler("model", seed=0)  # one class: every trial is that class
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: t.suggest_float(t.suggest_categorical("model", ["m"]) + ":x", 0, 1),
                   n_trials=6)
    assert sampler.pulls(study) == {"m": 6}


def test_multi_objective_studies_are_refused() -> None:
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=MaxUCBCashSampler(seed=0))
    with pytest.raises(ValueError, match="single-objective studies only.*2 objectives"):
        study.optimize(lambda t: (t.suggest_categorical("m", ["a", "b"]) == "a", 0.0),
                       n_trials=1)


def test_bandit_before_any_selector_names_the_problem() -> None:
    sampler = MaxUCBCashSampler(seed=0)
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(ValueError, match="no trial of this study has suggested the selector"):
        sampler.pulls(study)


# ------------------------------------------------------------------ the docstring example
def test_docstring_example_runs() -> None:
    doc = MaxUCBCashSampler.__doc__ or ""
    block = doc.split(".. code-block:: python", 1)[1].split("    Args:", 1)[0]
    code = textwrap.dedent(block)
    namespace: dict[str, Any] = {}
    exec(compile(code, "MaxUCBCashSampler example", "exec"), namespace)  # noqa: S102
    study, sampler = namespace["study"], namespace["sampler"]
    assert len(study.trials) == 40
    assert study.best_params["model"] == "svc" and study.best_value < 0.02
    pulls = sampler.pulls(study)
    assert pulls["svc"] > pulls["knn"] and pulls["naive_bayes"] == 1


# ------------------------------------------------------------------ a killed worker
KILLED_WORKER = textwrap.dedent(
    """
    import os, sys, time
    import optuna
    from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback
    from optuna_ext import MaxUCBCashSampler
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url, hang, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    storage = RDBStorage(url, heartbeat_interval=1, grace_period=2,
                         heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback())
    study = optuna.load_study(study_name="cash", storage=storage,
                              sampler=MaxUCBCashSampler(burn_in=2, seed=0))

    def objective(trial):
        model = trial.suggest_categorical("model", ["a", "b", "c"])
        x = trial.suggest_float(model + ":x", 0.0, 1.0)
        if trial.number == hang:
            time.sleep(600)  # killed here
        return (x - 0.3) ** 2 + ["a", "b", "c"].index(model) * 0.1

    study.optimize(objective, n_trials=n)
    """
)


@pytest.mark.parametrize("hang", [2, 8])  # a burn-in pull (slots 0..5) and a MaxUCB pull
def test_a_killed_worker_loses_no_pull_with_heartbeat_and_retry(tmp_path: Path, hang: int) -> None:
    url = f"sqlite:///{tmp_path / 'hb.db'}"
    optuna.create_study(study_name="cash", storage=url)
    script = tmp_path / "worker.py"
    script.write_text(KILLED_WORKER)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(script), url, str(hang), "30"], env=env,
                            stderr=subprocess.PIPE)
    study = optuna.load_study(study_name="cash", storage=url)
    deadline = time.time() + 60
    try:
        while time.time() < deadline and not any(
            t.number == hang and t.state == TrialState.RUNNING and f"{t.params.get('model')}:x"
            in t.params for t in study.get_trials(deepcopy=False)
        ):
            time.sleep(0.05)
        time.sleep(1.2)  # its heartbeat is recorded
    finally:
        proc.kill()
        proc.wait()
    killed = study.trials[hang]
    assert killed.state == TrialState.RUNNING
    time.sleep(2.5)  # past the grace period: the next worker fails it and queues its retry
    done = subprocess.run([sys.executable, str(script), url, "-1", "20"], env=env,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    sampler = MaxUCBCashSampler(burn_in=2, seed=0)
    study = optuna.load_study(study_name="cash", storage=url, sampler=sampler)
    trials = study.trials
    assert trials[hang].state == TrialState.FAIL
    (retry,) = [t for t in trials if t.system_attrs.get("failed_trial") == hang]
    assert retry.state == TrialState.COMPLETE and retry.params == killed.params
    # Optuna's retry copies the killed trial's system attributes, its pull record included
    assert retry.system_attrs[ATTR_PULL] == killed.system_attrs[ATTR_PULL]
    # every trial is one pull of its class; the burn-in took each slot once (the retry re-runs
    # the killed trial's slot); nothing is left pending
    slots = [_pull(t)["burn_in_slot"] for t in trials if t.number != hang]
    assert sorted(s for s in slots if s is not None) == list(range(6))
    assert sampler.bandit(study).pending == [0, 0, 0]
    credited = Counter(t.params["model"] for t in trials if t.state == TrialState.COMPLETE
                       and _pull(t)["burn_in_slot"] is None)
    assert sampler.pulls(study) == {c: credited[c] for c in CLASSES}

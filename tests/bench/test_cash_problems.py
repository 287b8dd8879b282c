"""CASH problems (synthetic, real scikit-learn, YAHPO rbv2_rpart + rbv2_xgboost) and the core
CASH methods (joint random search, bandit policies over per-arm HPO)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from uvp_plugins.bandits import MaxUCB
from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.methods.cash_bandits import ArmSearch, run_bandit
from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.problems.cash import (
    SKLEARN_CASH_ARMS,
    SklearnCash,
    SyntheticCash,
    YahpoCash,
    split_config,
    yahpo_cash_tasks,
)
from uvp_plugins.bench.registry import get_method, get_problem
from uvp_plugins.space import FloatParam, SearchSpace

CASH_METHODS = (
    "cash-random", "bandit-maxucb", "bandit-maxucb-burnin", "bandit-ucb", "bandit-quantileucb",
    "bandit-roundrobin",
)


# --------------------------------------------------------------------------------- synthetic
def test_synthetic_known_per_arm_optima() -> None:
    for task in ("0", "3"):
        p = SyntheticCash(task)
        assert p.max_budget == 1 and p.direction == "min" and p.selector == "algorithm"
        assert set(p.arms) == {"peaky", "steady", "skewed", "weak", "constant"}
        assert p.optimum == min(v for v in p.arm_optima.values() if v is not None)
        assert p.best_arm == "peaky"
        rng = np.random.default_rng(int(task))
        for arm in p.arms:
            assert p.evaluate(p.arm_centre(arm)) == pytest.approx(p.arm_optima[arm])
            vals = [p.evaluate(p.arm_config(arm, p.arm_spaces[arm].sample(1, rng)[0])) for _ in range(50)]
            assert min(vals) >= p.arm_optima[arm] - 1e-12  # type: ignore[operator]
    assert len(SyntheticCash("0").arm_spaces["constant"]) == 0
    assert SyntheticCash("1").arms != SyntheticCash("0").arms  # tasks permute the arm order


def test_synthetic_best_mean_is_not_best_maximum() -> None:
    p = SyntheticCash("0")
    rng = np.random.default_rng(0)
    means = {}
    for arm in p.arms:
        vals = [p.evaluate(p.arm_config(arm, p.arm_spaces[arm].sample(1, rng)[0])) for _ in range(800)]
        means[arm] = float(np.mean(vals))
    assert min(means, key=means.__getitem__) != p.best_arm


def test_joint_sample_and_flat_space() -> None:
    p = SyntheticCash("0")
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(60):
        c = p.joint_sample(rng)
        arm, params = split_config(c)
        seen.add(arm)
        assert set(c) == {"algorithm", *p.arm_spaces[arm].names}
        assert set(params) == {n.split(":", 1)[1] for n in p.arm_spaces[arm].names}
        p.evaluate(c)
    assert seen == set(p.arms)
    assert p.space.names[0] == "algorithm"
    assert set(p.space.names[1:]) == {n for a in p.arms for n in p.arm_spaces[a].names}
    # a flat sample (all arms' parameters present) is accepted: inactive ones are ignored
    flat = p.space.sample(1, rng)[0]
    assert p.evaluate(flat) == p.evaluate(
        {"algorithm": flat["algorithm"], **{n: flat[n] for n in p.arm_spaces[flat["algorithm"]].names}}
    )


def test_bad_configurations_raise_clear_errors() -> None:
    p = SyntheticCash("0")
    with pytest.raises(ValueError, match="unknown arm 'svm'.*valid arms: .*peaky.*steady"):
        p.evaluate({"algorithm": "svm"})
    with pytest.raises(ValueError, match="selector 'algorithm'"):
        p.evaluate({"peaky:x0": 0.5})
    with pytest.raises(ValueError, match=r"needs parameters \['peaky:x1'\]"):
        p.evaluate({"algorithm": "peaky", "peaky:x0": 0.5})
    with pytest.raises(ValueError, match="unknown parameters"):
        p.evaluate({"algorithm": "constant", "lr": 0.1})
    with pytest.raises(ValueError, match="outside"):
        p.evaluate({"algorithm": "weak", "weak:x0": 1.5})
    with pytest.raises(ValueError, match="budget"):
        p.evaluate({"algorithm": "constant"}, 2)
    with pytest.raises(ValueError, match="int-like"):
        SyntheticCash("abc")


def test_registered_cash_problems() -> None:
    for name in ("cash-sklearn", "cash-yahpo", "cash-synthetic"):
        assert get_problem(name).kind == "cash"
    spec = get_problem("cash-synthetic")
    assert list(spec.tasks()) == ["0", "1", "2", "3", "4"]
    assert isinstance(spec.make(task="2"), SyntheticCash)
    # every classification dataset scikit-learn bundles
    assert list(get_problem("cash-sklearn").tasks()) == ["digits", "breast_cancer", "wine", "iris"]
    assert list(get_problem("cash-sklearn-holdout").tasks()) == ["digits", "breast_cancer", "wine"]
    assert get_problem("cash-sklearn-holdout").kind == "cash"


# ------------------------------------------------------------------------------ scikit-learn
def test_sklearn_cash_seven_tunable_classes_balanced_accuracy_of_a_5_fold_cv() -> None:
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from uvp_plugins.bench.problems.cash import SKLEARN_CASH_TUNABLE_ARMS

    p = SklearnCash("iris")
    assert p.name == "cash-sklearn" and p.metric == "1-balanced_acc"
    assert tuple(p.arms) == SKLEARN_CASH_TUNABLE_ARMS and len(p.arms) == 7
    assert all(len(p.arm_spaces[a]) > 0 for a in p.arms) and "gaussian_nb" not in p.arms
    config = {"algorithm": "svc", "svc:C": 0.5, "svc:gamma": 0.05}
    # the loss by hand: 1 - mean balanced accuracy over the stratified, shuffled 5 folds, the
    # scaler fitted on each training fold
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    scores = []
    for tr, va in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        model = make_pipeline(StandardScaler(), SVC(C=0.5, gamma=0.05)).fit(X[tr], y[tr])
        scores.append(balanced_accuracy_score(y[va], model.predict(X[va])))
    assert p.evaluate(config) == pytest.approx(1.0 - float(np.mean(scores)))
    assert SklearnCash("iris").evaluate(config) == p.evaluate(config)  # deterministic
    # other folds, other losses
    assert {SklearnCash("iris", split_seed=s).evaluate(config) for s in (1, 2, 3)} - {p.evaluate(config)}
    with pytest.raises(ValueError, match="valid tasks: digits, breast_cancer, wine, iris"):
        SklearnCash("mnist")
    with pytest.raises(ValueError, match="protocol must be 'cv' or 'holdout'"):
        SklearnCash("iris", protocol="loo")


def test_sklearn_cash_holdout_is_the_earlier_problem() -> None:
    p = SklearnCash("wine", protocol="holdout")
    assert p.name == "cash-sklearn-holdout" and p.metric == "1-acc"
    assert len(p.arms) >= 5 and tuple(p.arms) == SKLEARN_CASH_ARMS
    assert len(p.arm_spaces["gaussian_nb"]) == 0
    assert all(len(p.arm_spaces[a]) > 0 for a in p.arms if a != "gaussian_nb")
    rng = np.random.default_rng(0)
    losses = {}
    for arm in p.arms:
        c = p.arm_config(arm, p.arm_spaces[arm].sample(1, rng)[0])
        losses[arm] = p.evaluate(c)
        assert 0.0 <= losses[arm] <= 1.0
    # GaussianNB on wine is a good classifier: far better than chance (2/3 error)
    assert losses["gaussian_nb"] < 0.2
    # deterministic across instances (fixed split and per-configuration random_state)
    c = {"algorithm": "random_forest", "random_forest:n_estimators": 12, "random_forest:max_depth": 5,
         "random_forest:min_samples_leaf": 2, "random_forest:max_features": 0.5}
    assert SklearnCash("wine", protocol="holdout").evaluate(c) == p.evaluate(c)
    # a bad hyperparameter choice is visibly worse than a good one (real training happens)
    bad = {"algorithm": "svc", "svc:C": 0.01, "svc:gamma": 1.0}
    good = {"algorithm": "svc", "svc:C": 10.0, "svc:gamma": 0.01}
    assert p.evaluate(good) < p.evaluate(bad)
    with pytest.raises(ValueError, match="valid tasks"):
        SklearnCash("iris", protocol="holdout")
    with pytest.raises(ValueError, match="arms must be"):
        SklearnCash("wine", arms=["svc", "xgb"])


def test_sklearn_cash_digits_subset_of_arms() -> None:
    p = SklearnCash("digits", arms=["knn", "gaussian_nb"], protocol="holdout")
    assert p.arms == ["knn", "gaussian_nb"]
    knn = p.evaluate({"algorithm": "knn", "knn:n_neighbors": 3, "knn:weights": "distance", "knn:p": 2})
    assert knn < p.evaluate({"algorithm": "gaussian_nb"}) and knn < 0.05


# ------------------------------------------------------------------------------------- YAHPO
def test_yahpo_cash_two_arms_on_shared_tasks() -> None:
    tasks = yahpo_cash_tasks()
    assert len(tasks) > 50 and "41278" not in tasks  # 41278 exists in rbv2_xgboost only
    p = YahpoCash(tasks[1])
    assert p.arms == ["rpart", "xgboost"] and p.task == tasks[1]
    assert "rpart:cp" in p.arm_spaces["rpart"].names
    assert p.arm_spaces["rpart"]["rpart:cp"].log  # type: ignore[union-attr]
    names = p.arm_spaces["xgboost"].names
    assert "xgboost:booster" in names and "xgboost:eta" in names
    assert not any(n.endswith((":task_id", ":trainsize", ":repl")) for n in names)
    rng = np.random.default_rng(0)
    vals = [p.evaluate(p.joint_sample(rng)) for _ in range(12)]
    assert all(0.0 <= v <= 1.0 for v in vals) and len(set(vals)) > 1
    # booster-specific parameters are inactive (dropped) for gblinear, active for gbtree
    c = p.arm_config("xgboost", p.arm_spaces["xgboost"].sample(1, rng)[0])
    lin = {**c, "xgboost:booster": "gblinear"}
    assert p.evaluate(lin) == p.evaluate({**lin, "xgboost:eta": 0.001, "xgboost:max_depth": 1})
    tree = {**c, "xgboost:booster": "gbtree", "xgboost:nrounds": 500}
    assert p.evaluate(tree) != p.evaluate({**tree, "xgboost:eta": 0.001, "xgboost:max_depth": 1})
    with pytest.raises(ValueError, match="shared"):
        YahpoCash("41278")


def test_yahpo_cash_missing_data_path_is_explained(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FileNotFoundError, match="UVP_YAHPO_DATA"):
        YahpoCash(yahpo_data=tmp_path / "nowhere")


# ------------------------------------------------------------------------------------ methods
@pytest.mark.parametrize("method", CASH_METHODS)
def test_cash_methods_spend_exactly_the_iterations(method: str) -> None:
    spec = get_method(method)
    assert spec.problem_kinds == ("cash",) and spec.kind == "core"
    p = SyntheticCash("0")
    ctx = RunContext(p, total_budget=40, seed=3)
    spec.run(ctx)
    assert ctx.ledger.n_evaluations == 40 and ctx.ledger.spent == 40
    assert ctx.ledger.best >= p.optimum  # type: ignore[operator]
    again = RunContext(p, total_budget=40, seed=3)
    spec.run(again)
    assert [a.value for a in again.ledger.curve] == [a.value for a in ctx.ledger.curve]


def test_bandit_maxucb_concentrates_on_the_best_arm_of_the_synthetic_problem() -> None:
    p = SyntheticCash("0")
    best = p.arms.index(p.best_arm)
    fracs, finals_maxucb, finals_random = [], [], []
    for seed in range(6):
        ctx = RunContext(p, total_budget=200, seed=seed)
        policy = run_bandit(ctx, lambda k, s: MaxUCB(k, seed=s))
        fracs.append(policy.n_pulls[best] / sum(policy.n_pulls))
        finals_maxucb.append(ctx.ledger.best)
        rnd = RunContext(p, total_budget=200, seed=seed)
        get_method("cash-random").run(rnd)
        finals_random.append(rnd.ledger.best)
    assert np.mean(fracs) > 0.5  # uniform allocation would give 0.2
    assert np.mean(finals_maxucb) < np.mean(finals_random)


def test_run_context_counts_evaluations_per_arm() -> None:
    p = SyntheticCash("0")
    ctx = RunContext(p, total_budget=60, seed=1)
    policy = run_bandit(ctx, lambda k, s: MaxUCB(k, seed=s))
    # every paid evaluation is counted once, under the arm the policy pulled
    assert ctx.arm_evaluations == {
        arm: n for arm, n in zip(p.arms, policy.n_pulls, strict=True) if n > 0
    }
    assert sum(ctx.arm_evaluations.values()) == ctx.ledger.n_evaluations == 60


def test_bandit_methods_run_on_real_sklearn_training() -> None:
    p = SklearnCash("breast_cancer", arms=["knn", "logreg", "gaussian_nb"], protocol="holdout")
    ctx = RunContext(p, total_budget=8, seed=0)
    get_method("bandit-maxucb").run(ctx)
    assert ctx.ledger.n_evaluations == 8 and ctx.ledger.best < 0.1


def test_cash_methods_reject_non_cash_problems() -> None:
    class Plain(Problem):
        name = "plain"
        space = SearchSpace([FloatParam("x", 0.0, 1.0)])

        def evaluate(self, config, budget):  # type: ignore[no-untyped-def]
            return float(config["x"])

    with pytest.raises(TypeError, match="CashProblem"):
        get_method("bandit-maxucb").run(RunContext(Plain(), total_budget=5))


def test_arm_search_strategies() -> None:
    space = SearchSpace([FloatParam("a:x", 0.0, 1.0), FloatParam("a:y", 0.0, 1.0)])
    local = ArmSearch(space, np.random.default_rng(0), strategy="local", n_init=2, explore=0.0, sigma=0.05)
    for cfg in ({"a:x": 0.9, "a:y": 0.9}, {"a:x": 0.2, "a:y": 0.3}):
        local.ask()
        local.tell(cfg, cfg["a:x"])
    steps = [local.ask() for _ in range(30)]
    assert all(abs(c["a:x"] - 0.2) < 0.3 and abs(c["a:y"] - 0.3) < 0.3 for c in steps)
    empty = ArmSearch(SearchSpace([]), np.random.default_rng(0))
    assert empty.ask() == {}
    with pytest.raises(ValueError, match="strategy"):
        ArmSearch(space, np.random.default_rng(0), strategy="tpe")


# --------------------------------------------------------------------- the paper's six YAHPO classes
def test_yahpo6_six_classes_on_the_89_shared_tasks(yahpo_data, yahpo_data_v0) -> None:  # type: ignore[no-untyped-def]
    from uvp_plugins.bench.problems.cash_yahpo6 import YAHPO6_FIXED, YahpoCash6, yahpo6_tasks
    from uvp_plugins.bench.problems.yahpo_surrogate import load_surrogate

    tasks = yahpo6_tasks(yahpo_data, yahpo_data_v0)
    assert len(tasks) == 89 and tasks[0] == "41138" and len(set(tasks)) == 89
    assert list(get_problem("cash-yahpo6").tasks()) == tasks  # found from UVP_YAHPO_DATA alone
    p = YahpoCash6("40978", yahpo_data, yahpo_data_v0)
    assert p.arms == ["glmnet", "rpart", "svm", "aknn", "ranger", "xgboost"]
    assert get_problem("cash-yahpo6").kind == "cash" and p.metric == "mmce"
    for arm in p.arms:  # the fixed inputs are not hyperparameters of any class
        assert not any(n.split(":", 1)[1] in {*YAHPO6_FIXED, "task_id"} for n in p.arm_spaces[arm].names)
    assert p.arm_spaces["svm"].names == ["svm:cost", "svm:kernel", "svm:tolerance", "svm:degree", "svm:gamma"]
    # the defaults are the scenarios' own (App. D: evaluated first), valid configurations
    assert p.arm_defaults["svm"] == {"svm:cost": 1.0, "svm:kernel": "linear", "svm:tolerance": 0.009528896,
                                     "svm:degree": 4, "svm:gamma": 1.0}
    assert p.arm_defaults["rpart"] == {"rpart:cp": 0.01, "rpart:maxdepth": 30, "rpart:minbucket": 1,
                                       "rpart:minsplit": 20}
    for arm in p.arms:
        assert set(p.arm_defaults[arm]) == set(p.arm_spaces[arm].names)
    # the loss: mmce at trainsize 0.525, impute.mean, repl 6 (column 0 of a first-generation
    # network, 1 - acc of the current rbv2_rpart), clipped to [0, 1]
    svm = load_surrogate("rbv2_svm", str(yahpo_data_v0), "v0")
    x = {"cost": 1.0, "kernel": "linear", "tolerance": 0.009528896, "task_id": "40978", **YAHPO6_FIXED}
    assert p.evaluate({"algorithm": "svm", **p.arm_defaults["svm"]}) == pytest.approx(
        float(np.clip(svm.predict([x])[0, 0], 0, 1)))
    rpart = load_surrogate("rbv2_rpart", str(yahpo_data))
    x = {"cp": 0.01, "maxdepth": 30, "minbucket": 1, "minsplit": 20, "task_id": "40978", **YAHPO6_FIXED}
    assert p.evaluate({"algorithm": "rpart", **p.arm_defaults["rpart"]}) == pytest.approx(
        1.0 - float(rpart.predict([x])[0, rpart.target_index("acc")]))
    # reproducible: the same configuration gives the same loss, in a fresh instance too
    rng = np.random.default_rng(3)
    configs = [p.joint_sample(rng) for _ in range(30)]
    losses = [p.evaluate(c) for c in configs]
    assert all(0.0 <= v <= 1.0 for v in losses) and len(set(losses)) > 20
    again = YahpoCash6("40978", yahpo_data, yahpo_data_v0)
    assert [again.evaluate(c) for c in configs] == losses
    # flattened conditionals: a radial kernel's gamma has no effect on a linear kernel
    lin = {**p.arm_config("svm", p.arm_defaults["svm"])}
    assert p.evaluate(lin) == p.evaluate({**lin, "svm:gamma": 100.0, "svm:degree": 2})
    rad = {**lin, "svm:kernel": "radial"}
    assert p.evaluate(rad) != p.evaluate({**rad, "svm:gamma": 100.0})


def test_yahpo6_bad_folders_and_tasks_are_refused_clearly(tmp_path, yahpo_data, yahpo_data_v0) -> None:  # type: ignore[no-untyped-def]
    from uvp_plugins.bench.problems.cash_yahpo6 import YahpoCash6

    with pytest.raises(FileNotFoundError, match=r"yahpo_data_v0\) directory with rbv2_glmnet/model.onnx not found "
                       r"\(looked in: .*nowhere\).*--yahpo-data-v0 PATH.*UVP_YAHPO_DATA_V0"):
        YahpoCash6(yahpo_data=yahpo_data, yahpo_data_v0=tmp_path / "nowhere")
    # the current generation's folder holds an rbv2_xgboost too, but not the first generation's
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for scenario in ("rbv2_glmnet", "rbv2_svm", "rbv2_aknn", "rbv2_ranger"):
        (mixed / scenario).symlink_to(Path(yahpo_data_v0) / scenario)
    (mixed / "rbv2_xgboost").symlink_to(Path(yahpo_data) / "rbv2_xgboost")
    with pytest.raises(ValueError, match=r"rbv2_xgboost: .* 9 outputs, expected .* 6 for the 'v0' generation"):
        YahpoCash6(yahpo_data=yahpo_data, yahpo_data_v0=mixed)
    with pytest.raises(FileNotFoundError, match=r"yahpo_data\) directory with rbv2_rpart/model.onnx"):
        YahpoCash6(yahpo_data=yahpo_data_v0, yahpo_data_v0=yahpo_data_v0)
    with pytest.raises(ValueError, match="unknown task '41278' for cash-yahpo6; valid tasks \\(the 89 shared"):
        YahpoCash6("41278", yahpo_data, yahpo_data_v0)

"""Each problem's evaluate() on a few points; YAHPO problems map budgets to the surrogate's
fidelities (the surrogate itself is checked against yahpo-gym in test_yahpo_surrogate.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from uvp_plugins.bench.cli import main
from uvp_plugins.bench.problems.sklearn_mf import SklearnGBProblem, SklearnMLPProblem
from uvp_plugins.bench.problems.synthetic import LCSynthetic, MFBranin, MFHartmann
from uvp_plugins.bench.problems.yahpo import YahpoProblem


def test_yahpo_lcbench_matches_a_direct_surrogate_query(yahpo_data) -> None:  # type: ignore[no-untyped-def]
    prob = YahpoProblem("lcbench", "3945", yahpo_data)
    assert prob.max_budget == 52 and prob.direction == "max" and prob.metric == "val_accuracy"
    sur = prob.surrogate
    for config in prob.space.sample(3, 0):
        direct = sur.predict([{**config, "OpenML_task_id": "3945", "epoch": 17}])
        assert prob.evaluate(config, 17) == pytest.approx(float(direct[0, sur.target_index("val_accuracy")]))
        curve = prob.curve(config)
        assert curve.shape == (52,)
        assert curve[16] == pytest.approx(prob.evaluate(config, 17))


@pytest.mark.parametrize("scenario", ["rbv2_rpart", "rbv2_xgboost"])
def test_yahpo_rbv2_trainsize_grid(yahpo_data, scenario) -> None:  # type: ignore[no-untyped-def]
    prob = YahpoProblem(scenario, None, yahpo_data)
    assert prob.max_budget == 20 and prob.fidelity == "trainsize"
    sur = prob.surrogate
    for config in prob.space.sample(4, 1):
        v = prob.evaluate(config, 10)
        assert 0.0 <= v <= 1.0
        q = {k: val for k, val in config.items()}
        if scenario == "rbv2_xgboost" and q["booster"] == "gblinear":
            for k in ("colsample_bylevel", "colsample_bytree", "eta", "gamma", "max_depth", "min_child_weight", "rate_drop", "skip_drop"):
                q.pop(k)
        elif scenario == "rbv2_xgboost" and q["booster"] == "gbtree":
            q.pop("rate_drop"), q.pop("skip_drop")
        direct = sur.predict([{**q, "task_id": prob.task, "trainsize": 0.5, "repl": 10}])
        assert v == pytest.approx(float(direct[0, sur.target_index("acc")]))


def test_yahpo_bad_input_is_explained(yahpo_data, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="valid tasks: 3945, 7593"):
        YahpoProblem("lcbench", "12", yahpo_data)
    with pytest.raises(FileNotFoundError, match="--yahpo-data"):
        YahpoProblem("lcbench", "3945", tmp_path / "nowhere")
    with pytest.raises(ValueError, match="valid"):
        YahpoProblem("nb301", None, yahpo_data)
    with pytest.raises(ValueError, match="budget"):
        YahpoProblem("lcbench", "3945", yahpo_data).evaluate(
            YahpoProblem("lcbench", "3945", yahpo_data).space.sample(1, 0)[0], 53
        )


def test_yahpo_log_params_reparameterise_the_space(yahpo_data, tmp_path) -> None:  # type: ignore[no-untyped-def]
    plain = YahpoProblem("lcbench", "3945", yahpo_data)
    logged = YahpoProblem("lcbench", "3945", yahpo_data, log_params=["weight_decay"])
    assert not plain.space["weight_decay"].log and logged.space["weight_decay"].log
    assert (plain.space["weight_decay"].low, plain.space["weight_decay"].high) == (
        logged.space["weight_decay"].low, logged.space["weight_decay"].high
    )
    wd = np.array([c["weight_decay"] for c in logged.space.sample(400, 0)])
    assert np.median(wd) < 0.01  # log-uniform on [1e-5, 0.1]: median ~ 1e-3 (uniform: ~0.05)
    with pytest.raises(ValueError, match="not parameters of lcbench"):
        YahpoProblem("lcbench", "3945", yahpo_data, log_params=["nope"])
    with pytest.raises(ValueError, match="positive lower bound"):
        YahpoProblem("lcbench", "3945", yahpo_data, log_params=["max_dropout"])
    out = tmp_path / "r"
    assert main(["run", "--problem", "lcbench", "--tasks", "3945", "--methods", "random",
                 "--seeds", "0", "--budget-factor", "2", "--log-params", "weight_decay",
                 "--yahpo-data", str(yahpo_data), "--out", str(out)]) == 0
    summary = json.loads((out / "lcbench/3945/random/seed0.json").read_text())
    assert summary["problem_options"] == {"log_params": ["weight_decay"]}
    assert main(["run", "--problem", "mf-branin", "--methods", "random", "--log-params", "x"]) == 2


def test_sklearn_mlp_trains_for_real_and_is_reproducible() -> None:
    prob = SklearnMLPProblem("wine", max_budget=8)
    config = {"hidden_units": 32, "n_layers": 1, "alpha": 1e-4, "learning_rate_init": 1e-2, "batch_size": 32, "activation": "relu"}
    curve = prob.curve(config)
    assert curve.shape == (8,)
    assert curve[-1] > 80.0  # wine is easy: a trained MLP is far above chance (~40 %)
    fresh = SklearnMLPProblem("wine", max_budget=8)
    assert np.array_equal(fresh.curve(config, 3), curve[:3])  # same curve in another instance
    assert prob.evaluate(config, 5) == curve[4]


def test_sklearn_gb_levels_are_boosting_iterations() -> None:
    prob = SklearnGBProblem("breast_cancer", max_budget=4)
    config = {"learning_rate": 0.1, "max_leaf_nodes": 15, "min_samples_leaf": 5, "l2_regularization": 1e-3, "max_bins": 64}
    curve = prob.curve(config)
    assert curve.shape == (4,) and curve[-1] > 85.0
    model, _ = next(iter(prob._cache.values()))
    assert model.n_iter_ == 4 * prob.iterations_per_level


def test_synthetic_problems_reach_their_known_optimum() -> None:
    b = MFBranin()
    assert b.evaluate({"x1": np.pi, "x2": 2.275}, b.max_budget) == pytest.approx(b.optimum, abs=1e-5)
    assert b.evaluate({"x1": np.pi, "x2": 2.275}, 1) > b.optimum  # lower fidelity is biased
    h = MFHartmann(3)
    x = {"x0": 0.114614, "x1": 0.555649, "x2": 0.852547}
    assert h.evaluate(x, h.max_budget) == pytest.approx(h.optimum, abs=1e-4)
    lc = LCSynthetic("2")
    star = dict(zip(["x0", "x1", "x2"], lc.x_star, strict=False))
    curve = lc.curve(star)
    assert np.all(np.diff(curve) > 0) and np.all(np.diff(curve, 2) < 0)  # increasing, concave
    assert curve[-1] == pytest.approx(lc.optimum)

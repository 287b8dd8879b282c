"""The user view of a run's score (best value among evaluations at T, as Optuna's
``study.best_value`` counts COMPLETE trials only) beside the envelope, and the problems added
for issue 29: ``mf-agree``, ``lc-agree`` and BBOB."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from uvp_plugins.bench.cli import main
from uvp_plugins.bench.problems.agreement import AGREEMENT_LEVELS, make_lc_agree, make_mf_agree
from uvp_plugins.bench.report import load_runs, report, user_view
from uvp_plugins.bench.runner import RunSpec, run_one


def test_user_view_counts_only_evaluations_at_T() -> None:
    spent = np.array([1.0, 2, 5, 6, 9])
    value = np.array([0.9, 0.95, 0.5, 0.99, 0.7])
    budget = np.array([1, 2, 3, 1, 3])
    s, b = user_view(spent, value, budget, 3, maximize=True)
    assert s.tolist() == [5.0, 9.0] and b.tolist() == [0.5, 0.7]
    s, b = user_view(spent, value, budget, 3, maximize=False)
    assert b.tolist() == [0.5, 0.5]


def test_a_pruned_trials_value_does_not_count_in_the_user_view(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # TPE + HyperbandPruner prunes most trials: its envelope score credits their partial values,
    # the user view only the trials that reached T
    run_one(RunSpec("mf-agree", "h3-low", "optuna-tpe-hyperband", 0, budget_factor=5), tmp_path)
    env = load_runs(tmp_path, "envelope")[0]
    user = load_runs(tmp_path, "user")[0]
    assert 0 < user.full_evaluations < 20
    assert user.spent.size == user.full_evaluations
    assert np.all(np.diff(user.best) <= 0)  # minimise: the best so far never gets worse
    assert env.score_at(1.0) <= user.score_at(1.0)
    # before the first evaluation at T the user sees nothing
    assert np.isnan(user.score_at(user.spent[0] / user.total_budget - 1e-6))


def test_report_shows_the_envelope_only_where_partial_results_are_models(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    for problem, task in (("mf-agree", "h3-high"), ("lc-agree", "lc-high")):
        for method in ("random", "optuna-random-median"):
            run_one(RunSpec(problem, task, method, 0, budget_factor=3), tmp_path)
    text = report(tmp_path, plots=False)
    assert "## lc-agree (user view)" in text and "## lc-agree (envelope view)" in text
    assert "## mf-agree\n" in text and "mf-agree (envelope" not in text
    assert "| at T/run |" in text.replace(" overhead s/run |", "")
    only_user = report(tmp_path, plots=False, scores=["user"])
    assert "envelope" not in only_user.replace("Score: user view", "")
    with pytest.raises(ValueError, match="--scores"):
        report(tmp_path, plots=False, scores=["best"])
    assert main(["report", str(tmp_path), "--no-plots", "--scores", "envelope"]) == 0
    assert "## lc-agree\n" in capsys.readouterr().out


@pytest.mark.parametrize("dim", [3, 6])
def test_mf_agree_levels_order_the_rank_agreement(dim: int) -> None:
    rng = np.random.default_rng(0)
    X = rng.random((200, dim))
    corr = []
    for level in AGREEMENT_LEVELS:
        p = make_mf_agree(f"h{dim}-{level}")
        configs = [{f"x{i}": x[i] for i in range(dim)} for x in X]
        final = [p.evaluate(c, 100) for c in configs]
        low = [p.evaluate(c, 10) for c in configs]
        corr.append(spearmanr(low, final)[0])
        assert p.evaluate(configs[0], 10) == p.evaluate(configs[0], 10)  # deterministic
        assert not p.partial_results_usable
        # no lower fidelity is better than the full one (a curve's envelope at T is its value at T)
        assert all(p.evaluate(c, b) >= p.evaluate(c, 100) for c in configs[:5] for b in (1, 10, 99))
    assert corr[0] > 0.75 and corr[2] < 0.3 and corr[-1] < 0.1 and corr[0] > corr[1] > corr[2]


def test_lc_agree_best_configurations_bloom_late() -> None:
    rng = np.random.default_rng(1)
    for level, low_corr in zip(AGREEMENT_LEVELS, (0.99, 0.85, 0.4, 0.4), strict=True):
        p = make_lc_agree(f"lc-{level}")
        configs = [dict(zip(p.space.names, x, strict=True)) for x in rng.random((300, 5))]
        r = spearmanr([p.evaluate(c, 5) for c in configs], [p.evaluate(c, 52) for c in configs])[0]
        assert (r > low_corr) if level == "high" else (r < low_corr)
        assert p.partial_results_usable


@pytest.mark.parametrize("task, message", [("h4-high", "h3-<level>"), ("h3-great", "level in"), ("lc-x", "level in")])
def test_agreement_tasks_are_checked(task: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        (make_lc_agree if task.startswith("lc") else make_mf_agree)(task)


def test_bbob_runs_as_a_plain_objective(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("cocoex")  # the 'bench' extra; CI installs it
    summary = run_one(RunSpec("bbob", "f1-d2", "optuna-tpe", 0, budget_factor=30), tmp_path)
    assert summary["error"] is None and summary["n_evaluations"] == 30 and summary["max_budget"] == 1
    run = load_runs(tmp_path, "user")[0]
    assert run.full_evaluations == 30
    with pytest.raises(ValueError, match="f<function>-d<dimension>"):
        run_one(RunSpec("bbob", "sphere", "random", 0), tmp_path)


def test_tasks_by_range_in_the_problems_order(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r"
    assert main(["run", "--problem", "mf-agree", "--tasks", "range:2-3", "--methods", "random",
                 "--seeds", "0", "--budget-factor", "1", "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "mf-agree").iterdir()) == ["h3-low", "h3-medium"]
    assert main(["run", "--problem", "mf-agree", "--tasks", "range:3-9", "--methods", "random"]) == 2
    assert "1 <= A <= B <= 8" in capsys.readouterr().err

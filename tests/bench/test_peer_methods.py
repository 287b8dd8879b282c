"""The peers of issue 17 in the harness: optuna-gp, optuna-tpe-pred and dehb, through the ledger."""

from __future__ import annotations

import numpy as np
import pytest

from uvp_plugins.bench import registry
from uvp_plugins.bench.runner import RunSpec, result_paths, run_one


def _curve(tmp_path, spec: RunSpec) -> np.ndarray:  # type: ignore[no-untyped-def]
    data = np.genfromtxt(result_paths(tmp_path, spec)[0], delimiter=",", names=True)
    return np.atleast_1d(data)


@pytest.mark.parametrize("method", ["optuna-gp", "optuna-tpe-pred", "dehb"])
def test_each_peer_spends_exactly_its_budget(tmp_path, method) -> None:  # type: ignore[no-untyped-def]
    spec = RunSpec("lc-synthetic", "0", method, 1, budget_factor=12)
    summary = run_one(spec, tmp_path)
    assert summary["error"] is None, summary["error"]
    assert summary["spent"] == summary["total_budget"] == 12 * 52
    assert np.isfinite(summary["final"]) and summary["n_evaluations"] > 0


def test_optuna_tpe_pred_prunes_and_optuna_gp_trains_every_trial_to_T(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for method in ("optuna-tpe-pred", "optuna-gp"):
        spec = RunSpec("lc-synthetic", "0", method, 0, budget_factor=12)
        run_one(spec, tmp_path)
        budgets = _curve(tmp_path, spec)["budget"].astype(int)
        starts = np.flatnonzero(budgets == 1)  # each trial reports budgets 1, 2, ... (continuation)
        lengths = np.diff(np.append(starts, budgets.size))
        if method == "optuna-gp":
            assert len(starts) == 12 and set(lengths.tolist()) == {52}  # no pruner
        else:
            assert len(starts) > 12 and lengths.min() < 52  # PredPruner stopped some trials


def test_dehb_pays_every_evaluation_in_full(tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = RunSpec("lc-synthetic", "0", "dehb", 0, budget_factor=12)
    summary = run_one(spec, tmp_path)
    curve = _curve(tmp_path, spec)
    # each row is one evaluation charged its whole budget (DEHB retrains from scratch): the spent
    # column grows by the budget of the row, except the last one, cut where B ends
    steps = np.diff(np.concatenate([[0.0], curve["spent"]]))
    assert np.array_equal(steps[:-1], curve["budget"][:-1])
    assert steps[-1] <= curve["budget"][-1] and curve["spent"][-1] == summary["total_budget"]
    # DEHB's fidelities 52 * 3^-k, rounded: 2, 6, 17, 52
    assert set(curve["budget"][:-1].astype(int).tolist()) <= {2, 6, 17, 52}
    assert {2, 6, 17} <= set(curve["budget"].astype(int).tolist())
    again = run_one(spec, tmp_path / "again")
    assert again["final"] == summary["final"]  # seeded


@pytest.mark.parametrize("method, module", [("optuna-gp", "torch"), ("dehb", "dehb")])
def test_a_missing_peer_names_the_extra_to_install(method, module, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    with pytest.raises(ValueError, match=rf"method '{method}' needs {module}: install the extra 'peers'"):
        registry.get_method(method)


@pytest.mark.parametrize(
    "default, tail",
    [
        ("optuna-eadacent-pred", "optuna-eadacent-pred-tail"),
        ("optuna-eadacent-pred-paper", "optuna-eadacent-pred-paper-tail"),
        ("optuna-tpe-pred", "optuna-tpe-pred-tail"),
        ("optuna-eadacent-pred", "optuna-eadacent-pred-nocut"),
        ("optuna-eadacent-pred-paper", "optuna-eadacent-pred-paper-nocut"),
        ("optuna-tpe-pred", "optuna-tpe-pred-nocut"),
        ("optuna-eadacent-pred-nocut", "optuna-eadacent-pred-tail"),
    ],
)
def test_tail_methods_prune_by_the_tail_fit(tmp_path, default, tail) -> None:  # type: ignore[no-untyped-def]
    """Same sampler and seed, the pruner of an earlier default (``-tail``:
    PredPruner(predictor="tail", keep_fraction=None); ``-nocut``: keep_fraction=None, Pred alone)
    instead of the current one: the whole budget is spent, and the pruning (so the sequence of
    evaluations) differs."""
    curves = []
    for method in (default, tail):
        spec = RunSpec("lc-synthetic", "0", method, 0, budget_factor=12)
        summary = run_one(spec, tmp_path)
        assert summary["error"] is None, summary["error"]
        assert summary["spent"] == summary["total_budget"] == 12 * 52
        curves.append(_curve(tmp_path, spec)["budget"].astype(int))
    assert not np.array_equal(curves[0], curves[1])

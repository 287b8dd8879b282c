"""The uvp-bench CASH methods smac-maxucb / smac-combined drive real SMAC through the ledger."""

from __future__ import annotations

import json
from typing import Any

import pytest
from shared_helpers import SMAC_LOCAL_SEARCH_WARNINGS, TinyCash

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.problems.cash import SyntheticCash
from uvp_plugins.bench.registry import get_method
from uvp_plugins.space import FloatParam

pytestmark = [pytest.mark.smac, *SMAC_LOCAL_SEARCH_WARNINGS]


def test_methods_are_registered_for_cash_problems() -> None:
    for name, kind in [("smac-maxucb", "ours"), ("smac-combined", "native"),
                       ("smac-ucb", "ours"), ("smac-quantileucb", "ours"),
                       ("smac-roundrobin", "ours"), ("smac-maxucb-burnin-design", "ours"),
                       ("smac-quantileucb-burnin-design", "ours"),
                       ("smac-combined-defaults", "native"),
                       ("smac-maxucb-paper-design", "ours")]:
        spec = get_method(name)
        assert spec.kind == kind and spec.problem_kinds == ("cash",)
        assert spec.requires == ("smac",)


@pytest.mark.parametrize("method", ["smac-maxucb", "smac-maxucb-burnin", "smac-combined"])
def test_every_trial_is_charged_to_the_ledger(method: str) -> None:
    problem = SyntheticCash("2")
    ctx = RunContext(problem, total_budget=14, seed=1)
    get_method(method).run(ctx)
    ledger = ctx.ledger
    assert ledger.spent == 14 and ledger.n_evaluations == 14
    trials = [p.trial for p in ledger.curve]
    assert len(trials) == len(set(trials)) == 14  # one new trial per iteration
    assert problem.optimum is not None and ledger.best >= problem.optimum
    assert ledger.best == min(p.value for p in ledger.curve)
    # every ask is timed (the report prints time per ask beside SMAC's own facade)
    assert len(ctx.timings["ask"]) == 14 and all(t > 0 for t in ctx.timings["ask"])


def test_smac_maxucb_credits_arms_and_survives_crashing_fits() -> None:
    problem = TinyCash()
    ctx = RunContext(problem, total_budget=16, seed=0)
    get_method("smac-maxucb").run(ctx)
    assert ctx.ledger.spent == 16
    arms = [c["algorithm"] for c in problem.calls]
    assert arms[:3] == ["good", "bad", "nb"]  # initial round robin over the arms, in order
    assert arms.count("nb") == 1  # the arm without hyperparameters is exhausted after one pull
    # the crashed fits are paid but never credited; with the defaults' exploration floor (an arm
    # below 2 ln t credited pulls is pulled first: 5.5 at t = 16) neither arm is locked out, so
    # at T = 16 the budget is mostly the floor's, not MaxUCB's concentration (Alg. 1's
    # concentration: test_smac_maxucb.py::test_optimize_follows_maxucb_and_keeps_joint_incumbent)
    crashed = [c for c in problem.calls if c["algorithm"] == "bad" and c["x"] > 0.5]
    credited_bad = arms.count("bad") - len(crashed)
    assert arms.count("good") >= 4 and credited_bad >= 4
    # the ledger only records finite values: the crashed fits are paid but not scored
    assert len(ctx.ledger.curve) == 16 - len(crashed)


def test_burnin_design_covers_every_arms_initial_design() -> None:
    # T = 40, K = 2: each arm's design is its default + T // (4K) - 1 = 4 Sobol configurations,
    # so the burn-in is C = 5 rounds: the first 10 pulls alternate and are not judged
    problem = TinyCash({"good": [FloatParam("x", 0.0, 1.0)], "bad": [FloatParam("x", 0.0, 1.0)]})
    ctx = RunContext(problem, total_budget=40, seed=0)
    get_method("smac-maxucb-burnin-design").run(ctx)
    assert ctx.ledger.spent == 40
    arms = [c["algorithm"] for c in problem.calls]
    assert arms[:10] == ["good", "bad"] * 5
    assert arms[10:12] == ["good", "bad"]  # after the burn-in, t restarts: one pull per arm
    assert arms.count("good") > arms.count("bad")


def test_combined_defaults_evaluates_every_class_default_first() -> None:
    # the paper's combined-search protocol (App. D): each class's default, then Sobol; the
    # class without hyperparameters is its own default
    from smac import Scenario

    from smac_ext import cash_configspace

    problem = TinyCash()
    ctx = RunContext(problem, total_budget=40, seed=0)
    get_method("smac-combined-defaults").run(ctx)
    assert ctx.ledger.spent == 40
    first = problem.calls[:3]
    assert [c["algorithm"] for c in first] == ["good", "bad", "nb"]
    space = cash_configspace(problem.arm_spaces, selector=problem.selector, arms=problem.arms,
                             seed=0, prefix=False)
    default_x = {name: hp.default_value for name, hp in space.items() if name != "algorithm"}
    assert first[0]["x"] == pytest.approx(default_x["good:x"])
    assert first[1]["x"] == pytest.approx(default_x["bad:x"])
    assert set(first[2]) == {"algorithm"}
    # the class defaults replace K = 3 of the facade's n = min(10 d, T / 4) = 10 Sobol
    # configurations (d = 3 joint hyperparameters); Sobol duplicates collapse, as in SMAC
    from smac.initial_design import SobolInitialDesign

    from uvp_plugins.bench.methods.smac_cash import _class_defaults_first_design

    scenario = Scenario(space, n_trials=40, seed=0, deterministic=True)
    design = _class_defaults_first_design(scenario, ctx).select_configurations()
    sobol = SobolInitialDesign(scenario, n_configs=10 - 3).select_configurations()
    assert design[3:] == [c for c in sobol if c not in design[:3]]
    assert [c["algorithm"] for c in design[:3]] == ["good", "bad", "nb"]


def test_class_defaults_first_is_refused_with_a_bandit_policy() -> None:
    from uvp_plugins.bench.methods.smac_cash import run_smac_cash

    ctx = RunContext(TinyCash(), total_budget=10, seed=0)
    with pytest.raises(ValueError, match="class_defaults_first"):
        run_smac_cash(ctx, policy="MaxUCB", class_defaults_first=True)
    assert ctx.ledger.spent == 0


def test_paper_per_arm_design_size_follows_app_d_and_fits_the_budget() -> None:
    from uvp_plugins.bench.methods.smac_cash import paper_per_arm_design_size

    assert paper_per_arm_design_size(2, 200) == 50  # 50 / (K - 1)
    assert paper_per_arm_design_size(6, 200) == 10
    assert paper_per_arm_design_size(8, 200) == 7
    assert paper_per_arm_design_size(1, 200) == 50
    assert paper_per_arm_design_size(2, 40) == 19  # K designs of 1 + n fit into T
    assert paper_per_arm_design_size(3, 2) == 0
    with pytest.raises(ValueError, match="n_arms"):
        paper_per_arm_design_size(0, 200)


def test_paper_design_reaches_the_intensifier(monkeypatch: pytest.MonkeyPatch) -> None:
    import smac_ext

    seen: list[Any] = []

    class RecordingIntensifier(smac_ext.MaxUCBIntensifier):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            seen.append(self.meta["n_initial"])

    monkeypatch.setattr(smac_ext, "MaxUCBIntensifier", RecordingIntensifier)
    problem = TinyCash({"good": [FloatParam("x", 0.0, 1.0)], "bad": [FloatParam("x", 0.0, 1.0)]})
    ctx = RunContext(problem, total_budget=30, seed=0)
    get_method("smac-maxucb-paper-design").run(ctx)
    assert seen == [14]  # min(50 / (2 - 1), 30 // 2 - 1)
    assert ctx.ledger.spent == 30
    assert [c["algorithm"] for c in problem.calls[:2]] == ["good", "bad"]


def test_paper_design_is_refused_without_a_bandit_policy() -> None:
    from uvp_plugins.bench.methods.smac_cash import run_smac_cash

    ctx = RunContext(TinyCash(), total_budget=10, seed=0)
    with pytest.raises(ValueError, match="per_arm_design"):
        run_smac_cash(ctx, policy=None, per_arm_design="paper")
    with pytest.raises(ValueError, match="per_arm_design"):
        run_smac_cash(ctx, policy="MaxUCB", per_arm_design="big")
    assert ctx.ledger.spent == 0


def test_smac_maxucb_stops_when_every_arm_is_exhausted() -> None:
    problem = TinyCash({"a": [], "b": []})
    ctx = RunContext(problem, total_budget=10, seed=0)
    get_method("smac-maxucb").run(ctx)
    assert ctx.ledger.spent == 2  # two single-configuration arms, one evaluation each
    assert [c["algorithm"] for c in problem.calls] == ["a", "b"]


def test_report_prints_time_per_ask_beside_smac_combined(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from uvp_plugins.bench.cli import main

    out = tmp_path / "res"
    assert main(["run", "--problem", "cash-synthetic", "--tasks", "0", "--methods",
                 "smac-maxucb,smac-combined", "--seeds", "0", "--total-budget", "10",
                 "--out", str(out)]) == 0
    summary = json.loads((out / "cash-synthetic/0/smac-maxucb/seed0.json").read_text())
    assert summary["timings"]["ask"]["calls"] == 10
    capsys.readouterr()
    assert main(["report", str(out), "--baseline", "smac-combined"]) == 0
    text = capsys.readouterr().out
    assert "Optimizer time per step" in text
    assert "| smac-maxucb | ask | 1 | 10.0 |" in text and "| smac-combined | ask | 1 | 10.0 |" in text
    # how each method spread its 10 iterations over the model classes
    assert sum(summary["arm_evaluations"].values()) == 10
    assert "Evaluations per arm (mean per run)" in text
    arm_table = text.split("Evaluations per arm (mean per run)")[1]
    row = next(line for line in arm_table.splitlines() if line.startswith("| smac-maxucb | 1 | "))
    assert sum(float(c) for c in row.strip("| ").split(" | ")[2:]) == 10.0

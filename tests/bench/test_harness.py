"""The harness end to end: CLI run + report, score bookkeeping against the surrogate, bad input."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from uvp_plugins.bench.cli import build_specs, main
from uvp_plugins.bench.problems.yahpo import YahpoProblem
from uvp_plugins.bench.report import load_runs, report, summarise
from uvp_plugins.bench.runner import RunSpec, parse_seeds, run_one


def test_cli_run_and_report_on_a_synthetic_problem(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "res"
    rc = main(["run", "--problem", "lc-synthetic", "--tasks", "0,1", "--methods", "random,optuna-tpe",
               "--seeds", "0-1", "--budget-factor", "5", "--out", str(out), "--jobs", "2"])
    assert rc == 0
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("seed*.json"))
    assert len(files) == 8 and "lc-synthetic/0/random/seed1.json" in files
    summary = json.loads((out / "lc-synthetic/0/random/seed0.json").read_text())
    assert summary["spent"] == summary["total_budget"] == 5 * 52
    assert summary["error"] is None
    rc = main(["report", str(out), "--baseline", "random"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "| optuna-tpe | 4 |" in text and "W/T/L vs random" in text and "rank@50%" in text
    assert (out / "plots" / "lc-synthetic.png").stat().st_size > 10_000
    # subsets: methods, tasks and seeds
    rc = main(["report", str(out), "--methods", "optuna-tpe", "--tasks", "1", "--seeds", "1",
               "--no-plots"])
    text = capsys.readouterr().out
    assert rc == 0 and "| optuna-tpe | 1 |" in text and "| random |" not in text
    assert main(["report", str(out), "--methods", "nope"]) == 2
    assert "no runs of method 'nope'" in capsys.readouterr().err
    # rerunning skips finished runs
    assert main(["run", "--problem", "lc-synthetic", "--tasks", "0", "--methods", "random",
                 "--seeds", "0", "--budget-factor", "5", "--out", str(out)]) == 0
    assert "already done" in capsys.readouterr().err


def test_resume_retries_runs_whose_worker_died_but_keeps_method_crashes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from uvp_plugins.bench.runner import result_paths, run_many

    spec = RunSpec("lc-synthetic", "0", "random", 0, budget_factor=2)
    messages: list[str] = []
    run_many([spec], tmp_path, progress=messages.append)
    summary_path = result_paths(tmp_path, spec)[1]
    # a method's crash is a result: kept on resume
    crashed = {**json.loads(summary_path.read_text()), "error": "Traceback ...: ValueError"}
    summary_path.write_text(json.dumps(crashed))
    assert run_many([spec], tmp_path, progress=messages.append) == []
    assert json.loads(summary_path.read_text())["error"] == "Traceback ...: ValueError"
    # a dead worker measured nothing: rerun on resume, and said so
    summary_path.write_text(json.dumps({"error": "worker died: Exception('x')", "final": None}))
    messages.clear()
    results = run_many([spec], tmp_path, progress=messages.append)
    assert len(results) == 1 and results[0]["error"] is None
    assert json.loads(summary_path.read_text())["error"] is None
    assert any("rerunning 1 runs whose worker died" in m for m in messages)


def test_workers_start_with_a_fixed_hash_seed_unless_the_caller_set_one(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from uvp_plugins.bench.runner import run_many

    spec = RunSpec("lc-synthetic", "0", "random", 0, budget_factor=2)
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    (result,) = run_many([spec], tmp_path / "a", progress=lambda _: None)
    assert result["python_hash_seed"] == "0"
    assert "PYTHONHASHSEED" not in os.environ  # the caller's environment is restored
    monkeypatch.setenv("PYTHONHASHSEED", "123")
    (result,) = run_many([spec], tmp_path / "b", progress=lambda _: None)
    assert result["python_hash_seed"] == "123"


def test_smac_runs_are_reproducible_from_their_seed(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # SMAC's local search orders its start points through a set of string-hashed
    # configurations: without a fixed hash seed per worker two invocations diverge
    from uvp_plugins.bench.runner import result_paths, run_many

    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    specs = [
        RunSpec("cash-synthetic", "0", method, 0, total_budget=40)
        for method in ("smac-combined", "smac-maxucb")
    ]
    for out in ("first", "second"):
        results = run_many(specs, tmp_path / out, jobs=2, progress=lambda _: None)
        assert all(r["error"] is None for r in results)
    for spec in specs:
        first, second = (result_paths(tmp_path / out, spec)[0].read_text() for out in ("first", "second"))
        assert first.count("\n") == 41  # header + one row per iteration
        assert first == second, spec.method


def test_report_on_common_tasks_compares_like_with_like(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    # one method was run on an extra task: --tasks common drops it for every method
    out = tmp_path / "res"
    assert main(["run", "--problem", "lc-synthetic", "--tasks", "0,1", "--methods", "random",
                 "--seeds", "0", "--budget-factor", "2", "--out", str(out)]) == 0
    assert main(["run", "--problem", "lc-synthetic", "--tasks", "0", "--methods", "optuna-tpe",
                 "--seeds", "0", "--budget-factor", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--no-plots"]) == 0
    text = capsys.readouterr().out
    assert "| random | 2 |" in text and "2 task(s)" in text
    assert main(["report", str(out), "--no-plots", "--tasks", "common"]) == 0
    text = capsys.readouterr().out
    assert "| random | 1 |" in text and "| optuna-tpe | 1 |" in text and "1 task(s)" in text


def test_random_search_score_equals_the_surrogate_values_it_paid_for(tmp_path, yahpo_data) -> None:  # type: ignore[no-untyped-def]
    spec = RunSpec("lcbench", "3945", "random", 4, budget_factor=3.5,
                   problem_options={"yahpo_data": str(yahpo_data)})
    summary = run_one(spec, tmp_path)
    prob = YahpoProblem("lcbench", "3945", yahpo_data)
    T = prob.max_budget
    assert summary["spent"] == 3.5 * T
    # replay: random search draws configurations from the run's rng; 3 full curves + half of one
    rng = np.random.default_rng(4 * 1_000_003)
    configs = [prob.space.sample(1, rng)[0] for _ in range(4)]
    paid = np.concatenate([prob.curve(c) for c in configs[:3]] + [prob.curve(configs[3])[: T // 2]])
    assert summary["final"] == pytest.approx(float(paid.max()))
    run = load_runs(tmp_path)[0]
    assert run.score_at(1 / 3.5) == pytest.approx(float(prob.curve(configs[0]).max()))
    assert run.score_at(0.5) == pytest.approx(float(np.concatenate([prob.curve(c) for c in configs[:2]])[: int(1.75 * T)].max()))


def test_report_ranks_and_sign_test(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for task in ("0", "1", "2"):
        for method in ("random", "optuna-random-median"):
            run_one(RunSpec("lc-synthetic", task, method, 0, budget_factor=4), tmp_path)
    runs = load_runs(tmp_path)
    rows = {r["method"]: r for r in summarise(runs, baseline="random")}
    med = rows["optuna-random-median"]
    assert sum(med["wtl"]) == 3
    assert rows["random"]["rank@1"] + med["rank@1"] == pytest.approx(3.0)  # two methods: ranks sum to 3
    assert 0.0 < med["sign_p"] <= 1.0
    text = report(tmp_path, "random", plots=False)
    assert "3 task(s)" in text


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--problem", "nope", "--methods", "random"], "valid problems:"),
        (["run", "--problem", "lc-synthetic", "--methods", "nope"], "valid methods:"),
        (["run", "--problem", "lc-synthetic", "--tasks", "9", "--methods", "random"], "valid tasks: 0, 1, 2"),
        (["run", "--problem", "lc-synthetic", "--methods", "random", "--budget-factor", "0.5"], "below one full evaluation"),
        (["run", "--problem", "lc-synthetic", "--methods", "random", "--total-budget", "10"], "below one full evaluation"),
        (["run", "--problem", "lc-synthetic", "--methods", "random", "--seeds", "x"], "--seeds"),
        (["run", "--problem", "lcbench", "--methods", "random", "--yahpo-data", "/nowhere"], "looked in: /nowhere"),
        (["report", "/nowhere/at/all"], "no such results directory"),
    ],
)
def test_bad_input_gets_a_clear_error(argv, message, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_build_specs_expands_the_grid() -> None:
    specs = build_specs("lc-synthetic", "all", "random,optuna-tpe", "0-2")
    assert len(specs) == 3 * 2 * 3
    assert parse_seeds("0-2,7") == [0, 1, 2, 7]


def test_demo_blocks_name_only_registered_problems_and_methods() -> None:
    from uvp_plugins.bench import registry
    from uvp_plugins.bench.demo import DEMO_BLOCKS
    from uvp_plugins.bench.runner import RunSpec

    for block in DEMO_BLOCKS:
        methods = [block.ours, *block.peers]
        jobs = block.jobs(methods, block.seeds)
        assert len(jobs) == len(methods) * len(block.seeds)
        for job in jobs:
            if isinstance(job, RunSpec):
                assert job.method in registry.methods() and job.problem in registry.problems()


def test_censored_quality_subcommand_takes_its_own_options(capsys, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exc:
        main(["censored-quality", "--help"])
    assert exc.value.code == 0
    assert "--censor-value" in capsys.readouterr().out
    rc = main(["censored-quality", "--seeds", "0", "--functions", "branin", "--percentiles", "80",
               "--methods", "T", "I", "--n-members", "1", "--n-steps", "20", "--n-copies", "2",
               "--results", str(tmp_path / "cq")])
    assert rc == 0
    assert "branin" in capsys.readouterr().out
    assert len(list((tmp_path / "cq").rglob("*.json"))) == 1  # one job: (seed, function, percentile)
    with pytest.raises(SystemExit) as exc:
        main(["tobit-runtime", "--help"])
    assert exc.value.code == 0
    assert "--runtime-budget" in capsys.readouterr().out


def test_tobit_runtime_runs_smac_with_a_fixed_hash_seed(tmp_path, monkeypatch, capfd) -> None:  # type: ignore[no-untyped-def]
    # SMAC's local search orders start points by string hash: the runner's workers start with
    # PYTHONHASHSEED=0 unless the caller set it, and each row records it
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    out = tmp_path / "rows.json"
    rc = main(["tobit-runtime", "--seeds", "0", "--methods", "smac-rf", "--max-trials", "10",
               "--runtime-budget", "40", "--json", str(out), "--results", str(tmp_path / "a")])
    assert rc == 0
    assert "smac-rf" in capfd.readouterr().out
    assert [(r["method"], r["python_hash_seed"]) for r in json.loads(out.read_text())] == [("smac-rf", "0")]
    assert "PYTHONHASHSEED" not in os.environ
    with pytest.raises(SystemExit) as exc:
        main(["tobit-runtime", "--max-trials", "many"])
    assert exc.value.code == 2
    monkeypatch.setenv("PYTHONHASHSEED", "7")  # a caller's seed is kept
    rc = main(["tobit-runtime", "--seeds", "0", "--methods", "random", "--max-trials", "5",
               "--runtime-budget", "20", "--json", str(out), "--results", str(tmp_path / "b")])
    assert rc == 0
    assert [r["python_hash_seed"] for r in json.loads(out.read_text())] == ["7"]

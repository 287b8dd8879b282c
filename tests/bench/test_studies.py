"""Every uvp-bench subcommand is a registered study run through the one runner: jobs write
summaries, repeated invocations reuse them, and a new module can add a subcommand."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from uvp_plugins.bench import study as study_module
from uvp_plugins.bench.cli import main, parser
from uvp_plugins.bench.study import CallJob, Plan, Study, register_study, rows_of, studies


def test_every_subcommand_is_a_registered_study() -> None:
    names = list(studies())
    assert names[:3] == ["list", "run", "report"]
    assert {"idhb", "overhead", "ray-overhead", "idhb-ray", "tobit-runtime", "tobit-ac", "censored-quality",
            "demo"} <= set(names)
    assert all(s.execute is not None or (s.plan and s.report) for s in studies().values())


def test_idhb_study_runs_its_jobs_through_the_runner_and_reuses_them(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["idhb", "--problem", "lc-synthetic", "--tasks", "0", "--seeds", "0-1", "--eta", "2",
            "--r0", "4", "--out", str(tmp_path), "--no-plots", "--jobs", "2"]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "ID-HB vs IH-HB: lc-synthetic, eta = 2, R = 4 -> 8" in out.out
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("seed*.json"))
    assert files == ["lc-synthetic-eta2-R4/0/seed0.json", "lc-synthetic-eta2-R4/0/seed1.json"]
    assert main(argv) == 0
    assert "2 of 2 runs already done" in capsys.readouterr().err


def test_overhead_study_remeasures_every_time(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["overhead", "--trials", "10", "--candidates", "16", "--results", str(tmp_path)]
    assert main(argv) == 0
    first = json.loads((tmp_path / "sampler-overhead.json").read_text())
    assert "EnhancedAdaCentSampler" in capsys.readouterr().out and first["error"] is None
    assert main(argv) == 0
    assert "already done" not in capsys.readouterr().err  # a timing study never reuses results
    assert main(["overhead", "--trials", "5"]) == 2
    assert "--trials must be integers >= 10" in capsys.readouterr().err


def test_a_job_whose_parameters_changed_is_rerun(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    base = ["run", "--problem", "lc-synthetic", "--methods", "random", "--out", str(tmp_path)]
    assert main([*base, "--budget-factor", "2"]) == 0
    assert main([*base, "--budget-factor", "3"]) == 0
    assert "other parameters" in capsys.readouterr().err
    summary = json.loads((tmp_path / "lc-synthetic/0/random/seed0.json").read_text())
    assert summary["budget_factor"] == 3 and summary["spent"] == 3 * 52


def test_a_module_can_add_a_subcommand(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    # what uvp_plugins/bench/stress.py does to add `uvp-bench stress`
    monkeypatch.setattr(study_module, "_STUDIES", dict(study_module._STUDIES))

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument("--results", default=str(tmp_path), help="where the rows go")

    register_study(Study(
        "stress-example", "an example study", "A study added by another module.", add,
        plan=lambda a: Plan([CallJob("abs", "math:fabs", {})], Path(a.results)),
        report=lambda a, summaries: (str(rows_of(summaries)), 0),
    ))
    assert "stress-example" in parser().format_help()
    assert main(["stress-example"]) == 2  # math.fabs() without its argument: the job's crash is reported
    assert "abs failed" in capsys.readouterr().err
    with pytest.raises(ValueError, match="already registered"):
        register_study(Study("run", "h", "d", add, plan=lambda a: Plan([], tmp_path), report=lambda a, s: ("", 0)))


def test_rows_of_returns_rows_in_order() -> None:
    assert rows_of([{"rows": [{"a": 1}], "error": None}, {"rows": [{"a": 2}]}]) == [{"a": 1}, {"a": 2}]

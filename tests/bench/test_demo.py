"""The demo's verdicts carry their uncertainty, runs report progress while they train, and the
demo flow (blocks -> runs -> summary -> plots) works end to end on a fast problem."""

from __future__ import annotations

import queue

import pytest

from uvp_plugins.bench import progress
from uvp_plugins.bench.demo import Block, _runspecs, paired_verdict, run_demo


def test_paired_verdict_reads_a_tie_as_a_tie() -> None:
    noisy = paired_verdict({0: 1.0, 1: 3.0, 2: 2.0}, {0: 2.0, 1: 1.0, 2: 2.5}, "max")
    assert noisy.low < 0 < noisy.high and noisy.word.startswith("tie")
    assert (noisy.wins, noisy.ties, noisy.losses) == (1, 0, 2)
    better = paired_verdict({s: 10.0 + 0.1 * s for s in range(5)}, {s: 9.0 for s in range(5)}, "max")
    assert better.low > 0 and better.word == "ours better"
    worse = paired_verdict({s: 2.0 for s in range(4)}, {s: 1.0 + 0.01 * s for s in range(4)}, "min")
    assert worse.high < 0 and worse.word == "ours worse"  # a loss is higher for "min"
    same = paired_verdict({0: 1.0, 1: 2.0}, {0: 1.0, 1: 2.0}, "max")
    assert same.word == "tie (identical results)" and same.mean == 0.0
    assert paired_verdict({0: 1.0}, {1: 1.0}, "max").word == "no paired runs"


def test_a_run_reports_the_share_of_its_budget_while_it_trains() -> None:
    from uvp_plugins.bench.context import RunContext
    from uvp_plugins.bench.problems.synthetic import LCSynthetic

    channel: queue.Queue = queue.Queue()  # type: ignore[type-arg]
    progress.init_worker(channel)
    try:
        progress.begin("job")
        ctx = RunContext(LCSynthetic("0"), total_budget=104)
        config = ctx.problem.space.sample(1, 0)[0]
        ctx.evaluate(0, config, 52)  # half the budget
        reports = []
        while not channel.empty():
            reports.append(channel.get())
        assert reports[0] == ("job", 0.0)
        # throttled: the half-way report may wait for MIN_INTERVAL; force one more report
        progress.update(ctx.ledger.spent / ctx.ledger.total_budget, force=True)
        assert channel.get() == ("job", 0.5)
    finally:
        progress.init_worker(None)


def test_demo_flow_on_a_fast_problem(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    block = Block(
        key="optuna", title="test block", setting="lc-synthetic", ours="optuna-tpe", peers=("random",),
        seeds=(0, 1, 2), direction="max", quantity="best accuracy (%)",
        jobs=_runspecs("lc-synthetic", "0", budget_factor=3.0), at_half=True,
    )
    assert run_demo(tmp_path / "demo", jobs=2, blocks=[block]) == 0
    out = capsys.readouterr().out
    assert "ours - random: " in out and "wins/ties/losses" in out
    assert "at half the budget" in out and "at the end" in out
    assert "Verdicts:" in out and "Wall time:" in out
    assert (tmp_path / "demo" / "plots" / "demo.png").stat().st_size > 10_000
    assert (tmp_path / "demo" / "plots" / "lc-synthetic.png").is_file()
    # repeated: finished runs are reused (same verdict, no new runs)
    assert run_demo(tmp_path / "demo", jobs=2, blocks=[block]) == 0
    assert capsys.readouterr().out.split("Verdicts:")[1].split("Plots:")[0] == out.split("Verdicts:")[1].split("Plots:")[0]


@pytest.mark.parametrize("missing", ["optuna"])
def test_a_block_whose_framework_is_missing_is_skipped_with_the_extra_named(tmp_path, capsys, monkeypatch, missing) -> None:  # type: ignore[no-untyped-def]
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a))
    block = Block(key="optuna", title="t", setting="s", ours="optuna-tpe", peers=("random",), seeds=(0,),
                  direction="max", quantity="q", jobs=_runspecs("lc-synthetic", "0", budget_factor=2.0))
    assert run_demo(tmp_path, blocks=[block]) == 1
    assert "skipping optuna: needs optuna: install the extra 'optuna'" in capsys.readouterr().err

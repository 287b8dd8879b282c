"""Bootstrap mean ranks (the CASH paper's App. D.1 ranking protocol) in ``uvp-bench report``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from uvp_plugins.bench.bootstrap_ranks import bootstrap_mean_ranks, format_bootstrap_ranks
from uvp_plugins.bench.report import Run, mean_ranks, report


def _run(task: str, method: str, seed: int, final: float, direction: str = "min") -> Run:
    return Run(
        problem="p", task=task, method=method, seed=seed, direction=direction, total_budget=10.0,
        spent=np.array([1.0, 10.0]), best=np.array([final + 1.0, final]),
    )


def test_a_method_better_in_every_seed_of_every_task_is_best_in_every_replicate() -> None:
    runs = [_run(t, "a", s, 0.1 * s) for t in "xyz" for s in range(5)]
    runs += [_run(t, "b", s, 1.0 + 0.1 * s) for t in "xyz" for s in range(5)]
    ranks = bootstrap_mean_ranks(runs, n_boot=200)
    assert (ranks["a"].mean, ranks["a"].low, ranks["a"].high, ranks["a"].p_best) == (1.0, 1.0, 1.0, 1.0)
    assert (ranks["b"].mean, ranks["b"].p_best) == (2.0, 0.0)


def test_direction_max_ranks_the_larger_value_first() -> None:
    runs = [_run("x", "a", s, 5.0, "max") for s in range(3)] + [_run("x", "b", s, 1.0, "max") for s in range(3)]
    ranks = bootstrap_mean_ranks(runs, n_boot=50)
    assert ranks["a"].mean == 1.0 and ranks["b"].mean == 2.0


def test_with_one_seed_per_task_every_replicate_equals_the_plain_mean_rank() -> None:
    rng = np.random.default_rng(3)
    runs = [_run(f"t{i}", m, 0, float(rng.random())) for i in range(7) for m in ("a", "b", "c")]
    plain = mean_ranks(runs, 1.0)
    boot = bootstrap_mean_ranks(runs, n_boot=100)
    for m, r in boot.items():
        assert r.mean == pytest.approx(plain[m]) and r.low == pytest.approx(plain[m])
        assert r.high == pytest.approx(plain[m])
    assert sum(r.p_best for r in boot.values()) == pytest.approx(1.0)


def test_identical_methods_share_best_and_the_interval_covers_noise() -> None:
    rng = np.random.default_rng(0)
    runs = [_run(f"t{i}", m, s, float(rng.normal())) for i in range(20) for m in ("a", "b") for s in range(10)]
    boot = bootstrap_mean_ranks(runs, n_boot=500, seed=1)
    assert boot["a"].low < 1.5 < boot["a"].high
    assert boot["a"].p_best + boot["b"].p_best == pytest.approx(1.0)
    assert 0.0 < boot["a"].p_best < 1.0
    assert boot == bootstrap_mean_ranks(runs, n_boot=500, seed=1)  # the seed fixes the resampling


def test_a_method_without_a_value_yet_ranks_last() -> None:
    early = Run(problem="p", task="x", method="late", seed=0, direction="min", total_budget=10.0,
                spent=np.array([8.0]), best=np.array([0.0]))
    runs = [early, _run("x", "a", 0, 3.0)]
    boot = bootstrap_mean_ranks(runs, fraction=0.5, n_boot=20)
    assert boot["late"].mean == 2.0 and boot["a"].mean == 1.0


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"n_boot": 0}, "n_boot"), ({"n_boot": 2.5}, "n_boot"), ({"fraction": 0.0}, "fraction"),
])
def test_bad_arguments_name_the_parameter(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        bootstrap_mean_ranks([_run("x", "a", 0, 1.0)], **kwargs)


def test_format_lists_best_first_with_interval_and_p_best() -> None:
    runs = [_run(t, "a", s, 0.0) for t in "xy" for s in range(2)] + [_run(t, "b", s, 1.0) for t in "xy" for s in range(2)]
    text = format_bootstrap_ranks(bootstrap_mean_ranks(runs, n_boot=10), 1.0, 10)
    rows = [line for line in text.splitlines() if line.startswith("| a") or line.startswith("| b")]
    assert rows == ["| a | 1.00 | 1.00–1.00 | 1.000 |", "| b | 2.00 | 2.00–2.00 | 0.000 |"]


def _write_run(root: Path, task: str, method: str, seed: int, final: float) -> None:
    d = root / "p" / task / method
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed{seed}.json").write_text(json.dumps({
        "problem": "p", "task": task, "method": method, "seed": seed, "direction": "min",
        "total_budget": 10,
    }))
    (d / f"seed{seed}.csv").write_text(f"spent,best\n1,{final + 1}\n10,{final}\n")


def test_report_adds_the_bootstrap_table_only_when_asked(tmp_path: Path) -> None:
    for t in ("x", "y"):
        for s in range(3):
            _write_run(tmp_path, t, "good", s, 0.1)
            _write_run(tmp_path, t, "bad", s, 0.9)
    plain = report(tmp_path, plots=False)
    assert "bootstrap" not in plain
    text = report(tmp_path, plots=False, bootstrap=100)
    assert "100 replicates" in text and "| good | 1.00 | 1.00–1.00 | 1.000 |" in text
    with pytest.raises(ValueError, match="--bootstrap"):
        report(tmp_path, plots=False, bootstrap=-1)


def test_the_printed_mean_rank_lies_within_its_interval() -> None:
    # 'good' loses to 'steady' only in replicates that draw its one bad seed 4 or 5 times
    # (0.7 % of them): the replicates' own mean was printed, 1.01 beside the interval 1.00-1.00
    runs = [_run("x", "good", s, v, "max") for s, v in enumerate([10.0, 10.0, 10.0, 10.0, 0.0])]
    runs += [_run("x", "steady", s, 2.5, "max") for s in range(5)]
    boot = bootstrap_mean_ranks(runs, n_boot=1000, seed=0)
    assert 0.0 < 1.0 - boot["good"].p_best < 0.025  # the reported case: best in ~99 % of replicates
    for m, r in boot.items():
        assert r.low <= r.mean <= r.high, (m, r)
    assert boot["good"].mean == mean_ranks(runs, 1.0)["good"] == 1.0  # the report's rank@100%
    text = format_bootstrap_ranks(boot, 1.0, 1000)
    assert "| good | 1.00 | 1.00–1.00 |" in text and "| steady | 2.00 | 2.00–2.00 |" in text


def test_an_estimate_outside_its_interval_is_marked_and_explained() -> None:
    # 'a' and 'b' share their runs exactly on 3 of 4 seeds, 'a' is a little better on the last:
    # a ranks 1 on every task on all runs, but replicates that resample the two methods' seeds
    # separately make the comparison a coin flip, so a's replicate mean ranks lie near 1.5
    runs = []
    for task in range(20):
        for s, (va, vb) in enumerate([(5.0, 5.0), (6.0, 6.0), (7.0, 7.0), (8.1, 8.0)]):
            runs += [_run(f"t{task}", "a", s, va, "max"), _run(f"t{task}", "b", s, vb, "max")]
    boot = bootstrap_mean_ranks(runs, n_boot=400, seed=0)
    assert boot["a"].mean == 1.0 and boot["a"].low > 1.0
    text = format_bootstrap_ranks(boot, 1.0, 400)
    assert "| a | 1.00 * |" in text
    assert "outside its interval (a, b)" in text
    assert "| b | 2.00 * |" in text  # b's replicates lie below 2 for the same reason

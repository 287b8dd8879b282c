"""The uvp-bench methods of the Optuna ID-HB pruner beside Optuna's HyperbandPruner re-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvp_plugins.bench.methods.optuna_idhb import METHODS, deepening_levels, format_optuna_idhb
from uvp_plugins.bench.registry import get_method
from uvp_plugins.bench.runner import RunSpec, run_one
from uvp_plugins.hyperband import HyperbandSchedule

pytestmark = pytest.mark.optuna


def test_levels_are_the_powers_of_three_below_t() -> None:
    assert deepening_levels(52) == (9, 27)
    assert deepening_levels(27) == (9, 27)
    assert deepening_levels(30) == (9, 27)
    assert deepening_levels(81) == (27, 81)
    with pytest.raises(ValueError, match="max_budget=8 is too small"):
        deepening_levels(8)


def test_methods_on_mf_branin(tmp_path: Path) -> None:
    """T = 27: Hyperband at 9 continued at 27 spends exactly one Hyperband at 27, and the run
    records the pruner's core ledger beside the steps spent."""
    summaries = {
        m: run_one(RunSpec("mf-branin", "0", m, 0, total_budget=100_000.0), tmp_path)
        for m in METHODS
    }
    assert all(s["error"] is None for s in summaries.values()), summaries
    hb9, hb27 = HyperbandSchedule(9, 3), HyperbandSchedule(27, 3)
    ours = summaries["optuna-idhb"]
    assert ours["extras"]["steps_r0"] == hb9.continuation_budget == 69
    assert ours["spent"] == ours["extras"]["core_continuation"] == hb27.continuation_budget
    assert ours["extras"]["core_full_charge"] == hb27.total_budget
    assert summaries["optuna-idhb-fresh"]["spent"] == hb27.continuation_budget
    rerun = summaries["optuna-hyperband-rerun"]
    assert rerun["extras"]["trials"] == hb27.n_configs
    assert rerun["spent"] > ours["spent"]  # two runs from scratch
    assert summaries["optuna-hyperband-rerun-eq"]["spent"] == hb27.continuation_budget
    assert get_method("optuna-idhb").kind == "ours"
    table = format_optuna_idhb(tmp_path, "mf-branin")
    assert "| 0 | optuna-idhb | 1 | 69.00 ± 0.00 | 357.00 ± 0.00 | 1/1 |" in table

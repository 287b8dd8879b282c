"""``uvp-bench overhead``: our sampler, TPE and GPSampler timed in the same (small) run."""

from __future__ import annotations

import pytest

from uvp_plugins.bench.overhead import format_overhead, optuna_sampler_overhead

pytestmark = pytest.mark.optuna


def test_rows_for_tpe_gp_and_each_mesh_size() -> None:
    rows = optuna_sampler_overhead(
        trials=(10, 20), candidates=(16, 64), seed=0, repeats=2, gp_max_trials=10
    )
    assert {(r["sampler"], r["candidates"]) for r in rows} == {
        ("TPESampler", None),
        ("GPSampler", None),
        ("EnhancedAdaCentSampler", 16),
        ("EnhancedAdaCentSampler", 64),
        ("EnhancedAdaCentSampler(guidance=None)", 16),
    }
    # GPSampler only up to gp_max_trials (its cost grows cubically)
    assert [r["trials"] for r in rows if r["sampler"] == "GPSampler"] == [10]
    assert len(rows) == 9
    assert all(r["cpu_ms_per_trial"] >= 0 and r["wall_ms_per_trial"] > 0 for r in rows)
    table = format_overhead(rows)
    assert "CPU ms/trial at 10 trials" in table and "| EnhancedAdaCentSampler | 64 |" in table
    assert "| GPSampler | - |" in table and "(not run)" in table
    with pytest.raises(ValueError, match="repeats"):
        optuna_sampler_overhead(trials=(10,), candidates=(16,), repeats=0)

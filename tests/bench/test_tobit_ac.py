"""The algorithm-configuration benchmark of issue 31: CP-SAT instance families, deterministic-time
runtimes with cutoffs, and the configurators through real SMAC (tiny budgets)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ortools", reason="needs the 'solvers' extra (ortools)")

from uvp_plugins.bench.problems.cpsat_ac import (  # noqa: E402
    FAMILIES,
    ACProblem,
    Instance,
    RunResult,
    config_params,
    configspace,
    par10,
    solve,
)

TINY = Instance("jobshop", (10, 6), 1000)  # about 0.03 deterministic seconds


def test_instances_are_graded_split_and_described_by_features() -> None:
    for family, spec in FAMILIES.items():
        p = ACProblem(family, n_instances=16)
        assert [i.name for i in p.instances] == [i.name for i in ACProblem(family, n_instances=16).instances]
        train, test = p.split()
        assert len(train) == len(test) == 8 and not {i.name for i in train} & {i.name for i in test}
        sizes = [int(np.prod(i.size)) for i in p.instances]
        assert sizes == sorted(sizes)  # hardness order: more operations / pairs along the list
        # both halves span the sizes: each holds one instance of every size pair
        assert {i.size for i in train} == {i.size for i in test}
        feats = p.features(train)
        assert set(feats) == {i.name for i in train}
        widths = {len(v) for v in feats.values()}
        assert widths == {len(spec.feature_names)}
        assert all(np.isfinite(v).all() for v in feats.values())
        dev = ACProblem(family, n_instances=16, instance_set="dev")
        assert not {i.name for i in dev.instances} & {i.name for i in p.instances}
    with pytest.raises(ValueError, match="family must be one of"):
        ACProblem("sat")
    with pytest.raises(ValueError, match="kappa_max must be"):
        ACProblem("jobshop", kappa_max=0.0)
    with pytest.raises(ValueError, match="instance_set"):
        ACProblem("jobshop", instance_set="test")


def test_the_default_configuration_is_cp_sats_default() -> None:
    from ortools.sat import sat_parameters_pb2

    defaults = sat_parameters_pb2.SatParameters()
    fields = sat_parameters_pb2.SatParameters.DESCRIPTOR.fields_by_name
    params = config_params(configspace().get_default_configuration())
    assert len(params) == 23
    for name, value in params.items():
        expected = getattr(defaults, name)
        if fields[name].enum_type is not None:
            expected = fields[name].enum_type.values_by_number[expected].name
        assert value == pytest.approx(expected), name


def test_runtimes_are_deterministic_and_capped_runs_time_out_at_the_cutoff() -> None:
    params = config_params(configspace().get_default_configuration())
    full = solve(TINY, params, 5.0)
    assert full.solved and full.status == "OPTIMAL" and 0 < full.runtime < 5.0
    assert solve(TINY, params, 5.0) == full  # deterministic
    assert solve(TINY, params, full.runtime * 1.5) == full  # the same run under a larger cutoff
    capped = solve(TINY, params, full.runtime / 4)
    assert not capped.solved and capped.runtime == pytest.approx(full.runtime / 4)
    assert solve(TINY, params, 0.0) == RunResult(0.0, False, "NO_TIME")
    kappa = 2.0
    assert par10([full, capped], kappa) == pytest.approx((full.runtime + 10 * kappa) / 2)


def test_configurators_run_through_smac_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from uvp_plugins.bench.cli import main

    args = [
        "tobit-ac", "--families", "jobshop", "--methods", "ac-tobit", "ac-smac", "ac-random",
        "ac-default", "--seeds", "0", "--budget", "0.15", "--kappa-max", "0.05",
        "--n-instances", "4", "--instance-set", "dev", "--results", str(tmp_path),
        "--json", str(tmp_path / "rows.json"),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "### jobshop" in out and "ac-tobit against" in out and "vs ac-smac" in out
    assert "95 % t-interval" in out
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert {r["method"] for r in rows} == {"ac-tobit", "ac-smac", "ac-random", "ac-default"}
    for r in rows:
        assert r["error"] is None
        assert r["test_instances"] == 2 and np.isfinite(r["test_par10"])
        if r["method"] != "ac-default":
            # every configurator stopped once its runs' capped runtime reached the budget
            assert 0.15 <= r["spent"] < 0.15 + 0.05 + 1e-9
            assert r["target_runs"] >= 3
    tobit = next(r for r in rows if r["method"] == "ac-tobit")
    assert tobit["capped_runs"] >= 1  # adaptive capping and kappa_max stop runs

    # a stopped sweep: --finished-only reports the finished groups and runs nothing
    before = sorted(p.name for p in tmp_path.rglob("seed*.json"))
    seeds01 = [a if a != "0" else "0,1" for a in args[:-2]] + ["--json", str(tmp_path / "done.json")]
    assert main([*seeds01, "--finished-only"]) == 0
    captured = capsys.readouterr()
    assert "left out 1 of 2 (family, seed) groups: jobshop/seed1" in captured.err
    assert "ac-tobit against" in captured.out
    assert sorted(p.name for p in tmp_path.rglob("seed*.json")) == before
    done = json.loads((tmp_path / "done.json").read_text())
    assert sorted((r["method"], r["seed"]) for r in done) == sorted((r["method"], r["seed"]) for r in rows)


def test_paired_comparison_counts_tests_and_bounds_the_ratio() -> None:
    from uvp_plugins.bench.methods.tobit_ac import _paired

    peer = {k: 1.0 for k in range(8)}
    ours = {0: 0.5, 1: 0.5, 2: 0.5, 3: 0.5, 4: 0.5, 5: 0.5, 6: 1.0, 7: 2.0}  # 6 wins, 1 tie, 1 loss
    c = _paired(ours, peer)
    assert (c["n"], c["wins"], c["ties"], c["losses"]) == (8, 6, 1, 1)
    assert c["sign_p"] == pytest.approx(2 * 8 / 128)  # two-sided: P(>= 6 of 7) = 8/128
    geo = float(np.exp(np.mean(np.log([0.5] * 6 + [1.0, 2.0]))))
    assert c["ratio"] == pytest.approx(geo)
    assert c["ratio_low"] < geo < c["ratio_high"]
    assert 0.5 <= c["boot_low"] < geo < c["boot_high"] <= 2.0
    assert _paired(ours, peer) == c  # the bootstrap is seeded: the report repeats
    one = _paired({0: 1.0}, {0: 2.0})
    assert one["wins"] == 1 and np.isnan(one["boot_low"]) and np.isnan(one["boot_high"])


@pytest.mark.parametrize(
    "option, value, message",
    [("--budget", "0", "--budget must be a number > 0"), ("--kappa-max", "nan", "--kappa-max must be"),
     ("--n-instances", "1", "--n-instances must be an int >= 2")],
)
def test_bad_options_are_refused_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    from uvp_plugins.bench.cli import main

    assert main(["tobit-ac", option, value, "--results", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # refused before any run

"""Our onnxruntime YAHPO loader returns yahpo-gym 1.0.2's values, and every YAHPO problem of
``uvp-bench`` runs without the yahpo-gym package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from uvp_plugins.bench.problems.yahpo import (
    default_yahpo_data_dirs,
    default_yahpo_data_v0_dirs,
    resolve_yahpo_data,
    resolve_yahpo_data_v0,
)
from uvp_plugins.bench.problems.yahpo_surrogate import LAYOUTS, LAYOUTS_V0, load_surrogate

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
from make_yahpo_reference import (  # noqa: E402
    FIXTURE,
    FIXTURE_V0,
    SCENARIOS,
    SCENARIOS_V0,
    sample_configs,
    yahpo_gym_rows_v0,
    yahpo_gym_values,
)

pytestmark = pytest.mark.yahpo


def _ours(scenario: str, data: Path, configs: list[dict]) -> list[dict[str, float]]:  # type: ignore[type-arg]
    sur = load_surrogate(scenario, str(data))
    return [dict(zip(sur.layout.targets, row.tolist(), strict=True)) for row in sur.predict(configs)]


def _assert_same(ours: list[dict[str, float]], theirs: list[dict[str, float]]) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert set(a) == set(b)
        np.testing.assert_allclose([a[k] for k in b], [b[k] for k in b], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_loader_matches_the_committed_yahpo_gym_reference(scenario, yahpo_data) -> None:  # type: ignore[no-untyped-def]
    # produced by yahpo-gym 1.0.2 with tests/bench/make_yahpo_reference.py
    cases = json.loads(FIXTURE.read_text())["scenarios"][scenario]
    assert len(cases) >= 10
    ours = _ours(scenario, yahpo_data, [c["config"] for c in cases])
    _assert_same(ours, [c["values"] for c in cases])
    # the cases exercise what the encoding must get right: several instances and, for
    # rbv2_xgboost, inactive (dropped) booster-specific parameters
    assert len({c["config"][LAYOUTS[scenario].instance] for c in cases}) > 1
    if scenario == "rbv2_xgboost":
        assert any("eta" not in c["config"] for c in cases) and any("rate_drop" in c["config"] for c in cases)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_loader_matches_yahpo_gym_live(scenario, yahpo_data) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("yahpo_gym")  # installed by .ci/run (test-only dependency)
    configs = sample_configs(load_surrogate(scenario, str(yahpo_data)), 40, seed=7)
    _assert_same(_ours(scenario, yahpo_data, configs), yahpo_gym_values(scenario, str(yahpo_data), configs))


@pytest.mark.parametrize("scenario", SCENARIOS_V0)
def test_first_generation_loader_matches_the_committed_yahpo_gym_reference(scenario, yahpo_data_v0) -> None:  # type: ignore[no-untyped-def]
    # yahpo_reference_v0.json: yahpo-gym 1.0.2 on the yahpo_data_v0 folders, outputs in column order
    cases = json.loads(FIXTURE_V0.read_text())["scenarios"][scenario]
    assert len(cases) >= 10 and len({c["config"]["task_id"] for c in cases}) > 1
    sur = load_surrogate(scenario, str(yahpo_data_v0), "v0")
    ours = sur.predict([c["config"] for c in cases])
    assert ours.shape == (len(cases), 6) and sur.layout.targets[0] == "mmce"
    np.testing.assert_allclose(ours, [c["values"] for c in cases], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("scenario", SCENARIOS_V0)
def test_first_generation_loader_matches_yahpo_gym_live(scenario, yahpo_data_v0) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("yahpo_gym")
    sur = load_surrogate(scenario, str(yahpo_data_v0), "v0")
    configs = sample_configs(sur, 15, seed=11)
    np.testing.assert_allclose(sur.predict(configs), yahpo_gym_rows_v0(scenario, str(yahpo_data_v0), configs),
                               rtol=1e-6, atol=1e-6)


def test_a_folder_of_the_other_generation_is_refused(yahpo_data, yahpo_data_v0) -> None:  # type: ignore[no-untyped-def]
    assert set(LAYOUTS_V0) == set(SCENARIOS_V0)
    with pytest.raises(ValueError, match=r"6 outputs, expected .* 9 for the 'current' generation .*'v0'"):
        load_surrogate("rbv2_xgboost", str(yahpo_data_v0))
    with pytest.raises(ValueError, match=r"9 outputs, expected .* 6 for the 'v0' generation"):
        load_surrogate("rbv2_xgboost", str(yahpo_data), "v0")
    with pytest.raises(ValueError, match="unknown YAHPO scenario 'rbv2_svm' of generation 'current'"):
        load_surrogate("rbv2_svm", str(yahpo_data_v0))
    with pytest.raises(ValueError, match="generation must be one of"):
        load_surrogate("rbv2_svm", str(yahpo_data_v0), "v2")


def test_first_generation_data_found_beside_the_current_data(tmp_path, monkeypatch, yahpo_data_v0) -> None:  # type: ignore[no-untyped-def]
    # CI sets UVP_YAHPO_DATA=../shared/yahpo_data only: ../shared/yahpo_data_v0 must be found
    shared = tmp_path / "shared"
    (shared / "yahpo_data").mkdir(parents=True)
    (shared / "yahpo_data_v0" / "rbv2_svm").mkdir(parents=True)
    (shared / "yahpo_data_v0" / "rbv2_svm" / "model.onnx").write_bytes(b"")
    monkeypatch.delenv("UVP_YAHPO_DATA_V0", raising=False)
    monkeypatch.setenv("UVP_YAHPO_DATA", str(shared / "yahpo_data"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_yahpo_data_v0_dirs() == [
        shared / "yahpo_data_v0", REPO.parent / "shared" / "yahpo_data_v0", tmp_path / "xdg" / "yahpo_data_v0",
    ]
    assert resolve_yahpo_data_v0(None, "rbv2_svm") == (shared / "yahpo_data_v0").resolve()
    # the environment variable of its own comes first, the option before everything
    monkeypatch.setenv("UVP_YAHPO_DATA_V0", str(yahpo_data_v0))
    assert resolve_yahpo_data_v0(None, "rbv2_svm") == Path(yahpo_data_v0).resolve()
    assert resolve_yahpo_data_v0(shared / "yahpo_data_v0", "rbv2_svm") == (shared / "yahpo_data_v0").resolve()
    with pytest.raises(FileNotFoundError, match=r"yahpo_data_v0\) directory with rbv2_ranger/model.onnx not "
                       r"found \(looked in: .*\)\. Point to your copy with --yahpo-data-v0 PATH .*UVP_YAHPO_DATA_V0"):
        resolve_yahpo_data_v0(shared / "yahpo_data_v0", "rbv2_ranger")


def test_iaml_glmnet_accuracy_is_one_minus_its_misclassification_rate(yahpo_data) -> None:  # type: ignore[no-untyped-def]
    from uvp_plugins.bench.problems.yahpo import YahpoProblem

    prob = YahpoProblem("iaml_glmnet", yahpo_data=yahpo_data)
    config = prob.space.sample(1, np.random.default_rng(0))[0]
    sur = prob.surrogate
    mmce = sur.predict([{**config, "task_id": prob.task, "trainsize": 1.0}])[0, sur.target_index("mmce")]
    assert prob.evaluate(config, prob.max_budget) == pytest.approx(1.0 - mmce)
    assert 0.0 < prob.evaluate(config, prob.max_budget) <= 1.0


def test_bad_values_get_clear_errors(yahpo_data) -> None:  # type: ignore[no-untyped-def]
    sur = load_surrogate("rbv2_rpart", str(yahpo_data))
    with pytest.raises(ValueError, match="num.impute.selected.cpo='impute.magic' is not a known value"):
        sur.predict([{"task_id": sur.instances[0], "num.impute.selected.cpo": "impute.magic"}])
    with pytest.raises(ValueError, match="no target 'accuracy'; targets: acc, bac"):
        sur.target_index("accuracy")


def test_data_path_order_option_then_environment_then_a_fixed_default(tmp_path, monkeypatch, yahpo_data) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / "mine"
    (fake / "lcbench").mkdir(parents=True)
    (fake / "lcbench" / "model.onnx").write_bytes(b"")
    monkeypatch.setenv("UVP_YAHPO_DATA", str(fake))
    assert resolve_yahpo_data(None, "lcbench") == fake.resolve()
    assert resolve_yahpo_data(yahpo_data, "lcbench") == Path(yahpo_data).resolve()  # the option wins
    monkeypatch.delenv("UVP_YAHPO_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    defaults = default_yahpo_data_dirs()
    assert defaults == [REPO.parent / "shared" / "yahpo_data", tmp_path / "xdg" / "yahpo_data"]
    monkeypatch.chdir(REPO)
    assert default_yahpo_data_dirs() == defaults  # independent of the working directory
    with pytest.raises(FileNotFoundError, match="looked in: /nowhere"):
        resolve_yahpo_data("/nowhere", "lcbench")


def test_every_yahpo_problem_runs_without_the_yahpo_gym_package(tmp_path, yahpo_data) -> None:  # type: ignore[no-untyped-def]
    # a yahpo_gym that cannot be imported, first on the path of the CLI and of its workers
    blocker = tmp_path / "blocker" / "yahpo_gym"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('yahpo-gym is blocked in this test')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker.parent), str(REPO)]),
               UVP_YAHPO_DATA=str(yahpo_data))
    out = tmp_path / "out"
    script = (
        "import sys\n"
        "from uvp_plugins.bench.cli import main\n"
        "for problem, budget in [('lcbench', '1'), ('rbv2_xgboost', '1'), ('rbv2_rpart', '1'),\n"
        "                        ('iaml_glmnet', '1'), ('cash-yahpo', None)]:\n"
        "    argv = ['run', '--problem', problem, '--methods', 'random' if budget else 'cash-random',\n"
        f"            '--out', {str(out)!r}, '--jobs', '2', '--seeds', '0-1']\n"
        "    argv += ['--budget-factor', budget] if budget else ['--total-budget', '5']\n"
        "    assert main(argv) == 0, problem\n"
        "try:\n"
        "    import yahpo_gym\n"
        "except ImportError as exc:\n"
        "    print('blocked:', exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "blocked: yahpo-gym is blocked" in proc.stdout
    summaries = [json.loads(p.read_text()) for p in out.rglob("seed*.json")]
    assert sorted({s["problem"] for s in summaries}) == ["cash-yahpo", "iaml_glmnet", "lcbench", "rbv2_rpart", "rbv2_xgboost"]
    assert len(summaries) == 10 and all(s["error"] is None and np.isfinite(s["final"]) for s in summaries)

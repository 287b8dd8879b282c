"""A driver dying while SMAC writes intensifier.json or runhistory.json leaves the previous
complete files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float
from smac import HyperbandFacade, HyperparameterOptimizationFacade, Scenario
from smac.runhistory.dataclasses import TrialValue

from smac_ext import IterativeDeepeningHyperbandIntensifier, MaxUCBIntensifier

pytestmark = pytest.mark.smac


def _maxucb(tmp_path: Path) -> tuple[Any, Any]:
    cs = ConfigurationSpace(seed=0)
    algo = Categorical("algorithm", ["a", "b"])
    x = Float("a:x", (0.0, 1.0))
    cs.add([algo, x, EqualsCondition(x, algo, "a")])
    scenario = Scenario(cs, deterministic=True, n_trials=20, seed=0, output_directory=tmp_path)
    intensifier = MaxUCBIntensifier(scenario)
    return HyperparameterOptimizationFacade(scenario, None, intensifier=intensifier,
                                            overwrite=True, logging_level=40), intensifier


def _idhb(tmp_path: Path) -> tuple[Any, Any]:
    cs = ConfigurationSpace({"x": (0.0, 1.0)}, seed=0)
    scenario = Scenario(cs, deterministic=True, n_trials=50, seed=0, min_budget=1, max_budget=9,
                        output_directory=tmp_path)
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
    return HyperbandFacade(scenario, None, intensifier=intensifier, overwrite=True,
                           logging_level=40), intensifier


@pytest.mark.parametrize("build", [_maxucb, _idhb], ids=["maxucb", "idhb"])
def test_intensifier_json_is_never_half_written(tmp_path: Path, build: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    smac, intensifier = build(tmp_path)
    for _ in range(3):
        info = smac.ask()
        smac.tell(info, TrialValue(cost=0.5))
    path = smac.scenario.output_directory / "intensifier.json"
    before = path.read_text()
    # the write dies half-way (json.dump fails on the second half of the state)
    good = intensifier.get_state()
    monkeypatch.setattr(intensifier, "get_state", lambda: {**good, "zzz": object()})
    info = smac.ask()
    with pytest.raises(TypeError):
        smac.tell(info, TrialValue(cost=0.4))
    assert path.read_text() == before  # the previous complete state, readable
    json.loads(before)
    assert sorted(p.name for p in path.parent.iterdir() if "uvp-tmp" in p.name) == []


@pytest.mark.parametrize("build", [_maxucb, _idhb], ids=["maxucb", "idhb"])
def test_runhistory_json_is_never_half_written(tmp_path: Path, build: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import smac.runhistory.runhistory as rh_module

    smac, _ = build(tmp_path)
    for _ in range(3):
        info = smac.ask()
        smac.tell(info, TrialValue(cost=0.5))
    path = smac.scenario.output_directory / "runhistory.json"
    before = path.read_text()
    real_dump = json.dump

    def dies_half_way(obj: Any, fp: Any, **kwargs: Any) -> None:
        if not (isinstance(obj, dict) and "stats" in obj):  # not the run history
            return real_dump(obj, fp, **kwargs)
        fp.write(json.dumps(obj, **kwargs)[:50])
        raise KeyboardInterrupt("killed while writing the run history")

    monkeypatch.setattr(rh_module.json, "dump", dies_half_way)
    info = smac.ask()
    with pytest.raises(KeyboardInterrupt):
        smac.tell(info, TrialValue(cost=0.4))
    monkeypatch.setattr(rh_module.json, "dump", real_dump)
    assert path.read_text() == before and json.loads(before)["stats"]["finished"] == 3


@pytest.mark.parametrize("build", [_maxucb, _idhb], ids=["maxucb", "idhb"])
def test_a_truncated_optimization_json_is_repaired_for_named_runs(tmp_path: Path,
                                                                 build: Any) -> None:
    smac, intensifier = build(tmp_path)
    for _ in range(2):
        info = smac.ask()
        smac.tell(info, TrialValue(cost=0.5))
    # a named run in the same directory layout as SMAC's (name/seed)
    scenario = smac.scenario
    named = Scenario(scenario.configspace, name="named", output_directory=tmp_path / "n",
                     deterministic=True, n_trials=scenario.n_trials, seed=0,
                     min_budget=scenario.min_budget, max_budget=scenario.max_budget)
    cls = type(intensifier)
    facade = type(smac)
    first = facade(named, None, intensifier=cls(named), logging_level=40)
    for _ in range(2):
        info = first.ask()
        first.tell(info, TrialValue(cost=0.5))
    directory = named.output_directory
    (directory / "optimization.json").write_text('{"used_wall')  # killed during SMAC's write
    again = facade(named, None, intensifier=cls(named), logging_level=40)  # SMAC can load it
    assert again.runhistory.finished == 2
    assert json.loads((directory / "optimization.json").read_text())["finished"] is False

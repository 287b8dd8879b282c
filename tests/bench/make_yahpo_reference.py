"""Regenerate ``yahpo_reference.json``: yahpo-gym 1.0.2's values on sampled configurations.

The fixture lets ``test_yahpo_surrogate.py`` check our onnxruntime loader against yahpo-gym even
where the package is not installed. Run (with yahpo-gym 1.0.2 installed, ``--no-deps``)::

    python tests/bench/make_yahpo_reference.py [--yahpo-data PATH]
    python tests/bench/make_yahpo_reference.py --v0 [--yahpo-data-v0 PATH]

The second writes ``yahpo_reference_v0.json`` for the first-generation rbv2 surrogates
(``yahpo_data_v0``): yahpo-gym 1.0.2 reads those folders with its own scenario definitions
(the input layout is the same), one configuration at a time (their networks have a fixed batch
size of 1), and labels their 6 outputs with the first 6 of its 9 target names; the fixture keeps
the outputs as a list, in column order.

For each scenario, configurations are sampled from our search space (inactive parameters
dropped, as yahpo-gym expects), with a random instance and random fidelity values, and evaluated
by ``yahpo_gym.BenchmarkSet`` (ConfigSpace 1.x needs ``_sort_hyperparameters`` to be a no-op).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "yahpo_reference.json"
FIXTURE_V0 = HERE / "yahpo_reference_v0.json"
SCENARIOS = ("lcbench", "rbv2_xgboost", "rbv2_rpart", "iaml_glmnet")
SCENARIOS_V0 = ("rbv2_svm", "rbv2_ranger", "rbv2_aknn", "rbv2_glmnet", "rbv2_xgboost")
PER_SCENARIO = 12


def sample_configs(surrogate: Any, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` full configurations (instance and fidelities included, inactive ones dropped)."""
    from uvp_plugins.space import SearchSpace

    rng = np.random.default_rng(seed)
    lay = surrogate.layout
    out = []
    for config in SearchSpace(surrogate.params).sample(n, rng):
        full: dict[str, Any] = dict(config)
        full[lay.instance] = str(rng.choice(surrogate.instances))
        for fid in lay.fidelities:
            full[fid] = {
                "epoch": int(rng.integers(1, 53)),
                "repl": int(rng.integers(1, 11)),
                "trainsize": float(rng.uniform(0.03, 1.0)),
            }[fid]
        out.append(surrogate.active(full))
    return out


def yahpo_gym_values(
    scenario: str, data: str, configs: list[dict[str, Any]], one_at_a_time: bool = False
) -> list[dict[str, float]]:
    """yahpo-gym 1.0.2's outputs for ``configs`` (its settings file kept private to this call;
    ``one_at_a_time``: one configuration per call, for networks with a fixed batch size 1)."""
    warnings.simplefilter("ignore")
    import ConfigSpace

    ConfigSpace.ConfigurationSpace._sort_hyperparameters = lambda self: None  # type: ignore[attr-defined]
    from yahpo_gym import benchmark_set, local_config

    local_config.settings_path = Path(tempfile.mkdtemp()) / "yahpo_gym.yaml"
    local_config.init_config(data)
    local_config._config = None
    with contextlib.redirect_stdout(io.StringIO()):  # it prints citation notes
        bench = benchmark_set.BenchmarkSet(scenario, multithread=False, check=False)
    if one_at_a_time:
        results = [bench.objective_function([c])[0] for c in configs]
    else:
        results = bench.objective_function(configs)
    return [{k: float(v) for k, v in r.items()} for r in results]


def yahpo_gym_rows_v0(scenario: str, data: str, configs: list[dict[str, Any]]) -> list[list[float]]:
    """yahpo-gym 1.0.2's outputs for first-generation folders, in column order (one
    configuration per call: the networks' batch size is fixed to 1)."""
    return [list(r.values()) for r in yahpo_gym_values(scenario, data, configs, one_at_a_time=True)]


def main_v0(path: str | None) -> None:
    import yahpo_gym

    from uvp_plugins.bench.problems.yahpo import resolve_yahpo_data_v0
    from uvp_plugins.bench.problems.yahpo_surrogate import load_surrogate

    data = str(resolve_yahpo_data_v0(path))
    fixture: dict[str, Any] = {"yahpo_gym": getattr(yahpo_gym, "__version__", "1.0.2"), "scenarios": {}}
    for i, scenario in enumerate(SCENARIOS_V0):
        configs = sample_configs(load_surrogate(scenario, data, "v0"), PER_SCENARIO, seed=200 + i)
        fixture["scenarios"][scenario] = [
            {"config": c, "values": v}
            for c, v in zip(configs, yahpo_gym_rows_v0(scenario, data, configs), strict=True)
        ]
    FIXTURE_V0.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {FIXTURE_V0}")


def main() -> None:
    import yahpo_gym

    from uvp_plugins.bench.problems.yahpo import resolve_yahpo_data
    from uvp_plugins.bench.problems.yahpo_surrogate import load_surrogate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--yahpo-data", default=None, help="YAHPO data directory")
    parser.add_argument("--v0", action="store_true", help="write yahpo_reference_v0.json instead")
    parser.add_argument("--yahpo-data-v0", default=None, help="first-generation data directory")
    args = parser.parse_args()
    if args.v0:
        main_v0(args.yahpo_data_v0)
        return
    data = str(resolve_yahpo_data(args.yahpo_data))
    fixture: dict[str, Any] = {"yahpo_gym": getattr(yahpo_gym, "__version__", "1.0.2"), "scenarios": {}}
    for i, scenario in enumerate(SCENARIOS):
        configs = sample_configs(load_surrogate(scenario, data), PER_SCENARIO, seed=100 + i)
        fixture["scenarios"][scenario] = [
            {"config": c, "values": v} for c, v in zip(configs, yahpo_gym_values(scenario, data, configs), strict=True)
        ]
    FIXTURE.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    main()

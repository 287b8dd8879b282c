"""Regenerate ``yahpo_reference.json``: yahpo-gym 1.0.2's values on sampled configurations.

The fixture lets ``test_yahpo_surrogate.py`` check our onnxruntime loader against yahpo-gym even
where the package is not installed. Run (with yahpo-gym 1.0.2 installed, ``--no-deps``)::

    python tests/bench/make_yahpo_reference.py [--yahpo-data PATH]

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
SCENARIOS = ("lcbench", "rbv2_xgboost", "rbv2_rpart", "iaml_glmnet")
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


def yahpo_gym_values(scenario: str, data: str, configs: list[dict[str, Any]]) -> list[dict[str, float]]:
    """yahpo-gym 1.0.2's outputs for ``configs`` (its settings file kept private to this call)."""
    warnings.simplefilter("ignore")
    import ConfigSpace

    ConfigSpace.ConfigurationSpace._sort_hyperparameters = lambda self: None  # type: ignore[attr-defined]
    from yahpo_gym import benchmark_set, local_config

    local_config.settings_path = Path(tempfile.mkdtemp()) / "yahpo_gym.yaml"
    local_config.init_config(data)
    local_config._config = None
    with contextlib.redirect_stdout(io.StringIO()):  # it prints citation notes
        bench = benchmark_set.BenchmarkSet(scenario, multithread=False, check=False)
    return [{k: float(v) for k, v in r.items()} for r in bench.objective_function(configs)]


def main() -> None:
    import yahpo_gym

    from uvp_plugins.bench.problems.yahpo import resolve_yahpo_data
    from uvp_plugins.bench.problems.yahpo_surrogate import load_surrogate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--yahpo-data", default=None, help="YAHPO data directory")
    args = parser.parse_args()
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

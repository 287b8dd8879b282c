"""A SMAC driver on a Dask LocalCluster with worker processes, for tests/smac_ext/test_smac_dask.py.

Run as ``python dask_driver.py OUT MODE N_TRIALS [SLEEP]``: SMAC's facade with ``dask_client=`` a
``LocalCluster(processes=True, n_workers=2, threads_per_worker=1)`` on 127.0.0.1 (BLAS/OpenMP
threads pinned to 1 in the workers), on the output directory ``OUT/<MODE>/0``; it continues a run
found there (SMAC's restart). Modes:

* ``maxucb-tobit``: :class:`smac_ext.MaxUCBIntensifier` over a 3-arm CASH space (one arm without
  hyperparameters) with one Tobit ensemble per arm (:func:`smac_ext.tobit_arm_factories`);
* ``tobit``: the HPO facade with the Tobit model (:func:`smac_ext.tobit_facade_kwargs`);
* ``idhb``: :class:`smac_ext.IterativeDeepeningHyperbandIntensifier` (HyperbandFacade, budgets
  1..9);
* ``smac-hb``: SMAC's own ``Hyperband`` the same way (for docs/results/reliability.md).

At the end it writes ``OUT/<MODE>/report.json`` (incumbent, intensifier state, pulls). The target
raises if a worker runs with more than one BLAS/OpenMP thread.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float

PINNED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def cash_space() -> ConfigurationSpace:
    cs = ConfigurationSpace(seed=0)
    algo = Categorical("algorithm", ["quad", "lin", "const"])
    x = Float("quad:x", (-2.0, 2.0))
    y = Float("lin:y", (0.0, 1.0))
    cs.add([algo, x, y, EqualsCondition(x, algo, "quad"), EqualsCondition(y, algo, "lin")])
    return cs


def loss(config: Any) -> float:
    arm = config.get("algorithm")
    if arm == "quad":
        return 0.3 + (config["quad:x"] - 1.0) ** 2
    if arm == "lin":
        return 0.1 + abs(config["lin:y"] - 0.7)
    if arm == "const":
        return 0.5
    return 0.05 + (config["x"] - 0.3) ** 2 + (config["y"] - 0.6) ** 2


def check_threads() -> None:
    for name, value in PINNED.items():
        if os.environ.get(name) != value:
            raise RuntimeError(f"worker {os.getpid()} runs with {name}={os.environ.get(name)!r}")


def main() -> None:
    out, mode, n_trials = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    sleep = float(sys.argv[4]) if len(sys.argv) > 4 else 0.2

    from dask.distributed import Client, LocalCluster
    from smac import HyperbandFacade, HyperparameterOptimizationFacade, Scenario

    from smac_ext import (
        IterativeDeepeningHyperbandIntensifier,
        MaxUCBIntensifier,
        plain_config,
        tobit_arm_factories,
        tobit_facade_kwargs,
    )

    def train(config: Any, seed: int = 0) -> float:
        check_threads()
        time.sleep(sleep)
        return loss(config)

    def train_budget(config: Any, seed: int = 0, budget: float = 1.0) -> float:
        check_threads()
        time.sleep(sleep)
        return loss(config) + 1.0 / (1.0 + budget)

    logging.getLogger("distributed").setLevel(logging.ERROR)
    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                           dashboard_address=None, env=dict(PINNED))
    client = Client(cluster)
    try:
        kw: dict[str, Any] = dict(name=mode, output_directory=out, deterministic=True, seed=0,
                                  n_trials=n_trials)
        if mode == "maxucb-tobit":
            scenario = Scenario(cash_space(), **kw)
            intensifier: Any = MaxUCBIntensifier(scenario, n_initial=1,
                                                 **tobit_arm_factories(n_steps=60))
            smac: Any = HyperparameterOptimizationFacade(
                scenario, train, intensifier=intensifier, logging_level=40, dask_client=client)
        elif mode == "tobit":
            cs = ConfigurationSpace({"x": (0.0, 1.0), "y": (0.0, 1.0)}, seed=0)
            scenario = Scenario(cs, **kw)
            intensifier = HyperparameterOptimizationFacade.get_intensifier(scenario)
            smac = HyperparameterOptimizationFacade(
                scenario, train, intensifier=intensifier, logging_level=40, dask_client=client,
                initial_design=HyperparameterOptimizationFacade.get_initial_design(
                    scenario, n_configs=4),
                **tobit_facade_kwargs(scenario, n_steps=60))
        elif mode == "idhb":
            cs = ConfigurationSpace({"x": (0.0, 1.0), "y": (0.0, 1.0)}, seed=0)
            scenario = Scenario(cs, min_budget=1, max_budget=9, **kw)
            intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
            smac = HyperbandFacade(scenario, train_budget, intensifier=intensifier,
                                   logging_level=40, dask_client=client)
        elif mode == "smac-hb":  # SMAC's own Hyperband, for the comparison in reliability.md
            cs = ConfigurationSpace({"x": (0.0, 1.0), "y": (0.0, 1.0)}, seed=0)
            scenario = Scenario(cs, min_budget=1, max_budget=9, **kw)
            intensifier = HyperbandFacade.get_intensifier(scenario, eta=3)
            smac = HyperbandFacade(scenario, train_budget, intensifier=intensifier,
                                   logging_level=40, dask_client=client)
        else:
            raise SystemExit(f"unknown mode {mode!r}")
        incumbent = smac.optimize()
        report = {
            "incumbent": plain_config(incumbent),
            "state": intensifier.get_state(),
            "pulls": {str(k): v for k, v in getattr(intensifier, "pulls", {}).items()},
        }
        (out / mode / "report.json").write_text(json.dumps(report))
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()

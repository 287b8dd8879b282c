"""A Tune driver with EnhancedAdaCentSearch, run as a separate process by
test_ray_adacent_search.py (which kills it with SIGKILL and continues with ``Tuner.restore``).

Usage: ``python adacent_search_driver.py '<json spec>'`` with keys ``address``, ``storage``,
``name``, ``num_samples``, ``step_s``, ``block_file``."""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

SPACE_ARGS = {"lr": (1e-4, 1e-1), "units": (16, 129)}


def make_trainable(step_s: float, block_file: str) -> Callable[[dict], None]:
    """Three steps of a fixed curve, ``step_s`` seconds each, each waiting while ``block_file``
    exists (a closure: Ray ships it by value)."""

    def adacent_trainable(config: dict) -> None:
        from ray import tune

        q = 1.0 - abs(math.log10(config["lr"]) + 2.0) / 3.0 + config["units"] / 1280.0
        for step in range(1, 4):
            time.sleep(step_s)
            while os.path.exists(block_file):
                time.sleep(0.05)
            tune.report({"acc": q * (1.0 - 0.5**step)})

    return adacent_trainable


def make_tuner(storage: str, name: str, num_samples: int, step_s: float, block_file: str) -> Any:
    from ray import tune
    from ray.tune.search import ConcurrencyLimiter

    from raytune_ext import EnhancedAdaCentSearch

    space = {"lr": tune.loguniform(*SPACE_ARGS["lr"]), "units": tune.randint(*SPACE_ARGS["units"])}
    searcher = EnhancedAdaCentSearch(space, "acc", "max", max_t=3, seed=7, n_candidates=64)
    return tune.Tuner(
        make_trainable(step_s, block_file),
        tune_config=tune.TuneConfig(
            num_samples=num_samples,
            reuse_actors=True,
            search_alg=ConcurrencyLimiter(searcher, max_concurrent=2),
        ),
        run_config=tune.RunConfig(storage_path=storage, name=name, verbose=0),
    )


if __name__ == "__main__":
    import ray

    spec = json.loads(sys.argv[1])
    ray.init(address=spec["address"], log_to_driver=False, logging_level=logging.ERROR)
    make_tuner(
        spec["storage"], spec["name"], spec["num_samples"], spec["step_s"], spec["block_file"]
    ).fit()

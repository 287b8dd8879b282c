"""Iterative-Deepening Hyperband in SMAC on real training: an MLP on digits, continued to a larger
max_budget on the same output directory (about a minute on 2 cores).

The budget is the number of training epochs of scikit-learn's ``MLPClassifier`` (``partial_fit``
once per epoch, trained from scratch for every trial as SMAC's multi-fidelity targets are). The
first run is one Hyperband iteration at ``max_budget=9`` epochs; the second run is the *same
script* with ``max_budget=27``: ``IterativeDeepeningHyperbandIntensifier`` continues the run in
its output directory (Brandt et al., eID-HB), reusing every result of the first run, where SMAC's
own ``Hyperband`` would ask on stdin whether to overwrite or rename the old run (SMAC3#898).
The cost of both parts and of a fresh Hyperband at 27 (what a re-run costs) are printed.

Run:  python examples/smac_idhb.py [--seed 0] [--out DIR]
      UVP_EXAMPLES_QUICK=1 python examples/smac_idhb.py   (CI: 3 epochs, then 9)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from ConfigSpace import Configuration, ConfigurationSpace, Float, Integer
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler
from smac import MultiFidelityFacade, Scenario

from smac_ext import IterativeDeepeningHyperbandIntensifier, hyperband_trials
from uvp_plugins.hyperband import HyperbandSchedule

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, stratify=y,
                                                      random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_valid = scaler.transform(X_train), scaler.transform(X_valid)
CLASSES = np.unique(y)
QUICK = os.environ.get("UVP_EXAMPLES_QUICK") == "1"  # CI's check that the example runs
R = 3 if QUICK else 9  # the first max_budget; the run is then continued at 3 * R


def space(seed: int) -> ConfigurationSpace:
    cs = ConfigurationSpace(seed=seed)
    cs.add([
        Float("learning_rate_init", (1e-4, 1e-1), log=True, default=1e-3),
        Float("alpha", (1e-6, 1e-1), log=True, default=1e-4),
        Integer("hidden", (8, 128), log=True, default=32),
        Integer("batch_size", (16, 256), log=True, default=64),
    ])
    return cs


def train(config: Configuration, seed: int = 0, budget: float = 1.0) -> float:
    """Validation error after ``budget`` epochs (lower is better)."""
    model = MLPClassifier(hidden_layer_sizes=(int(config["hidden"]),),
                          learning_rate_init=float(config["learning_rate_init"]),
                          alpha=float(config["alpha"]), batch_size=int(config["batch_size"]),
                          random_state=seed)
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(int(round(budget))):
            order = rng.permutation(len(X_train))
            model.partial_fit(X_train[order], y_train[order], classes=CLASSES)
    return 1.0 - float(model.score(X_valid, y_valid))


def run(max_budget: int, out: Path, seed: int) -> tuple[Configuration, IterativeDeepeningHyperbandIntensifier, float]:
    # n_trials is only a cap for ID-HB (it stops after one Hyperband iteration); keep it
    # unchanged between the runs so that SMAC sees the same initial design
    scenario = Scenario(space(seed), name="mlp-digits", output_directory=out, seed=seed,
                        deterministic=True, min_budget=1, max_budget=max_budget,
                        n_trials=hyperband_trials(1, R) + hyperband_trials(1, 3 * R))
    intensifier = IterativeDeepeningHyperbandIntensifier(scenario, eta=3, variant="efficient")
    smac = MultiFidelityFacade(scenario, train, intensifier=intensifier, logging_level=40)
    start = time.perf_counter()
    incumbent = smac.optimize()
    return incumbent, intensifier, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None,
                        help="SMAC output directory (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out if args.out is not None else Path(tmp)
        for max_budget in (R, 3 * R):
            incumbent, intensifier, seconds = run(max_budget, out, args.seed)
            ledger = intensifier.idhb.ledger
            print(f"max_budget={max_budget:2d}: {ledger.n_evaluations} trials so far, "
                  f"{ledger.full_charge} epochs trained in total, {seconds:.1f} s for this part")
            print(f"  incumbent: {dict(incumbent)}")
            print(f"  its validation error after {3 * R} epochs: "
                  f"{train(incumbent, args.seed, 3 * R):.4f}")
        fresh = HyperbandSchedule(3 * R, 3).total_budget
        print(f"a fresh Hyperband at {3 * R} trains {fresh} epochs; after the run at {R} a re-run "
              f"at {3 * R} brings the total to {HyperbandSchedule(R, 3).total_budget + fresh}, the "
              f"continued run to {ledger.full_charge}")


if __name__ == "__main__":
    main()

"""Runtime minimisation with a cutoff in SMAC3, with the Tobit-loss network surrogate.

Algorithm-configuration use of ``smac_ext.TobitEnsembleModel`` (Eggensperger et al., *Neural
Model-based Optimization with Right-Censored Observations*): we tune a small scikit-learn neural
network (``MLPClassifier`` with SGD on the bundled *digits* data) for **time-to-accuracy**, the
wall-clock seconds of training until the validation accuracy reaches 95 %. Every run is stopped at
a cutoff; a stopped run is a *right-censored* observation -- we only know its runtime exceeds the
cutoff -- reported to SMAC as ``StatusType.TIMEOUT`` with ``cost = cutoff``. The cutoff is adaptive
as in the paper: ``min(MAX_CUTOFF, 2 x the best runtime so far)``.

``tobit_facade_kwargs(scenario)`` wires the paper's procedure into the ordinary facade:

* ``CensoredRunHistoryEncoder`` keeps TIMEOUT runs in the training data *flagged as censored*
  (SMAC 2.x alone fits them as if the cutoff were their true cost);
* ``TobitEnsembleModel(n_members=1, log_y=True)`` trains one 3 x 50 tanh network with the Tobit
  loss on log runtimes, from scratch at every SMAC iteration;
* ``TobitThompsonSampling`` picks the next configuration at the minimum of that network (a
  Thompson sample).

Two ways to produce censored runs in SMAC:

1. (used here) ask/tell: the target enforces the cutoff itself and tells
   ``TrialValue(cost=cutoff, time=cutoff, status=StatusType.TIMEOUT)``;
2. ``Scenario(..., trial_walltime_limit=cutoff)`` with ``smac.optimize()``: SMAC stops the run
   at the limit and records it with ``crash_cost`` (``inf`` by default; SMAC 2.4.1 then reports
   CRASHED rather than TIMEOUT); the encoder uses the walltime limit as the censoring value (set
   ``timeout_cost`` otherwise);
3. algorithm configuration over instances with SMAC 2.4's adaptive capping
   (``AlgorithmConfigurationFacade``, ``Scenario(adaptive_capping=True, runtime_cutoff=...)``):
   the target returns its cutoff when stopped, SMAC records a SUCCESS, and the ``CutoffRecorder``
   callback in ``tobit_facade_kwargs`` keeps each run's cutoff so the encoder censors it (README,
   "Algorithm configuration across instances").

Runs in about a minute on 2 cores: ``python examples/smac_tobit_runtime.py``;
``UVP_EXAMPLES_QUICK=1 python examples/smac_tobit_runtime.py`` runs 10 trials (CI's check that
the example runs).
"""

from __future__ import annotations

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
from smac import HyperparameterOptimizationFacade, Scenario
from smac.runhistory.dataclasses import TrialValue
from smac.runhistory.enumerations import StatusType
from threadpoolctl import threadpool_limits

from smac_ext import tobit_facade_kwargs

MAX_CUTOFF = 1.5  # seconds
TARGET_ACCURACY = 0.95
QUICK = os.environ.get("UVP_EXAMPLES_QUICK") == "1"  # CI's check that the example runs
N_TRIALS = 10 if QUICK else 40

X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.3, random_state=0)


def time_to_accuracy(config: Configuration, cutoff: float, seed: int = 0) -> tuple[float, bool]:
    """Seconds of training until TARGET_ACCURACY, or (cutoff, True) if not reached in time."""
    net = MLPClassifier(
        hidden_layer_sizes=(int(config["units"]),),
        solver="sgd",
        learning_rate_init=float(config["learning_rate"]),
        momentum=float(config["momentum"]),
        batch_size=int(config["batch_size"]),
        alpha=float(config["weight_decay"]),
        random_state=seed,
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        while time.perf_counter() - start < cutoff:
            net.partial_fit(X_train, y_train, classes=np.arange(10))
            if net.score(X_val, y_val) >= TARGET_ACCURACY:
                elapsed = time.perf_counter() - start
                return (elapsed, False) if elapsed <= cutoff else (cutoff, True)
    return cutoff, True


def main() -> None:
    # One BLAS/OpenMP thread per process: these small models train fastest that way (more
    # threads only contend for the cores). Set OMP_NUM_THREADS to choose another count.
    threadpool_limits(int(os.environ.get("OMP_NUM_THREADS", "1")))
    cs = ConfigurationSpace(seed=0)
    cs.add(
        [
            Float("learning_rate", (1e-4, 1e-1), log=True),
            Float("momentum", (0.1, 0.99)),
            Integer("batch_size", (16, 512), log=True),
            Float("weight_decay", (1e-6, 1e-1), log=True),
            Integer("units", (16, 256), log=True),
        ]
    )
    with tempfile.TemporaryDirectory() as out:
        scenario = Scenario(
            cs, n_trials=N_TRIALS, deterministic=True, seed=0, output_directory=Path(out)
        )

        def unused_target(config: Configuration, seed: int = 0) -> float:
            raise RuntimeError("this example drives SMAC through ask/tell")

        smac = HyperparameterOptimizationFacade(
            scenario,
            unused_target,
            initial_design=HyperparameterOptimizationFacade.get_initial_design(
                scenario, n_configs=8
            ),
            overwrite=True,
            logging_level=40,
            **tobit_facade_kwargs(scenario),
        )
        best, best_config = float("inf"), None
        for i in range(N_TRIALS):
            info = smac.ask()
            cutoff = min(MAX_CUTOFF, 2.0 * best)
            runtime, timed_out = time_to_accuracy(info.config, cutoff)
            status = StatusType.TIMEOUT if timed_out else StatusType.SUCCESS
            smac.tell(info, TrialValue(cost=runtime, time=runtime, status=status))
            if not timed_out and runtime < best:
                best, best_config = runtime, info.config
            print(f"trial {i:2d}: {status.name:7s} {runtime:.3f}s (cutoff {cutoff:.3f}s)")
        model = smac._model  # the TobitEnsembleModel: its last training set
        censored = getattr(model, "last_censored", np.zeros(0, dtype=bool))
        print(f"censored observations in the last fit: {int(censored.sum())}/{censored.size}")
        print(f"best time-to-{TARGET_ACCURACY:.0%}: {best:.3f}s with {best_config}")


if __name__ == "__main__":
    main()

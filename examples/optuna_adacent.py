"""Tune a scikit-learn MLP on the digits data set: our sampler + pruner beside Optuna's own.

Each trial trains an ``MLPClassifier`` epoch by epoch (``partial_fit``) and reports the validation
accuracy after every epoch. Every method gets the same number of epochs (``BUDGET``); a method
stops when its epochs are spent (the last trial is cut short), so the comparison is at equal cost:

* ours: ``EnhancedAdaCentSampler`` (Enhanced-AdaCent's coverage for the first trials, then
  expected improvement of a surrogate fitted to every trial's accuracy at the exploration depth,
  pruned trials included) + ``PredPruner`` (with this sampler the first 10 trials stop at the
  exploration depth, 2 epochs; then a trial stops once its optimistic last-slope prediction at
  T epochs, Alg. 6, cannot beat the best accuracy reached, or its accuracy falls out of the best
  half reported at its epoch);
* Optuna's ``GPSampler`` (what Optuna recommends below ~500 trials; needs torch) and its default
  ``TPESampler``, each training every trial to T epochs (a pruner would leave GPSampler, which
  learns from complete trials only, with almost nothing to learn from).

Run:  python examples/optuna_adacent.py      (about a minute on 2 cores)
      UVP_EXAMPLES_QUICK=1 python examples/optuna_adacent.py   (CI: a small budget, one seed)
"""

from __future__ import annotations

import importlib.util
import os
import time
import warnings

import numpy as np
import optuna
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from optuna_ext import EnhancedAdaCentSampler, PredPruner

QUICK = os.environ.get("UVP_EXAMPLES_QUICK") == "1"  # CI's check that the example runs
T = 20  # epochs per trial (the full budget of one trial, PredPruner's max_resource)
BUDGET = (4 if QUICK else 12) * T  # epochs per method and seed
SEEDS = (0,) if QUICK else (0, 1, 2)

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
scaler = StandardScaler().fit(X_train)
X_train, X_valid = scaler.transform(X_train), scaler.transform(X_valid)
CLASSES = np.unique(y)


class EpochBudget:
    """Counts the epochs a method trains; the best accuracy reached after each epoch."""

    def __init__(self, budget: int) -> None:
        self.budget, self.spent, self.best = budget, 0, [0.0]

    def objective(self, trial: optuna.Trial) -> float:
        clf = MLPClassifier(
            hidden_layer_sizes=(trial.suggest_int("units", 8, 128, log=True),),
            activation=trial.suggest_categorical("activation", ["relu", "tanh", "logistic"]),
            alpha=trial.suggest_float("alpha", 1e-6, 1e-1, log=True),
            learning_rate_init=trial.suggest_float("learning_rate_init", 1e-5, 1e-1, log=True),
            batch_size=trial.suggest_categorical("batch_size", [64, 128, 256]),
            random_state=0,
        )
        accuracy = 0.0
        for epoch in range(1, T + 1):
            if self.spent >= self.budget:  # the method's epochs are spent: stop here
                raise optuna.TrialPruned()
            clf.partial_fit(X_train, y_train, classes=CLASSES)  # one epoch
            accuracy = float(clf.score(X_valid, y_valid))
            self.spent += 1
            self.best.append(max(self.best[-1], accuracy))
            trial.report(accuracy, epoch)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return accuracy


def run(make_sampler, pruner) -> tuple[float, float, float, int]:  # type: ignore[no-untyped-def]
    """Best accuracy at half and at all of the budget (mean over seeds), seconds, trials."""
    half, final, seconds, trials = [], [], 0.0, 0
    for seed in SEEDS:
        budget = EpochBudget(BUDGET)
        study = optuna.create_study(direction="maximize", sampler=make_sampler(seed), pruner=pruner)
        start = time.perf_counter()
        while budget.spent < BUDGET:
            study.optimize(budget.objective, n_trials=1)
        seconds += time.perf_counter() - start
        half.append(budget.best[BUDGET // 2])
        final.append(budget.best[BUDGET])
        trials += len(study.trials)
    return float(np.mean(half)), float(np.mean(final)), seconds / len(SEEDS), trials // len(SEEDS)


def main() -> None:
    # One BLAS/OpenMP thread per process: these small models train fastest that way (more
    # threads only contend for the cores). Set OMP_NUM_THREADS to choose another count.
    threadpool_limits(int(os.environ.get("OMP_NUM_THREADS", "1")))
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)

    methods = [
        ("EnhancedAdaCentSampler + PredPruner (ours)",
         lambda s: EnhancedAdaCentSampler(seed=s), PredPruner(max_resource=T)),
        ("TPESampler (Optuna's default)", lambda s: optuna.samplers.TPESampler(seed=s), None),
    ]
    if importlib.util.find_spec("torch") is not None:
        methods.insert(1, ("GPSampler", lambda s: optuna.samplers.GPSampler(seed=s), None))
    else:
        print("(GPSampler needs torch: pip install 'uvp-plugins[peers]')")
    print(f"MLP on digits, {BUDGET} epochs per method (trials of up to {T} epochs), "
          f"mean over seeds {list(SEEDS)}:")
    print(f"  {'method':44s} {'best acc @50%':>13s} {'@100%':>7s} {'trials':>6s} {'s/seed':>7s}")
    for name, make, pruner in methods:
        half, final, seconds, trials = run(make, pruner)
        print(f"  {name:44s} {half:13.4f} {final:7.4f} {trials:6d} {seconds:7.1f}")


if __name__ == "__main__":
    main()

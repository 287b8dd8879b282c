"""Tune a scikit-learn MLP on the digits data set with Enhanced-AdaCent in Optuna.

Each trial trains an ``MLPClassifier`` epoch by epoch (``partial_fit``) and reports the validation
accuracy after every epoch. ``EnhancedAdaCentSampler`` picks each new configuration as the next
center of Enhanced-KCenter (Bateni et al., Alg. 4/8) over 1000 Sobol candidates, using the
accuracies earlier trials reached at the exploration depth floor(0.1 T); ``PredPruner`` stops a
trial once its optimistic tail-fit prediction at T epochs cannot beat the best accuracy reached.

The same search is then repeated without pruning, to show how many epochs pruning saved.

Run:  python examples/optuna_adacent.py      (about a minute on 2 cores)
"""

from __future__ import annotations

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

T = 20  # epochs per trial (the full budget, PredPruner's max_resource)
N_TRIALS = 30

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
scaler = StandardScaler().fit(X_train)
X_train, X_valid = scaler.transform(X_train), scaler.transform(X_valid)
CLASSES = np.unique(y)


def objective(trial: optuna.Trial) -> float:
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
        clf.partial_fit(X_train, y_train, classes=CLASSES)  # one epoch
        accuracy = float(clf.score(X_valid, y_valid))
        trial.report(accuracy, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return accuracy


def run(pruner: optuna.pruners.BasePruner) -> tuple[optuna.Study, int, float]:
    study = optuna.create_study(
        direction="maximize", sampler=EnhancedAdaCentSampler(seed=0), pruner=pruner
    )
    start = time.perf_counter()
    study.optimize(objective, n_trials=N_TRIALS)
    epochs = sum(t.last_step or 0 for t in study.trials)
    return study, epochs, time.perf_counter() - start


def main() -> None:
    # One BLAS/OpenMP thread per process: these small models train fastest that way (more
    # threads only contend for the cores). Set OMP_NUM_THREADS to choose another count.
    threadpool_limits(int(os.environ.get("OMP_NUM_THREADS", "1")))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)

    study, epochs, seconds = run(PredPruner(max_resource=T))
    n_pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials)
    print(f"Enhanced-AdaCent + PredPruner: {N_TRIALS} trials, {n_pruned} pruned, "
          f"{epochs} epochs, {seconds:.1f} s")
    print(f"  best validation accuracy {study.best_value:.4f} (trial {study.best_trial.number})")
    print(f"  best params {study.best_params}")

    full, full_epochs, full_seconds = run(optuna.pruners.NopPruner())
    print(f"Same sampler without pruning:  {N_TRIALS} trials, {full_epochs} epochs, "
          f"{full_seconds:.1f} s, best validation accuracy {full.best_value:.4f}")
    print(f"Pruning spent {epochs} of {full_epochs} epochs ({100.0 * epochs / full_epochs:.0f} %).")


if __name__ == "__main__":
    main()

"""Hyperband on a scikit-learn MLP (digits), first up to 9 epochs, then continued up to 27.

Each trial trains an ``MLPClassifier`` epoch by epoch (``partial_fit``) and reports the validation
accuracy after every epoch. ``IterativeDeepeningHyperbandPruner`` runs Hyperband's brackets
(Brandt et al., *Iterative Deepening Hyperband*): first with ``max_resource=9``; then the SAME
study (same storage) is loaded with ``max_resource=27`` and continues: earlier trials keep their
brackets and results, promoted configurations continue from their checkpoints (pickled models
named after ``configuration_id``). Efficient ID-HB spends exactly what one Hyperband at 27 costs
(357 epochs).

For comparison, Optuna's ``HyperbandPruner`` cannot continue a study at a larger
``max_resource``: it is re-run at 27 in a new study, for as many trials as Hyperband at 27 has
configurations (49), every trial training from scratch.

Run:  python examples/optuna_idhb.py      (about a minute on 2 cores; BLAS limited to 1 thread)
      UVP_EXAMPLES_QUICK=1 python examples/optuna_idhb.py   (CI: 3 epochs, then 9)
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import time
import warnings

import numpy as np
import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from optuna_ext import IterativeDeepeningHyperbandPruner
from uvp_plugins.hyperband import HyperbandSchedule

QUICK = os.environ.get("UVP_EXAMPLES_QUICK") == "1"  # CI's check that the example runs
R = 3 if QUICK else 9  # the first max_resource; the study is then continued at 3 * R

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
scaler = StandardScaler().fit(X_train)
X_train, X_valid = scaler.transform(X_train), scaler.transform(X_valid)
CLASSES = np.unique(y)
CHECKPOINTS = tempfile.mkdtemp(prefix="idhb-checkpoints-")


def make_model(trial: optuna.Trial) -> MLPClassifier:
    return MLPClassifier(
        hidden_layer_sizes=(trial.suggest_int("units", 8, 128, log=True),),
        activation=trial.suggest_categorical("activation", ["relu", "tanh", "logistic"]),
        alpha=trial.suggest_float("alpha", 1e-6, 1e-1, log=True),
        learning_rate_init=trial.suggest_float("learning_rate_init", 1e-5, 1e-1, log=True),
        batch_size=trial.suggest_categorical("batch_size", [64, 128, 256]),
        random_state=0,
    )


def objective(trial: optuna.Trial) -> float:
    """Train from the configuration's checkpoint up to the pruner's max_resource epochs."""
    clf = make_model(trial)
    if trial.should_prune():  # a trial without work (none left at this max_resource)
        raise optuna.TrialPruned()
    path = os.path.join(
        CHECKPOINTS, f"{IterativeDeepeningHyperbandPruner.configuration_id(trial)}.pkl"
    )
    trained, accuracy = 0, 0.0
    if os.path.exists(path):  # a promoted configuration: continue where it stopped
        with open(path, "rb") as fh:
            clf, trained = pickle.load(fh)
    for epoch in range(trained + 1, trial.study.pruner.max_resource + 1):
        clf.partial_fit(X_train, y_train, classes=CLASSES)  # one epoch
        with open(path, "wb") as fh:
            pickle.dump((clf, epoch), fh)
        accuracy = float(clf.score(X_valid, y_valid))
        trial.report(accuracy, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return accuracy


def from_scratch(trial: optuna.Trial) -> float:
    """The same training without checkpoints, for Optuna's HyperbandPruner."""
    clf = make_model(trial)
    accuracy = 0.0
    for epoch in range(1, 3 * R + 1):
        clf.partial_fit(X_train, y_train, classes=CLASSES)
        accuracy = float(clf.score(X_valid, y_valid))
        trial.report(accuracy, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return accuracy


def epochs(study: optuna.Study, first: int = 0) -> int:
    """Epochs trained by the trials numbered >= first (each reports every epoch it trains)."""
    return sum(len(t.intermediate_values) for t in study.trials if t.number >= first)


def main() -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    storage = JournalStorage(JournalFileBackend(os.path.join(CHECKPOINTS, "study.log")))

    start = time.perf_counter()
    study = optuna.create_study(
        study_name="digits-mlp", storage=storage, direction="maximize",
        sampler=optuna.samplers.TPESampler(seed=0),
        pruner=IterativeDeepeningHyperbandPruner(max_resource=R, reduction_factor=3),
    )
    study.optimize(objective)  # the pruner stops the study when Hyperband at R is done
    n9, e9 = len(study.trials), epochs(study)
    print(f"Hyperband at {R}:  {n9} trials, {e9} epochs, best accuracy {study.best_value:.4f}")

    # Later (also in another process): the SAME study, continued up to 3 R epochs.
    pruner = IterativeDeepeningHyperbandPruner(max_resource=3 * R, reduction_factor=3)
    study = optuna.load_study(study_name="digits-mlp", storage=storage,
                              sampler=optuna.samplers.TPESampler(seed=1), pruner=pruner)
    study.optimize(objective)
    best = pruner.best_trial(study)
    assert best is not None
    ledger = pruner.core(study).ledger
    print(f"continued at {3 * R}: {len(study.trials) - n9} more trials, {epochs(study, n9)} more "
          f"epochs; in total {epochs(study)} epochs = the core's ledger {ledger.continuation} "
          f"({time.perf_counter() - start:.1f} s)")
    print(f"  best at {3 * R} epochs: accuracy {best.intermediate_values[3 * R]:.4f}, {best.params}")

    start = time.perf_counter()
    rerun = optuna.create_study(
        direction="maximize", sampler=optuna.samplers.TPESampler(seed=1),
        pruner=optuna.pruners.HyperbandPruner(min_resource=1, max_resource=3 * R, reduction_factor=3),
    )
    n_rerun = HyperbandSchedule(3 * R, 3).n_configs  # Hyperband's configurations at 3 R (49 at 27)
    rerun.optimize(from_scratch, n_trials=n_rerun)
    print(f"Optuna's HyperbandPruner re-run at {3 * R} (new study): {n_rerun} trials, {epochs(rerun)} "
          f"epochs from scratch, best accuracy {rerun.best_value:.4f} "
          f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    try:
        with threadpool_limits(limits=1):
            main()
    finally:
        shutil.rmtree(CHECKPOINTS, ignore_errors=True)

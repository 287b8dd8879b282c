"""CASH on scikit-learn's digits with Optuna and MaxUCBCashSampler (well under a minute on 2 cores).

The objective is the one Optuna users write for CASH: ``trial.suggest_categorical("model", ...)``
picks one of five model classes (SVC, random forest, k-NN, logistic regression, Gaussian naive
Bayes), then that class's hyperparameters are suggested. ``MaxUCBCashSampler`` lets MaxUCB
(Balef et al., *Put CASH on Bandits*, Alg. 1) choose the model class of every trial, while each
class runs its own ``TPESampler`` on its own trials, starting from the class's default
configuration (``CLASS_DEFAULTS``: scikit-learn's defaults where they lie in the ranges; the
centre of a range otherwise). The study is on a Journal file, run with ``n_jobs=2``: the
bandit's state is the storage, so workers and later runs continue it.

Run:  python examples/optuna_maxucb_cash.py [--n-trials 40] [--seed 0]
      UVP_EXAMPLES_QUICK=1 python examples/optuna_maxucb_cash.py   (CI: 12 trials by default)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from optuna_ext import MaxUCBCashSampler

QUICK = os.environ.get("UVP_EXAMPLES_QUICK") == "1"  # CI's check that the example runs

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, stratify=y,
                                                      random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_valid = scaler.transform(X_train), scaler.transform(X_valid)
MODELS = ["svc", "random_forest", "knn", "logreg", "naive_bayes"]
#: each class's first trial (Alg. 1 line 3): scikit-learn's defaults where the ranges hold them
CLASS_DEFAULTS = {"svc": {"svc:C": 1.0}, "knn": {"knn:n_neighbors": 5, "knn:weights": "uniform"},
                  "logreg": {"logreg:C": 1.0}}


def objective(trial: optuna.Trial) -> float:
    """Validation error of the model class MaxUCB chose, with that class's hyperparameters."""
    model = trial.suggest_categorical("model", MODELS)
    clf: Any
    if model == "svc":
        clf = SVC(C=trial.suggest_float("svc:C", 1e-2, 1e3, log=True),
                  gamma=trial.suggest_float("svc:gamma", 1e-4, 1.0, log=True))
    elif model == "random_forest":
        clf = RandomForestClassifier(
            n_estimators=trial.suggest_int("rf:n_estimators", 10, 60, log=True),
            max_depth=trial.suggest_int("rf:max_depth", 2, 20),
            max_features=trial.suggest_float("rf:max_features", 0.05, 1.0),
            random_state=0,
        )
    elif model == "knn":
        clf = KNeighborsClassifier(
            n_neighbors=trial.suggest_int("knn:n_neighbors", 1, 30, log=True),
            weights=trial.suggest_categorical("knn:weights", ["uniform", "distance"]),
        )
    elif model == "logreg":
        clf = LogisticRegression(C=trial.suggest_float("logreg:C", 1e-3, 1e2, log=True),
                                 max_iter=300)
    else:
        clf = GaussianNB()  # no hyperparameters: MaxUCB evaluates it once
    with threadpool_limits(1):
        clf.fit(X_train, y_train)
        return 1.0 - float(clf.score(X_valid, y_valid))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-trials", type=int, default=12 if QUICK else 40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        storage = JournalStorage(JournalFileBackend(os.path.join(tmp, "cash.log")))
        sampler = MaxUCBCashSampler("model", class_defaults=CLASS_DEFAULTS, seed=args.seed)
        study = optuna.create_study(study_name="cash", storage=storage, sampler=sampler)
        t0 = time.perf_counter()
        half = args.n_trials // 2
        study.optimize(objective, n_trials=half, n_jobs=2)
        # a later run (another process would do the same): the bandit continues from the storage
        sampler = MaxUCBCashSampler("model", class_defaults=CLASS_DEFAULTS, seed=args.seed)
        study = optuna.load_study(study_name="cash", storage=storage, sampler=sampler)
        study.optimize(objective, n_trials=args.n_trials - half, n_jobs=2)
        print(f"{len(study.trials)} trials in {time.perf_counter() - t0:.1f} s")
        print(f"best: error {study.best_value:.4f} with {study.best_params}")
        print(f"trials per model class (credited): {sampler.pulls(study)}")


if __name__ == "__main__":
    main()

"""CASH on scikit-learn's digits with SMAC and the MaxUCB intensifier (about a minute on 2 cores).

Five model classes (SVC, random forest, k-NN, logistic regression, Gaussian naive Bayes) form one
CASH ConfigSpace: a top-level categorical ``algorithm`` with each model's hyperparameters
conditioned on it. ``MaxUCBIntensifier`` splits it into one subspace per model class; every
iteration MaxUCB (Balef et al., *Put CASH on Bandits*, Alg. 1) picks the model class and that
class's own SMAC HPO (random forest surrogate + EI on its subspace) proposes the configuration,
each class starting from its default configuration (the hyperparameters' ``default``).
Everything else is the SMAC facade a user already calls.

Run:  python examples/smac_maxucb_cash.py [--n-trials 40] [--seed 0] [--alpha A]
      UVP_EXAMPLES_QUICK=1 python examples/smac_maxucb_cash.py   (CI: 12 trials by default)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from ConfigSpace import (
    Categorical,
    Configuration,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    Integer,
)
from ConfigSpace.hyperparameters import Hyperparameter
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from smac import HyperparameterOptimizationFacade, Scenario
from threadpoolctl import threadpool_limits

from smac_ext import MaxUCBIntensifier

QUICK = os.environ.get("UVP_EXAMPLES_QUICK") == "1"  # CI's check that the example runs

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, stratify=y,
                                                      random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_valid = scaler.transform(X_train), scaler.transform(X_valid)


def cash_space(seed: int) -> ConfigurationSpace:
    """The joint CASH space: ``algorithm`` selects the model, its hyperparameters depend on it."""
    cs = ConfigurationSpace(seed=seed)
    algorithm = Categorical("algorithm", ["svc", "random_forest", "knn", "logreg", "naive_bayes"])
    params: dict[str, list[Hyperparameter]] = {
        "svc": [Float("svc:C", (1e-2, 1e3), log=True, default=1.0),
                Float("svc:gamma", (1e-4, 1.0), log=True, default=1e-2)],
        "random_forest": [Integer("rf:n_estimators", (10, 60), log=True, default=20),
                          Integer("rf:max_depth", (2, 20), default=10),
                          Float("rf:max_features", (0.05, 1.0), default=0.3)],
        "knn": [Integer("knn:n_neighbors", (1, 30), log=True, default=5),
                Categorical("knn:weights", ["uniform", "distance"])],
        "logreg": [Float("logreg:C", (1e-3, 1e2), log=True, default=1.0)],
        "naive_bayes": [],  # no hyperparameters: a valid arm with a single configuration
    }
    cs.add(algorithm)
    for arm, hps in params.items():
        cs.add(hps)
        cs.add([EqualsCondition(hp, algorithm, arm) for hp in hps])
    return cs


def make_model(config: Configuration, seed: int) -> object:
    arm = config["algorithm"]
    if arm == "svc":
        return SVC(C=config["svc:C"], gamma=config["svc:gamma"])
    if arm == "random_forest":
        return RandomForestClassifier(n_estimators=config["rf:n_estimators"],
                                      max_depth=config["rf:max_depth"],
                                      max_features=config["rf:max_features"], random_state=seed)
    if arm == "knn":
        return KNeighborsClassifier(n_neighbors=config["knn:n_neighbors"],
                                    weights=config["knn:weights"])
    if arm == "logreg":
        return LogisticRegression(C=config["logreg:C"], max_iter=300)
    return GaussianNB()


def train(config: Configuration, seed: int = 0) -> float:
    """SMAC's target function: the hold-out error (1 - accuracy) of the configured model."""
    model = make_model(config, seed)
    model.fit(X_train, y_train)  # type: ignore[attr-defined]
    return 1.0 - float(model.score(X_valid, y_valid))  # type: ignore[attr-defined]


def main() -> None:
    # One BLAS/OpenMP thread per process: these small models train fastest that way (more
    # threads only contend for the cores). Set OMP_NUM_THREADS to choose another count.
    threadpool_limits(int(os.environ.get("OMP_NUM_THREADS", "1")))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-trials", type=int, default=12 if QUICK else 40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=None,
                        help="MaxUCB's exploration parameter (default: the intensifier's, 1)")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help="SMAC output directory (default: a temporary directory)")
    args = parser.parse_args()

    out = args.output_dir or Path(tempfile.mkdtemp(prefix="smac-maxucb-"))
    scenario = Scenario(cash_space(args.seed), name="maxucb-digits", deterministic=True,
                        n_trials=args.n_trials, seed=args.seed, output_directory=out)
    intensifier = MaxUCBIntensifier(scenario, alpha=args.alpha)
    smac = HyperparameterOptimizationFacade(scenario, train, intensifier=intensifier,
                                            overwrite=True, logging_level=40)
    start = time.perf_counter()
    incumbent = smac.optimize()
    wall = time.perf_counter() - start

    assert isinstance(incumbent, Configuration)
    print(f"{args.n_trials} trials in {wall:.1f} s; SMAC output in {scenario.output_directory}")
    print(f"incumbent (joint space), validation error {smac.runhistory.get_cost(incumbent):.4f}:")
    for name, value in incumbent.items():
        print(f"  {name} = {value}")
    print("pulls per model class (credited trials) and best error:")
    policy = intensifier.policy
    for arm, name in enumerate(intensifier.cash_space.arms):
        losses = policy.observations(arm)
        best = f"{min(losses):.4f}" if losses else "-"
        note = intensifier.unavailable_arms.get(name, "")
        print(f"  {name:14s} {len(losses):3d}  best {best}  {note}")


if __name__ == "__main__":
    main()

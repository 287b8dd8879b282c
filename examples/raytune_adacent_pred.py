"""Tune a scikit-learn MLP on digits with Ray Tune: our searcher + stopping rule beside Ray's own.

Each trial trains an ``MLPClassifier`` epoch by epoch (``partial_fit``) and reports the validation
accuracy after every epoch. Every method gets the same number of epochs (``BUDGET``, counted over
all trials); when they are spent the experiment stops, so the comparison is at equal cost:

* ours: :class:`raytune_ext.EnhancedAdaCentSearch` (Enhanced-AdaCent's coverage for the first
  trials, then expected improvement of a surrogate fitted to every trial's accuracy at the
  exploration depth, stopped trials included) with :class:`raytune_ext.PredStoppingScheduler`
  (``n_probes=10``: the first ten trials stop at the exploration depth, as the Optuna pruner's
  probe phase does with our sampler; then a trial stops once its optimistic last-slope
  prediction at ``T`` epochs, Alg. 6, cannot beat the best accuracy reached, or its accuracy
  falls out of the best half reported at its epoch);
* Ray's default search (random, ``BasicVariantGenerator``) with ``ASHAScheduler`` and with
  ``MedianStoppingRule``;
* ``OptunaSearch`` (TPE, if Optuna is installed) with ``ASHAScheduler``.

Two trials train at a time on a local 2-CPU cluster. Run:
``python examples/raytune_adacent_pred.py`` (a few minutes on 2 cores);
``UVP_EXAMPLES_QUICK=1 python examples/raytune_adacent_pred.py`` runs a small budget, one seed
(CI's check that the example runs).
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
import warnings

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before Ray: 127.0.0.1 only
os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # no result files
os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # no experiment table

import numpy as np  # noqa: E402
import ray  # noqa: E402
from ray import tune  # noqa: E402
from ray.tune import Callback, Stopper  # noqa: E402
from ray.tune.schedulers import ASHAScheduler, MedianStoppingRule  # noqa: E402
from ray.tune.search.basic_variant import BasicVariantGenerator  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from raytune_ext import EnhancedAdaCentSearch, PredStoppingScheduler  # noqa: E402

QUICK = os.environ.get("UVP_EXAMPLES_QUICK") == "1"  # CI's check that the example runs
T = 20  # epochs per trial (max_t of the schedulers)
BUDGET = (2 if QUICK else 12) * T  # epochs per method and seed, over all its trials
SEEDS = (0,) if QUICK else (0, 1)
SPACE = {
    "units": tune.lograndint(8, 129),
    "activation": tune.choice(["relu", "tanh", "logistic"]),
    "alpha": tune.loguniform(1e-6, 1e-1),
    "learning_rate_init": tune.loguniform(1e-5, 1e-1),
    "batch_size": tune.choice([64, 128, 256]),
}


def train_mlp(config: dict, data: tuple) -> None:
    """One epoch of ``partial_fit`` per reported result (no checkpoints: these schedulers stop
    trials, they never pause them)."""
    from threadpoolctl import threadpool_limits

    x_tr, x_va, y_tr, y_va = data
    clf = MLPClassifier(
        hidden_layer_sizes=(int(config["units"]),),
        activation=config["activation"],
        alpha=config["alpha"],
        learning_rate_init=config["learning_rate_init"],
        batch_size=int(config["batch_size"]),
        random_state=0,
    )
    classes = np.unique(y_tr)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(T):
            clf.partial_fit(x_tr, y_tr, classes=classes)
            tune.report({"accuracy": float(clf.score(x_va, y_va))})


class EpochBudget(Callback):
    """Counts the epochs trained by all trials and the best accuracy after each epoch; its
    ``stopper`` ends the experiment when ``BUDGET`` epochs are spent."""

    def __init__(self) -> None:
        self.spent, self.best = 0, [0.0]
        self.trials: set[str] = set()  # trials that trained at least one epoch
        self.flag = {"done": False}

    def on_trial_result(self, iteration: int, trials: list, trial, result: dict, **info) -> None:
        if self.spent >= BUDGET:
            return
        self.spent += 1
        self.trials.add(trial.trial_id)
        self.best.append(max(self.best[-1], float(result["accuracy"])))
        self.flag["done"] = self.spent >= BUDGET

    def stopper(self) -> Stopper:
        flag = self.flag

        class Spent(Stopper):
            def __call__(self, trial_id: str, result: dict) -> bool:
                return flag["done"]

            def stop_all(self) -> bool:
                return flag["done"]

        return Spent()


def run(make_search, make_scheduler, data) -> tuple[float, float, float, int]:  # type: ignore[no-untyped-def]
    """Best accuracy at half and at all of the budget (mean over seeds), seconds, trials that
    trained."""
    half, final, seconds, trials = [], [], 0.0, 0
    for seed in SEEDS:
        budget = EpochBudget()
        start = time.perf_counter()
        tune.run(
            tune.with_parameters(train_mlp, data=data),
            config=SPACE,
            num_samples=200,
            metric="accuracy",
            mode="max",
            search_alg=make_search(seed),
            scheduler=make_scheduler(),
            stop=budget.stopper(),
            callbacks=[budget],
            resources_per_trial={"cpu": 1},
            storage_path=tempfile.mkdtemp(prefix="raytune-adacent-"),
            reuse_actors=True,
            raise_on_failed_trial=False,
            verbose=0,
        )
        seconds += time.perf_counter() - start
        best = budget.best + [budget.best[-1]] * (BUDGET + 1 - len(budget.best))
        half.append(best[BUDGET // 2])
        final.append(best[BUDGET])
        trials += len(budget.trials)
    return float(np.mean(half)), float(np.mean(final)), seconds / len(SEEDS), trials // len(SEEDS)


def main() -> None:
    x, y = load_digits(return_X_y=True)
    x_tr, x_va, y_tr, y_va = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    scaler = StandardScaler().fit(x_tr)
    data = (scaler.transform(x_tr), scaler.transform(x_va), y_tr, y_va)
    methods = [
        ("EnhancedAdaCentSearch + PredStoppingScheduler (ours)",
         lambda s: EnhancedAdaCentSearch(max_t=T, seed=s),
         lambda: PredStoppingScheduler(max_t=T, n_probes=3 if QUICK else 10)),
        ("random search + ASHAScheduler",
         lambda s: BasicVariantGenerator(random_state=s), lambda: ASHAScheduler(max_t=T, grace_period=1)),
        ("random search + MedianStoppingRule",
         lambda s: BasicVariantGenerator(random_state=s), lambda: MedianStoppingRule(grace_period=1)),
    ]
    if importlib.util.find_spec("optuna") is not None:
        import optuna
        from ray.tune.search.optuna import OptunaSearch

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        methods.append(("OptunaSearch (TPE) + ASHAScheduler",
                        lambda s: OptunaSearch(seed=s), lambda: ASHAScheduler(max_t=T, grace_period=1)))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_config=ray.LoggingConfig(log_level="ERROR"))
    try:
        print(f"MLP on digits, {BUDGET} epochs per method (trials of up to {T} epochs), "
              f"mean over seeds {list(SEEDS)}:")
        print(f"  {'method':54s} {'best acc @50%':>13s} {'@100%':>7s} {'trials':>6s} {'s/seed':>7s}")
        for name, make_search, make_scheduler in methods:
            half, final, seconds, trials = run(make_search, make_scheduler, data)
            print(f"  {name:54s} {half:13.4f} {final:7.4f} {trials:6d} {seconds:7.1f}")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()

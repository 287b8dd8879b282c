"""Iterative-Deepening Hyperband in Ray Tune: tune an SGDClassifier on digits at R=9 epochs, then
continue the *same* experiment at R=27 instead of starting over.

1. ``tune.run`` with :class:`raytune_ext.IterativeDeepeningHyperBandScheduler` at ``max_t=9``
   (``eta=3``): a full Hyperband whose trials train epoch by epoch (``partial_fit``) and
   checkpoint after every epoch.
2. ``raytune_ext.resume_with_larger_budget(path, trainable, max_t=27)``: the experiment is resumed
   with ``R = 27``; the brackets of the first run gain a rung, are filled up with the trials the
   first run never started, and promoted trials continue from their checkpoints.
3. For comparison, a fresh Hyperband run at ``R = 27`` on the same sampled configurations.

Prints the epochs trained in each phase and the budget saved by continuing. Run:
``python examples/raytune_idhb.py`` (about a minute on 2 cores);
``UVP_EXAMPLES_QUICK=1 python examples/raytune_idhb.py``: R=3, then 9 (CI's check that it runs).
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import warnings

import numpy as np
import ray
from ray import tune
from ray.tune import Callback, Checkpoint
from ray.tune.search.basic_variant import BasicVariantGenerator
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from raytune_ext import (
    STATE_FILE_NAME,
    IterativeDeepeningHyperBandScheduler,
    resume_with_larger_budget,
)

QUICK = os.environ.get("UVP_EXAMPLES_QUICK") == "1"  # CI's check that the example runs
ETA, R0 = 3, (3 if QUICK else 9)
SEED = 0
SPACE = {
    "alpha": tune.loguniform(1e-6, 1e-1),
    "eta0": tune.loguniform(1e-4, 1e-1),
    "learning_rate": tune.choice(["constant", "invscaling", "adaptive"]),
    "loss": tune.choice(["hinge", "log_loss", "modified_huber"]),
}


def train_sgd(config: dict, data: tuple) -> None:
    """One epoch of ``partial_fit`` per iteration; checkpoint = the pickled model."""
    x_tr, x_va, y_tr, y_va = data
    model = None
    ckpt = tune.get_checkpoint()
    if ckpt is not None:
        with ckpt.as_directory() as d, open(os.path.join(d, "model.pkl"), "rb") as fh:
            model = pickle.load(fh)
    if model is None:
        model = SGDClassifier(
            alpha=config["alpha"],
            eta0=config["eta0"],
            learning_rate=config["learning_rate"],
            loss=config["loss"],
            random_state=SEED,
        )
    classes = np.unique(y_tr)
    rng = np.random.default_rng(SEED)
    while True:
        order = rng.permutation(len(y_tr))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.partial_fit(x_tr[order], y_tr[order], classes=classes)
        acc = float(model.score(x_va, y_va))
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "model.pkl"), "wb") as fh:
                pickle.dump(model, fh)
            tune.report({"accuracy": acc}, checkpoint=Checkpoint.from_directory(d))


class EpochCounter(Callback):
    """Counts the epochs trained (one result per epoch) and the best accuracy at the largest epoch."""

    def __init__(self) -> None:
        self.epochs = 0
        self.best: dict[int, float] = {}

    def on_trial_result(self, iteration: int, trials: list, trial, result: dict, **info) -> None:
        self.epochs += 1
        it = int(result["training_iteration"])
        self.best[it] = max(self.best.get(it, 0.0), float(result["accuracy"]))


def main() -> None:
    x, y = load_digits(return_X_y=True)
    x_tr, x_va, y_tr, y_va = train_test_split(x, y, test_size=0.3, random_state=SEED, stratify=y)
    scaler = StandardScaler().fit(x_tr)
    data = (scaler.transform(x_tr), scaler.transform(x_va), y_tr, y_va)
    n_samples = IterativeDeepeningHyperBandScheduler.num_samples_needed(ETA * R0, ETA)
    storage = tempfile.mkdtemp(prefix="raytune-idhb-")
    # Ray's INFO lines off (its warnings and ours stay); the workers' output stays in their logs.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_config=ray.LoggingConfig(log_level="WARNING"),
    )
    try:
        trainable = tune.with_parameters(train_sgd, data=data)
        common = dict(storage_path=storage, verbose=0, reuse_actors=True)

        # 1) ID-HB at R = 9 (num_samples covers the later deepening to 27: unused trials wait).
        first = EpochCounter()
        analysis = tune.run(
            trainable,
            config=SPACE,
            num_samples=n_samples,
            search_alg=BasicVariantGenerator(random_state=SEED),
            scheduler=IterativeDeepeningHyperBandScheduler(
                metric="accuracy", mode="max", max_t=R0, reduction_factor=ETA
            ),
            name="idhb",
            callbacks=[first],
            **common,
        )
        path = analysis.experiment_path

        # 2) Continue the same experiment at R = 27.
        second = EpochCounter()
        resume_with_larger_budget(
            path,
            tune.with_parameters(train_sgd, data=data),
            max_t=ETA * R0,
            callbacks=[second],
            reuse_actors=True,
        )

        # 3) A fresh Hyperband at R = 27 on the same sampled configurations.
        fresh = EpochCounter()
        tune.run(
            trainable,
            config=SPACE,
            num_samples=n_samples,
            search_alg=BasicVariantGenerator(random_state=SEED),
            scheduler=IterativeDeepeningHyperBandScheduler(
                metric="accuracy", mode="max", max_t=ETA * R0, reduction_factor=ETA
            ),
            name="fresh",
            callbacks=[fresh],
            **common,
        )
    finally:
        ray.shutdown()
        shutil.rmtree(storage, ignore_errors=True)

    r1 = ETA * R0
    deep = first.epochs + second.epochs
    print(f"(the scheduler state lived in {os.path.join(path, STATE_FILE_NAME)})")
    print(
        f"ID-HB at R={R0}:                  {first.epochs:4d} epochs, best accuracy at {R0}: "
        f"{first.best.get(R0, float('nan')):.4f}"
    )
    print(
        f"continued to R={r1} (resumed):    {second.epochs:4d} epochs, best accuracy at {r1}: "
        f"{second.best.get(r1, float('nan')):.4f}"
    )
    print(
        f"fresh Hyperband at R={r1}:        {fresh.epochs:4d} epochs, best accuracy at {r1}: "
        f"{fresh.best.get(r1, float('nan')):.4f}"
    )
    print(
        f"total with ID-HB: {deep} epochs; re-running from scratch instead: "
        f"{first.epochs + fresh.epochs} epochs"
    )
    print(
        f"budget saved by continuing: {fresh.epochs - second.epochs} epochs "
        f"({100.0 * (fresh.epochs - second.epochs) / fresh.epochs:.0f}% of the fresh run)"
    )


if __name__ == "__main__":
    main()

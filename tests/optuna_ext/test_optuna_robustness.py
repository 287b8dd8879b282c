"""Issue 29's defects, each as a user meets them: pickling, user candidates under guidance, NaN
choices, the probe phase in small studies, steps in other units, curves that cross without a
pruner."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from optuna_ext import EnhancedAdaCentSampler, PredPruner
from uvp_plugins.adacent.guidance import Guidance

pytestmark = pytest.mark.optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)


def _readme_objective(trial: optuna.Trial) -> float:
    """The README's Optuna example."""
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    acc = 0.0
    for epoch in range(1, 21):
        acc = (1 - abs(math.log10(lr) + 2) / 4) * (1 - 0.7**epoch)
        trial.report(acc, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return acc


def test_sampler_and_a_study_using_it_pickle_and_keep_working() -> None:
    sampler = EnhancedAdaCentSampler(seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=PredPruner(max_resource=20))
    study.optimize(_readme_objective, n_trials=12)
    copy = pickle.loads(pickle.dumps(study))
    copy.optimize(_readme_objective, n_trials=4)
    assert len(copy.trials) == 16
    again = pickle.loads(pickle.dumps(sampler))
    assert again.guidance == sampler.guidance


_CHILD = """
import pickle, sys
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
sampler = pickle.load(open(sys.argv[1], "rb"))
storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(sys.argv[2]))
study = optuna.load_study(study_name="spawned", storage=storage, sampler=sampler)
study.optimize(lambda t: (t.suggest_float("x", 0.0, 1.0) - 0.3) ** 2, n_trials=6)
print(len(study.trials))
"""


def test_a_pickled_sampler_works_in_another_process(tmp_path: Path) -> None:
    """What spawn-based multiprocessing does: the sampler is pickled, a fresh interpreter
    unpickles it and runs trials on the shared storage."""
    journal = str(tmp_path / "j.log")
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(journal))
    study = optuna.create_study(study_name="spawned", storage=storage, sampler=EnhancedAdaCentSampler(seed=1))
    study.optimize(lambda t: (t.suggest_float("x", 0.0, 1.0) - 0.3) ** 2, n_trials=4)
    blob = tmp_path / "sampler.pkl"
    blob.write_bytes(pickle.dumps(study.sampler))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(blob), journal], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "10"
    xs = [t.params["x"] for t in optuna.load_study(study_name="spawned", storage=storage).trials]
    assert len(set(xs)) == 10  # the child continued the same sequence: no repeats


def test_user_candidates_are_honoured_with_guidance() -> None:
    candidates = [{"x": x / 10, "y": y / 10} for x in range(11) for y in range(0, 11, 2)]
    allowed = {(c["x"], c["y"]) for c in candidates}
    study = optuna.create_study(sampler=EnhancedAdaCentSampler(seed=0, candidates=candidates))
    study.optimize(
        lambda t: (t.suggest_float("x", 0, 1) - 0.33) ** 2 + (t.suggest_float("y", 0, 1) - 0.71) ** 2,
        n_trials=40,
    )
    # trial 0 is sampled independently (no search space yet); every later one is a candidate
    outside = [t.number for t in study.trials[1:] if (t.params["x"], t.params["y"]) not in allowed]
    assert outside == []


def test_a_nan_choice_is_a_choice() -> None:
    def objective(trial: optuna.Trial) -> float:
        c = trial.suggest_categorical("c", [float("nan"), 1.0, 2.0])
        x = trial.suggest_float("x", 0.0, 1.0)
        return x + (0.0 if math.isnan(c) else c)

    study = optuna.create_study(sampler=EnhancedAdaCentSampler(seed=0))
    study.optimize(objective, n_trials=20)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert any(math.isnan(t.params["c"]) for t in study.trials)


@pytest.mark.parametrize("n_trials", [11, 12, 15])
def test_the_probe_phase_leaves_a_complete_trial_past_n_probes(n_trials: int) -> None:
    study = optuna.create_study(
        direction="maximize", sampler=EnhancedAdaCentSampler(seed=0), pruner=PredPruner(max_resource=20)
    )
    study.optimize(_readme_objective, n_trials=n_trials)
    states = [t.state for t in study.trials]
    assert states[:10] == [TrialState.PRUNED] * 10  # the probes
    assert TrialState.COMPLETE in states[10:]
    assert study.best_value > 0.0


def test_steps_in_samples_seen_still_complete_trials() -> None:
    """Trials report after every batch of their own size: the steps differ between trials."""
    n_samples = 60_000

    def objective(trial: optuna.Trial) -> float:
        lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
        batch = trial.suggest_categorical("batch", [500, 937, 1000, 1500])
        quality = 1 - abs(math.log10(lr) + 2) / 4
        acc, seen = 0.0, 0
        while seen < n_samples:
            seen = min(n_samples, seen + batch)
            acc = quality * (1 - math.exp(-seen / 8000))
            trial.report(acc, seen)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return acc

    study = optuna.create_study(
        direction="maximize",
        sampler=EnhancedAdaCentSampler(seed=0),
        pruner=PredPruner(max_resource=n_samples),
    )
    study.optimize(objective, n_trials=60)
    complete = [t for t in study.trials if t.state == TrialState.COMPLETE]
    pruned = [t for t in study.trials if t.state == TrialState.PRUNED]
    assert len(complete) >= 3 and len(pruned) >= 20
    assert study.best_value > 0.9


def test_curves_that_cross_without_a_pruner_the_final_value_is_optimised() -> None:
    """Reported curves whose early values rank the opposite of the final ones: without a pruner
    every trial completes, and the sampler must chase the final value, not the early one."""

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        y = trial.suggest_float("y", 0.0, 1.0)
        final = 1.0 - (x - 0.8) ** 2 - (y - 0.2) ** 2
        early = 1.0 - (x - 0.2) ** 2 - (y - 0.8) ** 2
        v = 0.0
        for step in range(1, 21):
            w = step / 20
            v = (1 - w) * early + w * final - 0.3 * (1 - w)
            trial.report(v, step)
        return v

    ours = optuna.create_study(direction="maximize", sampler=EnhancedAdaCentSampler(seed=0))
    ours.optimize(objective, n_trials=40)
    rand = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0))
    rand.optimize(objective, n_trials=40)
    assert ours.best_value > rand.best_value and ours.best_value > 0.99
    # issue 17's targets (the value at the depth) chase the early optimum instead
    depth = optuna.create_study(
        direction="maximize",
        sampler=EnhancedAdaCentSampler(seed=0, guidance=Guidance(targets="depth")),
    )
    depth.optimize(objective, n_trials=40)
    assert depth.best_value < 0.99 < ours.best_value

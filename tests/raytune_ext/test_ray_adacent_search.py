"""EnhancedAdaCentSearch: the same decisions as the Optuna sampler for the same seed and results
(searcher methods driven directly), and real Ray Tune runs on the local test cluster: concurrent
trials without duplicates, errored trials, Tuner.restore, save/restore, bad input."""

from __future__ import annotations

import json
import math
import os
import pickle
import signal
import subprocess
import sys
import time
from typing import Any

import optuna
import pytest
from ray import tune

from optuna_ext import EnhancedAdaCentSampler
from raytune_ext import EnhancedAdaCentSearch
from uvp_plugins.adacent.guidance import Guidance
from uvp_plugins.bench.methods.ray_methods import QUIET_TUNE_ENV

pytestmark = pytest.mark.ray

T = 10
SPACE = {
    "lr": tune.loguniform(1e-4, 1e-1),
    "units": tune.randint(16, 129),
    "act": tune.choice(["relu", "tanh", "gelu"]),
    "drop": tune.quniform(0.0, 0.5, 0.1),
}


def curve(cfg: dict[str, Any], step: int) -> float:
    """A fixed learning curve of the configuration (higher is better)."""
    q = (
        1.0
        - abs(math.log10(cfg["lr"]) + 2.0) / 3.0
        - 0.2 * abs(cfg["drop"] - 0.2)
        + (0.05 if cfg["act"] == "tanh" else 0.0)
        + cfg["units"] / 1280.0
    )
    return q * (1.0 - 0.75**step)


def stop_at(cfg: dict[str, Any]) -> int:
    """The same fixed pruning decision in both frameworks: poor trials stop at step 3."""
    return 3 if curve(cfg, 3) < 0.35 else T


def drive_ray_searcher(searcher: EnhancedAdaCentSearch, n: int, sign: float) -> list[dict]:
    """Trials one at a time, as Ray calls a searcher: results through on_trial_result, the last
    one (the result Ray stops a trial on) through on_trial_complete."""
    configs = []
    for i in range(n):
        tid = f"trial_{i:05d}"
        cfg = searcher.suggest(tid)
        assert cfg is not None
        configs.append(cfg)
        last = stop_at(cfg)
        for step in range(1, last):
            searcher.on_trial_result(tid, {"m": sign * curve(cfg, step), "training_iteration": step})
        searcher.on_trial_complete(tid, {"m": sign * curve(cfg, last), "training_iteration": last})
    return configs


def run_optuna(first: dict, n: int, mode: str, guidance: Guidance | None) -> list[dict]:
    sign = 1.0 if mode == "max" else -1.0

    def objective(trial: optuna.Trial) -> float:
        cfg = {
            "lr": trial.suggest_float("lr", 1e-4, 1e-1, log=True),
            "units": trial.suggest_int("units", 16, 128),
            "act": trial.suggest_categorical("act", ["relu", "tanh", "gelu"]),
            "drop": trial.suggest_float("drop", 0.0, 0.5, step=0.1),
        }
        last = stop_at(cfg)
        for step in range(1, last + 1):
            trial.report(sign * curve(cfg, step), step)
        if last < T:
            raise optuna.TrialPruned()
        return sign * curve(cfg, T)

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(
        direction="maximize" if mode == "max" else "minimize",
        sampler=EnhancedAdaCentSampler(seed=3, max_resource=T, guidance=guidance),
    )
    # Optuna samples a study's first trial independently (its relative search space is empty
    # until a trial finished); give it the searcher's first choice, the sampler chooses the rest
    study.enqueue_trial(first)
    study.optimize(objective, n_trials=n)
    return [t.params for t in study.trials]


@pytest.mark.parametrize(
    ("mode", "guidance"), [("max", Guidance()), ("min", None)], ids=["guided-max", "paper-min"]
)
def test_decisions_equal_the_optuna_sampler(mode: str, guidance: Guidance | None) -> None:
    """Issue 20 acceptance: same seed, space, curves and pruning decisions -> the same 30
    configurations, past the guidance's n_init=10 (GP-guided phase) and for the paper sampler."""
    n, sign = 30, (1.0 if mode == "max" else -1.0)
    searcher = EnhancedAdaCentSearch(SPACE, metric="m", mode=mode, max_t=T, seed=3, guidance=guidance)
    ray_configs = drive_ray_searcher(searcher, n, sign)
    assert any(stop_at(c) < T for c in ray_configs) and any(stop_at(c) == T for c in ray_configs)
    assert run_optuna(ray_configs[0], n, mode, guidance) == ray_configs
    assert len({json.dumps(c, sort_keys=True) for c in ray_configs}) == n
    statuses = {t["status"] for t in searcher._engine.trials.values()}  # type: ignore[union-attr]
    assert statuses == {"complete", "pruned"}
    if guidance is not None:  # the guided phase decided: the paper sampler chooses otherwise
        paper = EnhancedAdaCentSearch(SPACE, metric="m", mode=mode, max_t=T, seed=3, guidance=None)
        other = drive_ray_searcher(paper, n, sign)
        assert other[: guidance.n_init] == ray_configs[: guidance.n_init]
        assert other[guidance.n_init :] != ray_configs[guidance.n_init :]


def test_save_restore_continues_the_same_sequence(tmp_path) -> None:
    """Two trials running at save time: a new searcher restored from the file continues exactly
    as the original, taking their later results; an errored trial is no center afterwards."""
    kw: dict[str, Any] = {"metric": "m", "mode": "max", "max_t": T, "seed": 5, "n_candidates": 128}
    a = EnhancedAdaCentSearch(SPACE, **kw)
    drive_ray_searcher(a, 4, 1.0)
    run1, run2 = a.suggest("r1"), a.suggest("r2")
    a.on_trial_result("r1", {"m": curve(run1, 1), "training_iteration": 1})
    a.on_trial_complete("trial_00002", None, error=True)  # finished before: ignored
    path = str(tmp_path / "searcher.json")
    a.save(path)
    b = EnhancedAdaCentSearch(SPACE, **kw)
    b.restore(path)
    for s in (a, b):
        s.on_trial_result("r1", {"m": curve(run1, 2), "training_iteration": 2})
        s.on_trial_complete("r2", {"m": curve(run2, T), "training_iteration": T})
        s.on_trial_complete("r1", error=True)
    c_pickled = pickle.loads(pickle.dumps(a))  # Tuner pickles its searcher
    nxt = [a.suggest(f"n{i}") for i in range(6)]
    assert nxt == [b.suggest(f"n{i}") for i in range(6)]
    assert nxt == [c_pickled.suggest(f"n{i}") for i in range(6)]
    assert a._engine.state_dict() == b._engine.state_dict()  # type: ignore[union-attr]
    trials = b._engine.trials  # type: ignore[union-attr]
    assert trials["r1"]["status"] == "failed" and trials["r1"]["curve"] == {1: curve(run1, 1), 2: curve(run1, 2)}
    assert trials["r2"]["status"] == "complete"

    # a searcher without a space yet takes the state once Ray sets the space (Tuner.restore)
    c = EnhancedAdaCentSearch(max_t=T, seed=5, n_candidates=128)
    c.restore(path)
    assert c.set_search_properties(None, None, dict(SPACE))
    assert c.metric == "m" and c.mode == "max"
    c.on_trial_result("r1", {"m": curve(run1, 2), "training_iteration": 2})
    assert c._engine.trials["r1"]["curve"] == {1: curve(run1, 1), 2: curve(run1, 2)}  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="another search space"):
        d = EnhancedAdaCentSearch({"x": tune.uniform(0, 1)}, **kw)
        d.restore(path)


def test_errored_trial_restarted_by_ray_counts_again() -> None:
    """An errored trial is failed (no center, its configuration stays taken); when Ray restarts
    it (resume_errored / max_failures) its new results make it a running, then complete trial."""
    s = EnhancedAdaCentSearch(SPACE, metric="m", mode="max", max_t=T, seed=0, n_candidates=64)
    cfg = s.suggest("e")
    s.on_trial_result("e", {"m": curve(cfg, 1), "training_iteration": 1})
    s.on_trial_complete("e", error=True)
    engine = s._engine
    assert engine is not None and engine.trials["e"]["status"] == "failed"
    assert s.suggest("f") != cfg
    s.on_trial_result("e", {"m": curve(cfg, 1), "training_iteration": 1})
    assert engine.trials["e"]["status"] == "running"
    s.on_trial_complete("e", {"m": curve(cfg, T), "training_iteration": T})
    assert engine.trials["e"]["status"] == "complete"
    assert engine.trials["e"]["curve"] == {1: curve(cfg, 1), T: curve(cfg, T)}


def test_time_attr_steps_and_missing_metrics() -> None:
    """Steps come from time_attr; results without the metric or with NaN are skipped; a trial
    stopped before max_t is pruned (its final value unused), one at max_t complete."""
    s = EnhancedAdaCentSearch(
        SPACE, metric="m", mode="max", time_attr="epoch", max_t=4, seed=0, n_candidates=32
    )
    cfg = s.suggest("a")
    s.on_trial_result("a", {"m": 0.1, "epoch": 2, "training_iteration": 1})
    s.on_trial_result("a", {"other": 1.0, "epoch": 3, "training_iteration": 2})
    s.on_trial_result("a", {"m": float("nan"), "epoch": 3, "training_iteration": 2})
    s.on_trial_complete("a", {"m": 0.3, "epoch": 3, "training_iteration": 3})
    s.suggest("b")
    s.on_trial_complete("b", {"m": 0.5, "epoch": 4, "training_iteration": 1})
    trials = s._engine.trials  # type: ignore[union-attr]
    assert trials["a"] == {**trials["a"], "status": "pruned", "curve": {2: 0.1, 3: 0.3}, "final": None}
    assert trials["a"]["config"]["units"] == cfg["units"]
    assert trials["b"]["status"] == "complete" and trials["b"]["final"] == 0.5


def test_points_to_evaluate_and_evaluated_points() -> None:
    s = EnhancedAdaCentSearch(
        {"net": {"lr": tune.loguniform(1e-4, 1e-1), "act": tune.choice(["relu", ("a", 1)])}, "bs": 32},
        metric="loss",
        mode="min",
        points_to_evaluate=[{"net": {"lr": 0.01, "act": ("a", 1)}}, {"net/act": "relu"}],
        seed=0,
        n_candidates=64,
    )
    assert s.suggest("a") == {"net": {"act": ("a", 1), "lr": 0.01}}
    second = s.suggest("b")
    assert second is not None and second["net"]["act"] == "relu" and second["net"]["lr"] != 0.01
    s.add_evaluated_point({"net": {"lr": 0.001, "act": "relu"}}, 0.5, intermediate_values=[0.9, 0.5])
    third = s.suggest("c")
    assert third not in ({"net": {"act": ("a", 1), "lr": 0.01}}, second)
    assert len(s._engine.trials) == 4  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "domain",
    [
        tune.quniform(0.2, 1.0, 0.2),
        tune.quniform(-1.0, 1.0, 0.5),
        tune.qrandint(3, 20, 4),
        tune.qrandint(1, 5, 1),
        tune.randint(2, 6),
        tune.lograndint(1, 9),
        tune.choice(["a", 2, None]),
    ],
    ids=["quniform", "quniform-neg", "qrandint", "qrandint-q1", "randint", "lograndint", "choice"],
)
def test_discrete_domains_cover_exactly_rays_values(domain: Any) -> None:
    """The translated parameter's values are exactly the values Ray's own sampler draws."""
    from raytune_ext._ray_space import RaySpace

    rs = RaySpace({"p": domain})
    param = rs.space["p"]
    indices = range(len(param.choices)) if hasattr(param, "choices") else range(param.low, param.high + 1)
    ours = [rs.to_ray({"p": i})["p"] for i in indices]
    assert set(ours) == set(domain.sample(size=3000, random_state=0))
    kind = {"Integer": int, "Float": float}.get(type(domain).__name__)
    assert kind is None or all(type(v) is kind for v in ours)  # plain Python numbers
    for v in domain.sample(size=50, random_state=1):  # and each maps back to itself
        assert rs.to_ray(rs.to_core({"p": v}))["p"] == v


def test_bad_input_is_refused_naming_the_argument() -> None:
    with pytest.raises(ValueError, match="mode"):
        EnhancedAdaCentSearch(mode="maximize")
    with pytest.raises(ValueError, match="max_t"):
        EnhancedAdaCentSearch(max_t=1)
    with pytest.raises(ValueError, match="n_candidates"):
        EnhancedAdaCentSearch(n_candidates=0)
    with pytest.raises(ValueError, match="delta"):
        EnhancedAdaCentSearch(delta=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        EnhancedAdaCentSearch(epsilon="big")
    with pytest.raises(ValueError, match="seed"):
        EnhancedAdaCentSearch(seed=-1)
    with pytest.raises(TypeError, match="time_attr"):
        EnhancedAdaCentSearch(time_attr="")
    with pytest.raises(TypeError, match="guidance"):
        EnhancedAdaCentSearch(guidance="gp")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="points_to_evaluate"):
        EnhancedAdaCentSearch(points_to_evaluate={"x": 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="points_to_evaluate.*'x'.*outside"):
        EnhancedAdaCentSearch({"x": tune.uniform(0, 1)}, points_to_evaluate=[{"x": 2.0}])
    for bad, name in [
        ({"a": tune.uniform(0, 1), "b": tune.sample_from(lambda _: 1)}, "'b'"),
        ({"a": tune.uniform(0, 1), "g": tune.grid_search([1, 2])}, "'g'"),
        ({"n": {"r": tune.randn()}}, "'n/r'"),
        ({"q": tune.qloguniform(1e-3, 1.0, 1e-3)}, "'q'"),
        ({"c": 3}, "no Ray Tune search domains"),
        ({"m": tune.choice([{"a": tune.uniform(0, 1)}, {"b": 1}])}, "'m'.*nested"),
        ({"l": [tune.uniform(0, 1)]}, "inside lists"),
    ]:
        with pytest.raises(ValueError, match=name):
            EnhancedAdaCentSearch(bad)
        with pytest.raises(ValueError, match=name):
            EnhancedAdaCentSearch().set_search_properties("m", "max", bad)
    with pytest.raises(RuntimeError, match="`metric`"):
        EnhancedAdaCentSearch({"x": tune.uniform(0, 1)}).suggest("t")
    with pytest.raises(RuntimeError, match="no search space"):
        EnhancedAdaCentSearch(metric="m", mode="max").suggest("t")
    s = EnhancedAdaCentSearch({"x": tune.uniform(0, 1)}, metric="m", mode="max")
    s.suggest("t")
    with pytest.raises(ValueError, match=r"result\['training_iteration'\] of trial t must be an int"):
        s.on_trial_result("t", {"m": 1.0, "training_iteration": 1.5})


# ------------------------------------------------------------------ real Ray
def _trainable(config: dict) -> None:
    cfg = {"lr": config["lr"], "units": config["units"], "act": config["act"], "drop": config["drop"]}
    assert config["const"] == "kept"
    if config.get("fail_lr") == cfg["lr"]:
        raise RuntimeError("this configuration fails")
    for step in range(1, 6):
        tune.report({"acc": curve(cfg, step)})


def _configs(results: Any) -> list[str]:
    keys = ("lr", "units", "act", "drop")
    return [
        json.dumps({k: r.config[k] for k in keys}, sort_keys=True) for r in results if r.config
    ]


def test_real_ray_concurrent_trials_and_errors(ray_cluster: str, tmp_path) -> None:
    """Tuner with max_concurrent_trials=2 (a ConcurrencyLimiter): every trial has its own
    configuration; the errored trial (the first point to evaluate) is failed in the core and the
    run goes on; constants of param_space reach the trainable."""
    bad = {"lr": 0.0123, "units": 50, "act": "gelu", "drop": 0.2}
    searcher = EnhancedAdaCentSearch(max_t=5, seed=1, n_candidates=64, points_to_evaluate=[bad])
    results = tune.Tuner(
        _trainable,
        param_space={**SPACE, "const": "kept", "fail_lr": bad["lr"]},
        tune_config=tune.TuneConfig(
            metric="acc", mode="max", num_samples=6, max_concurrent_trials=2, search_alg=searcher,
            reuse_actors=True,
        ),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="conc", verbose=0),
    ).fit()
    assert len(results) == 6
    configs = _configs(results)
    assert len(set(configs)) == 6 and json.dumps(bad, sort_keys=True) in configs
    assert len(results.errors) == 1
    trials = searcher._engine.trials  # type: ignore[union-attr]
    assert sorted(t["status"] for t in trials.values()) == ["complete"] * 5 + ["failed"]
    assert [t["config"]["lr"] for t in trials.values() if t["status"] == "failed"] == [bad["lr"]]
    assert all(len(t["curve"]) == 5 for t in trials.values() if t["status"] == "complete")
    best = results.get_best_result()
    assert best.metrics["acc"] == max(r.metrics["acc"] for r in results if r.error is None)


def test_real_ray_grid_search_is_refused(ray_cluster: str, tmp_path) -> None:
    with pytest.raises(Exception, match="'units'.*grid_search"):
        tune.Tuner(
            _trainable,
            param_space={**SPACE, "units": tune.grid_search([16, 32])},
            tune_config=tune.TuneConfig(metric="acc", mode="max", search_alg=EnhancedAdaCentSearch()),
            run_config=tune.RunConfig(storage_path=str(tmp_path), name="grid", verbose=0),
        ).fit()


def _searcher_state(path: str) -> dict[str, Any] | None:
    """The newest searcher checkpoint Ray wrote into the experiment directory."""
    files = sorted(f for f in os.listdir(path) if f.startswith("searcher-state-")) if os.path.isdir(path) else []
    for f in reversed(files):
        try:
            with open(os.path.join(path, f), encoding="utf-8") as fh:
                return json.load(fh)  # type: ignore[no-any-return]
        except (OSError, ValueError):  # being replaced right now
            continue
    return None


def test_killed_driver_then_tuner_restore_continues(ray_cluster: str, tmp_path) -> None:
    """The driver (a separate process; the searcher with its own space and metric inside an
    explicit ConcurrencyLimiter) is killed with SIGKILL once the searcher checkpoint holds
    three trials; Tuner.restore continues from the saved state: the restored trials keep their
    configurations, the new ones are new (a searcher that forgot its state would propose the
    first configurations again) and the run ends with num_samples distinct configurations."""
    from adacent_search_driver import make_trainable

    n, storage, name = 6, str(tmp_path / "storage"), "killed"
    path = os.path.join(storage, name)
    block = str(tmp_path / "block")
    spec = {
        "address": ray_cluster, "storage": storage, "name": name, "num_samples": n,
        "step_s": 0.5, "block_file": block,
    }
    env = dict(os.environ, RAY_ADDRESS=ray_cluster, TUNE_GLOBAL_CHECKPOINT_S="0", **QUIET_TUNE_ENV)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(__file__), env.get("PYTHONPATH", "")])
    driver = os.path.join(os.path.dirname(__file__), "adacent_search_driver.py")
    proc = subprocess.Popen(
        [sys.executable, driver, json.dumps(spec)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    saved: dict[str, Any] | None = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            saved = _searcher_state(path)
            if saved and saved["engine"] and len(saved["engine"]["trials"]) >= 3:
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"the driver ended (exit {proc.returncode}) before the kill"
        # Hold the trials, so that Ray's snapshot files (experiment, searcher, ConcurrencyLimiter
        # state: written and synced one after the other) are all current when the kill comes.
        open(block, "w").close()
        time.sleep(2.0)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    saved = _searcher_state(path)
    assert saved is not None and saved["engine"] is not None
    before = {t["key"]: t["config"] for t in saved["engine"]["trials"]}
    assert 3 <= len(before) < n

    os.unlink(block)
    results = tune.Tuner.restore(path, make_trainable(0.05, block), resume_unfinished=True).fit()
    assert len(results) == n and not results.errors
    configs = [json.dumps({k: r.config[k] for k in ("lr", "units")}) for r in results]
    assert len(set(configs)) == n, configs
    final = _searcher_state(path)
    assert final is not None
    trials = {t["key"]: t for t in final["engine"]["trials"]}
    assert len(trials) == n and all(t["status"] == "complete" for t in trials.values()), trials
    assert all(trials[k]["config"] == c for k, c in before.items())
    by_id = {r.metrics["trial_id"]: r.config for r in results}
    for key, t in trials.items():
        assert by_id[key]["units"] == t["config"]["units"]

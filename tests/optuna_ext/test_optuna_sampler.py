"""EnhancedAdaCentSampler driven through real Optuna studies."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState, create_trial

from optuna_ext import EnhancedAdaCentSampler, OptunaSpace, PredPruner, to_distributions
from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace

pytestmark = pytest.mark.optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)


def _mixed_objective(trial: optuna.Trial) -> float:
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    units = trial.suggest_int("units", 8, 128, log=True)
    act = trial.suggest_categorical("act", ["relu", "tanh", "logistic"])
    width = trial.suggest_float("width", 0.0, 1.0, step=0.25)
    layers = trial.suggest_int("layers", 1, 9, step=2)
    return -abs(math.log10(lr) + 2) - abs(math.log2(units) - 5) + (act == "relu") + width - layers / 9


def _candidate(t: optuna.trial.FrozenTrial) -> int | None:
    return t.system_attrs.get("uvp:candidate")


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_mixed_space_trials_are_distinct_mesh_points(direction: str) -> None:
    """The paper's sampler (guidance=None): every trial after the first is a mesh center."""
    study = optuna.create_study(
        direction=direction, sampler=EnhancedAdaCentSampler(seed=3, guidance=None)
    )
    study.optimize(_mixed_objective, n_trials=25)
    trials = study.trials
    assert all(t.state == TrialState.COMPLETE for t in trials)
    # trial 0: nothing finished yet -> independent sampling; then every trial is a mesh center
    assert _candidate(trials[0]) is None
    cands = [_candidate(t) for t in trials[1:]]
    assert all(isinstance(c, int) for c in cands)
    assert len(set(cands)) == len(cands)
    for t in trials:
        assert t.params["width"] in (0.0, 0.25, 0.5, 0.75, 1.0)
        assert t.params["layers"] in (1, 3, 5, 7, 9)
        assert 8 <= t.params["units"] <= 128 and isinstance(t.params["units"], int)
        assert 1e-4 <= t.params["lr"] <= 1e-1
        if _candidate(t) is not None:
            assert t.system_attrs["uvp:params"] == t.params


def test_same_seed_same_sequence_and_other_seed_differs() -> None:
    def run(seed: int) -> list[dict[str, object]]:
        study = optuna.create_study(sampler=EnhancedAdaCentSampler(seed=seed, n_candidates=256))
        study.optimize(_mixed_objective, n_trials=12)
        return [t.params for t in study.trials]

    assert run(5) == run(5)
    assert run(5) != run(6)


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_enhanced_uses_value_at_exploration_depth(direction: str) -> None:
    """Two centers on [0, 1]: a at 0.3 good early, b at 0.6 bad early (but best at the end).

    Plain k-center takes the farthest point (near 1, 0.4 from b); Enhanced-KCenter with the values
    at depth floor(0.1 * 10) = 1 treats b's neighbourhood as covered and goes near 0 instead. If
    the final values were used (b best), it would go near 1 as well; so it would if T were
    inferred from the last reported step (30: depth 3, where b is already best) instead of being
    read from the study's PredPruner.
    """
    good, bad, final_b = (0.9, 0.1, 0.99) if direction == "maximize" else (0.1, 0.9, 0.01)
    dist = {"x": FloatDistribution(0.0, 1.0)}

    def picks(enhanced: bool, from_pruner: bool = False) -> float:
        # T = 10 given to the sampler, or read from the study's PredPruner
        study = optuna.create_study(
            direction=direction,
            sampler=EnhancedAdaCentSampler(
                seed=0, epsilon=2.0, max_resource=None if from_pruner else 10, delta=0.1,
                enhanced=enhanced,
            ),
            pruner=PredPruner(max_resource=10) if from_pruner else None,
        )
        study.add_trial(
            create_trial(params={"x": 0.3}, distributions=dist, value=good,
                         intermediate_values={1: good, 30: good})
        )
        study.add_trial(
            create_trial(params={"x": 0.6}, distributions=dist, value=final_b,
                         intermediate_values={1: bad, 3: final_b, 30: final_b})
        )
        trial = study.ask(dist)
        return float(trial.params["x"])

    assert picks(enhanced=False) > 0.9
    assert picks(enhanced=True) < 0.1
    assert picks(enhanced=True, from_pruner=True) < 0.1


def test_auto_epsilon_and_pruned_failed_trials() -> None:
    T = 10

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", -2.0, 2.0)
        y = trial.suggest_int("y", 1, 100, log=True)
        if trial.number % 7 == 6:
            raise RuntimeError("simulated crash")
        v = 0.0
        for step in range(1, T + 1):
            v = (2.0 - abs(x - 0.5) - abs(math.log10(y) - 1)) * (1 - 0.5**step)
            trial.report(v, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return v

    study = optuna.create_study(
        direction="maximize",
        sampler=EnhancedAdaCentSampler(seed=1),
        pruner=PredPruner(max_resource=T),
    )
    study.optimize(objective, n_trials=30, catch=(RuntimeError,))
    states = [t.state for t in study.trials]
    assert states.count(TrialState.FAIL) == 4
    assert states.count(TrialState.PRUNED) > 0
    chosen = [
        tuple(sorted(t.system_attrs["uvp:params"].items()))
        for t in study.trials
        if "uvp:params" in t.system_attrs
    ]
    # failed trials' configurations are not handed out again either (mesh or local candidates)
    assert len(set(chosen)) == len(chosen) >= 28


def test_enqueue_trial_is_honoured_and_counts_as_center() -> None:
    study = optuna.create_study(sampler=EnhancedAdaCentSampler(seed=0, n_candidates=64))
    space = {"x": FloatDistribution(0.0, 1.0), "k": IntDistribution(0, 4)}
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_int("k", 0, 4), n_trials=3)
    study.enqueue_trial({"x": 0.123, "k": 2})
    study.enqueue_trial({"x": 0.777})  # partial: k is chosen by the sampler
    t1 = study.ask(space)
    assert t1.params == {"x": 0.123, "k": 2}
    study.tell(t1, 1.0)
    t2 = study.ask(space)
    assert t2.params["x"] == 0.777
    study.tell(t2, 1.0)
    assert study.trials[-1].system_attrs["uvp:params"]["x"] == 0.777
    # further trials never repeat an enqueued or earlier configuration
    for _ in range(10):
        t = study.ask(space)
        study.tell(t, 0.0)
    keys = [(t.params["x"], t.params["k"]) for t in study.trials]
    assert len(set(keys)) == len(keys)


def test_user_candidates_are_used_and_validated() -> None:
    cands = [{"x": x, "c": c} for x in (0.0, 0.5, 1.0) for c in ("a", "b")]
    study = optuna.create_study(sampler=EnhancedAdaCentSampler(candidates=cands, seed=0))

    def objective(trial: optuna.Trial) -> float:
        return trial.suggest_float("x", 0.0, 1.0) + (trial.suggest_categorical("c", ["a", "b"]) == "a")

    study.optimize(objective, n_trials=7)
    picked = [(t.params["x"], t.params["c"]) for t in study.trials[1:]]
    # six candidates: all handed out once before any repeats
    assert len(set(picked[:6])) == 6
    assert set(picked) <= {(c["x"], c["c"]) for c in cands}

    with pytest.raises(ValueError, match="same keys"):
        EnhancedAdaCentSampler(candidates=[{"x": 0.1}, {"y": 0.2}])
    with pytest.raises(ValueError, match="shape"):
        EnhancedAdaCentSampler(candidates=np.zeros(5))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        EnhancedAdaCentSampler(candidates=np.full((3, 2), 2.0))
    with pytest.raises(ValueError, match="empty"):
        EnhancedAdaCentSampler(candidates=[])

    # keys that are not parameters of the study: clear error when the space is known
    bad = optuna.create_study(sampler=EnhancedAdaCentSampler(candidates=[{"z": 0.1}]))
    bad.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
    with pytest.raises(ValueError, match="not in the study's search space"):
        bad.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)

    # unit-coordinate arrays: columns must match the relative search space
    arr = optuna.create_study(sampler=EnhancedAdaCentSampler(candidates=np.array([[0.1, 0.2]])))
    arr.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
    with pytest.raises(ValueError, match="columns"):
        arr.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)


def test_unit_array_candidates() -> None:
    u = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    study = optuna.create_study(sampler=EnhancedAdaCentSampler(candidates=u, seed=0))
    study.optimize(lambda t: t.suggest_float("a", 0, 10) + t.suggest_int("b", 0, 4), n_trials=4)
    got = {(t.params["a"], t.params["b"]) for t in study.trials[1:]}
    assert got == {(0.0, 0), (10.0, 4), (5.0, 2)}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_candidates": 0}, "n_candidates"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": "fast"}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"delta": 0.0}, "delta"),
        ({"max_resource": 1}, "max_resource"),
        ({"seed": -1}, r"seed must be an int >= 0 or None, got -1"),
    ],
)
def test_constructor_validation(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        EnhancedAdaCentSampler(**kwargs)  # type: ignore[arg-type]


def test_multi_objective_is_a_clear_error() -> None:
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=EnhancedAdaCentSampler())
    with pytest.raises(ValueError, match="multi-objective"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.0), n_trials=1)


def test_dynamic_and_conditional_params_fall_back_to_independent() -> None:
    study = optuna.create_study(sampler=EnhancedAdaCentSampler(seed=0, n_candidates=64))

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        if trial.suggest_categorical("branch", ["a", "b"]) == "a":
            return x + trial.suggest_float("ya", 0, 1)
        return x - trial.suggest_int("yb", 0, 3)

    study.optimize(objective, n_trials=15)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    # the relative space is the intersection over finished trials: once both branches have
    # finished, only x and branch are chosen on the mesh; ya / yb are sampled independently
    both = max(min(t.number for t in study.trials if t.params["branch"] == b) for b in "ab")
    assert both < 14
    for t in study.trials[both + 1 :]:
        assert set(t.system_attrs["uvp:params"]) == {"x", "branch"}


def test_space_round_trip() -> None:
    dists = {
        "a": FloatDistribution(-1.0, 1.0),
        "b": FloatDistribution(1e-3, 1.0, log=True),
        "c": FloatDistribution(-10.2, 10.2, step=0.1),
        "d": IntDistribution(1, 100, log=True),
        "e": IntDistribution(-10, 10, step=2),
        "f": CategoricalDistribution([None, True, 2, "x"]),
    }
    osp = OptunaSpace(dists)
    configs, _ = osp.space.sobol_mesh(128, seed=0)
    for cfg in configs:
        params = osp.from_config(cfg)
        for name, value in params.items():
            dist = dists[name]
            assert dist._contains(dist.to_internal_repr(value)), (name, value)
        assert osp.to_config(params) == cfg
    with pytest.raises(ValueError, match="'a'"):
        osp.to_config({**osp.from_config(configs[0]), "a": 5.0})
    space = SearchSpace(
        [FloatParam("p", 0.1, 1.0, log=True), IntParam("q", 1, 5), CategoricalParam("r", ("u", "v"))]
    )
    assert OptunaSpace(to_distributions(space)).space == space


def test_a_categorical_holding_1_and_true_is_sampled_as_optuna_stores_it() -> None:
    # issue 19 (5): Optuna stores True as 1 when 1 comes first; the sampler proposed the
    # never-seen True again and again (22-24 of 25 trials got c=1)
    osp = OptunaSpace({"c": CategoricalDistribution([1, True, "a", 1.0])})
    assert osp.space["c"] == CategoricalParam("c", (1, "a"))
    assert osp.encode_value("c", True) == 1 and osp.encode_value("c", 1.0) == 1
    assert osp.params_key({"c": True}) == osp.params_key({"c": 1})
    with pytest.raises(ValueError, match="parameter 'c': 'z' is not one of"):
        osp.encode_value("c", "z")

    def objective(trial: optuna.Trial) -> float:
        trial.suggest_categorical("c", [1, True, "a"])
        return trial.suggest_float("x", 0.0, 1.0)

    # the paper's coverage (no guidance, which may settle on either choice: c does not matter)
    # splits the trials between the two distinct choices
    study = optuna.create_study(sampler=EnhancedAdaCentSampler(seed=0, guidance=None))
    study.optimize(objective, n_trials=25)
    cs = [t.params["c"] for t in study.trials]
    assert 10 <= cs.count(1) <= 15 and cs.count(1) + cs.count("a") == 25
    proposed = [t.system_attrs["uvp:params"]["c"] for t in study.trials[1:]]
    assert not any(isinstance(c, bool) for c in proposed)


def test_empty_and_single_valued_search_spaces() -> None:
    study = optuna.create_study(sampler=EnhancedAdaCentSampler(seed=0))
    study.optimize(lambda t: 1.0, n_trials=3)  # no parameters at all
    single = {"a": IntDistribution(2, 2), "b": CategoricalDistribution(["only"])}
    for _ in range(3):
        trial = study.ask(single)
        assert trial.params == {"a": 2, "b": "only"}
        study.tell(trial, 0.0)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


def test_exhausted_sobol_mesh_doubles_and_a_restart_makes_the_same_choices() -> None:
    """16 candidates, 40 trials: the mesh grows to 32 and 64 points (the next points of the same
    Sobol sequence), so every trial gets a new configuration; a fresh sampler on the same
    storage (another process) grows the mesh the same way and makes the same choices."""

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        y = trial.suggest_float("y", -1.0, 1.0)
        return -((x - 0.2) ** 2) - y**2

    storage = optuna.storages.InMemoryStorage()
    study = optuna.create_study(
        storage=storage, direction="maximize", study_name="g",
        sampler=EnhancedAdaCentSampler(seed=4, n_candidates=16, guidance=None),
    )
    study.optimize(objective, n_trials=40)
    params = [(t.params["x"], t.params["y"]) for t in study.trials]
    assert len(set(params)) == 40
    meshes = [t.system_attrs.get("uvp:mesh") for t in study.trials[1:]]
    assert meshes[0] == "sobol:4:16" and "sobol:4:32" in meshes and meshes[-1] == "sobol:4:64"
    # the candidate order of a grown mesh extends the smaller one
    first_16 = {t.system_attrs["uvp:candidate"] for t in study.trials[1:17]}
    assert first_16 == set(range(16))

    # another process: a fresh sampler on a copy of the storage chooses like the original one
    copy = optuna.storages.InMemoryStorage()
    optuna.copy_study(from_study_name="g", from_storage=storage, to_storage=copy)
    fresh = optuna.load_study(
        study_name="g",
        storage=copy,
        sampler=EnhancedAdaCentSampler(seed=4, n_candidates=16, guidance=None),
    )
    picks = []
    for s in (study, fresh):
        t = s.ask()
        picks.append((t.suggest_float("x", 0.0, 1.0), t.suggest_float("y", -1.0, 1.0)))
        s.tell(t, state=TrialState.FAIL)  # a failed trial: its candidate stays taken
    assert picks[0] == picks[1] and picks[0] not in params
    nxt = study.ask()
    assert (nxt.suggest_float("x", 0.0, 1.0), nxt.suggest_float("y", -1.0, 1.0)) not in [
        *params, picks[0]
    ]


def test_small_discrete_space_repeats_candidates_once_exhausted() -> None:
    study = optuna.create_study(sampler=EnhancedAdaCentSampler(seed=0, n_candidates=8))
    study.optimize(lambda t: float(t.suggest_categorical("c", ["a", "b", "c"]) == "b"), n_trials=8)
    values = [t.params["c"] for t in study.trials]
    assert set(values) == {"a", "b", "c"}
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert {t.system_attrs.get("uvp:mesh") for t in study.trials[1:]} == {"sobol:0:8"}


def _smooth(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", 0.0, 1.0)
    y = trial.suggest_float("y", 0.0, 1.0)
    units = trial.suggest_int("units", 8, 128, log=True)
    act = trial.suggest_categorical("act", ["relu", "tanh"])
    return 1.0 - (x - 0.7) ** 2 - (y - 0.2) ** 2 - 0.1 * abs(math.log2(units) - 5) - 0.2 * (act == "tanh")


def test_default_guidance_concentrates_where_the_values_point() -> None:
    """After guidance.n_init trials the default sampler maximises expected improvement (mesh and
    local candidates), so its later trials are better than the paper sampler's coverage."""
    later = {}
    for name, kwargs in (("guided", {}), ("paper", {"guidance": None})):
        study = optuna.create_study(
            direction="maximize", sampler=EnhancedAdaCentSampler(seed=1, **kwargs)
        )
        study.optimize(_smooth, n_trials=40)
        trials = study.trials
        assert len({tuple(sorted(t.params.items())) for t in trials}) == 40
        for t in trials:
            assert 8 <= t.params["units"] <= 128 and isinstance(t.params["units"], int)
            assert t.params["act"] in ("relu", "tanh")
        later[name] = sorted(t.value for t in trials[20:])[-10:]
        if name == "guided":
            sources = {t.system_attrs.get("uvp:mesh", "") for t in trials[12:]}
            assert "local" in sources  # refinement below the mesh's resolution
    assert sum(later["guided"]) > sum(later["paper"])
    assert max(later["guided"]) > 0.95


def test_default_guidance_restarts_from_storage_with_the_same_choices(tmp_path: Path) -> None:
    """The surrogate is a pure function of the trials: a fresh process (sampler) on the same
    storage proposes what the running one proposes."""
    url = f"sqlite:///{tmp_path / 'g.db'}"
    study = optuna.create_study(
        storage=url, study_name="g", direction="maximize", sampler=EnhancedAdaCentSampler(seed=2)
    )
    study.optimize(_smooth, n_trials=25)
    copy = f"sqlite:///{tmp_path / 'copy.db'}"
    optuna.copy_study(from_study_name="g", from_storage=url, to_storage=copy)
    fresh = optuna.load_study(study_name="g", storage=copy, sampler=EnhancedAdaCentSampler(seed=2))
    picks = []
    for s in (study, fresh):
        t = s.ask()
        picks.append(_smooth(t))
        s.tell(t, state=TrialState.FAIL)
    assert picks[0] == picks[1]
    assert study.trials[-1].system_attrs["uvp:params"] == fresh.trials[-1].system_attrs["uvp:params"]


def test_guidance_argument_is_checked() -> None:
    with pytest.raises(TypeError, match="guidance must be a uvp_plugins.adacent.guidance.Guidance or None"):
        EnhancedAdaCentSampler(guidance={"n_init": 3})  # type: ignore[arg-type]

"""Replay study of the CASH bandit rules on per-class Optuna trajectories (issue 30 tuning).

Each class's HPO in ``MaxUCBCashSampler`` sees only that class's trials and, with a per-class
sampler seeded per class (the tuning variants' ``class_tpe``), samples the same whatever the
other classes did in between. So one run that pulls every class ``L`` times (round robin) records
each class's loss sequence for its first ``L`` pulls, and any bandit rule can be replayed on those
sequences: pull ``n`` of class ``i`` yields the ``n``-th recorded loss of class ``i`` (the paper's
own protocol: pre-computed per-arm HPO runs, App. D). ``--check`` verifies that for one variant
against a real run of the sampler.

Usage (tuning tasks only, docs/results/cash_yahpo6.md)::

    python docs/results/scripts/cash_replay.py record --tasks 4538,40978 --seeds 0-4 --design 10
    python docs/results/scripts/cash_replay.py replay --design 10

The recorded trajectories go to ``bench-replay/`` (not committed).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path("bench-replay")
L = 196  # recorded pulls per class: 200 - (K - 1), the most one class can get


def record(task: str, seed: int, design: int, multivariate: bool) -> dict[str, list[float]]:
    import optuna

    from optuna_ext import MaxUCBCashSampler
    from uvp_plugins.bench.methods.optuna_cash import _class_tpe_factory, suggest_cash_config
    from uvp_plugins.bench.problems.cash_yahpo6 import YahpoCash6

    path = OUT / f"d{design}{'-mv' if multivariate else ''}" / f"{task}-{seed}.json"
    if path.exists():
        return json.loads(path.read_text())  # type: ignore[no-any-return]
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem = YahpoCash6(task)
    sampler = MaxUCBCashSampler(
        problem.selector, seed=seed, policy="RoundRobin", class_defaults=problem.arm_defaults,
        class_samplers=_class_tpe_factory(seed, multivariate=multivariate, design=design),
    )
    study = optuna.create_study(sampler=sampler)
    losses: dict[str, list[float]] = {a: [] for a in problem.arms}
    for _ in range(L * len(problem.arms)):
        trial = study.ask()
        config = suggest_cash_config(trial, problem)
        value = problem.evaluate(config)
        losses[config[problem.selector]].append(value)
        study.tell(trial, value)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(losses))
    return losses


class ClassRun:
    """One class's HPO as ``MaxUCBCashSampler`` runs it (the tuning variants' per-class TPE,
    default first), as a study of that class alone, extended on demand: ``loss(n)`` is the loss
    of the class's ``n``-th trial whichever bandit asked for it."""

    def __init__(self, problem: Any, arm: str, seed: int, design: int, multivariate: bool) -> None:
        import optuna

        from uvp_plugins.bench.methods.optuna_cash import _class_tpe_factory

        self.problem, self.arm = problem, arm
        sampler = _class_tpe_factory(seed, multivariate=multivariate, design=design)(arm)
        self.study = optuna.create_study(sampler=sampler)
        self.losses: list[float] = []

    def loss(self, n: int) -> float:
        from optuna_ext import to_distributions

        while len(self.losses) <= n:
            dists = to_distributions(self.problem.arm_spaces[self.arm])
            if not self.losses:  # the class's default configuration first
                defaults = (self.problem.arm_defaults or {}).get(self.arm, {})
                self.study.enqueue_trial(defaults)
            trial = self.study.ask(dists)
            config = {self.problem.selector: self.arm, **trial.params}
            value = self.problem.evaluate(config)
            self.study.tell(trial, value)
            self.losses.append(value)
        return self.losses[n]


class SmacArms:
    """Every arm's SMAC HPO exactly as :class:`smac_ext.MaxUCBIntensifier` runs it (each arm's
    ConfigSelector on its own run-history view, seeded per arm), driven arm by arm: ``loss(arm,
    n)`` is the loss of the arm's ``n``-th configuration whichever bandit asked for it."""

    def __init__(self, problem: Any, seed: int, n_initial: int, T: int = 200) -> None:
        import logging
        import tempfile

        from smac import HyperparameterOptimizationFacade, Scenario

        from smac_ext import MaxUCBIntensifier, cash_configspace

        logging.getLogger("smac").setLevel(logging.ERROR)
        self.problem = problem
        self._dir = tempfile.TemporaryDirectory(prefix="cash-replay-smac-")
        cs = cash_configspace(problem.arm_spaces, selector=problem.selector, arms=problem.arms,
                              seed=seed, prefix=False, defaults=problem.arm_defaults)
        scenario = Scenario(cs, deterministic=True, n_trials=T, seed=seed,
                            output_directory=Path(self._dir.name))
        self.intensifier = MaxUCBIntensifier(scenario, policy="RoundRobin", n_initial=n_initial)

        def target(config: Any, seed: int = 0) -> float:
            raise RuntimeError("driven arm by arm")

        self.smac = HyperparameterOptimizationFacade(scenario, target, intensifier=self.intensifier,
                                                     overwrite=True, logging_level=40)
        self.intensifier.__post_init__()
        self.intensifier._sync_views()
        self.key = self.intensifier.get_instance_seed_keys_of_interest()[0]
        self.losses: dict[int, list[float]] = {i: [] for i in range(len(problem.arms))}

    def loss(self, arm: int, n: int) -> float:
        from smac.runhistory.dataclasses import TrialInfo, TrialValue

        from smac_ext import plain_config

        while len(self.losses[arm]) <= n:
            config = self.intensifier._next_arm_config(arm)
            value = self.problem.evaluate(plain_config(config))
            info = TrialInfo(config=config, instance=self.key.instance, seed=self.key.seed)
            self.smac.runhistory.add(config=config, cost=value, seed=self.key.seed)
            self.intensifier._mirror(arm, info, TrialValue(cost=value))
            self.losses[arm].append(value)
        return self.losses[arm][n]


def smac_lockstep(task: str, seed: int, n_initial: int, rules: dict[str, Any],
                  T: int = 200) -> dict[str, tuple[list[float], list[int]]]:
    from uvp_plugins.bench.problems.cash_yahpo6 import YahpoCash6

    problem = YahpoCash6(task)
    arms = SmacArms(problem, seed, n_initial, T)

    class Lazy(dict):  # type: ignore[type-arg]
        def __getitem__(self, name: str) -> Any:
            return _SmacList(arms, problem.arms.index(name))

    return {name: replay(Lazy({a: None for a in problem.arms}), T, rule)  # type: ignore[misc]
            for name, rule in rules.items()}


class _SmacList:
    def __init__(self, arms: SmacArms, arm: int) -> None:
        self.arms, self.arm = arms, arm

    def __len__(self) -> int:
        return 10**9

    def __getitem__(self, n: int) -> float:
        return self.arms.loss(self.arm, n)


def lockstep(task: str, seed: int, design: int, multivariate: bool, rules: dict[str, Any],
             T: int = 200, problem_name: str = "cash-yahpo6") -> dict[str, tuple[list[float], list[int]]]:
    """Every rule of ``rules`` on the same per-class runs (each extended as far as some rule
    pulls that class)."""
    import optuna

    from uvp_plugins.bench.registry import get_problem

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem = get_problem(problem_name).make(task=task)
    runs = {a: ClassRun(problem, a, seed, design, multivariate) for a in problem.arms}

    class Lazy(dict):  # type: ignore[type-arg]
        def __getitem__(self, arm: str) -> Any:
            return _LazyList(runs[arm])

    return {name: replay(Lazy({a: None for a in problem.arms}), T, rule)  # type: ignore[misc]
            for name, rule in rules.items()}


class _LazyList:
    def __init__(self, run: ClassRun) -> None:
        self.run = run

    def __len__(self) -> int:
        return 10**9

    def __getitem__(self, n: int) -> float:
        return self.run.loss(n)


def replay(traj: dict[str, list[float]], T: int, rule: dict[str, Any]) -> tuple[float, list[int]]:
    """Best loss after each of ``T`` pulls under ``rule`` (MaxUCB settings + an optional
    exploration floor), and the pulls per class."""
    from uvp_plugins.bandits import MaxUCB

    arms = list(traj)
    k = len(arms)
    pol = MaxUCB(k, alpha=rule.get("alpha", 0.5), min_pulls=rule.get("min_pulls", 1),
                 burn_in=rule.get("burn_in", 0))
    n = [0] * k
    best = math.inf
    curve = []
    floor = rule.get("floor")
    for t in range(T):
        if floor is not None and not pol.in_burn_in and min(pol.n_pulls) >= pol.min_pulls:
            # an exploration floor: a class below floor(t) pulls is pulled (fewest first)
            need = floor * math.log(t + 1)
            low = [i for i in range(k) if n[i] < need]
            arm = min(low, key=lambda i: (n[i], i)) if low else pol.select()
            if low:
                pol._pending[arm] += 1
        else:
            arm = pol.select()
        if n[arm] >= len(traj[arms[arm]]):
            raise RuntimeError("trajectory too short")
        loss = traj[arms[arm]][n[arm]]
        n[arm] += 1
        pol.update(arm, loss)
        best = min(best, loss)
        curve.append(best)
    return curve, n  # type: ignore[return-value]


def rule_grid(d: int) -> dict[str, dict[str, Any]]:
    """The bandit rules compared on design ``d`` (per-class: default + ``d`` random)."""
    rules: dict[str, dict[str, Any]] = {}
    for alpha in (0.5, 1.0, 2.0):
        for mp in sorted({1, 3, 1 + d}):
            rules[f"a{alpha:g}-mp{mp}"] = {"alpha": alpha, "min_pulls": mp}
        for floor in (0.5, 1.0, 2.0):
            rules[f"a{alpha:g}-mp{1 + d}-floor{floor:g}"] = {"alpha": alpha, "min_pulls": 1 + d,
                                                           "floor": floor}
    rules["burnin"] = {"burn_in": 1 + d}
    rules["rr"] = {"min_pulls": 10_000}
    for alpha in (0.5, 1.0):
        for floor in (0.5, 1.0, 2.0):
            rules[f"a{alpha:g}-mp1-floor{floor:g}"] = {"alpha": alpha, "floor": floor}
    return rules


def sweep(tasks: list[str], seeds: list[int], design: int, multivariate: bool,
          problem_name: str = "cash-yahpo6") -> None:
    tag = "" if problem_name == "cash-yahpo6" else f"{problem_name}-"
    out = OUT / f"lockstep-{tag}d{design}{'-mv' if multivariate else ''}.jsonl"
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["task"], r["seed"]))
    rules = rule_grid(design)
    for t in tasks:
        for s in seeds:
            if (t, s) in done:
                continue
            res = lockstep(t, s, design, multivariate, rules, problem_name=problem_name)
            row = {"task": t, "seed": s, "design": design, "results": {
                name: {"at50": c[49], "at100": c[99], "at200": c[199], "pulls": n}
                for name, (c, n) in res.items()}}
            with out.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
            print("done", t, s, design, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("record", "replay", "sweep"))
    parser.add_argument("--tasks", default="4538,40978,1111,40496,40966,4534,40536,458,469,41157,"
                        "11,1461,1462,1464,15,40975,41142,40701")
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--design", type=int, default=10)
    parser.add_argument("--multivariate", action="store_true")
    parser.add_argument("--problem", default="cash-yahpo6")
    args = parser.parse_args()
    from uvp_plugins.bench.runner import parse_seeds

    tasks = args.tasks.split(",")
    seeds = parse_seeds(args.seeds)
    if args.what == "sweep":
        sweep(tasks, seeds, args.design, args.multivariate, args.problem)
        return
    if args.what == "record":
        for t in tasks:
            for s in seeds:
                record(t, s, args.design, args.multivariate)
                print("recorded", t, s, flush=True)
        return
    d = args.design
    rules = {
        "alg1": {},
        "alg1-a1": {"alpha": 1.0},
        "alg1-a2": {"alpha": 2.0},
        "mp": {"min_pulls": 1 + d},
        "mp-a1": {"min_pulls": 1 + d, "alpha": 1.0},
        "mp-a2": {"min_pulls": 1 + d, "alpha": 2.0},
        "burnin": {"burn_in": 1 + d},
        "floor1": {"floor": 1.0},
        "floor2": {"floor": 2.0},
        "mp-floor1": {"min_pulls": 1 + d, "floor": 1.0},
        "rr": {"min_pulls": 10_000},
    }
    import optuna  # noqa: F401  (the peer's runs are read from the bench directory)

    peer = {}
    for t in tasks:
        for s in seeds:
            f = Path("bench-tune6/cash-yahpo6") / t / "optuna-tpe-cash" / f"seed{s}.json"
            if f.exists():
                peer[(t, s)] = json.loads(f.read_text())["final"]
    for name, rule in rules.items():
        wins = ties = losses = 0
        finals: dict[str, list[float]] = {}
        for t in tasks:
            for s in seeds:
                path = OUT / f"d{d}{'-mv' if args.multivariate else ''}" / f"{t}-{s}.json"
                if not path.exists():
                    continue
                curve, _ = replay(json.loads(path.read_text()), 200, rule)
                finals.setdefault(t, []).append(curve[-1])
        for t, v in finals.items():
            ps = [peer[(t, s)] for s in seeds if (t, s) in peer]
            if len(ps) != len(v):
                continue
            a, b = float(np.mean(v)), float(np.mean(ps))
            if np.isclose(a, b):
                ties += 1
            elif a < b:
                wins += 1
            else:
                losses += 1
        mean = np.mean([np.mean(v) for v in finals.values()]) if finals else math.nan
        print(f"{name:10s} vs TPE tasks {wins}/{ties}/{losses}  mean final {mean:.5f}")


if __name__ == "__main__":
    main()

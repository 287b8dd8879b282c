"""Write the states of the core's online objects as JSON, one file per state format.

Run by hand at a commit to store what that commit writes (the stored files are the fixtures of
``tests/core/test_contract.py``; see README.md beside this file):

    PYTHONPATH=<checkout of that commit> python tests/core/states/make_states.py OUT_DIR LABEL

Each object is driven through its public ask/tell (observe/decide, fit) interface with fixed
seeds, so that the state holds every kind of entry its format has (results, pending work,
curves, crashes, fitted weights). Only public API that existed since each format's first commit
is used, so the script runs on every earlier commit too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


def idhb() -> Any:
    from uvp_plugins.hyperband import IterativeDeepeningHyperband

    hb = IterativeDeepeningHyperband(max_budget=9, eta=3, variant="efficient", seed=0)

    def sample(rng: np.random.Generator) -> dict[str, float]:
        return {"x": float(rng.uniform())}

    def evaluate(cfg: dict[str, float], budget: int) -> float:
        return (cfg["x"] - 0.3) ** 2 + 1.0 / budget

    hb.run(sample, evaluate)
    hb.deepen()  # 9 -> 27
    for _ in range(5):  # a few results at the new level, one failure, two jobs left pending
        job = hb.ask(sample)
        assert job is not None
        hb.tell(job, evaluate(job.config, job.budget))
    hb.fail(hb.ask(sample))
    hb.ask(sample)
    hb.ask(sample)
    return hb


def online_space() -> Any:
    """The search space of the online Enhanced-AdaCent states (not part of its state)."""
    from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace

    return SearchSpace([
        FloatParam("lr", 1e-4, 1e-1, log=True),
        IntParam("units", 8, 64),
        CategoricalParam("act", ["relu", "tanh"]),
    ])


def online_adacent(guided: bool = False) -> Any:
    from uvp_plugins.adacent.online import OnlineEnhancedAdaCent

    kwargs: dict[str, Any] = {}
    if guided:
        from uvp_plugins.adacent.guidance import Guidance

        kwargs["guidance"] = Guidance(n_init=3, n_local=8)
    ea = OnlineEnhancedAdaCent(online_space(), n_candidates=32, max_resource=10, seed=0, **kwargs)
    statuses = ["complete", "pruned", "complete", "failed", "complete", "running"]
    for t, status in enumerate(statuses):
        cfg = ea.ask().config
        acc = 0.9 - abs(np.log10(cfg["lr"]) + 2) / 10 - (0.05 if cfg["act"] == "tanh" else 0.0)
        last = {"complete": 10, "pruned": 3, "failed": 2, "running": 4}[status]
        curve = {b: acc * (1 - 0.5 ** b) for b in range(1, last + 1)}
        final = curve[last] if status == "complete" else None
        ea.tell(f"trial-{t}", cfg, status=status, curve=curve, final=final)
    return ea


def pred_rule() -> Any:
    from uvp_plugins.adacent.pred import PredStoppingRule

    rule = PredStoppingRule(max_resource=20, mode="max")
    for t in range(5):
        for step in range(1, 4 + 3 * t):
            rule.observe(f"trial-{t}", step, 0.5 + 0.08 * t - 0.3 * 0.7 ** step)
        rule.decide(f"trial-{t}")
    rule.observe("trial-5", 1, float("nan"))  # a non-finite report still advances the step
    return rule


def cash_bandit() -> Any:
    from uvp_plugins.bandits import CashBandit

    bandit = CashBandit(3, policy="MaxUCB", alpha=0.5, max_consecutive_crashes=2)
    losses = {0: [0.40, 0.35, 0.38, 0.36], 1: [0.20, 0.50, 0.30, 0.25, 0.22, 0.21]}
    for _ in range(8):
        arm = bandit.ask()
        if arm == 2:
            bandit.fail(arm)
        else:
            bandit.tell(arm, losses[arm].pop(0))
    bandit.ask()  # one pull pending
    return bandit


def tobit_ensemble() -> Any:
    from uvp_plugins.censored import TobitEnsemble

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(24, 2))
    y = X.sum(axis=1) + 0.05 * rng.normal(size=24)
    censored = y > 1.4
    model = TobitEnsemble(n_members=2, hidden=(4, 4), n_steps=20, seed=0)
    return model.fit(X, np.minimum(y, 1.4), censored)


def guided_online_adacent() -> Any:
    return online_adacent(guided=True)


#: fixture name -> the function that builds and drives the object
MAKERS = {
    "uvp-idhb": idhb,
    "uvp-online-adacent": online_adacent,
    "uvp-online-adacent-guided": guided_online_adacent,
    "uvp-pred-rule": pred_rule,
    "uvp-cash-bandit": cash_bandit,
    "uvp-tobit-ensemble": tobit_ensemble,
}


def main(out_dir: str, label: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, make in MAKERS.items():
        try:
            state = make().state_dict()
        except (ImportError, AttributeError) as exc:  # not at that commit (or no state yet)
            print(f"{name}: not at this commit ({exc})")
            continue
        version = str(state["format"]).rsplit("/", 1)[1]
        path = out / f"{name}.v{version}.{label}.json"  # the format itself is in the state
        path.write_text(json.dumps(state, indent=1, sort_keys=True, allow_nan=True) + "\n")
        print(f"{name}: {path}")


if __name__ == "__main__":
    main(*sys.argv[1:3])

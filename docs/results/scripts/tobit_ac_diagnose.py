"""Issue 31: why the Tobit model does (not) help SMAC's algorithm configuration -- on the *dev*
instances only (other generator seeds than the reported ones; nothing here chooses a setting).

Two measurements:

``proposals`` -- run ``ac-tobit``, ``ac-smac`` and ``ac-random`` (as ``uvp-bench tobit-ac``) on
the dev instances and read their run histories: per origin of a configuration (SMAC's
``config.origin``: the model's maximiser -- local search or sorted random search -- or the
facade's random interleaving), how many challengers there were, the share rejected after their
first instance (a run stopped by adaptive capping), the deterministic seconds spent per challenger,
the share of numeric parameters at a bound of their range, and the origin of the final incumbent.

``quality`` -- model quality on AC data (the paper's "evaluating the quality of our NNs on runtime
data", in the AC setting): a run history from an ``ac-random`` run (racing with adaptive capping)
is the training set; the truth is the PAR10 over the 20 training instances (cutoff
``kappa_max``) of held-out random configurations. Each model predicts every held-out
configuration's cost over the instances (``predict_marginalized``) and is scored by Spearman's
rank correlation with the truth: the Tobit network as ``tobit_facade_kwargs`` builds it (one
network; several seeds = several Thompson draws), a 5-network Tobit ensemble's mean, the same
network trained with the Gaussian loss on the capped values (the paper's *I*, censoring
ignored), and the AC facade's forest (raw costs, capped runs as exact; ``ac-smac``).

Usage::

    nice -n 10 python docs/results/scripts/tobit_ac_diagnose.py proposals --families jobshop facility --seeds 0 1 2
    nice -n 10 python docs/results/scripts/tobit_ac_diagnose.py quality --families jobshop facility --configs 30
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from uvp_plugins.bench.methods.tobit_ac import forest, run_ac
from uvp_plugins.bench.problems.cpsat_ac import ACProblem, configspace

KAPPA, N_INSTANCES = 0.5, 40


def _origin(config: Any) -> str:
    o = config.origin or ""
    if "Local Search" in o or "(sorted)" in o:
        return "model"
    if "Default" in o:
        return "default"
    return "random"


def _at_bound(config: Any) -> float:
    """Share of the active numeric parameters at a bound of their (vectorised) range."""
    from ConfigSpace.hyperparameters import NumericalHyperparameter

    cs = config.config_space
    vec = config.get_array()
    hits = [
        abs(vec[i] - 0.0) < 1e-9 or abs(vec[i] - 1.0) < 1e-9
        for i, hp in enumerate(cs.values())
        if isinstance(hp, NumericalHyperparameter) and np.isfinite(vec[i])
    ]
    return float(np.mean(hits)) if hits else math.nan


def proposals(families: list[str], seeds: list[int], methods: list[str], budget: float) -> list[dict[str, Any]]:
    rows = []
    for family in families:
        for seed in seeds:
            for method in methods:
                seen: dict[str, Any] = {}

                def inspect(smac: Any, seen: dict[str, Any] = seen) -> None:
                    rh = smac.runhistory
                    per: dict[str, list[tuple[int, bool, float, float]]] = defaultdict(list)
                    inc = smac.intensifier.get_incumbent()
                    for config in rh.get_configs():
                        keys = rh.get_instance_seed_budget_keys(config, highest_observed_budget_only=False)
                        trials = [rh[rh_key] for rh_key in rh if rh_key.config_id == rh.get_config_id(config)]
                        first = trials[0] if trials else None
                        capped_first = bool(
                            first is not None
                            and first.cost >= first.additional_info.get("cutoff", math.inf) - 1e-12
                        )
                        spent = float(sum(t.cost for t in trials))
                        per[_origin(config)].append((len(keys), capped_first, spent, _at_bound(config)))
                    seen["per"] = per
                    seen["incumbent_origin"] = _origin(inc)

                out = run_ac(method, family, seed, budget, KAPPA, N_INSTANCES, "dev", inspect=inspect)
                for origin, items in seen["per"].items():
                    arr = np.array([(n, c, s, b) for n, c, s, b in items], dtype=float)
                    rows.append({
                        "family": family, "seed": seed, "method": method, "origin": origin,
                        "configs": len(items), "rejected_first": float(arr[:, 1].mean()),
                        "instances_mean": float(arr[:, 0].mean()), "spent_per_config": float(arr[:, 2].mean()),
                        "at_bound": float(np.nanmean(arr[:, 3])),
                        "incumbent_origin": seen["incumbent_origin"], "test_par10": out["test_par10"],
                    })
                    print(json.dumps(rows[-1]), flush=True)
    return rows


def quality(families: list[str], n_configs: int, budget: float, seed: int = 0) -> list[dict[str, Any]]:
    from smac import AlgorithmConfigurationFacade, Scenario

    from smac_ext import TobitEnsembleModel, tobit_facade_kwargs

    rows = []
    for family in families:
        problem = ACProblem(family, n_instances=N_INSTANCES, kappa_max=KAPPA, instance_set="dev")
        train, _ = problem.split()
        history: dict[str, Any] = {}

        def keep(smac: Any, history: dict[str, Any] = history) -> None:
            history["rh"] = smac.runhistory

        run_ac("ac-random", family, seed, budget, KAPPA, N_INSTANCES, "dev", inspect=keep)
        rh = history["rh"]
        cs = configspace(1000 + seed)
        held_out = cs.sample_configuration(n_configs)
        evals = [problem.evaluate(c, train) for c in held_out]
        truth = np.array([e["par10"] for e in evals])
        timeouts = 1.0 - np.mean([e["solved"] for e in evals]) / len(train)
        X_test = np.array([c.get_array() for c in held_out])
        with tempfile.TemporaryDirectory() as out:
            scenario = Scenario(
                configspace(seed), instances=[i.name for i in train],
                instance_features=problem.features(train), deterministic=True,
                adaptive_capping=True, runtime_cutoff=int(math.ceil(KAPPA * len(train))),
                seed=seed, output_directory=Path(out),
            )
            kw = tobit_facade_kwargs(scenario)
            kw["runhistory_encoder"].runhistory = rh
            X, Y = kw["runhistory_encoder"].transform()
            plain = AlgorithmConfigurationFacade.get_runhistory_encoder(scenario)
            plain.runhistory = rh
            Xp, Yp = plain.transform()
            models: dict[str, list[Any]] = {
                "tobit 1 net (a Thompson draw; 5 draws)": [
                    TobitEnsembleModel(scenario, n_members=1, log_y=True, seed=s) for s in range(5)
                ],
                "tobit 5-net mean": [TobitEnsembleModel(scenario, n_members=5, log_y=True)],
                "gaussian 5-net mean (censoring ignored, I)": [
                    TobitEnsembleModel(scenario, n_members=5, log_y=True, loss="gaussian")
                ],
                "forest (ac-smac)": [forest(scenario)],
            }
            for name, instances in models.items():
                rhos = []
                for model in instances:
                    if name.startswith("forest"):
                        model.train(Xp, Yp)
                    else:
                        model.train(X, Y)
                    pred = model.predict_marginalized(X_test)[0][:, 0]
                    rhos.append(float(stats.spearmanr(pred, truth).statistic))
                rows.append({
                    "family": family, "model": name, "train_rows": int(len(Y)),
                    "censored": int(Y[:, 1].sum()), "held_out": n_configs,
                    "spearman_mean": float(np.mean(rhos)), "spearman_all": rhos,
                    "truth_timeout_share": float(timeouts),
                })
                print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("proposals", help="where the configurators' challengers come from and what they cost")
    p.add_argument("--families", nargs="+", default=["jobshop", "facility"])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--methods", nargs="+", default=["ac-tobit", "ac-smac", "ac-random"])
    p.add_argument("--json", default=None, help="also write the rows to this file")
    p.add_argument("--budget", type=float, default=20.0, help="as tobit-ac's --budget (default 20)")
    q = sub.add_parser("quality", help="rank correlation of the models' cost over instances with the truth")
    q.add_argument("--families", nargs="+", default=["jobshop", "facility"])
    q.add_argument("--configs", type=int, default=30, help="held-out random configurations (default 30)")
    q.add_argument("--json", default=None, help="also write the rows to this file")
    q.add_argument("--budget", type=float, default=20.0, help="the ac-random run's budget (default 20)")
    args = ap.parse_args()
    if args.what == "proposals":
        rows = proposals(args.families, args.seeds, args.methods, args.budget)
    else:
        rows = quality(args.families, args.configs, args.budget)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

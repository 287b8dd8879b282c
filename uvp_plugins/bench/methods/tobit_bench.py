"""Runtime-minimisation benchmark with a cutoff (Eggensperger et al., "Model-based Optimization",
Table 2/3 protocol) and the per-iteration overhead of the Tobit surrogate beside SMAC's forest.

The problem, ``sgd-time-to-loss``: the "runtime" of mini-batch SGD with momentum training an
L2-regularised logistic regression on scikit-learn's bundled *breast cancer* data, i.e. the number
of epochs (data passes, measured after every mini-batch) until the training objective is within
``tol`` of its optimum. Four hyperparameters as in the paper's Saps space: learning rate (log),
momentum, batch size (int, log) and the learning-rate decay power. Diverging or too slow settings
never reach the target: their run is stopped at the cutoff and reported as TIMEOUT at the cutoff.
The runtime counts algorithm steps, not seconds (as the paper counts Saps steps), so it is
deterministic and independent of the machine load; the data order is fixed, so each configuration
has one runtime (SMAC ``deterministic=True``).

Optimisation protocol: SMAC ask/tell with *adaptive capping* -- every new run gets the cutoff
``min(kappa_max, best runtime seen so far)`` ("new configurations use at most as much time as the
best configuration seen so far", paper) -- and a budget of total runtime spent (sum of observed,
capped runtimes), as an algorithm configurator's wall-clock budget. Methods:

* ``smac-tobit-ts``: ``HyperparameterOptimizationFacade(**tobit_facade_kwargs(scenario))`` --
  Tobit network with Thompson sampling, TIMEOUTs right-censored;
* ``smac-rf``: the facade's defaults (random forest, log-scaled encoder, EI): TIMEOUTs enter the
  forest at their capped cost as if exact (SMAC 2.x's behaviour);
* ``random``: random search with the same capping.

The incumbent is the configuration with the lowest *uncensored* observed runtime. Scores follow
the paper's appendix Table 3: per problem, the final incumbent runtimes of all runs of all methods
are normalised to ``100 * (worst - v) / (worst - best)``; the table reports the median and
quartiles per method.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "METHODS",
    "RuntimeJob",
    "SGDTimeToLoss",
    "format_runtime_table",
    "format_overhead_table",
    "main",
    "measure_overhead",
    "run_runtime_benchmark",
]

METHODS = ("smac-tobit-ts", "smac-rf", "random")


class SGDTimeToLoss:
    """Epochs of momentum SGD until an L2-regularised logistic regression is ``tol``-optimal."""

    name = "sgd-time-to-loss"

    def __init__(self, kappa_max: float = 40.0, tol: float = 2e-3, l2: float = 1e-2) -> None:
        if kappa_max <= 0:
            raise ValueError(f"kappa_max must be > 0, got {kappa_max}")
        if tol <= 0:
            raise ValueError(f"tol must be > 0, got {tol}")
        self.kappa_max = float(kappa_max)
        self.tol = float(tol)
        self.l2 = float(l2)
        self.X, self.y = _data()
        self.optimum = _optimum(self.l2)

    @staticmethod
    def configspace(seed: int = 0) -> Any:
        """The 4-d ConfigSpace (needs ConfigSpace)."""
        from ConfigSpace import ConfigurationSpace, Float, Integer

        cs = ConfigurationSpace(seed=seed)
        cs.add(
            [
                Float("learning_rate", (1e-3, 30.0), log=True),
                Float("momentum", (0.0, 0.99)),
                Integer("batch_size", (4, 256), log=True),
                Float("decay_power", (0.0, 1.0)),
            ]
        )
        return cs

    def objective(self, w: NDArray[np.float64]) -> float:
        z = self.X @ w
        return float(np.mean(np.logaddexp(0.0, -self.y * z)) + 0.5 * self.l2 * w @ w)

    def runtime(self, config: Any, cutoff: float | None = None) -> tuple[float, bool]:
        """``(runtime in epochs, timed_out)``; a timed-out run reports ``cutoff``."""
        cap = self.kappa_max if cutoff is None else min(float(cutoff), self.kappa_max)
        lr0 = float(config["learning_rate"])
        beta = float(config["momentum"])
        bs = int(config["batch_size"])
        power = float(config["decay_power"])
        X, y = self.X, self.y
        n, d = X.shape
        target = self.optimum + self.tol
        w = np.zeros(d)
        v = np.zeros(d)
        order = np.random.default_rng(0).permutation(n)
        seen = 0
        while True:
            epoch = seen / n
            for start in range(0, n, bs):
                if seen / n >= cap:
                    return cap, True
                idx = order[start : start + bs]
                Xb, yb = X[idx], y[idx]
                margin = np.clip(yb * (Xb @ w), -50.0, 50.0)
                g = -(Xb.T @ (yb / (1.0 + np.exp(margin)))) / idx.size + self.l2 * w
                lr = lr0 / (1.0 + epoch) ** power
                v = beta * v - lr * g
                w = w + v
                seen += idx.size
                if not np.all(np.isfinite(w)) or np.abs(w).max() > 1e6:
                    return cap, True  # diverged: it would never finish
                if self.objective(w) <= target:
                    return min(seen / n, cap), seen / n > cap


@lru_cache(maxsize=1)
def _data() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    X = np.hstack((X, np.ones((X.shape[0], 1))))
    return X, np.where(y > 0, 1.0, -1.0)


@lru_cache(maxsize=4)
def _optimum(l2: float) -> float:
    from scipy.optimize import minimize

    X, y = _data()

    def f(w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = y * (X @ w)
        val = float(np.mean(np.logaddexp(0.0, -z)) + 0.5 * l2 * w @ w)
        grad = -(X.T @ (y / (1.0 + np.exp(z)))) / X.shape[0] + l2 * w
        return val, grad

    res = minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-10})
    return float(res.fun)


def _run_one(
    method: str,
    problem: SGDTimeToLoss,
    seed: int,
    runtime_budget: float,
    max_trials: int,
    n_initial: int,
    cap_factor: float = 1.0,
    challengers: int = 1000,
) -> dict[str, Any]:
    import logging

    from uvp_plugins.bench import progress

    def report() -> None:  # share of the run done, for the harness's progress bar
        progress.update(max(spent / runtime_budget, n_trials / max_trials))

    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.runhistory.dataclasses import TrialValue
    from smac.runhistory.enumerations import StatusType

    from smac_ext import tobit_facade_kwargs

    logging.getLogger("smac").setLevel(logging.ERROR)
    cs = problem.configspace(seed)
    spent = 0.0
    best = float("inf")
    n_trials = n_timeouts = 0
    model_seconds = 0.0
    if method == "random":
        while spent < runtime_budget and n_trials < max_trials:
            cfg = cs.sample_configuration()
            rt, to = problem.runtime(cfg, cutoff=min(problem.kappa_max, cap_factor * best))
            spent += rt
            n_trials += 1
            n_timeouts += int(to)
            if not to:
                best = min(best, rt)
            report()
        return {"best": best, "trials": n_trials, "timeouts": n_timeouts, "model_seconds": 0.0}

    with tempfile.TemporaryDirectory(prefix="uvp-tobit-bench-") as out:
        scenario = Scenario(
            cs,
            n_trials=max_trials,
            deterministic=True,
            seed=seed,
            output_directory=Path(out),
        )
        initial = HyperparameterOptimizationFacade.get_initial_design(scenario, n_configs=n_initial)
        extra: dict[str, Any] = {}
        if method == "smac-tobit-ts":
            extra = tobit_facade_kwargs(scenario)
        elif method != "smac-rf":
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")

        def target(config: Any, seed: int = 0) -> float:
            raise RuntimeError("driven through ask/tell")

        # a lighter acquisition maximiser than the facade's default (10 000 challengers), the
        # same for every method, keeps 10 seeds within minutes on 2 shared cores
        maximizer = HyperparameterOptimizationFacade.get_acquisition_maximizer(
            scenario, challengers=challengers, local_search_iterations=5
        )
        smac = HyperparameterOptimizationFacade(
            scenario,
            target,
            initial_design=initial,
            acquisition_maximizer=maximizer,
            overwrite=True,
            logging_level=40,
            **extra,
        )
        while spent < runtime_budget and n_trials < max_trials:
            t0 = time.process_time()
            info = smac.ask()
            model_seconds += time.process_time() - t0
            cutoff = min(problem.kappa_max, cap_factor * best)
            rt, to = problem.runtime(info.config, cutoff=cutoff)
            spent += rt
            n_trials += 1
            if to:
                n_timeouts += 1
                smac.tell(info, TrialValue(cost=rt, time=rt, status=StatusType.TIMEOUT))
            else:
                best = min(best, rt)
                smac.tell(info, TrialValue(cost=rt, time=rt, status=StatusType.SUCCESS))
            report()
    return {
        "best": best,
        "trials": n_trials,
        "timeouts": n_timeouts,
        "model_seconds": model_seconds,
    }


@dataclass(frozen=True)
class RuntimeJob:
    """One (method, seed) run of the runtime benchmark as a harness job
    (:class:`uvp_plugins.bench.runner.Job`): its summary is the row of
    :func:`run_runtime_benchmark` plus ``final`` (the final incumbent runtime), ``wall_seconds``
    and ``error``, in ``OUT/tobit-runtime/<method>/seed<k>.json``."""

    method: str
    seed: int
    runtime_budget: float = 300.0
    max_trials: int = 150
    n_initial: int = 8
    kappa_max: float = 40.0
    cap_factor: float = 1.0
    challengers: int = 1000

    def label(self) -> str:
        return f"tobit-runtime/{self.method}/seed{self.seed}"

    def summary_path(self, out: Path) -> Path:
        return Path(out) / "tobit-runtime" / self.method / f"seed{self.seed}.json"

    def execute(self, out: Path, threads: int | None = None) -> dict[str, Any]:
        import traceback

        from uvp_plugins.bench.runner import run_facts, write_summary

        problem = SGDTimeToLoss(kappa_max=self.kappa_max)
        start, cpu = time.perf_counter(), time.process_time()
        error = None
        try:
            row = _run_one(
                self.method, problem, self.seed, self.runtime_budget, self.max_trials,
                self.n_initial, self.cap_factor, self.challengers,
            )
            row["best"] = min(row["best"], problem.kappa_max)
        except Exception:  # a method's crash is recorded, not hidden
            error = traceback.format_exc()
            row = {"best": float("nan")}
        summary = {
            **asdict(self), **row, "final": row["best"], **run_facts(start, cpu, threads, error)
        }
        write_summary(self.summary_path(out), summary)
        return summary


def run_runtime_benchmark(
    seeds: Sequence[int] = tuple(range(10)),
    methods: Sequence[str] = METHODS,
    runtime_budget: float = 300.0,
    max_trials: int = 150,
    n_initial: int = 8,
    kappa_max: float = 40.0,
    cap_factor: float = 1.0,
    challengers: int = 1000,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per (method, seed): final incumbent runtime ``best`` (``kappa_max`` if no run
    finished), ``trials``, ``timeouts``, CPU seconds spent in ``ask`` (``model_seconds``)."""
    problem = SGDTimeToLoss(kappa_max=kappa_max)
    rows = []
    for seed in seeds:
        for method in methods:
            start = time.process_time()
            row = _run_one(
                method, problem, seed, runtime_budget, max_trials, n_initial, cap_factor, challengers
            )
            row["best"] = min(row["best"], problem.kappa_max)
            row.update({
                "method": method,
                "seed": seed,
                "cpu": time.process_time() - start,
                # SMAC's local search depends on it (see uvp_plugins.bench.runner)
                "python_hash_seed": os.environ.get("PYTHONHASHSEED"),
            })
            rows.append(row)
            if progress is not None:
                progress(
                    f"{method:14s} seed={seed} best={row['best']:.3f} trials={row['trials']} "
                    f"timeouts={row['timeouts']} ask_cpu={row['model_seconds']:.1f}s "
                    f"cpu={row['cpu']:.1f}s"
                )
    return rows


def format_runtime_table(rows: Sequence[dict[str, Any]]) -> str:
    """Median [quartiles] of the final runtime and of the normalised score (appendix Table 3)."""
    values = np.array([r["best"] for r in rows])
    best, worst = float(values.min()), float(values.max())
    span = worst - best if worst > best else 1.0
    lines = [
        "| method | runs | final runtime (epochs), median [q25; q75] | score, median [q25; q75] | "
        "trials (median) | timeouts (median) | ask CPU s (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for method in dict.fromkeys(r["method"] for r in rows):
        sel = [r for r in rows if r["method"] == method]
        v = np.array([r["best"] for r in sel])
        s = 100.0 * (worst - v) / span
        q = np.percentile(v, [50, 25, 75])
        qs = np.percentile(s, [50, 25, 75])
        lines.append(
            f"| {method} | {len(sel)} | {q[0]:.3f} [{q[1]:.3f}; {q[2]:.3f}] | "
            f"{qs[0]:.1f} [{qs[1]:.1f}; {qs[2]:.1f}] | "
            f"{np.median([r['trials'] for r in sel]):.0f} | "
            f"{np.median([r['timeouts'] for r in sel]):.0f} | "
            f"{np.median([r['model_seconds'] for r in sel]):.1f} |"
        )
    return "\n".join(lines)


def measure_overhead(
    n_obs: Sequence[int] = (50, 200, 1000),
    repeats: int = 3,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Model time of one SMAC iteration at ``n`` observations, for SMAC's random forest (+ EI,
    including the per-row incumbent predictions SMAC's ``ConfigSelector`` makes for EI) and for
    the Tobit model (1 network + Thompson sampling, and a 5-network ensemble + Thompson
    sampling): ``train`` plus one acquisition maximisation with the facade's default maximiser
    (10 000 random challengers + local search). Wall and CPU seconds, the median of ``repeats``.
    Data: random configurations of :class:`SGDTimeToLoss` with their capped runtimes."""
    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.acquisition.function import EI

    problem = SGDTimeToLoss()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="uvp-tobit-overhead-") as out:
        cs = problem.configspace(seed)
        scenario = Scenario(cs, deterministic=True, seed=seed, output_directory=Path(out))
        pool = cs.sample_configuration(max(n_obs))
        runtimes = [problem.runtime(c, cutoff=10.0) for c in pool]
        for n in n_obs:
            configs = pool[:n]
            X = np.array([c.get_array() for c in configs])
            y = np.array([r for r, _ in runtimes[:n]])
            flags = np.array([t for _, t in runtimes[:n]], dtype=float)
            names = ("smac-rf (RF + EI)", "tobit 1 net + TS", "tobit 5 nets + TS")
            for name in names:
                walls, cpus, trains = [], [], []
                for _ in range(repeats):
                    model, acq, Y = _overhead_components(name, scenario, y, flags)
                    maximizer = HyperparameterOptimizationFacade.get_acquisition_maximizer(scenario)
                    w0, c0 = time.perf_counter(), time.process_time()
                    model.train(X, Y)
                    w1 = time.perf_counter()
                    kwargs: dict[str, Any] = {"num_data": n, "X": X}
                    if isinstance(acq, EI):  # SMAC's _get_x_best: one prediction per row
                        preds = [model.predict_marginalized(x.reshape(1, -1))[0][0][0] for x in X]
                        i = int(np.argmin(preds))
                        kwargs.update(eta=preds[i], incumbent_array=X[i])
                    acq.update(model=model, **kwargs)
                    maximizer.acquisition_function = acq
                    next(iter(maximizer.maximize(configs)))
                    walls.append(time.perf_counter() - w0)
                    cpus.append(time.process_time() - c0)
                    trains.append(w1 - w0)
                rows.append(
                    {
                        "n_obs": n,
                        "model": name,
                        "train_wall": float(np.median(trains)),
                        "iteration_wall": float(np.median(walls)),
                        "iteration_cpu": float(np.median(cpus)),
                    }
                )
    return rows


def _overhead_components(
    name: str, scenario: Any, y: NDArray[np.float64], flags: NDArray[np.float64]
) -> tuple[Any, Any, NDArray[np.float64]]:
    """(model, acquisition function, training targets) of one overhead variant."""
    from smac import HyperparameterOptimizationFacade
    from smac.acquisition.function import EI

    from smac_ext import TobitEnsembleModel, TobitThompsonSampling

    if name.startswith("smac-rf"):
        # SMAC's default encoder feeds the forest log-scaled costs; log costs are equivalent here
        return HyperparameterOptimizationFacade.get_model(scenario), EI(log=True), np.log(y)[:, None]
    members = 1 if "1 net" in name else 5
    model = TobitEnsembleModel(scenario, n_members=members, log_y=True)
    return model, TobitThompsonSampling(), np.column_stack((y, flags))


def format_overhead_table(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table of :func:`measure_overhead` rows."""
    lines = [
        "| n obs | model | train wall s | iteration wall s | iteration CPU s |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n_obs']} | {r['model']} | {r['train_wall']:.3f} | "
            f"{r['iteration_wall']:.3f} | {r['iteration_cpu']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m uvp_plugins.bench.methods.tobit_bench ...`` = ``uvp-bench tobit-runtime ...``."""
    from uvp_plugins.bench.cli import main as cli_main

    return cli_main(["tobit-runtime", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

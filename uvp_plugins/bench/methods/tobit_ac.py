"""Algorithm configuration with runtime capping: the Tobit model against SMAC 2.4's own capping.

The benchmark of issue 31 (``uvp-bench tobit-ac``): configure OR-Tools CP-SAT
(:mod:`uvp_plugins.bench.problems.cpsat_ac`) on the training instances of a family, then score the
final incumbent by its PAR10 on the held-out test instances.

Every configurator runs SMAC's racing over instances with SMAC 2.4's adaptive capping
(``Scenario(instances, instance_features, adaptive_capping=True, runtime_cutoff=kappa_max *
n_train)``, the AC facade's ``Intensifier``, ``deterministic=True``); the target receives SMAC's
``cutoff``, runs CP-SAT with the deterministic-time limit ``min(cutoff, kappa_max)`` and returns
the deterministic time it used -- the cutoff when it was stopped (SMAC's documented convention;
it also declares such a run ``censored`` in its additional info). Methods:

* ``ac-smac`` -- the peer: ``AlgorithmConfigurationFacade`` with its defaults (random forest on
  the raw costs, capped runs fitted as if their capped cost were exact, EI, random interleaving)
  except that the forest sees the raw instance features (:func:`forest`: SMAC 2.4.1's forest
  crashes with its default PCA of 4 or more features, automl/SMAC3#1323);
* ``ac-tobit`` -- ours: the same facade with ``**tobit_facade_kwargs(scenario)`` (Tobit network,
  Thompson sampling, capped runs right-censored at their cutoff);
* ``ac-random`` -- random search with the same racing and capping (SMAC's ``RandomFacade`` =
  ROAR, with the AC facade's intensifier);
* ``ac-default`` -- CP-SAT's default configuration (no configuration run; deterministic, so one
  evaluation stands for every seed).

All configurators start from the default configuration and stop once the total runtime of their
target runs (capped runtimes, deterministic seconds) reaches the same ``budget``. The final
incumbent is SMAC's incumbent when the budget is spent.
"""

from __future__ import annotations

import logging
import math
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "AC_METHODS",
    "ACJob",
    "format_ac_table",
    "format_ac_overhead",
    "measure_ac_overhead",
    "run_ac",
]

AC_METHODS = ("ac-tobit", "ac-smac", "ac-random", "ac-default")


def forest(scenario: Any) -> Any:
    """The AC facade's random forest, without its PCA of the instance features.

    SMAC 2.4.1's forest trains on PCA-reduced features (default ``pca_components=4``) but
    ``predict_marginalized`` hands it the raw ones: with 4 or more instance features the AC
    facade stops with an ``AssertionError`` after a few trials (automl/SMAC3#1323, fix proposed in
    #1326). ``pca_components=None`` -- the forest on the raw features -- is the workaround a user
    takes; everything else is the facade's default."""
    from smac import AlgorithmConfigurationFacade

    return AlgorithmConfigurationFacade.get_model(scenario, pca_components=None)  # type: ignore[arg-type]


class _Ledger:
    """What a configurator's target runs cost: the budget it spends and a stop signal."""

    def __init__(self, budget: float) -> None:
        self.budget = float(budget)
        self.spent = 0.0
        self.runs = 0
        self.capped = 0
        self.solver_wall = 0.0


def _callbacks(ledger: _Ledger) -> list[Any]:
    from smac.callback.callback import Callback

    class BudgetStop(Callback):
        """Stops SMAC once the target runs' total (capped) runtime reaches the budget."""

        def on_tell_end(self, smbo: Any, info: Any, value: Any) -> bool | None:
            return False if ledger.spent >= ledger.budget else None

    return [BudgetStop()]


def run_ac(
    method: str,
    family: str,
    seed: int,
    budget: float,
    kappa_max: float,
    n_instances: int,
    instance_set: str = "main",
    inspect: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """One configurator run; returns the test PAR10 of its final incumbent and run statistics.
    ``inspect(smac)``, if given, sees the facade after its run (analyses of the run history)."""
    from smac import AlgorithmConfigurationFacade, RandomFacade, Scenario

    from smac_ext import tobit_facade_kwargs
    from uvp_plugins.bench import progress
    from uvp_plugins.bench.problems.cpsat_ac import ACProblem, config_params, configspace

    if method not in AC_METHODS:
        raise ValueError(f"method must be one of {AC_METHODS}, got {method!r}")
    problem = ACProblem(family, n_instances=n_instances, kappa_max=kappa_max, instance_set=instance_set)
    train, test = problem.split()
    cs = configspace(seed)
    ledger = _Ledger(budget)
    overhead = 0.0
    if method == "ac-default":
        incumbent = cs.get_default_configuration()
    else:
        logging.getLogger("smac").setLevel(logging.ERROR)

        def target(config: Any, instance: str, seed: int = 0, cutoff: float | None = None) -> Any:
            t0 = time.perf_counter()
            result = problem.run(config, problem.by_name(instance), cutoff)
            ledger.solver_wall += time.perf_counter() - t0
            ledger.spent += result.runtime
            ledger.runs += 1
            ledger.capped += int(not result.solved)
            progress.update(min(1.0, ledger.spent / ledger.budget))
            return result.runtime, {"censored": not result.solved, "status": result.status}

        with tempfile.TemporaryDirectory(prefix="uvp-tobit-ac-") as out:
            scenario = Scenario(
                cs,
                instances=[i.name for i in train],
                instance_features=problem.features(train),
                deterministic=True,
                adaptive_capping=True,
                runtime_cutoff=int(math.ceil(kappa_max * len(train))),
                n_trials=10**6,
                seed=seed,
                output_directory=Path(out),
            )
            callbacks = _callbacks(ledger)
            extra: dict[str, Any] = {}
            facade: Any = AlgorithmConfigurationFacade
            if method == "ac-tobit":
                extra = tobit_facade_kwargs(scenario)
                callbacks += extra.pop("callbacks")
            elif method == "ac-smac":
                extra = {"model": forest(scenario)}
            elif method == "ac-random":
                facade = RandomFacade
                extra = {"intensifier": AlgorithmConfigurationFacade.get_intensifier(scenario)}
            smac = facade(
                scenario, target, overwrite=True, logging_level=40, callbacks=callbacks, **extra
            )
            w0 = time.perf_counter()
            incumbent = smac.optimize()
            overhead = time.perf_counter() - w0 - ledger.solver_wall
            if inspect is not None:
                inspect(smac)
            n_configs = len(smac.runhistory.get_configs())
    result = problem.evaluate(incumbent, test)
    return {
        "test_par10": result["par10"],
        "test_solved": result["solved"],
        "test_instances": len(test),
        "test_runtimes": result["runtimes"],
        "incumbent": config_params(incumbent),
        "spent": ledger.spent,
        "target_runs": ledger.runs,
        "capped_runs": ledger.capped,
        "configs": n_configs if method != "ac-default" else 1,
        "overhead_seconds": overhead,
        "solver_wall_seconds": ledger.solver_wall,
    }


@dataclass(frozen=True)
class ACJob:
    """One (family, method, seed) configurator run as a harness job; its summary is
    ``OUT/tobit-ac/<instance set>-n<instances>-kappa<cutoff>-budget<budget>/<family>/<method>/
    seed<k>.json`` (runs of different settings never mix)."""

    family: str
    method: str
    seed: int
    budget: float = 30.0
    kappa_max: float = 0.5
    n_instances: int = 40
    instance_set: str = "main"

    def label(self) -> str:
        return f"tobit-ac/{self._setting()}/{self.family}/{self.method}/seed{self.seed}"

    def _setting(self) -> str:
        return (f"{self.instance_set}-n{self.n_instances}-kappa{self.kappa_max:g}"
                f"-budget{self.budget:g}")

    def summary_path(self, out: Path) -> Path:
        return (Path(out) / "tobit-ac" / self._setting() / self.family / self.method
                / f"seed{self.seed}.json")

    def execute(self, out: Path, threads: int | None = None) -> dict[str, Any]:
        from uvp_plugins.bench.runner import run_facts, write_summary

        start, cpu = time.perf_counter(), time.process_time()
        error, row = None, {}
        try:
            row = run_ac(
                self.method, self.family, self.seed, self.budget, self.kappa_max,
                self.n_instances, self.instance_set,
            )
        except Exception:  # a method's crash is recorded, not hidden
            error = traceback.format_exc()
        summary = {**asdict(self), **row, **run_facts(start, cpu, threads, error)}
        write_summary(self.summary_path(out), summary)
        return summary


# ------------------------------------------------------------------------------------- report
def _median_iqr(v: np.ndarray) -> str:
    q = np.percentile(v, [50, 25, 75])
    return f"{q[0]:.3f} [{q[1]:.3f}; {q[2]:.3f}]"


def _paired(ours: dict[int, float], peer: dict[int, float]) -> dict[str, Any]:
    """Paired comparison on the seeds both have: wins/ties/losses (lower PAR10 wins), the
    two-sided sign test (ties dropped) and the geometric-mean ratio ours/peer with a 95 %
    t-interval on the log ratios and a 95 % percentile-bootstrap interval (10 000 resamples of
    the pairs, fixed generator seed; NaN with fewer than 2 pairs).

    Example:
        >>> c = _paired({0: 1.0, 1: 2.0, 2: 4.0}, {0: 2.0, 1: 4.0, 2: 8.0})
        >>> c["wins"], c["losses"], round(c["ratio"], 3), round(c["boot_low"], 3), round(c["boot_high"], 3)
        (3, 0, 0.5, 0.5, 0.5)
    """
    from scipy import stats

    from uvp_plugins.bench.demo import paired_verdict

    seeds = sorted(set(ours) & set(peer))
    v = paired_verdict(
        {s: math.log(ours[s]) for s in seeds}, {s: math.log(peer[s]) for s in seeds}, "min"
    )
    n_decided = v.wins + v.losses
    p = float(stats.binomtest(v.wins, n_decided, 0.5).pvalue) if n_decided else 1.0
    log_ratios = np.array([math.log(ours[s]) - math.log(peer[s]) for s in seeds])
    boot_low = boot_high = math.nan
    if log_ratios.size >= 2:
        ci = stats.bootstrap(
            (log_ratios,), np.mean, n_resamples=10_000, method="percentile",
            rng=np.random.default_rng(0),
        ).confidence_interval
        boot_low, boot_high = math.exp(float(ci.low)), math.exp(float(ci.high))
    # paired_verdict's difference is peer minus ours on the log scale (positive = ours better)
    return {
        "n": v.n, "wins": v.wins, "ties": v.ties, "losses": v.losses, "sign_p": p,
        "ratio": math.exp(-v.mean) if v.n else math.nan,
        "ratio_low": math.exp(-v.high) if v.n else math.nan,
        "ratio_high": math.exp(-v.low) if v.n else math.nan,
        "boot_low": boot_low, "boot_high": boot_high,
    }


def ac_results(summaries: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[int, dict[str, Any]]]]:
    """family -> method -> seed -> summary. ``ac-default`` (deterministic) stands for every
    seed of the family."""
    out: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
    for s in summaries:
        if s.get("error"):
            raise RuntimeError(f"{s['family']}/{s['method']}/seed{s['seed']} failed:\n{s['error']}")
        out.setdefault(s["family"], {}).setdefault(s["method"], {})[int(s["seed"])] = s
    for fam in out.values():
        seeds = sorted({k for m, runs in fam.items() if m != "ac-default" for k in runs})
        if "ac-default" in fam and seeds:
            only = next(iter(fam["ac-default"].values()))
            fam["ac-default"] = {k: only for k in seeds}
    return out


def format_ac_table(summaries: Sequence[dict[str, Any]], ours: str = "ac-tobit") -> str:
    """Per family: test PAR10 per method (median [quartiles], mean), the runs' statistics, and
    ours against every other method paired by seed (wins/ties/losses, sign test, geometric-mean
    ratio with a 95 % t-interval and a 95 % bootstrap interval); then the same pooled over
    families."""
    results = ac_results(summaries)
    lines: list[str] = []
    pooled: dict[str, tuple[dict[Any, float], dict[Any, float]]] = {}
    for family, methods in results.items():
        lines += [
            f"### {family}",
            "",
            "| method | runs | test PAR10 median [q25; q75] | mean | test solved (median) | "
            "configs (median) | target runs (median) | capped (median) | overhead s (median) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for m in [m for m in AC_METHODS if m in methods]:
            runs = list(methods[m].values())
            v = np.array([r["test_par10"] for r in runs])
            lines.append(
                f"| {m} | {len(runs)} | {_median_iqr(v)} | {v.mean():.3f} | "
                f"{np.median([r['test_solved'] for r in runs]):.0f}/{runs[0]['test_instances']} | "
                f"{np.median([r['configs'] for r in runs]):.0f} | "
                f"{np.median([r['target_runs'] for r in runs]):.0f} | "
                f"{np.median([r['capped_runs'] for r in runs]):.0f} | "
                f"{np.median([r['overhead_seconds'] for r in runs]):.1f} |"
            )
        if ours in methods:
            lines += ["", f"{ours} against (paired by seed; ratio < 1: ours lower PAR10):", ""]
            for m in [m for m in AC_METHODS if m in methods and m != ours]:
                a = {k: r["test_par10"] for k, r in methods[ours].items()}
                b = {k: r["test_par10"] for k, r in methods[m].items()}
                pa, pb = pooled.setdefault(m, ({}, {}))
                pa.update({(family, k): x for k, x in a.items()})
                pb.update({(family, k): x for k, x in b.items()})
                lines.append(_paired_line(m, _paired(a, b)))
        lines.append("")
    if len(results) > 1 and pooled:
        lines += [f"### all families pooled: {ours} against", ""]
        for m, (a, b) in pooled.items():
            lines.append(_paired_line(m, _paired(a, b)))  # type: ignore[arg-type]
    return "\n".join(lines)


def _paired_line(peer: str, c: dict[str, Any]) -> str:
    return (
        f"- vs {peer}: {c['wins']}/{c['ties']}/{c['losses']} (wins/ties/losses of {c['n']}), "
        f"sign test p = {c['sign_p']:.3g}; PAR10 ratio (geometric mean) {c['ratio']:.3f}, "
        f"95 % t-interval [{c['ratio_low']:.3f}, {c['ratio_high']:.3f}], "
        f"bootstrap [{c['boot_low']:.3f}, {c['boot_high']:.3f}]"
    )


# ------------------------------------------------------------------------------------ overhead
def measure_ac_overhead(
    n_obs: Sequence[int] = (200, 1000),
    family: str = "jobshop",
    n_instances: int = 40,
    cutoff: float = 0.02,
    repeats: int = 3,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Model time of one SMAC iteration in algorithm configuration at ``n`` observations with
    instance features, the AC facade's forest beside the Tobit model, side by side.

    Data: random (configuration, training instance) pairs of ``family`` with their real CP-SAT
    runtimes capped at ``cutoff`` (capped ones censored), as the AC facade's encoder and
    ``tobit_facade_kwargs``' encoder see them. One iteration is what SMAC's ``ConfigSelector``
    does before proposing: ``model.train``, the predicted incumbent over the distinct
    configurations (``predict_marginalized`` per configuration, SMAC's ``_get_x_best``), the
    acquisition update and one maximisation with the AC facade's maximiser (5000 random
    challengers + local search), marginalising over the training instances. Wall and CPU
    seconds, the median of ``repeats``."""
    from smac import AlgorithmConfigurationFacade, Scenario
    from smac.runhistory import RunHistory
    from smac.runhistory.enumerations import StatusType

    from smac_ext import tobit_facade_kwargs
    from uvp_plugins.bench.problems.cpsat_ac import ACProblem, configspace

    problem = ACProblem(family, n_instances=n_instances, kappa_max=1.0)
    train, _ = problem.split()
    rng = np.random.default_rng(seed)
    cs = configspace(seed)
    n_max = max(n_obs)
    # AC run histories hold several instances per configuration (racing): ~3 per configuration
    configs = cs.sample_configuration(max(2, n_max // 3))
    pairs = [(configs[int(rng.integers(len(configs)))], train[int(rng.integers(len(train)))]) for _ in range(n_max)]
    runs = [problem.run(c, inst, cutoff) for c, inst in pairs]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="uvp-tobit-ac-overhead-") as out:
        scenario = Scenario(
            cs, instances=[i.name for i in train], instance_features=problem.features(train),
            deterministic=True, adaptive_capping=True, runtime_cutoff=len(train), seed=seed,
            output_directory=Path(out),
        )
        for n in n_obs:
            for name in ("ac-smac (RF + EI)", "ac-tobit (1 net + TS)"):
                walls, cpus = [], []
                for _ in range(repeats):
                    rh = RunHistory()
                    for (c, inst), r in zip(pairs[:n], runs[:n], strict=True):
                        rh.add(
                            c, cost=r.runtime, instance=inst.name, seed=0, status=StatusType.SUCCESS,
                            additional_info={"cutoff": cutoff},
                        )
                    if name.startswith("ac-smac"):
                        model = forest(scenario)
                        acq = AlgorithmConfigurationFacade.get_acquisition_function(scenario)
                        encoder = AlgorithmConfigurationFacade.get_runhistory_encoder(scenario)
                    else:
                        kw = tobit_facade_kwargs(scenario)
                        model, acq, encoder = kw["model"], kw["acquisition_function"], kw["runhistory_encoder"]
                    encoder.runhistory = rh
                    maximizer = AlgorithmConfigurationFacade.get_acquisition_maximizer(scenario)
                    w0, c0 = time.perf_counter(), time.process_time()
                    X, Y = encoder.transform()
                    X_configs = encoder.get_configurations()
                    model.train(X, Y)
                    preds = [model.predict_marginalized(x.reshape(1, -1))[0][0][0] for x in X_configs]
                    i = int(np.argmin(preds))
                    acq.update(model=model, eta=preds[i], incumbent_array=X_configs[i],
                               num_data=len(X_configs), X=X_configs)
                    maximizer.acquisition_function = acq
                    next(iter(maximizer.maximize(rh.get_configs())))
                    walls.append(time.perf_counter() - w0)
                    cpus.append(time.process_time() - c0)
                rows.append({
                    "n_obs": n, "model": name, "configs": int(len(X_configs)),
                    "censored": int(sum(not r.solved for r in runs[:n])),
                    "iteration_wall": float(np.median(walls)), "iteration_cpu": float(np.median(cpus)),
                })
    return rows


def format_ac_overhead(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table of :func:`measure_ac_overhead` rows with the ratio to the forest."""
    lines = [
        "| n obs | configurations | censored | model | iteration wall s | iteration CPU s | CPU vs forest |",
        "|---|---|---|---|---|---|---|",
    ]
    forest = {r["n_obs"]: r["iteration_cpu"] for r in rows if r["model"].startswith("ac-smac")}
    for r in rows:
        ratio = r["iteration_cpu"] / forest[r["n_obs"]] if forest.get(r["n_obs"]) else math.nan
        lines.append(
            f"| {r['n_obs']} | {r['configs']} | {r['censored']} | {r['model']} | "
            f"{r['iteration_wall']:.3f} | {r['iteration_cpu']:.3f} | {ratio:.2f}x |"
        )
    return "\n".join(lines)

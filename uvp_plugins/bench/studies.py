"""The built-in studies of ``uvp-bench``, one per subcommand (see :mod:`uvp_plugins.bench.study`).

Each study declares its options, the jobs an invocation runs (through the one runner,
:func:`uvp_plugins.bench.runner.run_many`, each job writing one JSON summary under the study's
results directory) and the report printed from those summaries:

========================  ====================================================  ======================
subcommand                jobs                                                  results directory
========================  ====================================================  ======================
``list``, ``report``      none (they read the registry / a results directory)   --
``run``                   :class:`~uvp_plugins.bench.runner.RunSpec`            ``--out`` (bench-out)
``idhb``                  :class:`~uvp_plugins.bench.idhb_bench.IdhbJob`        ``--out`` (bench-idhb)
``idhb-ray``              one :class:`~uvp_plugins.bench.study.CallJob` per     ``--results``
                          (task, seed)                                          (bench-idhb-ray)
``overhead``              one ``CallJob`` (re-measured every time)              ``--results``
``ray-overhead``          one ``CallJob`` (re-measured every time)              ``--results``
``tobit-runtime``         :class:`~uvp_plugins.bench.methods.tobit_bench.`      ``--results``
                          ``RuntimeJob`` per (seed, method); ``--overhead``:
                          one ``CallJob`` (re-measured)
``tobit-ac``              :class:`~uvp_plugins.bench.methods.tobit_ac.ACJob`    ``--results``
                          per (family, method, seed); ``--overhead``: one       (bench-tobit-ac)
                          ``CallJob`` (re-measured)
``censored-quality``      one ``CallJob`` per (seed, function, percentile)      ``--results``
``demo``                  the demo's comparisons (:mod:`uvp_plugins.bench.demo`) ``--out``
========================  ====================================================  ======================

Heavy modules (frameworks) are imported inside the functions, so listing the subcommands imports
no framework.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uvp_plugins.bench import registry
from uvp_plugins.bench.runner import DATA_PATH_OPTIONS, RunSpec, parse_seeds
from uvp_plugins.bench.study import CallJob, Plan, Study, register_study, rows_of
from uvp_plugins.bench.suggest import unknown_name

__all__ = ["build_specs", "resolve_tasks", "problem_options"]


# ============================================================================ shared options
def add_threads(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threads", type=int, default=None, metavar="N",
        help="BLAS/OpenMP threads per worker process (default: your OMP_NUM_THREADS, OPENBLAS_NUM_THREADS or MKL_NUM_THREADS if set, "
        "else cores // jobs, so that jobs x threads <= cores)",
    )


def add_jobs(parser: argparse.ArgumentParser, default: int = 1) -> None:
    parser.add_argument(
        "--jobs", type=int, default=default, metavar="N",
        help=f"runs in parallel worker processes (default {default})",
    )


def add_yahpo_data(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--yahpo-data", default=None, metavar="PATH",
        help="YAHPO Gym data directory (default: $UVP_YAHPO_DATA, else shared/yahpo_data beside "
        "this repository's clone, else ~/.local/share/yahpo_data)",
    )
    parser.add_argument(
        "--yahpo-data-v0", default=None, metavar="PATH",
        help="first-generation YAHPO rbv2 data (yahpo_data_v0, for cash-yahpo6; default: "
        "$UVP_YAHPO_DATA_V0, else yahpo_data_v0 beside the directory $UVP_YAHPO_DATA names, else "
        "shared/yahpo_data_v0 beside this repository's clone, else ~/.local/share/yahpo_data_v0)",
    )


def add_tasks_seeds(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tasks", default=None,
        help="comma-separated tasks, 'all', 'first:N' or 'range:A-B' (the A-th to B-th task, from 1; default: the first task; "
        "see 'uvp-bench list --tasks PROBLEM')",
    )
    parser.add_argument("--seeds", default="0", help="seeds, e.g. '0-9' or '0,3,5' (default 0)")


def add_force(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true", help="rerun runs whose results exist")


def add_results(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--results", default=default, metavar="DIR",
        help=f"where the runs' summaries are kept (default {default})",
    )


def _check_jobs(args: argparse.Namespace) -> int:
    jobs = getattr(args, "jobs", 1)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"--jobs must be an int >= 1, got {jobs!r}")
    return jobs


# ============================================================================ tasks and specs
def resolve_tasks(spec: registry.ProblemSpec, text: str | None, options: dict[str, Any]) -> list[str]:
    """``--tasks`` of ``spec``: default the first task, ``all``, ``first:N``, ``range:A-B`` (the
    A-th to the B-th task in the problem's order, counted from 1, both included) or a list."""
    valid = [str(t) for t in spec.tasks(**options)]
    if text is None or text == "":
        return valid[:1]
    if text == "all":
        return valid
    if text.startswith("first:"):
        try:
            n = int(text.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"--tasks first:N needs an integer N, got {text!r}") from None
        return valid[:n]
    if text.startswith("range:"):
        m = re.fullmatch(r"range:(\d+)-(\d+)", text)
        if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)) <= len(valid):
            raise ValueError(
                f"--tasks range:A-B needs 1 <= A <= B <= {len(valid)} (the number of tasks of "
                f"{spec.name}), got {text!r}"
            )
        return valid[int(m.group(1)) - 1 : int(m.group(2))]
    tasks = [t.strip() for t in text.split(",") if t.strip()]
    for t in tasks:
        if t not in valid:
            raise ValueError(unknown_name(
                "task", t, valid, context=f" for {spec.name}",
                hint=f"see 'uvp-bench list --tasks {spec.name}'",
            ))
    return tasks


def build_specs(
    problem: str,
    tasks: str | None,
    methods: str,
    seeds: str,
    budget_factor: float = 20.0,
    total_budget: float | None = None,
    problem_options: dict[str, Any] | None = None,
) -> list[RunSpec]:
    """Validate the command-line choices and expand them into run specs (clear errors)."""
    options = dict(problem_options or {})
    pspec = registry.get_problem(problem)
    missing = [m for m in pspec.requires if importlib.util.find_spec(m) is None]
    if missing:
        raise ValueError(f"problem {problem!r} {registry.install_hint(missing)}")
    task_list = resolve_tasks(pspec, tasks, options)
    method_names = [m.strip() for m in methods.split(",") if m.strip()]
    if not method_names:
        raise ValueError("--methods: give at least one method (see 'uvp-bench list')")
    for m in method_names:
        mspec = registry.get_method(m)
        if pspec.kind not in mspec.problem_kinds:
            raise ValueError(
                f"method {m!r} handles {', '.join(mspec.problem_kinds)} problems, "
                f"but {problem!r} is a {pspec.kind} problem"
            )
    if not (budget_factor >= 1.0):
        raise ValueError(
            f"--budget-factor must be >= 1 (a total budget below one full evaluation at T is refused), got {budget_factor}"
        )
    if total_budget is not None:
        probe = pspec.make(task=task_list[0], **options)
        if total_budget < probe.max_budget:
            raise ValueError(
                f"--total-budget {total_budget:g} is below one full evaluation (T = {probe.max_budget}) of {problem}"
            )
    seed_list = parse_seeds(seeds)
    return [
        RunSpec(problem, t, m, s, budget_factor, total_budget, options)
        for t in task_list
        for m in method_names
        for s in seed_list
    ]


def problem_options(args: argparse.Namespace) -> dict[str, Any]:
    """The problem options an invocation gives (``--yahpo-data``, ``--yahpo-data-v0``,
    ``--log-params``)."""
    opts: dict[str, Any] = {}
    for key in DATA_PATH_OPTIONS:
        if getattr(args, key, None):
            opts[key] = getattr(args, key)
    if getattr(args, "log_params", None):
        from uvp_plugins.bench.problems.yahpo import YAHPO_PROBLEMS

        if args.problem not in YAHPO_PROBLEMS:
            raise ValueError(f"--log-params applies to the YAHPO problems, not {args.problem!r}")
        opts["log_params"] = [p.strip() for p in args.log_params.split(",") if p.strip()]
    return opts


def _write_json(path: str | None, rows: Any) -> None:
    """A study's ``--json PATH``: its report's rows as JSON (nothing without a path)."""
    if path:
        with open(path, "w") as fh:
            json.dump(rows, fh, indent=1)


def _no_jobs(_: argparse.Namespace) -> Plan:
    return Plan(jobs=[], out=Path("."))


# ==================================================================================== list
def _list_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", default=None, metavar="PROBLEM", help="list the tasks of PROBLEM instead")
    add_yahpo_data(p)


def _list_report(args: argparse.Namespace, _: list[dict[str, Any]]) -> tuple[str, int]:
    if args.tasks:
        pspec = registry.get_problem(args.tasks)
        tasks = [str(t) for t in pspec.tasks(**problem_options(args))]
        return f"Tasks of {pspec.name} ({len(tasks)}):\n  " + ", ".join(tasks), 0
    lines = ["Problems:"]
    for name, p in registry.problems().items():
        lines.append(f"  {name:16s} [{p.kind}] {p.description}")
    lines.append("\nMethods:")
    for name, m in registry.methods().items():
        state = "" if m.available else f"  ({registry.install_hint(m.missing())})"
        lines.append(f"  {name:26s} [{m.kind}; {','.join(m.problem_kinds)}] {m.description}{state}")
    return "\n".join(lines), 0


register_study(Study(
    "list", "list problems and methods (or one problem's tasks)",
    "List the problems and methods, or the tasks of one problem.",
    _list_arguments, _no_jobs, _list_report,
))


# ===================================================================================== run
def _run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("--problem", required=True, help="problem family (see 'uvp-bench list')")
    run.add_argument("--methods", required=True, help="comma-separated method names (see 'uvp-bench list')")
    add_tasks_seeds(run)
    run.add_argument("--budget-factor", type=float, default=20.0, metavar="F", help="total budget B = F * T fidelity units (default 20; CASH problems default to their own B, e.g. 200 iterations)")
    run.add_argument("--total-budget", type=float, default=None, metavar="B", help="total budget B in fidelity units (overrides --budget-factor)")
    run.add_argument("--out", default="bench-out", metavar="DIR", help="output directory (default bench-out)")
    add_jobs(run)
    add_threads(run)
    add_yahpo_data(run)
    run.add_argument("--log-params", default=None, metavar="NAMES", help="YAHPO problems: comma-separated numeric parameters to sample on a log scale (e.g. weight_decay on lcbench, as the AdaCent authors' code does); the same space for every method")
    add_force(run)


def _run_plan(args: argparse.Namespace) -> Plan:
    specs = build_specs(args.problem, args.tasks, args.methods, args.seeds, args.budget_factor,
                        args.total_budget, problem_options(args))
    jobs = _check_jobs(args)
    print(f"[uvp-bench] {len(specs)} runs -> {args.out} ({jobs} at a time)", file=sys.stderr)
    return Plan(list(specs), Path(args.out), jobs, args.threads, args.force, bar="runs")


def _run_report(args: argparse.Namespace, summaries: list[dict[str, Any]]) -> tuple[str, int]:
    errors = [r for r in summaries if r.get("error")]
    for r in errors:
        print(f"[uvp-bench] ERROR in {r['problem']}/{r['task']}/{r['method']}/seed{r['seed']}:\n{r['error']}", file=sys.stderr)
    print(f"[uvp-bench] done; summarise with: uvp-bench report {args.out}", file=sys.stderr)
    return "", 1 if errors else 0


register_study(Study(
    "run", "run methods on a problem (each run in its own process)",
    "Run every (task, method, seed) on a problem; finished runs are skipped when the command is "
    "repeated.",
    _run_arguments, _run_plan, _run_report,
))


# ================================================================================== report
def _fractions(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--fractions: expected numbers in (0, 1] like '0.1,0.5,1', got {text!r}") from None
    if not vals or any(not (0 < v <= 1) for v in vals):
        raise ValueError(f"--fractions: expected numbers in (0, 1], got {text!r}")
    return vals


def _report_arguments(rep: argparse.ArgumentParser) -> None:
    rep.add_argument("directory", help="the --out directory of 'uvp-bench run'")
    rep.add_argument("--baseline", default=None, metavar="METHOD", help="method to count wins/ties/losses against (sign test)")
    rep.add_argument("--fractions", default="0.1,0.25,0.5,1.0", help="budget fractions for the rank columns (default 0.1,0.25,0.5,1.0)")
    rep.add_argument("--plot-dir", default=None, metavar="DIR", help="where to write PNGs (default DIR/plots)")
    rep.add_argument("--no-plots", action="store_true", help="write no PNGs")
    rep.add_argument("--methods", default=None, help="comma-separated methods to include (default: all)")
    rep.add_argument("--tasks", default=None, help="comma-separated tasks to include, or 'common': the tasks every selected method has runs on (default: all)")
    rep.add_argument("--seeds", default=None, help="seeds to include, e.g. 0-4 (default: all)")
    rep.add_argument("--bootstrap", type=int, default=0, metavar="N", help="add, at each of --fractions, the mean rank with a 95%% bootstrap interval over seeds and P(best), from N replicates (the CASH paper's App. D.1; default 0: off)")
    rep.add_argument("--scores", default="user,envelope", help="views of the best value, each its own table: 'user' (best of the evaluations at T: Optuna's study.best_value, COMPLETE trials only) and 'envelope' (best of all paid evaluations, partial ones included; shown only where partial results are usable models); default user,envelope")


def _report_report(args: argparse.Namespace, _: list[dict[str, Any]]) -> tuple[str, int]:
    from uvp_plugins.bench.report import report

    def names(text: str | None) -> list[str] | None:
        return None if text is None else [t.strip() for t in text.split(",") if t.strip()]

    return report(
        args.directory, args.baseline, _fractions(args.fractions), args.plot_dir,
        plots=not args.no_plots, methods=names(args.methods), tasks=names(args.tasks),
        seeds=None if args.seeds is None else parse_seeds(args.seeds), bootstrap=args.bootstrap,
        scores=names(args.scores) or [],
    ), 0


register_study(Study(
    "report", "summarise a results directory (table + PNG plots)",
    "Tables (mean final score, mean ranks, wins/ties/losses, overhead) and PNG plots of a "
    "'uvp-bench run' output directory.",
    _report_arguments, _no_jobs, _report_report,
))


# ==================================================================================== idhb
def _idhb_arguments(idhb: argparse.ArgumentParser) -> None:
    idhb.add_argument("--problem", required=True, help="problem family (see 'uvp-bench list')")
    add_tasks_seeds(idhb)
    idhb.add_argument("--eta", type=int, default=2, help="Hyperband's reduction factor (default 2)")
    idhb.add_argument("--r0", type=int, default=16, help="initial max budget R (deepened once to eta*R; default 16)")
    idhb.add_argument("--out", default="bench-idhb", metavar="DIR", help="output directory (default bench-idhb)")
    add_jobs(idhb)
    add_threads(idhb)
    add_yahpo_data(idhb)
    add_force(idhb)
    idhb.add_argument("--no-plots", action="store_true", help="write no PNG")


def _idhb_plan(args: argparse.Namespace) -> Plan:
    from uvp_plugins.bench.idhb_bench import IdhbJob, check_idhb_arguments, idhb_root

    check_idhb_arguments(args.eta, args.r0)
    options = problem_options(args)
    tasks = resolve_tasks(registry.get_problem(args.problem), args.tasks, options)
    jobs = [IdhbJob(args.problem, t, s, args.eta, args.r0, options) for t in tasks for s in parse_seeds(args.seeds)]
    return Plan(list(jobs), idhb_root(args.out, args.problem, args.eta, args.r0), _check_jobs(args),
                args.threads, args.force, bar="idhb")


def _idhb_report(args: argparse.Namespace, _: list[dict[str, Any]]) -> tuple[str, int]:
    from uvp_plugins.bench.idhb_bench import idhb_report, idhb_root

    return idhb_report(idhb_root(args.out, args.problem, args.eta, args.r0), plot=not args.no_plots), 0


register_study(Study(
    "idhb", "ID-HB variants vs re-running Hyperband at eta*R (Brandt et al., Figure 3)",
    "Hyperband at R, deepened once to eta*R by the three ID-HB variants, vs a fresh Hyperband at "
    "eta*R (Brandt et al., Sec. 7).",
    _idhb_arguments, _idhb_plan, _idhb_report,
))


# ================================================================================ overhead
def _ints(option: str, text: str, low: int) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{option}: expected comma-separated integers, got {text!r}") from None
    if not values or any(v < low for v in values):
        raise ValueError(f"{option} must be integers >= {low}, got {text!r}")
    return values


def _overhead_arguments(ov: argparse.ArgumentParser) -> None:
    ov.add_argument("--trials", default="100,1000", help="study sizes, comma-separated, each >= 10 (default 100,1000)")
    ov.add_argument("--candidates", default="1000,10000", help="EnhancedAdaCentSampler mesh sizes, comma-separated (default 1000,10000)")
    ov.add_argument("--seed", type=int, default=0, help="sampler seed (default 0)")
    ov.add_argument("--repeats", type=int, default=1, help="interleaved runs per sampler; cells are medians (default 1)")
    add_results(ov, "bench-overhead")


def _overhead_plan(args: argparse.Namespace) -> Plan:
    trials, candidates = _ints("--trials", args.trials, 10), _ints("--candidates", args.candidates, 1)
    if args.repeats < 1:
        raise ValueError(f"--repeats must be an int >= 1, got {args.repeats}")
    job = CallJob("sampler-overhead", "uvp_plugins.bench.overhead:optuna_sampler_overhead",
                  {"trials": trials, "candidates": candidates, "seed": args.seed, "repeats": args.repeats})
    return Plan([job], Path(args.results), bar="overhead")


def _rows_formatted_by(function: str) -> Callable[[argparse.Namespace, list[dict[str, Any]]], tuple[str, int]]:
    """A report: the jobs' rows formatted by ``function`` (``"module:name"``, imported late)."""

    def report(args: argparse.Namespace, summaries: list[dict[str, Any]]) -> tuple[str, int]:
        module, name = function.split(":")
        return getattr(importlib.import_module(module), name)(rows_of(summaries)), 0

    return report


register_study(Study(
    "overhead", "Optuna sampler time per trial: EnhancedAdaCentSampler beside TPESampler",
    "Sampler wall time per trial of EnhancedAdaCentSampler beside Optuna's TPESampler, in one "
    "process, interleaved (re-measured at every invocation).",
    _overhead_arguments, _overhead_plan, _rows_formatted_by("uvp_plugins.bench.overhead:format_overhead"),
    remeasure=True,
))


# ============================================================================ ray-overhead
def _ray_overhead_arguments(rov: argparse.ArgumentParser) -> None:
    rov.add_argument("--max-t", type=int, default=27, help="max_t of both schedulers (default 27)")
    rov.add_argument("--eta", type=int, default=3, help="reduction_factor of both schedulers (default 3)")
    rov.add_argument("--repeats", type=int, default=1, help="runs per scheduler, alternating (default 1)")
    rov.add_argument("--seed", type=int, default=0, help="seed of the configurations (default 0)")
    rov.add_argument("--stall-timeout", type=float, default=30.0, help="end a run after this many seconds without a result (Ray's HyperBandScheduler can leave a trial paused for good; default 30)")
    rov.add_argument("--baseline", action="append", default=[], metavar="NAME=DIR", help="also time the ID-HB scheduler of the raytune_ext/ in DIR (another checkout, e.g. a git archive extract) in the same runs, as IterativeDeepeningHyperBandScheduler@NAME; repeatable")
    add_results(rov, "bench-ray-overhead")


def _ray_overhead_plan(args: argparse.Namespace) -> Plan:
    from uvp_plugins.bench.ray_overhead import check_ray_overhead_arguments

    check_ray_overhead_arguments(args.max_t, args.eta, args.repeats)
    baselines = {}
    for spec in args.baseline:
        name, sep, tree = spec.partition("=")
        if not sep or not name or not tree:
            raise ValueError(f"--baseline must be NAME=DIR, got {spec!r}")
        baselines[name] = os.path.abspath(tree)
    job = CallJob("scheduler-overhead", "uvp_plugins.bench.ray_overhead:ray_scheduler_overhead",
                  {"max_t": args.max_t, "eta": args.eta, "repeats": args.repeats, "seed": args.seed,
                   "stall_s": args.stall_timeout, "baselines": baselines})
    return Plan([job], Path(args.results), bar="ray-overhead")


register_study(Study(
    "ray-overhead", "Ray Tune scheduler time per on_trial_result: IterativeDeepeningHyperBandScheduler beside HyperBandScheduler (real tune.run, local 2-CPU cluster)",
    "Scheduler time per on_trial_result of IterativeDeepeningHyperBandScheduler beside Ray's "
    "HyperBandScheduler (real tune.run; re-measured at every invocation).",
    _ray_overhead_arguments, _ray_overhead_plan,
    _rows_formatted_by("uvp_plugins.bench.ray_overhead:format_ray_overhead"), remeasure=True,
))


# ================================================================================ idhb-ray
def _idhb_ray_arguments(ihr: argparse.ArgumentParser) -> None:
    ihr.add_argument("--problem", required=True, help="problem family (see 'uvp-bench list')")
    add_tasks_seeds(ihr)
    ihr.add_argument("--eta", type=int, default=2, help="reduction factor (default 2)")
    ihr.add_argument("--r0", type=int, default=16, help="initial max budget R (deepened once to eta*R within the Ray run; default 16)")
    ihr.add_argument("--variant", default="efficient", help="efficient, preserving or discarding (default efficient)")
    add_yahpo_data(ihr)
    ihr.add_argument("--out", default=None, metavar="FILE", help="also write the rows as JSON to this file")
    add_results(ihr, "bench-idhb-ray")
    add_force(ihr)


def _idhb_ray_plan(args: argparse.Namespace) -> Plan:
    from uvp_plugins.bench.idhb_bench import check_idhb_arguments
    from uvp_plugins.hyperband import VARIANTS

    check_idhb_arguments(args.eta, args.r0)
    if args.variant not in VARIANTS:
        raise ValueError(f"--variant must be one of {', '.join(VARIANTS)}, got {args.variant!r}")
    options = problem_options(args)
    tasks = resolve_tasks(registry.get_problem(args.problem), args.tasks, options)
    jobs = [
        CallJob(f"{args.problem}-eta{args.eta}-R{args.r0}-{args.variant}/{t}/seed{s}",
                "uvp_plugins.bench.idhb_ray:idhb_ray_rows",
                {"problem": args.problem, "task": t, "seed": s, "eta": args.eta, "r0": args.r0,
                 "variant": args.variant, "options": options})
        for t in tasks for s in parse_seeds(args.seeds)
    ]
    # one Ray run at a time: each uses the 2-CPU local cluster of its worker
    return Plan(list(jobs), Path(args.results), 1, None, args.force, bar="idhb-ray")


def _idhb_ray_report(args: argparse.Namespace, summaries: list[dict[str, Any]]) -> tuple[str, int]:
    from uvp_plugins.bench.idhb_ray import format_idhb_ray

    rows = rows_of(summaries)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(rows, indent=1, default=str))
    return format_idhb_ray(rows), 0 if all(r["equal"] and r["same_decisions"] for r in rows) else 1


register_study(Study(
    "idhb-ray", "ID-HB through Ray Tune: iterations Ray trained vs the core's continuation ledger, per task and seed",
    "ID-HB through Ray Tune, deepened within one run: iterations Ray trained vs the core's "
    "continuation ledger (exit code 1 if they differ).",
    _idhb_ray_arguments, _idhb_ray_plan, _idhb_ray_report,
))


# =========================================================================== tobit-runtime
def _tobit_arguments(p: argparse.ArgumentParser) -> None:
    from uvp_plugins.bench.methods.tobit_bench import METHODS

    p.add_argument("--seeds", type=int, nargs="+", default=list(range(10)), help="seeds (default: 0..9)")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS), help="methods to run (default: all)")
    p.add_argument("--runtime-budget", type=float, default=300.0, help="total runtime (epochs) a run may spend, capped runs included (default: 300)")
    p.add_argument("--max-trials", type=int, default=150, help="at most this many evaluations per run (default: 150)")
    p.add_argument("--cap-factor", type=float, default=1.0, help="adaptive capping: a new run is cut at cap-factor x the best runtime so far (default: 1)")
    p.add_argument("--challengers", type=int, default=1000, help="random candidates the acquisition maximiser scores per proposal (default: 1000)")
    p.add_argument("--overhead", action="store_true", help="measure model overhead instead (re-measured at every invocation)")
    p.add_argument("--json", default=None, help="also write the rows as JSON to this file")
    add_jobs(p)
    add_results(p, "bench-tobit-runtime")
    add_force(p)


def _tobit_plan(args: argparse.Namespace) -> Plan:
    from uvp_plugins.bench.methods.tobit_bench import RuntimeJob

    if args.overhead:
        job = CallJob("model-overhead", "uvp_plugins.bench.methods.tobit_bench:measure_overhead", {})
        return Plan([job], Path(args.results), force=True, bar="tobit overhead")
    jobs = [
        RuntimeJob(m, s, args.runtime_budget, args.max_trials, cap_factor=args.cap_factor,
                   challengers=args.challengers)
        for s in args.seeds for m in args.methods
    ]
    return Plan(list(jobs), Path(args.results), _check_jobs(args), None, args.force, bar="tobit-runtime")


def _tobit_report(args: argparse.Namespace, summaries: list[dict[str, Any]]) -> tuple[str, int]:
    from uvp_plugins.bench.methods.tobit_bench import format_overhead_table, format_runtime_table

    if args.overhead:
        rows = rows_of(summaries)
        text = format_overhead_table(rows)
    else:
        failed = [s for s in summaries if s.get("error")]
        if failed:
            raise RuntimeError(f"{len(failed)} tobit-runtime runs failed:\n{failed[0]['error']}")
        rows = summaries
        text = format_runtime_table(rows)
    _write_json(args.json, rows)
    return text, 0


register_study(Study(
    "tobit-runtime", "runtime minimisation with a cutoff: smac-tobit-ts vs SMAC's random forest vs random search (Eggensperger et al., Table 3); --overhead: fit+predict time per SMAC iteration",
    "smac-tobit-ts vs smac-rf vs random search on runtime minimisation with a cutoff "
    "(Eggensperger et al., Table 2/3 protocol); workers run SMAC with PYTHONHASHSEED=0 unless "
    "you set it.",
    _tobit_arguments, _tobit_plan, _tobit_report,
))


# ================================================================================ tobit-ac
def _tobit_ac_arguments(p: argparse.ArgumentParser) -> None:
    from uvp_plugins.bench.methods.tobit_ac import AC_METHODS
    from uvp_plugins.bench.problems.cpsat_ac import FAMILIES, INSTANCE_SETS

    p.add_argument("--families", nargs="+", default=sorted(FAMILIES), choices=sorted(FAMILIES), help="CP-SAT instance families (default: all)")
    p.add_argument("--methods", nargs="+", default=list(AC_METHODS), choices=list(AC_METHODS), help="configurators (default: all; ac-default runs once per family)")
    p.add_argument("--seeds", default="0-9", help="seeds, e.g. '0-9' or '0,3,5' (default 0-9)")
    p.add_argument("--budget", type=float, default=30.0, help="total capped runtime of a configurator's target runs, deterministic seconds (default 30)")
    p.add_argument("--kappa-max", type=float, default=0.5, help="per-run cutoff, deterministic seconds; PAR10 counts 10x it (default 0.5)")
    p.add_argument("--n-instances", type=int, default=40, help="instances per family, half training and half test (default 40)")
    p.add_argument("--instance-set", default="main", choices=sorted(INSTANCE_SETS), help="'main': the reported instances; 'dev': other generator seeds for development (default main)")
    p.add_argument("--overhead", action="store_true", help="measure the model time per SMAC iteration with instance features instead (forest beside Tobit, 200 and 1000 observations; re-measured at every invocation)")
    p.add_argument("--json", default=None, help="also write the summaries (or overhead rows) as JSON to this file")
    p.add_argument("--finished-only", action="store_true", help="run nothing: report the (family, seed) groups of this command whose configurator runs have all finished (e.g. after a stopped sweep); the groups left out are named on stderr")
    add_jobs(p)
    add_results(p, "bench-tobit-ac")
    add_force(p)


def _tobit_ac_plan(args: argparse.Namespace) -> Plan:
    from uvp_plugins.bench.methods.tobit_ac import ACJob

    missing = [m for m in ("ortools", "smac") if importlib.util.find_spec(m) is None]
    if missing:
        raise ValueError(f"tobit-ac {registry.install_hint(missing)}")
    if args.overhead:
        job = CallJob("ac-model-overhead", "uvp_plugins.bench.methods.tobit_ac:measure_ac_overhead", {})
        return Plan([job], Path(args.results), force=True, bar="tobit-ac overhead")
    seeds = parse_seeds(args.seeds)
    for name in ("budget", "kappa_max"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"--{name.replace('_', '-')} must be a number > 0, got {value!r}")
    if args.n_instances < 2:
        raise ValueError(f"--n-instances must be an int >= 2, got {args.n_instances}")
    jobs = [
        # the default configuration is deterministic: one run stands for every seed
        ACJob(f, m, seeds[0] if m == "ac-default" else s, args.budget, args.kappa_max,
              args.n_instances, args.instance_set)
        for s in seeds for f in args.families for m in args.methods  # a partial sweep stays paired
        if m != "ac-default" or s == seeds[0]
    ]
    if args.finished_only:
        jobs = _finished_groups(jobs, Path(args.results))
    return Plan(list(jobs), Path(args.results), _check_jobs(args), None, args.force, bar="tobit-ac")


def _finished_groups(jobs: list[Any], out: Path) -> list[Any]:
    """The jobs of the (family, seed) groups whose configurator runs all have a summary in
    ``out`` (and each family's finished ``ac-default`` run); the others are named on stderr."""
    done = {j for j in jobs if j.summary_path(out).exists()}
    groups: dict[tuple[str, int], list[Any]] = {}
    for j in jobs:
        if j.method != "ac-default":
            groups.setdefault((j.family, j.seed), []).append(j)
    keep = [j for j in jobs if j.method == "ac-default" and j in done]
    left_out = []
    for (family, seed), members in groups.items():
        if all(j in done for j in members):
            keep += members
        else:
            missing = ", ".join(j.method for j in members if j not in done)
            left_out.append(f"{family}/seed{seed} (unfinished: {missing})")
    if left_out:
        print(f"tobit-ac --finished-only: left out {len(left_out)} of {len(groups)} (family, seed) "
              f"groups: {'; '.join(left_out)}", file=sys.stderr)
    if not keep:
        raise ValueError(f"tobit-ac --finished-only: no finished runs of this command in {out}")
    return keep


def _tobit_ac_report(args: argparse.Namespace, summaries: list[dict[str, Any]]) -> tuple[str, int]:
    from uvp_plugins.bench.methods.tobit_ac import format_ac_overhead, format_ac_table

    if args.overhead:
        rows: list[dict[str, Any]] = rows_of(summaries)
        text = format_ac_overhead(rows)
    else:
        rows = summaries
        text = format_ac_table(rows)
    _write_json(args.json, rows)
    return text, 0


register_study(Study(
    "tobit-ac", "algorithm configuration of CP-SAT with adaptive capping: SMAC's AC facade with the Tobit model vs its forest vs random search vs the default (test PAR10); --overhead: model time per SMAC iteration with instance features",
    "Configure OR-Tools CP-SAT on generated instance families (runtime = deterministic time) "
    "with SMAC 2.4's AlgorithmConfigurationFacade and adaptive capping: tobit_facade_kwargs "
    "(ac-tobit) vs the facade's forest (ac-smac) vs random racing (ac-random) vs CP-SAT's "
    "default; PAR10 of the final incumbent on held-out test instances, paired sign tests.",
    _tobit_ac_arguments, _tobit_ac_plan, _tobit_ac_report,
))


# ======================================================================== censored-quality
def _censored_arguments(parser: argparse.ArgumentParser) -> None:
    from uvp_plugins.bench.censored_quality import FUNCTIONS, METHODS

    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds; each draws its own data set and networks (default: 0)")
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=list(FUNCTIONS), help="test functions (default: all)")
    parser.add_argument("--percentiles", type=float, nargs="+", default=[10, 20, 40, 80], help="censoring thresholds gamma as percentiles of the true values (default: 10 20 40 80)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS), help="I: censored values as if exact, D: drop them, S&H: Schmee-Hahn imputation, T: Tobit loss (default: all)")
    parser.add_argument("--n-copies", type=int, default=10, help="noisy copies of every sampled location (default: 10, the paper's)")
    parser.add_argument("--n-members", type=int, default=5, help="networks per ensemble (default: 5)")
    parser.add_argument("--n-steps", type=int, default=1500, help="training steps per network (default: 1500)")
    parser.add_argument("--batch-size", type=int, default=128, help="mini-batch size of the network training (default: 128)")
    parser.add_argument("--censor-value", choices=["threshold", "uniform"], default="threshold", help="censoring mechanism (default: cap at the threshold; 'uniform': earlier reading)")
    parser.add_argument("--json", default=None, help="write the raw rows to this file")
    parser.add_argument("--from-json", nargs="+", default=None, metavar="FILE", help="do not run: load and merge the rows of earlier --json files, then report")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_jobs(parser)
    add_results(parser, "bench-censored-quality")
    add_force(parser)


def _censored_plan(args: argparse.Namespace) -> Plan:
    if args.from_json:
        return Plan([], Path(args.results))
    settings = {"methods": list(args.methods), "n_copies": args.n_copies, "n_members": args.n_members,
                "n_steps": args.n_steps, "batch_size": args.batch_size, "censor_value": args.censor_value}
    tag = f"steps{args.n_steps}-members{args.n_members}-copies{args.n_copies}-batch{args.batch_size}-{args.censor_value}"
    jobs = [
        CallJob(f"{tag}/{f}-p{p:g}-seed{s}", "uvp_plugins.bench.censored_quality:run_censored_quality",
                {"seeds": [s], "functions": [f], "percentiles": [p], **settings})
        for f in args.functions for p in args.percentiles for s in args.seeds  # the rows' order
    ]
    return Plan(list(jobs), Path(args.results), _check_jobs(args), None, args.force,
                bar=None if args.quiet else "censored-quality", quiet=args.quiet)


def _censored_report(args: argparse.Namespace, summaries: list[dict[str, Any]]) -> tuple[str, int]:
    from uvp_plugins.bench.censored_quality import (
        METHODS,
        check_targets,
        check_targets_per_seed,
        format_table,
    )

    if args.from_json:
        rows: list[dict[str, Any]] = []
        for path in args.from_json:
            with open(path) as fh:
                rows.extend(json.load(fh))
        setups = {(r.get("censor_value"), r.get("n_steps")) for r in rows}
        if len(setups) > 1:
            raise ValueError(f"--from-json files mix protocols (censor_value, n_steps): {setups}")
        methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    else:
        rows = rows_of(summaries)
        methods = list(args.methods)
        _write_json(args.json, rows)
    lines = [format_table(rows, methods=methods),
             "targets on the seed-averaged table: " + json.dumps(check_targets(rows))]
    per_seed = check_targets_per_seed(rows)
    if len(per_seed) > 1:
        for seed, res in per_seed.items():
            lines.append(
                f"seed {seed}: T<I in {res['T_below_I']}/{res['settings']}, "
                f"T best or within 10 % in {res['T_best_or_within_10pct']}/{res['settings']}"
            )
    return "\n".join(lines), 0


register_study(Study(
    "censored-quality", "Tobit vs ignore/drop/Schmee-Hahn model quality (Eggensperger et al., Table 1)",
    "Table 1 of Eggensperger et al.: RMSE of I, D, S&H and T under censoring.",
    _censored_arguments, _censored_plan, _censored_report,
))


# ==================================================================================== demo
def _demo_arguments(demo: argparse.ArgumentParser) -> None:
    demo.add_argument("--out", default="uvp-bench-demo", metavar="DIR", help="output directory; a repeated demo reuses finished runs (default uvp-bench-demo)")
    add_jobs(demo, default=min(2, os.cpu_count() or 1))
    add_force(demo)
    add_threads(demo)


def _demo_execute(args: argparse.Namespace) -> int:
    from uvp_plugins.bench.demo import run_demo

    return run_demo(args.out, jobs=_check_jobs(args), threads=args.threads, force=args.force)


register_study(Study(
    "demo", "each available plugin against its framework's native counterpart on real scikit-learn training",
    "The showcase: each plugin against its framework's own method on real scikit-learn "
    "training, with the uncertainty of every verdict; a summary and PNG plots.",
    _demo_arguments, execute=_demo_execute,
))

"""The ``uvp-bench`` command: ``list``, ``run``, ``report``, ``demo``, ``stress``, ...

Examples::

    uvp-bench list
    uvp-bench run --problem lcbench --tasks 3945 --methods random,optuna-tpe-hyperband --seeds 0-2
    uvp-bench report bench-out --baseline optuna-tpe-hyperband
    uvp-bench demo
    uvp-bench stress --storages sqlite,journal,postgresql,grpc --kill
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uvp_plugins.bench import registry
from uvp_plugins.bench.runner import WORKER_HASH_SEED, RunSpec, parse_seeds, run_many

__all__ = ["main", "build_specs"]

#: (problem, task, methods, budget factor, total budget or None, seeds) for ``uvp-bench demo``
DEMO_PLAN: list[tuple[str, str, list[str], float, float | None, list[int]]] = [
    (
        "sklearn-mlp",
        "digits",
        ["random", "optuna-tpe-hyperband", "optuna-random-median", "optuna-eadacent-pred"],
        6.0,
        None,
        [0, 1],
    ),
    # each Ray run starts its own local cluster: one seed, run one after the other
    ("sklearn-mlp", "digits", ["ray-hyperband", "ray-idhb"], 6.0, None, [0]),
    ("cash-sklearn", "digits", ["cash-random", "smac-combined", "smac-maxucb"], 1.0, 40.0, [0, 1]),
]


def _resolve_tasks(spec: registry.ProblemSpec, text: str | None, options: dict[str, Any]) -> list[str]:
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
    tasks = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in valid]
    if unknown:
        raise ValueError(
            f"unknown task(s) {', '.join(unknown)} for {spec.name}; valid tasks: {', '.join(valid)}"
        )
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
    missing = [m for m in pspec.requires if __import__("importlib.util").util.find_spec(m) is None]
    if missing:
        raise ValueError(f"problem {problem!r} needs {', '.join(missing)}: pip install 'uvp-plugins[bench]'")
    task_list = _resolve_tasks(pspec, tasks, options)
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


def _cmd_list(_: argparse.Namespace) -> int:
    print("Problems:")
    for name, p in registry.problems().items():
        print(f"  {name:16s} [{p.kind}] {p.description}")
    print("\nMethods:")
    for name, m in registry.methods().items():
        state = "" if m.available else f"  (needs: {', '.join(m.missing())})"
        print(f"  {name:26s} [{m.kind}; {','.join(m.problem_kinds)}] {m.description}{state}")
    return 0


def _problem_options(args: argparse.Namespace) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    if getattr(args, "yahpo_data", None):
        opts["yahpo_data"] = args.yahpo_data
    if getattr(args, "log_params", None):
        if args.problem not in ("lcbench", "rbv2_rpart", "rbv2_xgboost", "iaml_glmnet"):
            raise ValueError(f"--log-params applies to the YAHPO problems, not {args.problem!r}")
        opts["log_params"] = [p.strip() for p in args.log_params.split(",") if p.strip()]
    return opts


def _cmd_run(args: argparse.Namespace) -> int:
    specs = build_specs(
        args.problem,
        args.tasks,
        args.methods,
        args.seeds,
        args.budget_factor,
        args.total_budget,
        _problem_options(args),
    )
    print(f"[uvp-bench] {len(specs)} runs -> {args.out} ({args.jobs} at a time)", file=sys.stderr)
    results = run_many(specs, args.out, jobs=args.jobs, force=args.force)
    errors = [r for r in results if r.get("error")]
    for r in errors:
        print(f"[uvp-bench] ERROR in {r['problem']}/{r['task']}/{r['method']}/seed{r['seed']}:\n{r['error']}", file=sys.stderr)
    print(f"[uvp-bench] done; summarise with: uvp-bench report {args.out}", file=sys.stderr)
    return 1 if errors else 0


def _fractions(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--fractions: expected numbers in (0, 1] like '0.1,0.5,1', got {text!r}") from None
    if not vals or any(not (0 < v <= 1) for v in vals):
        raise ValueError(f"--fractions: expected numbers in (0, 1], got {text!r}")
    return vals


def _cmd_report(args: argparse.Namespace) -> int:
    from uvp_plugins.bench.report import report

    def names(text: str | None) -> list[str] | None:
        return None if text is None else [t.strip() for t in text.split(",") if t.strip()]

    text = report(
        args.directory, args.baseline, _fractions(args.fractions), args.plot_dir,
        plots=not args.no_plots, methods=names(args.methods), tasks=names(args.tasks),
        seeds=None if args.seeds is None else parse_seeds(args.seeds), bootstrap=args.bootstrap,
    )
    print(text)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from uvp_plugins.bench.report import report

    out = Path(args.out)
    all_methods = registry.methods()
    all_problems = registry.problems()
    ran_any = False
    for problem, task, methods, factor, total, seeds in DEMO_PLAN:
        if problem not in all_problems:
            print(f"[uvp-bench demo] skipping {problem}: problem not available in this version", file=sys.stderr)
            continue
        usable = [m for m in methods if m in all_methods and all_methods[m].available]
        skipped = [m for m in methods if m not in usable]
        if skipped:
            print(f"[uvp-bench demo] {problem}: not available here: {', '.join(skipped)}", file=sys.stderr)
        if len(usable) < 2:
            continue
        specs = build_specs(problem, task, ",".join(usable), ",".join(map(str, seeds)), factor, total)
        budget = f"B = {total:g}" if total is not None else f"B = {factor:g}·T"
        print(
            f"[uvp-bench demo] {problem}[{task}]: {', '.join(usable)}; seeds {seeds}; {budget}",
            file=sys.stderr,
        )
        jobs = 1 if any(m.startswith("ray-") for m in usable) else args.jobs
        run_many(specs, out, jobs=jobs, force=args.force)
        ran_any = True
    if not ran_any:
        print("[uvp-bench demo] nothing to run: install the frameworks with pip install 'uvp-plugins[all]'", file=sys.stderr)
        return 1
    print(report(out, None, (0.25, 0.5, 1.0), out / "plots"))
    return 0


def _cmd_idhb(args: argparse.Namespace) -> int:
    from uvp_plugins.bench.idhb_bench import idhb_report, run_idhb_benchmark

    pspec = registry.get_problem(args.problem)
    options = _problem_options(args)
    tasks = _resolve_tasks(pspec, args.tasks, options)
    root = run_idhb_benchmark(
        args.problem, tasks, parse_seeds(args.seeds), args.eta, args.r0, args.out, args.jobs, options, args.force
    )
    print(idhb_report(root, plot=not args.no_plots))
    return 0


def _cmd_overhead(args: argparse.Namespace) -> int:
    from uvp_plugins.bench.overhead import format_overhead, optuna_sampler_overhead

    trials = [int(x) for x in args.trials.split(",")]
    cands = [int(x) for x in args.candidates.split(",")]
    if any(t < 10 for t in trials) or any(c < 1 for c in cands):
        raise ValueError("--trials must be >= 10 and --candidates >= 1")
    print(format_overhead(optuna_sampler_overhead(trials, cands, args.seed, args.repeats)))
    return 0


def _cmd_ray_overhead(args: argparse.Namespace) -> int:
    from uvp_plugins.bench.ray_overhead import format_ray_overhead, ray_scheduler_overhead

    rows = ray_scheduler_overhead(args.max_t, args.eta, args.repeats, args.seed, args.stall_timeout)
    print(format_ray_overhead(rows))
    return 0


def _cmd_idhb_ray(args: argparse.Namespace) -> int:
    import json

    from uvp_plugins.bench.idhb_ray import format_idhb_ray, run_idhb_ray

    pspec = registry.get_problem(args.problem)
    options = _problem_options(args)
    tasks = _resolve_tasks(pspec, args.tasks, options)
    rows = run_idhb_ray(args.problem, tasks, parse_seeds(args.seeds), args.eta, args.r0, args.variant, options)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(rows, indent=1, default=str))
    print(format_idhb_ray(rows))
    return 0 if all(r["equal"] and r["same_decisions"] for r in rows) else 1


#: subcommands whose options belong to a module of their own: name -> module with main(argv)
_PASS_THROUGH = {
    "censored-quality": "uvp_plugins.bench.censored_quality",
    "tobit-runtime": "uvp_plugins.bench.methods.tobit_bench",
    "stress": "uvp_plugins.bench.stress",
}
#: pass-through subcommands that run SMAC in-process: without a ``PYTHONHASHSEED`` from the caller
#: they run in a child process with ``PYTHONHASHSEED=0``, as ``uvp-bench run``'s workers do
_RUNS_SMAC = frozenset({"tobit-runtime"})


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="uvp-bench",
        description="Benchmark uvp-plugins beside the frameworks' own methods (same budget, same seeds).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="list problems and methods").set_defaults(func=_cmd_list)

    run = sub.add_parser("run", help="run methods on a problem (each run in its own process)")
    run.add_argument("--problem", required=True, help="problem family (see 'uvp-bench list')")
    run.add_argument("--tasks", default=None, help="comma-separated tasks, 'all', or 'first:N' (default: the first task)")
    run.add_argument("--methods", required=True, help="comma-separated method names")
    run.add_argument("--seeds", default="0", help="seeds, e.g. '0-9' or '0,3,5' (default 0)")
    run.add_argument("--budget-factor", type=float, default=20.0, help="total budget B = factor * T (default 20; CASH problems default to their own B, e.g. 200 iterations)")
    run.add_argument("--total-budget", type=float, default=None, help="total budget B in fidelity units (overrides --budget-factor)")
    run.add_argument("--out", default="bench-out", help="output directory (default bench-out)")
    run.add_argument("--jobs", type=int, default=1, help="runs in parallel processes (default 1)")
    run.add_argument("--yahpo-data", default=None, help="YAHPO Gym data directory (default ../shared/yahpo_data or $UVP_YAHPO_DATA)")
    run.add_argument("--log-params", default=None, help="YAHPO problems: comma-separated numeric parameters to sample on a log scale (e.g. weight_decay on lcbench, as the AdaCent authors' code does); the same space for every method")
    run.add_argument("--force", action="store_true", help="rerun runs whose results exist")
    run.set_defaults(func=_cmd_run)

    rep = sub.add_parser("report", help="summarise a results directory (table + PNG plots)")
    rep.add_argument("directory")
    rep.add_argument("--baseline", default=None, help="method to count wins/ties/losses against")
    rep.add_argument("--fractions", default="0.1,0.25,0.5,1.0", help="budget fractions for ranks")
    rep.add_argument("--plot-dir", default=None, help="where to write PNGs (default DIR/plots)")
    rep.add_argument("--no-plots", action="store_true")
    rep.add_argument("--methods", default=None, help="comma-separated methods to include (default: all)")
    rep.add_argument("--tasks", default=None, help="comma-separated tasks to include, or 'common': the tasks every selected method has runs on (default: all)")
    rep.add_argument("--seeds", default=None, help="seeds to include, e.g. 0-4 (default: all)")
    rep.add_argument("--bootstrap", type=int, default=0, metavar="N", help="add the final mean rank with a 95%% bootstrap interval over seeds and P(best), from N replicates (the CASH paper's App. D.1; default 0: off)")
    rep.set_defaults(func=_cmd_report)

    idhb = sub.add_parser("idhb", help="ID-HB variants vs re-running Hyperband at eta*R (Brandt et al., Figure 3)")
    idhb.add_argument("--problem", required=True)
    idhb.add_argument("--tasks", default=None, help="comma-separated tasks, 'all', or 'first:N'")
    idhb.add_argument("--seeds", default="0")
    idhb.add_argument("--eta", type=int, default=2)
    idhb.add_argument("--r0", type=int, default=16, help="initial max budget R (deepened once to eta*R)")
    idhb.add_argument("--out", default="bench-idhb")
    idhb.add_argument("--jobs", type=int, default=1)
    idhb.add_argument("--yahpo-data", default=None)
    idhb.add_argument("--force", action="store_true")
    idhb.add_argument("--no-plots", action="store_true")
    idhb.set_defaults(func=_cmd_idhb)

    ov = sub.add_parser("overhead", help="Optuna sampler time per trial: EnhancedAdaCentSampler beside TPESampler")
    ov.add_argument("--trials", default="100,1000")
    ov.add_argument("--candidates", default="1000,10000")
    ov.add_argument("--seed", type=int, default=0)
    ov.add_argument("--repeats", type=int, default=1, help="interleaved runs per sampler; cells are medians (default 1)")
    ov.set_defaults(func=_cmd_overhead)

    rov = sub.add_parser("ray-overhead", help="Ray Tune scheduler time per on_trial_result: IterativeDeepeningHyperBandScheduler beside HyperBandScheduler (real tune.run, local 2-CPU cluster)")
    rov.add_argument("--max-t", type=int, default=27, help="max_t of both schedulers (default 27)")
    rov.add_argument("--eta", type=int, default=3, help="reduction_factor of both schedulers (default 3)")
    rov.add_argument("--repeats", type=int, default=1, help="runs per scheduler, alternating (default 1)")
    rov.add_argument("--seed", type=int, default=0)
    rov.add_argument("--stall-timeout", type=float, default=30.0, help="end a run after this many seconds without a result (Ray's HyperBandScheduler can leave a trial paused for good; default 30)")
    rov.set_defaults(func=_cmd_ray_overhead)

    ihr = sub.add_parser("idhb-ray", help="ID-HB through Ray Tune: iterations Ray trained vs the core's continuation ledger, per task and seed")
    ihr.add_argument("--problem", required=True)
    ihr.add_argument("--tasks", default=None, help="comma-separated tasks, 'all', or 'first:N'")
    ihr.add_argument("--seeds", default="0")
    ihr.add_argument("--eta", type=int, default=2)
    ihr.add_argument("--r0", type=int, default=16, help="initial max budget R (deepened once to eta*R within the Ray run)")
    ihr.add_argument("--variant", default="efficient", help="efficient, preserving or discarding (default efficient)")
    ihr.add_argument("--yahpo-data", default=None)
    ihr.add_argument("--out", default=None, help="also write the rows as JSON to this file")
    ihr.set_defaults(func=_cmd_idhb_ray)

    tr = sub.add_parser("tobit-runtime", help="runtime minimisation with a cutoff: smac-tobit-ts vs SMAC's random forest vs random search (Eggensperger et al., Table 3); --overhead: fit+predict time per SMAC iteration; options: see --help of the subcommand", add_help=False)
    tr.add_argument("rest", nargs=argparse.REMAINDER)
    tr.set_defaults(func=lambda a: 2)  # handled in main() (_PASS_THROUGH)

    cq = sub.add_parser("censored-quality", help="Tobit vs ignore/drop/Schmee-Hahn model quality (Eggensperger et al., Table 1); options: see --help of the subcommand", add_help=False)
    cq.add_argument("rest", nargs=argparse.REMAINDER)
    cq.set_defaults(func=lambda a: 2)  # handled in main() (_PASS_THROUGH)

    st = sub.add_parser("stress", help="many worker processes on one Optuna study on SQLite, JournalFileBackend, PostgreSQL and the gRPC proxy, also with kill -9 of a worker: trials, duplicates, lost trials; options: see --help of the subcommand", add_help=False)
    st.add_argument("rest", nargs=argparse.REMAINDER)
    st.set_defaults(func=lambda a: 2)  # handled in main() (_PASS_THROUGH)

    demo = sub.add_parser("demo", help="each available plugin against its framework's native counterpart on real scikit-learn training")
    demo.add_argument("--out", default="uvp-bench-demo")
    demo.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    demo.add_argument("--force", action="store_true")
    demo.set_defaults(func=_cmd_demo)
    return parser


def _rerun_with_fixed_hash_seed(module: str, argv: list[str]) -> int:
    """Run ``python -m module *argv`` with ``PYTHONHASHSEED`` fixed; its exit code.

    SMAC's local search orders its start points by string hash (see
    :func:`uvp_plugins.bench.runner.fixed_worker_hash_seed`), and the seed of the running process
    cannot be changed, so a subcommand that runs SMAC in-process runs in a child process instead.
    """
    env = dict(os.environ, PYTHONHASHSEED=WORKER_HASH_SEED)
    return subprocess.run([sys.executable, "-m", module, *argv], env=env, check=False).returncode


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in _PASS_THROUGH:
        # these subcommands parse their own options (argparse would take them for uvp-bench's)
        if argv[0] in _RUNS_SMAC and "PYTHONHASHSEED" not in os.environ:
            return _rerun_with_fixed_hash_seed(_PASS_THROUGH[argv[0]], argv[1:])
        module = importlib.import_module(_PASS_THROUGH[argv[0]])
        try:
            return int(module.main(argv[1:]))
        except (ValueError, FileNotFoundError) as exc:
            print(f"uvp-bench: error: {exc}", file=sys.stderr)
            return 2
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, FileNotFoundError) as exc:
        print(f"uvp-bench: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

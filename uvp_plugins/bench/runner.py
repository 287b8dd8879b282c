"""Run (problem, task, method, seed) combinations, each in its own process, and store results.

Layout of an output directory::

    OUT/<problem>/<task>/<method>/seed<k>.csv    anytime curve: spent, best, value, budget
    OUT/<problem>/<task>/<method>/seed<k>.json   summary: final, spent, total_budget, wall and
                                                 evaluation seconds, overhead, error (if any)

Finished runs are skipped when the command is repeated (``--force`` reruns them), so a long run
that was interrupted continues where it stopped. Runs execute in worker processes (``--jobs`` at
a time, ``spawn`` start method), never in the driver: a run that crashes is recorded with its
traceback and the others go on. Workers are reused across runs (imports and surrogate sessions
are loaded once per worker); no optimizer state is shared between runs. Workers start with
``PYTHONHASHSEED=0`` unless the caller set it (see :func:`fixed_worker_hash_seed`), so a run is
reproducible from its seed, and with their BLAS/OpenMP thread pools limited so that jobs x threads
<= cores (:mod:`uvp_plugins.bench.threads`; ``threads=`` overrides, each run records the pool sizes
it ran with).
"""

from __future__ import annotations

import csv
import json
import math
import multiprocessing as mp
import os
import re
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any, Protocol

from uvp_plugins.files import write_text_atomically

__all__ = [
    "RunSpec",
    "Job",
    "run_one",
    "run_many",
    "result_paths",
    "parse_seeds",
    "fixed_worker_hash_seed",
    "DATA_PATH_OPTIONS",
    "write_summary",
]

#: string-hash seed the workers start with when the caller did not set ``PYTHONHASHSEED``
WORKER_HASH_SEED = "0"

#: problem options that say where data are, not what is measured: left out of the summaries (a
#: run is the same run wherever its data were read from)
DATA_PATH_OPTIONS = ("yahpo_data", "yahpo_data_v0")


@dataclass(frozen=True)
class RunSpec:
    problem: str
    task: str
    method: str
    seed: int
    budget_factor: float = 20.0
    total_budget: float | None = None
    problem_options: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        return f"{self.problem}/{self.task}/{self.method}/seed{self.seed}"

    def summary_path(self, out: Path) -> Path:
        return result_paths(out, self)[1]

    def execute(self, out: Path, threads: int | None = None) -> dict[str, Any]:
        return run_one(self, out, threads)


class Job(Protocol):
    """What :func:`run_many` runs: a picklable description with a label, the path of the JSON
    summary it writes (a job whose summary exists is finished) and :meth:`execute`, which runs
    it in the current process, writes the summary and returns it. :class:`RunSpec` is one; a
    study may define others (e.g. :class:`uvp_plugins.bench.methods.tobit_bench.RuntimeJob`)."""

    def label(self) -> str: ...

    def summary_path(self, out: Path) -> Path: ...

    def execute(self, out: Path, threads: int | None = None) -> dict[str, Any]: ...


def parse_seeds(text: str) -> list[int]:
    """``"0-2,5"`` -> ``[0, 1, 2, 5]`` (non-negative integers and ranges); clear error otherwise."""
    seeds: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if m is None or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
            raise ValueError(f"--seeds: expected non-negative integers or ranges like '0-9,12', got {text!r}")
        hi = m.group(2) if m.group(2) is not None else m.group(1)
        seeds.extend(range(int(m.group(1)), int(hi) + 1))
    return sorted(set(seeds))


def resolve_total_budget(problem: Any, budget_factor: float, total_budget: float | None) -> float:
    """B: ``total_budget`` if given, else the problem's ``default_total_budget`` (CASH problems:
    a number of iterations), else ``budget_factor * T``."""
    if total_budget is not None:
        return float(total_budget)
    default = getattr(problem, "default_total_budget", None)
    if default is not None:
        return float(default)
    return float(budget_factor * problem.max_budget)


def result_paths(out: Path, spec: RunSpec) -> tuple[Path, Path]:
    base = out / spec.problem / spec.task / spec.method / f"seed{spec.seed}"
    return base.with_suffix(".csv"), base.with_suffix(".json")


def run_one(spec: RunSpec, out: str | os.PathLike[str], threads: int | None = None) -> dict[str, Any]:
    """Run one combination in this process and write its CSV and JSON; returns the summary.

    ``threads``: the thread limit this process runs under (recorded with the pool sizes)."""
    from uvp_plugins.bench.context import RunContext
    from uvp_plugins.bench.ledger import BudgetExhausted
    from uvp_plugins.bench.registry import get_method, get_problem
    from uvp_plugins.bench.threads import thread_pool_sizes

    out_dir = Path(out)
    csv_path, json_path = result_paths(out_dir, spec)
    problem = get_problem(spec.problem).make(task=spec.task, **spec.problem_options)
    total = resolve_total_budget(problem, spec.budget_factor, spec.total_budget)
    ctx = RunContext(problem, total_budget=total, seed=spec.seed)
    method = get_method(spec.method)
    error = None
    t0 = time.perf_counter()
    try:
        method.run(ctx)
    except BudgetExhausted:
        pass
    except Exception:  # a method's crash is recorded, not hidden
        error = traceback.format_exc()
    wall = time.perf_counter() - t0
    lines = ["spent,best,value,budget"]
    for p in ctx.ledger.curve:
        lines.append(f"{p.spent:g},{p.best!r},{p.value!r},{p.budget}")
    summary = {
        **{k: v for k, v in asdict(spec).items() if k != "problem_options"},
        "direction": problem.direction,
        "metric": problem.metric,
        "max_budget": problem.max_budget,
        "total_budget": ctx.total_budget,
        "spent": ctx.ledger.spent,
        "final": ctx.ledger.best,
        "n_evaluations": ctx.ledger.n_evaluations,
        "wall_seconds": wall,
        "eval_seconds": ctx.ledger.eval_seconds + ctx.extra_eval_seconds,
        "overhead_seconds": max(0.0, wall - ctx.ledger.eval_seconds - ctx.extra_eval_seconds),
        "optimum": problem.optimum,
        "partial_results_usable": problem.partial_results_usable,
        "error": error,
        "python_hash_seed": os.environ.get("PYTHONHASHSEED"),
        "threads": threads,
        "thread_pools": thread_pool_sizes(),
    }
    options = {k: v for k, v in spec.problem_options.items() if k not in DATA_PATH_OPTIONS}
    if options:  # e.g. log_params: a different parameterisation of the space
        summary["problem_options"] = options
    if ctx.notes:
        summary["notes"] = ctx.notes
    if ctx.arm_evaluations:  # CASH problems: how the budget was spread over model classes
        summary["arm_evaluations"] = dict(sorted(ctx.arm_evaluations.items()))
    if ctx.extras:  # method-specific facts (e.g. a core ledger to compare with the steps spent)
        summary["extras"] = ctx.extras
    if ctx.timings:
        summary["timings"] = {
            name: {
                "calls": len(sec),
                "total_s": float(sum(sec)),
                "mean_ms": 1000.0 * float(sum(sec)) / len(sec),
                "median_ms": 1000.0 * float(sorted(sec)[len(sec) // 2]),
            }
            for name, sec in ctx.timings.items()
        }
    write_text_atomically(csv_path, "\n".join(lines) + "\n")
    write_summary(json_path, summary)
    return summary


def run_facts(start: float, cpu: float, threads: int | None, error: str | None) -> dict[str, Any]:
    """What a job's summary records about how it ran, written once for every job.

    ``start`` and ``cpu`` are ``time.perf_counter()`` and ``time.process_time()`` taken when the
    run began; the facts are the CPU and wall seconds since, the hash seed (SMAC's local search
    depends on it), the thread limit the process ran under and the crash's traceback (or None).

    Example:
        >>> import time
        >>> facts = run_facts(time.perf_counter(), time.process_time(), 1, None)
        >>> list(facts)
        ['cpu', 'wall_seconds', 'python_hash_seed', 'threads', 'error']
    """
    return {
        "cpu": time.process_time() - cpu,
        "wall_seconds": time.perf_counter() - start,
        "python_hash_seed": os.environ.get("PYTHONHASHSEED"),
        "threads": threads,
        "error": error,
    }


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """Write a job's JSON summary atomically (a reader never sees half a file)."""
    write_text_atomically(path, json.dumps(summary, indent=1, default=str))


def _worker(job: Job, out: str, threads: int) -> dict[str, Any]:
    # the thread limit is already in this process's environment (set by the parent before the
    # pool started, see run_many); threadpoolctl also limits the pools loaded since
    from uvp_plugins.bench import progress
    from uvp_plugins.bench.threads import limit_threads

    limit_threads(threads)
    # this process runs one run after another: Ray methods keep their local cluster for the next
    os.environ["UVP_BENCH_KEEP_RAY"] = "1"  # ray_methods.KEEP_CLUSTER_ENV (not imported: no Ray here)
    import warnings

    warnings.filterwarnings("ignore")
    progress.begin(job.label())
    return job.execute(Path(out), threads)


_WORKER_DIED = "worker died: "


@contextmanager
def fixed_worker_hash_seed() -> Iterator[None]:
    """Give processes spawned inside the block a fixed string-hash seed.

    SMAC 2.x's local search returns its start points as ``list(set(configurations))``
    (``LocalSearch._get_initial_points``) and a ConfigSpace ``Configuration`` hashes its repr
    string, so under Python's per-process hash randomisation two runs with the same SMAC seed
    walk the start points in different orders and diverge after the initial design. Spawned
    workers read ``PYTHONHASHSEED`` from the environment at start-up: a value the caller set is
    kept, otherwise :data:`WORKER_HASH_SEED` is used inside the block and the caller's
    environment is restored afterwards.
    """
    if "PYTHONHASHSEED" in os.environ:
        yield
        return
    os.environ["PYTHONHASHSEED"] = WORKER_HASH_SEED
    try:
        yield
    finally:
        os.environ.pop("PYTHONHASHSEED", None)


def _job_parameters(job: Any) -> dict[str, Any]:
    """A dataclass job's parameters as they appear in its JSON summary."""
    if not is_dataclass(job) or isinstance(job, type):
        return {}
    params = json.loads(json.dumps(asdict(job), default=str))
    if isinstance(job, RunSpec):  # the summary keeps the options that change the problem
        options = {k: v for k, v in params.pop("problem_options").items() if k not in DATA_PATH_OPTIONS}
        params["problem_options"] = options
        if job.total_budget is None:  # the summary holds the B it resolved instead
            params.pop("total_budget")
    return dict(params)


def _finished(job: Job, out: Path) -> bool:
    """A job is finished when its summary exists and was made with the job's parameters, unless
    its worker process died (retried).

    A method's own crash is a result (recorded in ``error`` with the ledger up to the crash); a
    worker that died (the problem could not be built, the process was killed) measured nothing.
    A summary of the same run with other parameters (e.g. another budget) is rerun.
    """
    json_path = job.summary_path(out)
    if not json_path.exists():
        return False
    try:
        summary = json.loads(json_path.read_text())
    except (OSError, ValueError):
        return False
    error = summary.get("error")
    if isinstance(error, str) and error.startswith(_WORKER_DIED):
        return False
    for key, value in _job_parameters(job).items():
        stored = summary.get(key, {} if key == "problem_options" else value)
        if stored != value:
            return False
    return True


def run_many(
    specs: Sequence[Job],
    out: str | os.PathLike[str],
    jobs: int = 1,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
    threads: int | None = None,
    bar: str | None = None,
) -> list[dict[str, Any]]:
    """Run every job in a separate process (``jobs`` at a time); skip finished ones.

    ``threads``: BLAS/OpenMP threads per worker (default: the caller's ``OMP_NUM_THREADS`` if
    set, else cores // jobs; :func:`uvp_plugins.bench.threads.resolve_threads`). ``bar``: the
    label of a tqdm progress bar that also moves while runs train (workers report the share of
    their budget spent); None: no bar. ``progress`` receives one line per finished run (default:
    printed on stderr, above the bar if there is one)."""
    from uvp_plugins.bench import progress as progress_channel
    from uvp_plugins.bench.threads import resolve_threads, worker_thread_env

    out_dir = Path(out)
    todo = [s for s in specs if force or not _finished(s, out_dir)]
    skipped = len(specs) - len(todo)
    ctx = mp.get_context("spawn")
    channel = ctx.Queue() if bar is not None else None
    display = progress_channel.ProgressBar(len(todo), bar or "", channel, enabled=bar is not None and bool(todo))
    say = progress or display.write
    if skipped:
        say(f"[uvp-bench] {skipped} of {len(specs)} runs already done in {out_dir} (use --force to rerun)")
    retried = [s for s in todo if not force and s.summary_path(out_dir).exists()]
    if retried:
        say(f"[uvp-bench] rerunning {len(retried)} runs whose worker died, whose summary is "
            "unreadable or was made with other parameters: "
            + ", ".join(s.label() for s in retried))
    results: list[dict[str, Any]] = []
    if not todo:
        return results
    start = time.perf_counter()
    workers = max(1, int(jobs))
    per_worker = resolve_threads(workers, threads)
    try:
        with (
            fixed_worker_hash_seed(),
            worker_thread_env(per_worker),
            ProcessPoolExecutor(
                workers, mp_context=ctx, initializer=progress_channel.init_worker, initargs=(channel,)
            ) as pool,
        ):
            pending: dict[Future[dict[str, Any]], Job] = {}
            queue = list(todo)
            done = 0
            while queue or pending:
                while queue and len(pending) < workers:
                    spec = queue.pop(0)
                    pending[pool.submit(_worker, spec, str(out_dir), per_worker)] = spec
                finished, _ = wait(list(pending), timeout=0.5, return_when=FIRST_COMPLETED)
                display.poll()
                for fut in finished:
                    spec = pending.pop(fut)
                    done += 1
                    try:
                        res = fut.result()
                    except Exception as exc:  # the worker process itself died
                        res = {**asdict(spec), "error": f"{_WORKER_DIED}{exc!r}", "final": float("nan")}  # type: ignore[call-overload]
                        write_summary(spec.summary_path(out_dir), res)
                    results.append(res)
                    display.finished(spec.label())
                    elapsed = time.perf_counter() - start
                    eta = elapsed / done * (len(todo) - done)
                    final = res.get("final")
                    status = (
                        "ERROR" if res.get("error")
                        else f"final={final:.4g}" if isinstance(final, (int, float)) and math.isfinite(final)
                        else "done"
                    )
                    say(
                        f"[uvp-bench] {done}/{len(todo)} {spec.label()} {status} "
                        f"({res.get('wall_seconds', float('nan')):.1f}s; elapsed {elapsed:.0f}s, eta {eta:.0f}s)"
                    )
    finally:
        display.close()
        if channel is not None:
            channel.close()
    return results


def read_curve(path: Path) -> tuple[list[float], list[float]]:
    spent, best = [], []
    with path.open() as fh:
        for row in csv.DictReader(fh):
            spent.append(float(row["spent"]))
            best.append(float(row["best"]))
    return spent, best

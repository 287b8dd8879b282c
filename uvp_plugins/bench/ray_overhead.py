"""``uvp-bench ray-overhead``: scheduler time per ``on_trial_result``, ours beside Ray's
``HyperBandScheduler``, in the same invocation on the same local Ray cluster.

Both schedulers drive a real ``tune.run`` with the same cheap trainable
(:func:`~uvp_plugins.bench.methods.ray_methods.problem_trainable` on precomputed ``lc-synthetic``
curves: one result and one checkpoint per iteration, paused trials resume from their
checkpoints), the same ``max_t`` and ``reduction_factor`` and the same number of trials
(:meth:`raytune_ext.IterativeDeepeningHyperBandScheduler.num_samples_needed`; one trial per CPU
of a local ``ray.init(num_cpus=2, include_dashboard=False)`` cluster). :class:`HookTimer` wraps
the scheduler's hooks on the instance and records the wall time of every call (outermost calls
only: a hook calling another hook is counted once), and also the CPU time of the calling thread
(``time.thread_time``: what the call computed, without the time the driver spent descheduled
while another process ran - on a shared, loaded machine most of a microsecond call's wall time
can be such waiting). The figure of interest is the time per
``on_trial_result`` (where both schedulers take their rung decisions; ours also writes its
state file after each decision); the total time of all hooks (``on_trial_add``,
``choose_trial_to_run``, ``on_trial_complete``, ...) is reported beside it. With ``repeats > 1``
the two schedulers alternate and their calls are pooled. Wall times on a shared machine are
noisy.

``baselines`` adds the ID-HB scheduler of other checkouts to the same runs (``{"main":
"/tmp/main"}``: a directory holding that version's ``raytune_ext/``, e.g. a ``git archive``
extract), imported under an alias package (:func:`load_baseline_scheduler`): the versions are
then compared in the same invocation and cluster, alternating with the others, which on a shared
machine is far steadier than comparing separate invocations.
"""

from __future__ import annotations

import functools
import importlib
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "HookTimer",
    "SCHEDULER_HOOKS",
    "ray_scheduler_overhead",
    "format_ray_overhead",
    "check_ray_overhead_arguments",
]

#: the ``TrialScheduler`` hooks Ray's controller calls
SCHEDULER_HOOKS = (
    "on_trial_add",
    "on_trial_result",
    "on_trial_complete",
    "on_trial_error",
    "on_trial_remove",
    "choose_trial_to_run",
)


class HookTimer:
    """Times the hooks of one scheduler instance (wrapped in place on the instance).

    ``calls`` lists ``(hook, start, seconds, cpu_seconds)`` for every outermost call (``start``
    on the ``time.monotonic()`` clock; ``cpu_seconds`` the calling thread's CPU time).
    """

    def __init__(self, scheduler: Any, hooks: Sequence[str] = SCHEDULER_HOOKS) -> None:
        self.hooks = tuple(hooks)
        self.calls: list[tuple[str, float, float, float]] = []
        self._depth = 0
        for hook in self.hooks:
            setattr(scheduler, hook, self._wrap(hook, getattr(scheduler, hook)))

    def _wrap(self, hook: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            start = time.monotonic()
            c0 = time.thread_time()
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                cpu = time.thread_time() - c0
                self._depth -= 1
                if self._depth == 0:
                    self.calls.append((hook, start, dt, cpu))

        return timed

    def seconds(self, hook: str, until: float = math.inf) -> list[float]:
        """Wall seconds of the calls of ``hook`` that started before ``until``."""
        return [dt for h, start, dt, _cpu in self.calls if h == hook and start <= until]

    def cpu_seconds(self, hook: str, until: float = math.inf) -> list[float]:
        """Thread CPU seconds of the calls of ``hook`` that started before ``until``."""
        return [cpu for h, start, _dt, cpu in self.calls if h == hook and start <= until]

    def total(self, until: float = math.inf) -> tuple[int, float]:
        """(calls, seconds) of all hooks, calls started before ``until``."""
        sel = [dt for _h, start, dt, _cpu in self.calls if start <= until]
        return len(sel), float(sum(sel))


def _make_scheduler(
    name: str, max_t: int, eta: int, seed: int, classes: dict[str, Any] | None = None
) -> Any:
    if name == "HyperBandScheduler":
        from ray.tune.schedulers import HyperBandScheduler

        return HyperBandScheduler(max_t=max_t, reduction_factor=eta)
    if classes and name in classes:
        return classes[name](max_t=max_t, reduction_factor=eta, seed=seed)
    from raytune_ext import IterativeDeepeningHyperBandScheduler

    return IterativeDeepeningHyperBandScheduler(max_t=max_t, reduction_factor=eta, seed=seed)


SCHEDULERS = ("HyperBandScheduler", "IterativeDeepeningHyperBandScheduler")


def load_baseline_scheduler(name: str, tree: str) -> Any:
    """``IterativeDeepeningHyperBandScheduler`` of the ``raytune_ext/`` in directory ``tree``,
    imported as package ``raytune_ext_<name>`` (a copy in a temporary directory whose
    ``raytune_ext`` imports name the alias; the core ``uvp_plugins`` is this checkout's).

    Raises:
        ValueError: ``name`` is not an identifier or ``tree`` has no ``raytune_ext/``.
    """
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise ValueError(f"baseline name must be letters, digits or _, got {name!r}")
    source = os.path.join(tree, "raytune_ext")
    if not os.path.isfile(os.path.join(source, "__init__.py")):
        raise ValueError(f"baseline {name}: {tree!r} holds no raytune_ext/ package")
    alias = f"raytune_ext_{name}"
    root = tempfile.mkdtemp(prefix="uvp-ray-overhead-baseline-")
    os.makedirs(os.path.join(root, alias))
    for file in os.listdir(source):
        if file.endswith(".py"):
            with open(os.path.join(source, file), encoding="utf-8") as fh:
                text = re.sub(r"\braytune_ext\b", alias, fh.read())
            with open(os.path.join(root, alias, file), "w", encoding="utf-8") as fh:
                fh.write(text)
    sys.path.insert(0, root)
    try:
        module = importlib.import_module(alias)
    finally:
        sys.path.remove(root)
    return module.IterativeDeepeningHyperBandScheduler


def check_ray_overhead_arguments(max_t: int, eta: int, repeats: int) -> None:
    """Clear errors for ``--max-t``, ``--eta`` and ``--repeats``."""
    if eta < 2 or max_t < eta:
        raise ValueError(f"need eta >= 2 and max_t >= eta, got max_t={max_t}, eta={eta}")
    if repeats < 1:
        raise ValueError(f"--repeats must be >= 1, got {repeats}")


def ray_scheduler_overhead(
    max_t: int = 27,
    eta: int = 3,
    repeats: int = 1,
    seed: int = 0,
    stall_s: float = 30.0,
    baselines: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Run both schedulers ``repeats`` times (alternating) and return one row per scheduler.

    Row keys: ``scheduler``, ``runs``, ``trials``, ``results`` (results Ray reported, one per
    trained iteration), ``calls`` (of ``on_trial_result``), ``mean_ms``, ``median_ms``,
    ``p95_ms``, ``max_ms`` (wall time per ``on_trial_result``), ``cpu_mean_ms`` and
    ``cpu_median_ms`` (its thread CPU time), ``hook_calls`` and ``hook_total_s`` (all
    hooks), ``wall_s`` (``tune.run`` wall time, summed over runs) and ``stalled`` (runs ended by
    :class:`~uvp_plugins.bench.idhb_ray.StallStopper` after ``stall_s`` seconds without a
    result; their hook calls after the last result and the ``stall_s`` wait are left out).
    Starts a quiet local 2-CPU cluster if none is running.
    """
    from ray import tune

    from raytune_ext import IterativeDeepeningHyperBandScheduler
    from uvp_plugins.bench.idhb_ray import ResultRecorder, StallStopper
    from uvp_plugins.bench.methods.ray_methods import problem_trainable, quiet_local_ray
    from uvp_plugins.bench.problems.synthetic import LCSynthetic

    check_ray_overhead_arguments(max_t, eta, repeats)
    classes = {
        f"{SCHEDULERS[1]}@{name}": load_baseline_scheduler(name, tree)
        for name, tree in (baselines or {}).items()
    }
    schedulers = SCHEDULERS + tuple(classes)
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed(max_t, eta)
    problem = LCSynthetic("0", max_budget=max_t)
    configs = problem.space.sample(n, np.random.default_rng(seed))
    curves = np.array([problem.curve(c, max_t) for c in configs], dtype=float)
    trainable = tune.with_parameters(
        problem_trainable, problem=None, configs=None, curves=curves, max_budget=max_t
    )
    timers: dict[str, list[tuple[HookTimer, float]]] = {s: [] for s in schedulers}
    stalled: dict[str, int] = dict.fromkeys(schedulers, 0)
    results: dict[str, int] = dict.fromkeys(schedulers, 0)
    trials: dict[str, int] = dict.fromkeys(schedulers, 0)
    wall: dict[str, float] = dict.fromkeys(schedulers, 0.0)
    with quiet_local_ray():
        for rep in range(repeats):
            for name in schedulers:
                sched = _make_scheduler(name, max_t, eta, seed, classes)
                timer = HookTimer(sched)
                rec = ResultRecorder(config_key="idx", it_key="epoch", first_key="first")
                stopper = StallStopper(stall_s)
                with tempfile.TemporaryDirectory(
                    prefix="uvp-ray-overhead-", ignore_cleanup_errors=True
                ) as storage:
                    t0 = time.monotonic()
                    analysis = tune.run(
                        trainable,
                        config={"idx": tune.grid_search(list(range(n)))},
                        scheduler=sched,
                        metric="value",
                        mode=problem.direction,
                        stop=stopper,
                        callbacks=[rec],
                        resources_per_trial={"cpu": 1},
                        storage_path=storage,
                        name=f"overhead-{name.replace('@', '-')}-{rep}",
                        reuse_actors=True,
                        raise_on_failed_trial=False,
                        verbose=0,
                    )
                    t1 = time.monotonic()
                # A stalled run (no result for stall_s seconds): keep the hook calls and the wall
                # time up to its last result, not the idle loop of the wait.
                until = stopper.last_result + 1.0 if stopper.stalled else math.inf
                stalled[name] += int(stopper.stalled)
                wall[name] += (min(t1, until) if stopper.stalled else t1) - t0
                timers[name].append((timer, until))
                results[name] += len(rec.rows)
                trials[name] += len(analysis.trials)
    rows = []
    for name in schedulers:
        ms = 1000.0 * np.array(
            [s for t, until in timers[name] for s in t.seconds("on_trial_result", until)],
            dtype=float,
        )
        cpu_ms = 1000.0 * np.array(
            [s for t, until in timers[name] for s in t.cpu_seconds("on_trial_result", until)],
            dtype=float,
        )
        hooks = [t.total(until) for t, until in timers[name]]
        rows.append(
            {
                "scheduler": name,
                "max_t": max_t,
                "eta": eta,
                "runs": repeats,
                "trials": trials[name],
                "results": results[name],
                "calls": int(ms.size),
                "mean_ms": float(ms.mean()) if ms.size else float("nan"),
                "median_ms": float(np.median(ms)) if ms.size else float("nan"),
                "p95_ms": float(np.percentile(ms, 95)) if ms.size else float("nan"),
                "max_ms": float(ms.max()) if ms.size else float("nan"),
                "cpu_mean_ms": float(cpu_ms.mean()) if cpu_ms.size else float("nan"),
                "cpu_median_ms": float(np.median(cpu_ms)) if cpu_ms.size else float("nan"),
                "hook_calls": sum(c for c, _ in hooks),
                "hook_total_s": float(sum(sec for _, sec in hooks)),
                "wall_s": wall[name],
                "stalled": stalled[name],
            }
        )
    return rows


def format_ray_overhead(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table of :func:`ray_scheduler_overhead` rows, and the ratios of ID-HB's time per
    ``on_trial_result`` to ``HyperBandScheduler``'s (wall mean, wall median, CPU mean, CPU
    median) when both are there."""
    if not rows:
        return "(no runs)"
    first = rows[0]
    nan = float("nan")
    lines = [
        f"## Scheduler time per on_trial_result: max_t = {first['max_t']}, "
        f"reduction_factor = {first['eta']}, {first['runs']} run(s) each",
        "",
        "| scheduler | trials | results | on_trial_result calls | mean ms | median ms | p95 ms | "
        "max ms | CPU mean ms | CPU median ms | all hooks: calls | all hooks: total s | "
        "tune.run wall s | stalled runs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scheduler']} | {r['trials']} | {r['results']} | {r['calls']} | "
            f"{r['mean_ms']:.3f} | {r['median_ms']:.3f} | {r['p95_ms']:.3f} | {r['max_ms']:.3f} | "
            f"{r.get('cpu_mean_ms', nan):.3f} | {r.get('cpu_median_ms', nan):.3f} | "
            f"{r['hook_calls']} | {r['hook_total_s']:.3f} | {r['wall_s']:.1f} | {r['stalled']} |"
        )
    ray = next((r for r in rows if r["scheduler"] == SCHEDULERS[0]), None)
    if ray is not None:
        lines.append("")
        for ours in rows:
            if ours is ray:
                continue
            ratios = [
                f"{label} {ours.get(key, nan) / ray[key]:.2f}x" if ray.get(key) else f"{label} -"
                for label, key in (
                    ("mean", "mean_ms"),
                    ("median", "median_ms"),
                    ("CPU mean", "cpu_mean_ms"),
                    ("CPU median", "cpu_median_ms"),
                )
            ]
            name = ours["scheduler"].replace(SCHEDULERS[1], "ID-HB")
            lines.append(f"- {name} / HyperBandScheduler per on_trial_result: " + ", ".join(ratios))
    if any(r["stalled"] for r in rows):
        lines += [
            "",
            "Stalled runs had a trial left PAUSED for good (Ray's HyperBandScheduler: a trial still "
            "saving its pause checkpoint when its bracket finishes is never stopped); they were "
            "ended after the stall timeout, which is not counted in the wall time or the hooks.",
        ]
    return "\n".join(lines)

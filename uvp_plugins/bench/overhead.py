"""``uvp-bench overhead``: sampler time per trial, ours beside Optuna's TPESampler and GPSampler.

A study with five float parameters and a free objective runs ``max(trials) + 10`` trials; the
time of ``study.ask()`` plus the ``suggest_*`` calls (where Optuna's samplers do their work) is
recorded for every trial, both as CPU time of the process (``time.process_time``: what the
sampler costs, insensitive to other jobs on a shared machine) and as wall time. The figure at
``n`` trials is the mean over trials ``n-10 .. n+9`` (the sampler sees about ``n`` earlier
trials). The candidate-mesh size varies for our sampler (default settings, and the paper-faithful
``guidance=None`` at the first mesh size); TPE and GPSampler have none. GPSampler (needs torch)
runs only up to the trial counts ``<= gp_max_trials`` (its cost grows cubically: at 1000 trials a
single run takes hours). With ``repeats > 1`` the samplers run in turns (TPE, GP, ours with each
mesh size, TPE, ...), so a change in machine load affects all of them alike, and each cell is the
median over the repeats.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["optuna_sampler_overhead", "format_overhead"]


def _time_study(sampler: Any, n_trials: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-trial ``(cpu_seconds, wall_seconds)`` of ``ask`` + ``suggest_*``."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    rng = np.random.default_rng(seed)
    cpu = np.empty(n_trials)
    wall = np.empty(n_trials)
    for i in range(n_trials):
        c0, w0 = time.process_time(), time.perf_counter()
        trial = study.ask()
        xs = [trial.suggest_float(f"x{j}", 0.0, 1.0) for j in range(5)]
        cpu[i], wall[i] = time.process_time() - c0, time.perf_counter() - w0
        study.tell(trial, float(-np.sum((np.array(xs) - 0.3) ** 2) + 0.01 * rng.random()))
    return cpu, wall


def optuna_sampler_overhead(
    trials: Sequence[int] = (100, 1000),
    candidates: Sequence[int] = (1000, 10_000),
    seed: int = 0,
    repeats: int = 1,
    gp_max_trials: int = 200,
) -> list[dict[str, Any]]:
    """Rows ``{sampler, candidates, trials, cpu_ms_per_trial, wall_ms_per_trial}`` (medians
    over ``repeats`` interleaved runs)."""
    import importlib.util

    import optuna

    from optuna_ext import EnhancedAdaCentSampler

    if isinstance(repeats, bool) or int(repeats) < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    horizon = max(trials) + 10
    gp_trials = [k for k in trials if k <= gp_max_trials]
    configs: list[tuple[str, int | None, int, Any]] = [
        ("TPESampler", None, horizon, lambda r: optuna.samplers.TPESampler(seed=seed + r))
    ]
    if gp_trials and importlib.util.find_spec("torch") is not None:
        configs.append(
            ("GPSampler", None, max(gp_trials) + 10, lambda r: optuna.samplers.GPSampler(seed=seed + r))
        )
    for n in candidates:
        configs.append(
            (
                "EnhancedAdaCentSampler",
                int(n),
                horizon,
                lambda r, n=int(n): EnhancedAdaCentSampler(n_candidates=n, seed=seed + r),
            )
        )
    configs.append(
        (
            "EnhancedAdaCentSampler(guidance=None)",
            int(candidates[0]),
            horizon,
            lambda r: EnhancedAdaCentSampler(
                n_candidates=int(candidates[0]), seed=seed + r, guidance=None
            ),
        )
    )
    measured: dict[tuple[str, int | None], list[tuple[np.ndarray, np.ndarray]]] = {
        (name, n): [] for name, n, _, _ in configs
    }
    for r in range(int(repeats)):
        for name, n_cand, n_trials, make in configs:
            measured[(name, n_cand)].append(_time_study(make(r), n_trials, seed + r))
    rows = []
    for name, n_cand, n_trials, _ in configs:
        for k in trials:
            if k + 10 > n_trials:
                continue
            lo, hi = max(0, k - 10), k + 10
            cpu = [float(c[lo:hi].mean()) for c, _ in measured[(name, n_cand)]]
            wall = [float(w[lo:hi].mean()) for _, w in measured[(name, n_cand)]]
            rows.append(
                {
                    "sampler": name,
                    "candidates": n_cand,
                    "trials": k,
                    "cpu_ms_per_trial": 1000 * float(np.median(cpu)),
                    "wall_ms_per_trial": 1000 * float(np.median(wall)),
                }
            )
    return rows


def format_overhead(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table: CPU (and wall) milliseconds per trial at each trial count."""
    trials = sorted({r["trials"] for r in rows})
    lines = [
        "| sampler | candidates | "
        + " | ".join(f"CPU ms/trial at {k} trials (wall)" for k in trials)
        + " |",
        "|---|---|" + "---|" * len(trials),
    ]
    keys: list[tuple[str, int | None]] = []
    for r in rows:
        key = (r["sampler"], r["candidates"])
        if key not in keys:
            keys.append(key)
    for name, n in keys:
        cells = []
        for k in trials:
            match = [r for r in rows if (r["sampler"], r["candidates"], r["trials"]) == (name, n, k)]
            cells += [
                f"{r['cpu_ms_per_trial']:.1f} ({r['wall_ms_per_trial']:.1f})" for r in match
            ] or ["(not run)"]
        lines.append(f"| {name} | {'-' if n is None else n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)

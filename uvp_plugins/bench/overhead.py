"""``uvp-bench overhead``: sampler time per trial, ours beside Optuna's TPESampler, same run.

A study with five float parameters and a free objective runs ``max(trials)`` trials; the time of
``study.ask()`` plus the ``suggest_*`` calls (where Optuna's samplers do their work) is recorded
for every trial. The figure at ``n`` trials is the mean over trials ``n-10 .. n+9`` (the sampler
sees about ``n`` earlier trials). The candidate-mesh size varies for our sampler; TPE has none.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["optuna_sampler_overhead", "format_overhead"]


def _time_study(sampler: Any, n_trials: int, seed: int) -> np.ndarray:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    rng = np.random.default_rng(seed)
    times = np.empty(n_trials)
    for i in range(n_trials):
        t0 = time.perf_counter()
        trial = study.ask()
        xs = [trial.suggest_float(f"x{j}", 0.0, 1.0) for j in range(5)]
        times[i] = time.perf_counter() - t0
        study.tell(trial, float(-np.sum((np.array(xs) - 0.3) ** 2) + 0.01 * rng.random()))
    return times


def optuna_sampler_overhead(
    trials: Sequence[int] = (100, 1000), candidates: Sequence[int] = (1000, 10_000), seed: int = 0
) -> list[dict[str, Any]]:
    """Rows ``{sampler, candidates, trials, ms_per_trial}``."""
    import optuna

    from optuna_ext import EnhancedAdaCentSampler

    horizon = max(trials) + 10
    runs: list[tuple[str, int | None, np.ndarray]] = [
        ("TPESampler", None, _time_study(optuna.samplers.TPESampler(seed=seed), horizon, seed))
    ]
    for n in candidates:
        runs.append(
            (
                "EnhancedAdaCentSampler",
                int(n),
                _time_study(EnhancedAdaCentSampler(n_candidates=int(n), seed=seed), horizon, seed),
            )
        )
    rows = []
    for name, n_cand, times in runs:
        for k in trials:
            window = times[max(0, k - 10) : k + 10]
            rows.append({"sampler": name, "candidates": n_cand, "trials": k, "ms_per_trial": 1000 * float(window.mean())})
    return rows


def format_overhead(rows: Sequence[dict[str, Any]]) -> str:
    trials = sorted({r["trials"] for r in rows})
    lines = [
        "| sampler | candidates | " + " | ".join(f"ms/trial at {k} trials" for k in trials) + " |",
        "|---|---|" + "---|" * len(trials),
    ]
    keys = []
    for r in rows:
        key = (r["sampler"], r["candidates"])
        if key not in keys:
            keys.append(key)
    for name, n in keys:
        cells = [f"{r['ms_per_trial']:.1f}" for k in trials for r in rows if (r["sampler"], r["candidates"], r["trials"]) == (name, n, k)]
        lines.append(f"| {name} | {'-' if n is None else n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)

"""``uvp-bench idhb-ray``: ID-HB through Ray Tune trains exactly the core's continuation ledger.

For every (task, seed) of a problem (YAHPO ``lcbench`` in the documented run):

1. the core :class:`~uvp_plugins.hyperband.IterativeDeepeningHyperband` runs offline at ``R0``,
   deepened once to ``eta R0`` (the protocol of ``uvp-bench idhb``, same seed, so the same
   per-bracket sampling streams); it draws the configurations, and their raw curves to
   ``eta R0`` are computed once on the driver;
2. a real ``tune.run`` trains those configurations under
   :class:`raytune_ext.IterativeDeepeningHyperBandScheduler` with ``max_t=[R0, eta R0]``
   (deepened within the run), Ray trial ``i`` = configuration ``i``, one trial per CPU of a local
   2-CPU cluster; the trainable
   (:func:`~uvp_plugins.bench.methods.ray_methods.problem_trainable`) trains epoch by epoch from
   its checkpoint and reports every epoch;
3. a driver callback (:class:`ResultRecorder`) logs every result: their number is the number of
   epochs the trainables executed (continuations from checkpoints included, restarts from
   scratch counted again);
4. the core is replayed offline (:func:`replay_core`) on the configurations in the order Ray's
   scheduler placed them, with the same curves; its ``ledger.continuation`` is what Ray should
   have trained, its ``ledger.full_charge`` what re-training every promotion from scratch costs.

:func:`format_idhb_ray` prints one row per run: the iterations Ray trained, the core's
continuation and full charge, whether they are equal, whether Ray's decisions equal the replayed
core's (every (configuration, rung, budget, value)), and both final incumbents.

The generic pieces (:class:`ResultRecorder`, :func:`replay_core`, :func:`evaluations`,
:func:`ray_config_order`, :func:`training_summary`) are shared with the Ray integration tests
(``tests/raytune_ext/idhb_ray_helpers.py``).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from ray.tune import Callback, Stopper

from uvp_plugins.hyperband import IterativeDeepeningHyperband

__all__ = [
    "ResultRecorder",
    "StallStopper",
    "replay_core",
    "evaluations",
    "ray_config_order",
    "training_summary",
    "idhb_ray_ledger",
    "run_idhb_ray",
    "idhb_ray_rows",
    "format_idhb_ray",
]

#: one recorded result: (trial id, config key, iteration reached, first iteration of the segment)
Row = tuple[str, Any, int, int]


class ResultRecorder(Callback):
    """Ray Tune callback: driver-side log of every result as ``(trial_id, key, it, first)``.

    ``key = trial.config[config_key]`` names the configuration, ``it = result[it_key]`` is the
    iteration the result reports and ``first = result[first_key]`` the first iteration of the
    training segment that produced it (> 1 when the trial resumed from a checkpoint). The
    trainable reports once per iteration, so ``len(rows)`` is the number of iterations executed.
    """

    def __init__(self, config_key: str = "x", it_key: str = "it", first_key: str = "first") -> None:
        self.config_key = config_key
        self.it_key = it_key
        self.first_key = first_key
        self.rows: list[Row] = []

    def on_trial_result(
        self, iteration: int, trials: list, trial: Any, result: dict, **info: Any
    ) -> None:
        self.rows.append(
            (
                trial.trial_id,
                trial.config[self.config_key],
                int(result[self.it_key]),
                int(result[self.first_key]),
            )
        )


class StallStopper(Stopper):
    """Ends the experiment when no result has arrived for ``stall_s`` seconds (``stalled`` is
    then True), instead of waiting forever.

    Ray 2.60's ``HyperBandScheduler`` can leave a trial ``PAUSED`` for good: when its bracket
    finishes, ``_Bracket.cleanup_full`` stops only the trials that are ``PAUSED`` at that moment,
    so a trial still saving its pause checkpoint is never stopped nor resumed and ``tune.run``
    spins. ``last_result`` is the ``time.monotonic()`` of the last result (of the start before
    the first result). Before the first result the patience is ``first_result_s`` (default
    ``10 * stall_s``): starting the workers can take long on a busy machine.
    """

    def __init__(self, stall_s: float = 60.0, first_result_s: float | None = None) -> None:
        self.stall_s = float(stall_s)
        self.first_result_s = 10.0 * self.stall_s if first_result_s is None else float(first_result_s)
        self.last_result = time.monotonic()
        self.got_result = False
        self.stalled = False

    def __call__(self, trial_id: str, result: dict) -> bool:
        self.last_result = time.monotonic()
        self.got_result = True
        return False

    def stop_all(self) -> bool:
        patience = self.stall_s if self.got_result else self.first_result_s
        if time.monotonic() - self.last_result > patience:
            self.stalled = True
        return self.stalled


def training_summary(rows: Iterable[Row]) -> dict[str, int]:
    """Counts over recorded results: ``iterations`` executed, ``retrained`` (iterations a trial
    executed more than once: restarts from scratch), ``resumed`` (segments that started from a
    checkpoint, ``first > 1``) and ``trials`` that trained."""
    seen: set[tuple[str, int]] = set()
    n = retrained = resumed = 0
    trials: set[str] = set()
    for tid, _key, it, first in rows:
        n += 1
        trials.add(tid)
        if (tid, it) in seen:
            retrained += 1
        seen.add((tid, it))
        if it == first and first > 1:
            resumed += 1
    return {"iterations": n, "retrained": retrained, "resumed": resumed, "trials": len(trials)}


def replay_core(
    configs: Sequence[Any],
    ladder: Sequence[int],
    eta: int,
    variant: str,
    evaluate: Callable[[Any, int], float | None],
    mode: str = "min",
    min_budget: int = 1,
    seed: int = 0,
) -> IterativeDeepeningHyperband:
    """The core run offline on ``configs`` in the given order (e.g. the order Ray's scheduler
    placed its trials), at ``ladder[0]`` and deepened through ``ladder[1:]``.

    ``evaluate(config, budget)`` returns the value, or None for a failed evaluation
    (``core.fail``). Raises ``StopIteration`` when the core needs more configurations.
    """
    hb = IterativeDeepeningHyperband(
        ladder[0], eta=eta, variant=variant, min_budget=min_budget, mode=mode, seed=seed
    )
    it = iter(configs)
    for level, _r in enumerate(ladder):
        if level:
            hb.deepen()
        while True:
            job = hb.ask(lambda rng: next(it))
            if job is None:
                assert hb.finished
                break
            value = evaluate(job.config, job.budget)
            if value is None:
                hb.fail(job)
            else:
                hb.tell(job, value)
    return hb


def evaluations(
    hb: IterativeDeepeningHyperband, name_of: Callable[[Any], Any]
) -> set[tuple[Any, int, int, float]]:
    """(name, rung, budget, value) of every result a core holds; ``name_of(config)`` names the
    configuration (so cores holding different config objects can be compared)."""
    return {
        (name_of(hb.config(cid)), rung, hb.rung_budget(hb.bracket_of(cid), rung), round(v, 12))
        for (cid, rung), v in hb.results.items()
    }


def ray_config_order(
    hb: IterativeDeepeningHyperband, trials: Sequence[Any], key: Callable[[Any], Any]
) -> tuple[list[Any], Callable[[Any], Any]]:
    """``key(trial)`` of the Ray core's configurations in config-id order (empty slots skipped),
    and a mapper from the Ray core's configs (``{"trial_id": ...}``) to that key."""
    key_of_trial = {t.trial_id: key(t) for t in trials}
    keys = [
        key_of_trial[hb.config(c)["trial_id"]]
        for c in sorted(hb.configs)
        if hb.config(c)["trial_id"]
    ]
    return keys, lambda cfg: key_of_trial[cfg["trial_id"]]


def idhb_ray_ledger(
    problem: Any,
    seed: int = 0,
    eta: int = 2,
    r0: int = 16,
    variant: str = "efficient",
    storage: str | None = None,
    stall_s: float = 300.0,
) -> dict[str, Any]:
    """One (task, seed): the Ray run and the core on the same configurations (module doc).

    ``problem.max_budget`` must be at least ``eta * r0``. Needs a running Ray cluster (see
    :func:`~uvp_plugins.bench.methods.ray_methods.quiet_local_ray`); ``storage`` is the Ray
    storage directory (default: a temporary directory, removed afterwards). A run without any
    result for ``stall_s`` seconds is ended (:class:`StallStopper`) and reported unfinished.
    """
    from ray import tune

    from raytune_ext import IterativeDeepeningHyperBandScheduler
    from uvp_plugins.bench.idhb_compare import problem_sampler
    from uvp_plugins.bench.methods.ray_methods import problem_trainable

    r1 = eta * r0
    if r1 > problem.max_budget:
        raise ValueError(f"eta * r0 = {r1} exceeds the problem's max_budget {problem.max_budget}")
    mode = problem.direction
    curve_of: dict[str, np.ndarray] = {}

    def raw_curve(config: Any) -> np.ndarray:
        k = json.dumps(config, sort_keys=True, default=str)
        if k not in curve_of:
            curve_of[k] = np.asarray(problem.curve(config, r1), dtype=float)
        return curve_of[k]

    # 1. the seeded core draws the configurations (as uvp-bench idhb does)
    seeded = IterativeDeepeningHyperband(
        r0, eta, variant, min_budget=problem.min_budget, mode=mode, seed=seed
    )
    sample = problem_sampler(problem)
    seeded.run(sample, lambda c, b: float(raw_curve(c)[b - 1]))
    seeded.deepen()
    seeded.run(sample, lambda c, b: float(raw_curve(c)[b - 1]))
    configs = [seeded.config(c) for c in sorted(seeded.configs)]
    curves = np.array([raw_curve(c) for c in configs], dtype=float)
    n = IterativeDeepeningHyperBandScheduler.num_samples_needed([r0, r1], eta, problem.min_budget)
    if n != len(configs):  # pragma: no cover - the identity the scheduler documents
        raise RuntimeError(f"the core drew {len(configs)} configurations, the scheduler needs {n}")

    # 2. the Ray run
    sched = IterativeDeepeningHyperBandScheduler(
        time_attr="epoch",  # the trainable's own epoch counter, stored in its checkpoints
        max_t=[r0, r1],
        reduction_factor=eta,
        variant=variant,
        min_t=problem.min_budget,
        seed=seed,
    )
    rec = ResultRecorder(config_key="idx", it_key="epoch", first_key="first")
    stopper = StallStopper(stall_s)
    trainable = tune.with_parameters(
        problem_trainable, problem=None, configs=None, curves=curves, max_budget=r1
    )
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="uvp-idhb-ray-", ignore_cleanup_errors=True) as tmp:
        analysis = tune.run(
            trainable,
            config={"idx": tune.grid_search(list(range(n)))},
            scheduler=sched,
            metric="value",
            mode=mode,
            stop=stopper,
            callbacks=[rec],
            resources_per_trial={"cpu": 1},
            storage_path=storage or tmp,
            name=f"idhb-ray-{problem.task}-seed{seed}",
            reuse_actors=True,
            raise_on_failed_trial=False,
            verbose=0,
        )
    wall = time.perf_counter() - t0
    hb = sched.core
    assert hb is not None

    # 3./4. what Ray trained, and the core replayed in Ray's order on the same curves
    order, idx_of = ray_config_order(hb, analysis.trials, lambda t: int(t.config["idx"]))
    replay = replay_core(
        [{"idx": i} for i in order],
        [r0, r1],
        eta,
        variant,
        lambda c, b: float(curves[c["idx"], b - 1]),
        mode=mode,
        min_budget=problem.min_budget,
        seed=seed,
    )
    trained = training_summary(rec.rows)
    ray_inc, core_inc = hb.incumbent, replay.incumbent
    assert core_inc is not None
    core_idx = int(core_inc.config["idx"])
    ray_idx = idx_of(ray_inc.config) if ray_inc is not None else -1  # -1: no result yet
    return {
        "problem": problem.name,
        "task": str(problem.task),
        "seed": int(seed),
        "eta": int(eta),
        "ladder": [r0, r1],
        "variant": variant,
        "direction": mode,
        "ray_finished": bool(
            sched.finished and hb.finished and hb.max_budget == r1 and not stopper.stalled
        ),
        "trials": len(analysis.trials),
        "trials_trained": trained["trials"],
        "ray_iterations": trained["iterations"],
        "ray_retrained": trained["retrained"],
        "ray_resumed_segments": trained["resumed"],
        "scheduler_consumed": float(sched.consumed),
        "core_continuation": int(replay.ledger.continuation),
        "core_full_charge": int(replay.ledger.full_charge),
        "equal": trained["iterations"] == replay.ledger.continuation,
        "same_decisions": evaluations(hb, idx_of) == evaluations(replay, lambda c: c["idx"])
        and hb.ledger == replay.ledger,
        "seeded_order": order == list(range(len(configs))),
        "ray_incumbent": {
            "idx": ray_idx,
            "config": configs[ray_idx] if ray_inc is not None else None,
            "value": ray_inc.value if ray_inc is not None else float("nan"),
        },
        "core_incumbent": {"idx": core_idx, "config": configs[core_idx], "value": core_inc.value},
        "same_incumbent": ray_idx == core_idx,
        "wall_seconds": wall,
    }


def run_idhb_ray(
    problem: str,
    tasks: Sequence[str],
    seeds: Sequence[int],
    eta: int = 2,
    r0: int = 16,
    variant: str = "efficient",
    options: dict[str, Any] | None = None,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """:func:`idhb_ray_ledger` for every (task, seed) on one quiet local Ray cluster (2 CPUs)."""
    from uvp_plugins.bench.methods.ray_methods import quiet_local_ray
    from uvp_plugins.bench.registry import get_problem
    from uvp_plugins.hyperband import VARIANTS

    if eta < 2:
        raise ValueError(f"--eta must be >= 2, got {eta}")
    if r0 < eta:
        raise ValueError(f"--r0 must be >= eta = {eta} (Hyperband needs two rungs), got {r0}")
    if variant not in VARIANTS:
        raise ValueError(f"--variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    spec = get_problem(problem)
    rows: list[dict[str, Any]] = []
    todo = [(str(t), int(s)) for t in tasks for s in seeds]
    start = time.perf_counter()
    with quiet_local_ray():
        for i, (task, seed) in enumerate(todo, 1):
            prob = spec.make(task=task, max_budget=eta * r0, **dict(options or {}))
            rows.append(idhb_ray_ledger(prob, seed, eta, r0, variant))
            if progress:
                r = rows[-1]
                print(
                    f"[uvp-bench idhb-ray] {i}/{len(todo)} {problem}/{task}/seed{seed}: Ray trained "
                    f"{r['ray_iterations']}, core continuation {r['core_continuation']} "
                    f"({r['wall_seconds']:.0f}s; elapsed {time.perf_counter() - start:.0f}s)",
                    file=sys.stderr,
                    flush=True,
                )
    return rows


def idhb_ray_rows(
    problem: str, task: str, seed: int, eta: int = 2, r0: int = 16, variant: str = "efficient",
    options: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One (task, seed) of :func:`run_idhb_ray` (the unit of ``uvp-bench idhb-ray``'s jobs)."""
    return run_idhb_ray(problem, [task], [seed], eta, r0, variant, options, progress=False)


def _yes(flag: bool) -> str:
    return "yes" if flag else "**no**"


def format_idhb_ray(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table of :func:`run_idhb_ray` rows, with a one-line summary."""
    if not rows:
        return "(no runs)"
    first = rows[0]
    lines = [
        f"## ID-HB through Ray Tune vs the core: {first['problem']}, eta = {first['eta']}, "
        f"R = {first['ladder'][0]} -> {first['ladder'][1]} ({first['variant']})",
        "",
        "| task | seed | trials trained | iterations Ray trained | core continuation | equal | "
        "core full charge | resumed segments | retrained | same decisions | Ray incumbent | "
        "core incumbent | same incumbent | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['task']} | {r['seed']} | {r['trials_trained']}/{r['trials']} | "
            f"{r['ray_iterations']} | {r['core_continuation']} | {_yes(r['equal'])} | "
            f"{r['core_full_charge']} | {r['ray_resumed_segments']} | {r['ray_retrained']} | "
            f"{_yes(r['same_decisions'])} | #{r['ray_incumbent']['idx']}: "
            f"{r['ray_incumbent']['value']:.4f} | #{r['core_incumbent']['idx']}: "
            f"{r['core_incumbent']['value']:.4f} | {_yes(r['same_incumbent'])} | "
            f"{r['wall_seconds']:.0f} |"
        )
    n_equal = sum(r["equal"] for r in rows)
    n_same = sum(r["same_decisions"] and r["same_incumbent"] for r in rows)
    n_seeded = sum(r["seeded_order"] for r in rows)
    n_finished = sum(r["ray_finished"] for r in rows)
    lines += [
        "",
        f"Ray runs that finished every level: {n_finished}/{len(rows)}. "
        f"Ray trained exactly the core's continuation cost in {n_equal}/{len(rows)} runs; "
        f"decisions and incumbent equal to the core's in {n_same}/{len(rows)}. "
        f"Ray placed the configurations in the seeded core's order (the `uvp-bench idhb` run of "
        f"the same seed) in {n_seeded}/{len(rows)} runs. "
        "Iterations Ray trained = results its trainables reported (one per epoch, continuations "
        "from checkpoints included); retrained = epochs a trial executed twice; incumbent = "
        "configuration number: value at the final R.",
    ]
    return "\n".join(lines)

"""Continue a finished (or interrupted) Ray Tune experiment at a larger maximum budget.

Ray Tune has no public way to give ``Tuner.restore`` a new scheduler (it re-creates the one
pickled with the experiment), but ``tune.run`` accepts a new scheduler together with
``resume_config``: with ``ResumeConfig(finished=RESUME, unfinished=RESUME)`` every trial of the
experiment is re-added and, when the scheduler runs it again, restored from its latest checkpoint
(checked on Ray 2.60). The new :class:`IterativeDeepeningHyperBandScheduler` finds the state file
the first run wrote into the experiment directory and deepens the core from ``R`` to the new
``max_t`` (ID-HB, Brandt et al., Alg. 1): every earlier evaluation is reused and promoted
configurations continue training from their checkpoints. ``Tuner.restore`` cannot deepen
(it brings back the old ``max_t``), which is why this helper uses ``tune.run``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from raytune_ext._scheduler import (
    STATE_FILE_NAME,
    IterativeDeepeningHyperBandScheduler,
    load_saved_state,
)
from uvp_plugins.hyperband import deepening_ladder
from uvp_plugins.validation import check_int

__all__ = ["resume_with_larger_budget", "scheduler_for_resume"]


def scheduler_for_resume(
    experiment_path: str | os.PathLike[str],
    max_t: int | Sequence[int],
    state_path: str | os.PathLike[str] | None = None,
) -> IterativeDeepeningHyperBandScheduler:
    """A scheduler that continues the ID-HB state saved in ``experiment_path`` up to ``max_t``.

    Its parameters (``time_attr``, ``metric``, ``mode``, ``reduction_factor``, ``variant``) are
    read from the state file. Raises ``FileNotFoundError`` when the experiment has no state file
    and ``ValueError`` when ``max_t`` is not the saved ``R`` times a power of ``reduction_factor``.
    """
    path = os.path.abspath(os.fspath(experiment_path))
    state = os.fspath(state_path) if state_path is not None else os.path.join(path, STATE_FILE_NAME)
    if not os.path.exists(state):
        raise FileNotFoundError(
            f"no IterativeDeepeningHyperBandScheduler state at {state}: experiment_path must be "
            f"the directory of an experiment run with that scheduler (or pass state_path=)"
        )
    params = load_saved_state(state)
    eta = int(params["reduction_factor"])
    saved = [int(v) for v in params["ladder"]]
    level = int(params["level"])
    values = [max_t] if not isinstance(max_t, Sequence) or isinstance(max_t, str) else max_t
    requested = [check_int("max_t", v, low=1) for v in values]
    if not requested or max(requested) < saved[level]:
        raise ValueError(
            f"max_t={max_t!r} is below the saved experiment's current R={saved[level]}; "
            f"pass R * {eta}**k with k >= 0"
        )
    # Validate here: an exception inside Ray's resume would make Ray restart the experiment.
    deepening_ladder(
        saved[level:] + [v for v in requested if v > saved[-1]],
        eta,
        start=saved[level],
        name="max_t",
        eta_name="reduction_factor",
    )
    return IterativeDeepeningHyperBandScheduler(
        time_attr=params["time_attr"],
        metric=params["metric"],
        mode=params["mode"],
        max_t=requested,
        reduction_factor=eta,
        variant=params["variant"],
        min_t=int(params["min_t"]),
        seed=int(params["seed"]),
        state_path=state,
    )


def resume_with_larger_budget(
    experiment_path: str | os.PathLike[str],
    trainable: Callable[..., Any] | type | str,
    max_t: int | Sequence[int],
    *,
    state_path: str | os.PathLike[str] | None = None,
    resume_errored: bool = False,
    **run_kwargs: Any,
) -> Any:
    """Continue the experiment in ``experiment_path`` with ID-HB up to the larger ``max_t``.

    Built on ``ray.tune.run(trainable, name=..., storage_path=..., scheduler=new_scheduler,
    resume_config=ResumeConfig(finished=RESUME, unfinished=RESUME, errored=SKIP))``. Works after
    a finished run and after a driver that was killed mid-run (the scheduler journals every
    result and decision as it happens). New configurations needed by the deeper brackets come from
    trials the first run created but never started: run the first experiment with
    ``num_samples >= IterativeDeepeningHyperBandScheduler.num_samples_needed(final_max_t, eta)``.

    Args:
        experiment_path: the experiment directory (``ExperimentAnalysis.experiment_path``, i.e.
            ``storage_path/name``).
        trainable: the same trainable as in the first run (wrap it with ``tune.with_parameters``
            again if the first run did).
        max_t: the new maximum budget, ``R * eta**k`` for the saved ``R`` (or a list of them);
            ``k = 0`` finishes an interrupted run at its own ``R``.
        state_path: the scheduler's state file if the first run passed one.
        resume_errored: also resume trials that errored (default: they stay errored).
        **run_kwargs: passed to ``tune.run`` (e.g. ``resources_per_trial``, ``callbacks``,
            ``verbose`` (default 0), ``reuse_actors`` (default True), ``raise_on_failed_trial``).

    Returns:
        The ``ExperimentAnalysis`` of ``tune.run``.
    """
    from ray import tune
    from ray.tune import ResumeConfig

    path = os.path.abspath(os.fspath(experiment_path))
    scheduler = scheduler_for_resume(path, max_t, state_path=state_path)
    for key in ("name", "storage_path", "scheduler", "resume_config", "resume"):
        if key in run_kwargs:
            raise TypeError(f"resume_with_larger_budget sets {key!r} itself; do not pass it")
    resume: Any = ResumeConfig.ResumeType.RESUME  # ResumeConfig annotates str, takes the enum
    skip: Any = ResumeConfig.ResumeType.SKIP
    resume_config = ResumeConfig(
        finished=resume, unfinished=resume, errored=resume if resume_errored else skip
    )
    run_kwargs.setdefault("verbose", 0)
    run_kwargs.setdefault("reuse_actors", True)
    return tune.run(
        trainable,
        name=os.path.basename(path),
        storage_path=os.path.dirname(path),
        scheduler=scheduler,
        resume_config=resume_config,
        **run_kwargs,
    )

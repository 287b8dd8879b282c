"""``time_attr`` / ``metric`` / ``mode`` as Ray's schedulers take them, checked once for every
scheduler of :mod:`raytune_ext`, and what a scheduler can read of Ray's search algorithm
(``tune_controller.search_alg``): the concurrency cap and the number of trials.

Ray's convention (``MedianStoppingRule``, ``ASHAScheduler``): ``metric`` and ``mode`` may be given
to the scheduler or later by ``tune.TuneConfig`` / ``tune.run`` through
``set_search_properties``, which refuses to override a value set on the scheduler; with only a
mode, the metric is Ray's anonymous ``"_metric"``.

Example:
    >>> check_result_keys("training_iteration", None, "max")
    >>> merge_search_properties(("loss", None), None, "min")
    ('loss', 'min')
    >>> merge_search_properties(("loss", None), "acc", "max") is None   # metric already set
    True
    >>> check_step_attr("time_total_s", "PredStoppingScheduler")
    Traceback (most recent call last):
    ...
    ValueError: PredStoppingScheduler counts integer steps: time_attr='time_total_s' is a time in seconds that Ray reports as a float; use 'training_iteration' (default) or a step counter the trainable reports
"""

from __future__ import annotations

import sys
from typing import Any

from ray.tune.result import DEFAULT_METRIC, TIME_THIS_ITER_S, TIME_TOTAL_S

from uvp_plugins.validation import check_choice

__all__ = [
    "check_result_keys",
    "check_step_attr",
    "merge_search_properties",
    "SearchPropertiesMixin",
    "missing_metric_or_mode",
    "concurrency_cap",
    "total_trials",
]

#: result keys Ray fills in with times in seconds (floats)
FLOAT_RESULT_KEYS = frozenset({TIME_TOTAL_S, TIME_THIS_ITER_S, "time_since_restore"})


def check_result_keys(time_attr: object, metric: object, mode: object) -> None:
    """``TypeError``/``ValueError`` naming ``time_attr``, ``metric`` or ``mode`` if one is bad."""
    if not isinstance(time_attr, str) or not time_attr:
        raise TypeError(f"time_attr must be a non-empty str, got {time_attr!r}")
    if metric is not None and (not isinstance(metric, str) or not metric):
        raise TypeError(f"metric must be a non-empty str or None, got {metric!r}")
    if mode is not None:
        check_choice("mode", mode, ("min", "max"))


def merge_search_properties(
    current: tuple[str | None, str | None], metric: str | None, mode: str | None
) -> tuple[str | None, str | None] | None:
    """The ``(metric, mode)`` after ``set_search_properties(metric, mode)`` on a scheduler holding
    ``current``; ``None`` when Ray's convention refuses it (a value already set is given again)."""
    old_metric, old_mode = current
    if (old_metric and metric) or (old_mode and mode):
        return None
    new_mode = check_choice("mode", mode, ("min", "max")) if mode else old_mode
    new_metric = metric or old_metric
    if new_metric is None and new_mode:
        new_metric = DEFAULT_METRIC
    return new_metric, new_mode


class SearchPropertiesMixin:
    """Ray's ``set_search_properties`` for the schedulers of :mod:`raytune_ext`, written once:
    :func:`merge_search_properties` decides, the scheduler keeps ``_metric`` and ``_mode``. List
    it before Ray's base class; a scheduler that derives something from the mode overrides
    :meth:`_search_properties_changed`."""

    _metric: str | None
    _mode: str | None

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: Any) -> bool:
        merged = merge_search_properties((self._metric, self._mode), metric, mode)
        if merged is None:
            return False
        self._metric, self._mode = merged
        self._search_properties_changed()
        return True

    def _search_properties_changed(self) -> None:
        """Called once Ray set ``metric``/``mode`` (nothing by default)."""


def missing_metric_or_mode(scheduler: object, metric: str | None, mode: str | None) -> ValueError:
    """The error a scheduler raises when a trial arrives and ``metric`` or ``mode`` is unknown."""
    return ValueError(
        f"{type(scheduler).__name__} needs `metric` and `mode`: pass them to the scheduler or to "
        f"tune.TuneConfig / tune.run (got metric={metric!r}, mode={mode!r})"
    )


def check_step_attr(time_attr: str, owner: str) -> None:
    """``ValueError`` when ``time_attr`` is one of the keys Ray fills in with seconds (floats),
    for a scheduler or searcher that counts integer steps (``owner`` names it)."""
    if time_attr in FLOAT_RESULT_KEYS:
        raise ValueError(
            f"{owner} counts integer steps: time_attr={time_attr!r} is a time in seconds that Ray "
            "reports as a float; use 'training_iteration' (default) or a step counter the "
            "trainable reports"
        )


def concurrency_cap(search_alg: Any) -> int | None:
    """The number of trials Ray lets exist at once, from ``max_concurrent_trials`` (Ray wraps
    the searcher in a ``ConcurrencyLimiter``, or gives its ``BasicVariantGenerator``
    ``max_concurrent``), or None without a cap. Ray counts a trial against the cap from its
    creation until it ends: ``PAUSED`` trials count (checked on Ray 2.60)."""
    from ray.tune.search import BasicVariantGenerator, ConcurrencyLimiter

    if isinstance(search_alg, BasicVariantGenerator):
        cap = search_alg.max_concurrent
        return int(cap) if cap else None
    seen: set[int] = set()
    node = getattr(search_alg, "searcher", None)
    while node is not None and id(node) not in seen:  # SearchGenerator -> wrappers -> searcher
        seen.add(id(node))
        if isinstance(node, ConcurrencyLimiter):
            return int(node.max_concurrent)
        node = getattr(node, "searcher", None)
    return None


def total_trials(search_alg: Any) -> int | None:
    """The number of trials the search algorithm will create, when it is known and finite."""
    total = getattr(search_alg, "total_samples", None)
    if not isinstance(total, int) or total <= 0 or total >= sys.maxsize:
        return None
    return total

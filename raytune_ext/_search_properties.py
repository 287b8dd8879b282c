"""``time_attr`` / ``metric`` / ``mode`` as Ray's schedulers take them, checked once for every
scheduler of :mod:`raytune_ext`.

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
"""

from __future__ import annotations

from ray.tune.result import DEFAULT_METRIC

from uvp_plugins.validation import check_choice

__all__ = ["check_result_keys", "merge_search_properties", "missing_metric_or_mode"]


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


def missing_metric_or_mode(scheduler: object, metric: str | None, mode: str | None) -> ValueError:
    """The error a scheduler raises when a trial arrives and ``metric`` or ``mode`` is unknown."""
    return ValueError(
        f"{type(scheduler).__name__} needs `metric` and `mode`: pass them to the scheduler or to "
        f"tune.TuneConfig / tune.run (got metric={metric!r}, mode={mode!r})"
    )

"""The checks every intensifier of :mod:`smac_ext` makes of its scenario, written once.

Both intensifiers run single-objective scenarios without instances (ID-HB schedules budgets,
MaxUCB picks model classes); a scenario that is not a ``smac.Scenario`` is a ``TypeError``, one
with several objectives or with instances a ``ValueError`` naming the intensifier.

Example:
    >>> from ConfigSpace import ConfigurationSpace
    >>> from smac import Scenario
    >>> scenario = Scenario(ConfigurationSpace({"x": (0.0, 1.0)}), objectives=["a", "b"])
    >>> check_intensifier_scenario("MaxUCBIntensifier", scenario, "does not support instances")
    Traceback (most recent call last):
    ...
    ValueError: MaxUCBIntensifier supports single-objective scenarios only (got objectives=['a', 'b'])
"""

from __future__ import annotations

from typing import Any

from smac.scenario import Scenario

__all__ = ["check_intensifier_scenario"]


def check_intensifier_scenario(owner: str, scenario: Any, instances: str) -> None:
    """``TypeError`` unless ``scenario`` is a ``smac.Scenario``; ``ValueError`` naming ``owner``
    when it has more than one objective, or instances (``instances`` says why, e.g. ``"does not
    support instances"``)."""
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a smac.Scenario, got {type(scenario).__name__}")
    if scenario.count_objectives() != 1:
        raise ValueError(f"{owner} supports single-objective scenarios only "
                         f"(got objectives={scenario.objectives!r})")
    if scenario.instances is not None:
        raise ValueError(f"{owner} {instances} (scenario.instances must be None)")

"""SMAC callback that keeps each run's cutoff with its result, so capped runs can be censored.

With ``Scenario(adaptive_capping=True, runtime_cutoff=...)`` SMAC 2.4 gives every trial a cutoff
(``TrialInfo.additional_info["cutoff"]``; the target function receives it as its ``cutoff``
argument) and expects the target to stop there and return the cost it used (SMAC's adaptive
capping example returns the cutoff). SMAC then records the run as SUCCESS at that cost and
forgets the cutoff: the run history cannot tell a capped run from a finished one.
:class:`CutoffRecorder` copies the cutoff into the run's ``TrialValue.additional_info`` (key
``"cutoff"``) when SMAC is told the result, before SMAC stores it; the run history saves it
with the run (``runhistory.json``), so it survives a restart.
:class:`smac_ext.CensoredRunHistoryEncoder` then treats a run whose cost reached its cutoff as
right-censored at the cutoff (:func:`uvp_plugins.censored.censor_at_cutoffs`).

With ``log_y=True`` the recorder also refuses, when told, an uncensored cost ``<= 0`` (the log of
a runtime must exist), naming the option, before SMAC stores the run -- not later, deep inside a
model fit. A target function can also declare a result a lower bound itself by returning
``(cost, {"censored": True})`` (e.g. when it stopped at a limit of its own).
"""

from __future__ import annotations

import math
from typing import Any

from smac.callback.callback import Callback
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runner.abstract_runner import StatusType

__all__ = ["CutoffRecorder", "CUTOFF_KEY", "CENSORED_KEY"]

#: ``additional_info`` key of a run's cutoff (SMAC's own name for it)
CUTOFF_KEY = "cutoff"
#: ``additional_info`` key a target function may set to declare its cost a lower bound
CENSORED_KEY = "censored"


class CutoffRecorder(Callback):
    """Records every run's cutoff in its result (see the module docstring).

    Args:
        log_y: refuse uncensored costs ``<= 0`` when told (the Tobit model's ``log_y``).
        censored_states: statuses whose cost is a lower bound anyway (default TIMEOUT), exempt
            from the ``log_y`` check.

    Example:
        >>> from smac.runhistory.dataclasses import TrialInfo, TrialValue
        >>> from ConfigSpace import ConfigurationSpace
        >>> config = ConfigurationSpace({"x": (0.0, 1.0)}).get_default_configuration()
        >>> info = TrialInfo(config, instance="i1", additional_info={"cutoff": 4.0})
        >>> value = TrialValue(cost=4.0)
        >>> CutoffRecorder().on_tell_start(None, info, value)
        >>> value.additional_info
        {'cutoff': 4.0}
    """

    def __init__(
        self, *, log_y: bool = False, censored_states: tuple[StatusType, ...] = (StatusType.TIMEOUT,)
    ) -> None:
        super().__init__()
        if not isinstance(log_y, bool):
            raise TypeError(f"log_y must be a bool, got {type(log_y).__name__}")
        self._log_y = log_y
        self._censored_states = tuple(censored_states)

    def on_tell_start(self, smbo: Any, info: TrialInfo, value: TrialValue) -> bool | None:  # noqa: D102
        cutoff = (info.additional_info or {}).get(CUTOFF_KEY)
        extra = value.additional_info
        if cutoff is not None and isinstance(extra, dict):
            extra.setdefault(CUTOFF_KEY, float(cutoff))
        if self._log_y:
            self._check_positive(info, value, cutoff)
        return None

    def _check_positive(self, info: TrialInfo, value: TrialValue, cutoff: Any) -> None:
        cost = value.cost
        if isinstance(cost, (list, tuple)) or value.status in self._censored_states:
            return
        cost = float(cost)
        if not math.isfinite(cost) or cost > 0:
            return
        extra = value.additional_info if isinstance(value.additional_info, dict) else {}
        if extra.get(CENSORED_KEY) or (cutoff is not None and cost >= float(cutoff)):
            return  # a lower bound <= 0 carries no information; the model leaves it out
        raise ValueError(
            f"log_y=True models log(cost), but the trial of instance {info.instance!r} "
            f"returned cost {cost!r} <= 0. Runtimes must be > 0 (report at least the "
            "measurement's resolution), or use tobit_facade_kwargs(..., log_y=False) / "
            "TobitEnsembleModel(..., log_y=False) for costs that can be <= 0"
        )

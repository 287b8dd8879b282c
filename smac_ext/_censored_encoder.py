"""SMAC run-history encoder that keeps capped runs as right-censored observations.

SMAC 2.x's ``AbstractRunHistoryEncoder.transform`` appends TIMEOUT runs with their capped cost
but drops the information that the cost is only a lower bound. :class:`CensoredRunHistoryEncoder`
returns ``Y`` with a second column holding that flag (1.0 = censored), which
:class:`smac_ext.TobitEnsembleModel` strips and feeds to the Tobit loss (Eggensperger et al.,
Eq. 4). Costs are returned untransformed (the model does its own log transform and scaling).

Which runs are censored: those whose status is in ``censored_states`` (default: TIMEOUT), at their
observed cost -- the cutoff when the target function reports ``cost = cutoff`` itself. A run
killed by SMAC at ``Scenario(trial_walltime_limit=...)`` is recorded with ``crash_cost`` (``inf``
by default); such non-finite costs of censored runs are replaced by ``timeout_cost`` (default:
the scenario's ``trial_walltime_limit`` when set -- the right value when the cost *is* the
runtime -- else the largest finite cost). Successful/crashed/memory-out runs with a non-finite
cost are also treated as censored at that value (they are at least as bad as it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from smac.runhistory.encoder.encoder import RunHistoryEncoder
from smac.runhistory.runhistory import TrialKey, TrialValue
from smac.runner.abstract_runner import StatusType
from smac.scenario import Scenario

from uvp_plugins.censored import censor_nonfinite

__all__ = ["CensoredRunHistoryEncoder"]


class CensoredRunHistoryEncoder(RunHistoryEncoder):
    """Run-history encoder returning ``Y = [cost, censored]`` (two columns).

    Args:
        scenario: the SMAC scenario (single objective only).
        considered_states: statuses of uncensored runs used for training (SMAC's default:
            SUCCESS, CRASHED, MEMORYOUT).
        censored_states: statuses of runs whose cost is a lower bound (default: TIMEOUT). Add e.g.
            ``StatusType.MEMORYOUT`` if a memory cap also stops a run early.
        timeout_cost: value used for censored runs whose recorded cost is not finite; default
            ``scenario.trial_walltime_limit`` if set, else the largest finite cost.
        lower_budget_states: as for SMAC's encoders.
        scale_percentage: as for SMAC's encoders.
        seed: as for SMAC's encoders.

    ``transform`` returns the uncensored rows first, then the censored ones, and stores the flags
    of the last call in :attr:`last_censored`.
    """

    def __init__(
        self,
        scenario: Scenario,
        considered_states: list[StatusType] | None = None,
        lower_budget_states: list[StatusType] | None = None,
        censored_states: Iterable[StatusType] = (StatusType.TIMEOUT,),
        timeout_cost: float | None = None,
        scale_percentage: int = 5,
        seed: int | None = None,
    ) -> None:
        if scenario.count_objectives() != 1:
            raise ValueError(
                "CensoredRunHistoryEncoder supports single-objective scenarios only, got "
                f"{scenario.count_objectives()} objectives"
            )
        super().__init__(
            scenario,
            considered_states=considered_states,  # type: ignore[arg-type]
            lower_budget_states=lower_budget_states,  # type: ignore[arg-type]
            scale_percentage=scale_percentage,
            seed=seed,
        )
        self._censored_states = list(censored_states)
        for s in self._censored_states:
            if not isinstance(s, StatusType):
                raise TypeError(f"censored_states must hold smac StatusType values, got {s!r}")
        if timeout_cost is None and scenario.trial_walltime_limit is not None:
            timeout_cost = float(scenario.trial_walltime_limit)
        if timeout_cost is not None and not np.isfinite(timeout_cost):
            raise ValueError(f"timeout_cost must be finite, got {timeout_cost!r}")
        self._timeout_cost = timeout_cost
        self.last_censored: np.ndarray = np.zeros(0, dtype=bool)

    @property
    def meta(self) -> dict[str, Any]:  # noqa: D102
        meta = super().meta
        meta.update(
            {"censored_states": self._censored_states, "timeout_cost": self._timeout_cost}
        )
        return meta

    def _get_censored_trials(self, budget_subset: list | None = None) -> dict[TrialKey, TrialValue]:
        trials: dict[TrialKey, TrialValue] = {}
        for key, value in self.runhistory.items():
            if value.status not in self._censored_states:
                continue
            if budget_subset is not None and key.budget not in budget_subset:
                continue
            trials[key] = value
        return trials

    def _get_timeout_trials(self, budget_subset: list | None = None) -> dict[TrialKey, TrialValue]:
        # used by ``get_configurations``: every censored run counts, not only TIMEOUT
        return self._get_censored_trials(budget_subset)

    def transform(self, budget_subset: list | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``X`` (configuration vectors and instance features) and ``Y`` of shape ``(n, 2)``:
        column 0 the cost (a lower bound where censored), column 1 the flag (1.0 = censored)."""
        exact: Mapping[TrialKey, TrialValue] = {
            k: v
            for k, v in self._get_considered_trials(budget_subset).items()
            if v.status not in self._censored_states
        }
        capped = self._get_censored_trials(budget_subset)
        X1, Y1 = self._build_matrix(trials=exact, store_statistics=True)
        X2, Y2 = self._build_matrix(trials=capped, store_statistics=len(exact) == 0)
        X = np.vstack((X1, X2))
        y = np.concatenate((Y1.reshape(-1), Y2.reshape(-1)))
        flags = np.concatenate((np.zeros(len(exact), dtype=bool), np.ones(len(capped), dtype=bool)))
        y, flags = censor_nonfinite(y, flags, cap=self._timeout_cost)
        self.last_censored = flags
        return X, np.column_stack((y, flags.astype(float)))

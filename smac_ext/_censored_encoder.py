"""SMAC run-history encoder that keeps capped runs as right-censored observations.

SMAC 2.x's ``AbstractRunHistoryEncoder.transform`` appends TIMEOUT runs with their capped cost
but drops the information that the cost is only a lower bound. :class:`CensoredRunHistoryEncoder`
returns ``Y`` with a second column holding that flag (1.0 = censored), which
:class:`smac_ext.TobitEnsembleModel` strips and feeds to the Tobit loss (Eggensperger et al.,
Eq. 4). Costs are returned untransformed (the model does its own log transform and scaling).

Which runs are censored:

* runs whose status is in ``censored_states`` (default: TIMEOUT), at their observed cost;
* runs stopped at their cutoff by SMAC 2.4's adaptive capping: SMAC records them as SUCCESS at
  the cost the target returned (its cutoff, by SMAC's convention); :class:`smac_ext.CutoffRecorder`
  (part of :func:`smac_ext.tobit_facade_kwargs`) keeps each run's cutoff in its
  ``additional_info["cutoff"]``, and a run whose cost reached it is censored *at the cutoff*
  (:func:`uvp_plugins.censored.censor_at_cutoffs`);
* runs whose target function declared its cost a lower bound, ``additional_info["censored"]``
  true (e.g. a target that stopped at a limit of its own).

A run killed by SMAC at ``Scenario(trial_walltime_limit=...)`` is recorded with ``crash_cost``
(``inf`` by default); such non-finite costs of censored runs are replaced by ``timeout_cost``
(default: the scenario's ``trial_walltime_limit`` when set -- the right value when the cost *is*
the runtime -- else the largest finite cost), also when the run had a cutoff: killed at the
walltime limit, it is only known to exceed that. Successful/crashed/memory-out runs with a
non-finite cost are also treated as censored at that value (they are at least as bad as it);
SMAC 2.4.1's runner itself reports a walltime kill as CRASHED when ``crash_cost`` is ``inf``.

If the scenario caps runs (``adaptive_capping`` or ``runtime_cutoff``) but no run carries a
recorded cutoff, the encoder logs a warning once: capped runs then look like finished ones.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from smac.runhistory.encoder.encoder import RunHistoryEncoder
from smac.runhistory.runhistory import TrialKey, TrialValue
from smac.runner.abstract_runner import StatusType
from smac.scenario import Scenario

from smac_ext._cutoff_recorder import CENSORED_KEY, CUTOFF_KEY
from uvp_plugins.censored import censor_at_cutoffs, censor_nonfinite

__all__ = ["CensoredRunHistoryEncoder"]

logger = logging.getLogger(__name__)


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

    ``transform`` returns the runs of ``considered_states`` first (censored where their cost
    reached their recorded cutoff or they declared it), then those of ``censored_states``, and
    stores the flags of the last call in :attr:`last_censored`.
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
        self._capping = bool(scenario.adaptive_capping) or scenario.runtime_cutoff is not None
        self._warned_no_cutoffs = False
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

    @staticmethod
    def _recorded(trials: Mapping[TrialKey, TrialValue]) -> tuple[np.ndarray, np.ndarray]:
        """Per run: its recorded cutoff (NaN if none) and whether it declared itself censored."""
        cutoffs = np.full(len(trials), np.nan)
        declared = np.zeros(len(trials), dtype=bool)
        for row, value in enumerate(trials.values()):
            info = value.additional_info if isinstance(value.additional_info, dict) else {}
            cutoff = info.get(CUTOFF_KEY)
            if isinstance(cutoff, (int, float)) and not isinstance(cutoff, bool):
                cutoffs[row] = float(cutoff)
            declared[row] = bool(info.get(CENSORED_KEY, False))
        return cutoffs, declared

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
        cutoffs, declared = self._recorded(exact)
        flags = np.concatenate((declared, np.ones(len(capped), dtype=bool)))
        cutoffs = np.concatenate((cutoffs, np.full(len(capped), np.nan)))
        if self._capping and len(exact) and np.isnan(cutoffs).all() and not self._warned_no_cutoffs:
            logger.warning(
                "the scenario caps runs (adaptive_capping / runtime_cutoff) but no run has a "
                "recorded cutoff: capped runs look finished. Pass smac_ext.CutoffRecorder() in "
                "the facade's callbacks (tobit_facade_kwargs does)"
            )
            self._warned_no_cutoffs = True
        # a non-finite cost (e.g. a walltime kill) is bounded by timeout_cost, not by its cutoff:
        # a run killed at the walltime limit before its cutoff is only known to exceed the limit
        cutoffs[~np.isfinite(y)] = np.nan
        y, flags = censor_at_cutoffs(y, cutoffs, flags)
        y, flags = censor_nonfinite(y, flags, cap=self._timeout_cost)
        self.last_censored = flags
        return X, np.column_stack((y, flags.astype(float)))

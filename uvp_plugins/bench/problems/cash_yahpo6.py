"""``cash-yahpo6``: the CASH paper's six-class YAHPO Gym benchmark (Balef et al., App. D).

The paper's YaHPOGym benchmark (*Put CASH on Bandits*, App. D, Tables D.1 and D.2) is CASH over
six model classes of the rbv2 scenarios: glmnet, rpart, SVM, AKNN, ranger and XGBoost, at a fixed
fidelity (``trainsize = 0.525``) with the imputation fixed (``impute.mean``), the loss being the
classification error. Here:

* **Surrogates.** rpart is the current generation's ``rbv2_rpart`` (``yahpo_data``); the five
  others are the first-generation surrogates of ``yahpo_data_v0``
  (:data:`~uvp_plugins.bench.problems.yahpo_surrogate.LAYOUTS_V0`), the generation the current
  release's svm, ranger, aknn and glmnet networks are not available for on these machines.
* **Tasks.** The 89 OpenML task ids common to all six (in ``rbv2_rpart``'s instance order).
* **Fixed inputs.** ``trainsize = 0.525`` and ``num.impute.selected.cpo = impute.mean`` (Table
  D.2), ``repl = 6`` (the authors' code, ``HPO_Runs/hpo_datasets/yahpo_gym_dataset.py``, fixes
  it to 6). These three are not hyperparameters of the arms.
* **Loss** (lower is better): the misclassification rate ``mmce``: column 0 of a first-generation
  network, ``1 - acc`` of the current ``rbv2_rpart``; clipped to ``[0, 1]`` (the networks can
  predict slightly below 0, see ``yahpo_data_v0/README.md``).
* **Arms.** Each class's parameters are those of its ``config_space.json`` (YAHPO's ranges and
  log scales), in the paper's order glmnet, rpart, svm, aknn, ranger, xgboost. Conditional
  parameters are *flattened* as in ``cash-yahpo``: svm's ``gamma`` (radial kernel) and
  ``degree`` (polynomial), ranger's ``num.random.splits`` (extratrees) and xgboost's
  booster-specific parameters are always part of the arm's space and are dropped before the
  surrogate is queried when their condition does not hold (they have no effect then).
* **Default configurations** (:attr:`YahpoCash6.arm_defaults`): each class's default in its
  ``config_space.json`` (mlr3's defaults, e.g. svm ``cost = 1``, ``kernel = linear``; rpart
  ``cp = 0.01``, ``maxdepth = 30``, ``minbucket = 1``, ``minsplit = 20``), the configurations the
  paper's protocol evaluates first (App. D).

Data: ``yahpo_data=`` / ``--yahpo-data`` (for ``rbv2_rpart``) and ``yahpo_data_v0=`` /
``--yahpo-data-v0``, found as :func:`uvp_plugins.bench.problems.yahpo.resolve_yahpo_data` and
:func:`~uvp_plugins.bench.problems.yahpo.resolve_yahpo_data_v0` say (environment variables
``UVP_YAHPO_DATA`` and ``UVP_YAHPO_DATA_V0``; without the latter, ``yahpo_data_v0`` beside the
former's directory).

Example:
    >>> p = YahpoCash6("41138")                                      # doctest: +SKIP
    >>> p.evaluate({"algorithm": "rpart", **p.arm_defaults["rpart"]})  # doctest: +SKIP
    0.0265...
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.problems.cash import CashProblem
from uvp_plugins.bench.registry import ProblemSpec, register_problem

__all__ = ["YAHPO6_ARMS", "YAHPO6_FIXED", "YahpoCash6", "yahpo6_tasks"]

#: arm -> (scenario, generation), in the paper's order (Table D.2)
YAHPO6_ARMS: dict[str, tuple[str, str]] = {
    "glmnet": ("rbv2_glmnet", "v0"),
    "rpart": ("rbv2_rpart", "current"),
    "svm": ("rbv2_svm", "v0"),
    "aknn": ("rbv2_aknn", "v0"),
    "ranger": ("rbv2_ranger", "v0"),
    "xgboost": ("rbv2_xgboost", "v0"),
}

#: the inputs every query gets (App. D, Table D.2; ``repl`` as in the authors' code)
YAHPO6_FIXED: dict[str, Any] = {
    "trainsize": 0.525,
    "num.impute.selected.cpo": "impute.mean",
    "repl": 6,
}


def _surrogates(
    yahpo_data: str | os.PathLike[str] | None, yahpo_data_v0: str | os.PathLike[str] | None
) -> dict[str, Any]:
    """arm -> its surrogate, each from the data directory of its generation."""
    from uvp_plugins.bench.problems.yahpo import resolve_yahpo_data, resolve_yahpo_data_v0
    from uvp_plugins.bench.problems.yahpo_surrogate import load_surrogate

    out = {}
    for arm, (scenario, generation) in YAHPO6_ARMS.items():
        if generation == "v0":
            path = resolve_yahpo_data_v0(yahpo_data_v0, scenario)
        else:
            path = resolve_yahpo_data(yahpo_data, scenario)
        out[arm] = load_surrogate(scenario, str(path), generation)
    return out


def yahpo6_tasks(
    yahpo_data: str | os.PathLike[str] | None = None,
    yahpo_data_v0: str | os.PathLike[str] | None = None,
) -> list[str]:
    """The task ids all six scenarios share, in ``rbv2_rpart``'s instance order (89)."""
    surrogates = _surrogates(yahpo_data, yahpo_data_v0)
    others = [set(s.instances) for arm, s in surrogates.items() if arm != "rpart"]
    return [t for t in surrogates["rpart"].instances if all(t in o for o in others)]


class YahpoCash6(CashProblem):
    """``cash-yahpo6``: the paper's six-class YAHPO CASH benchmark (see the module docstring).

    Args:
        task: an OpenML task id shared by the six scenarios (default: the first, 41138).
        yahpo_data: the data directory holding ``rbv2_rpart`` (current generation).
        yahpo_data_v0: the directory holding the first-generation ``rbv2_svm``,
            ``rbv2_ranger``, ``rbv2_aknn``, ``rbv2_glmnet`` and ``rbv2_xgboost``.

    Raises:
        FileNotFoundError: a data directory or a scenario's files are missing (the message
            says where it looked and how to point to the data).
        ValueError: ``task`` is not shared by the six scenarios, or a folder holds the other
            generation's surrogate (named in the message).
    """

    name = "cash-yahpo6"
    metric = "mmce"

    def __init__(
        self,
        task: str | None = None,
        yahpo_data: str | os.PathLike[str] | None = None,
        yahpo_data_v0: str | os.PathLike[str] | None = None,
    ) -> None:
        self._surrogates = _surrogates(yahpo_data, yahpo_data_v0)
        shared = yahpo6_tasks(yahpo_data, yahpo_data_v0)
        task = shared[0] if task is None else str(task)
        if task not in shared:
            raise ValueError(
                f"unknown task {task!r} for cash-yahpo6; valid tasks (the {len(shared)} shared "
                f"by the six scenarios): {', '.join(shared)}"
            )
        self.task = task
        fixed = set(YAHPO6_FIXED)
        self._set_arms({
            arm: [p for p in sur.params if p.name not in fixed]
            for arm, sur in self._surrogates.items()
        })
        #: arm -> its default configuration (prefixed names), from its config_space.json
        self.arm_defaults = {
            arm: {f"{arm}:{k}": v for k, v in sur.defaults.items() if k not in fixed}
            for arm, sur in self._surrogates.items()
        }
        self._column = {
            arm: sur.target_index("mmce" if sur.generation == "v0" else "acc")
            for arm, sur in self._surrogates.items()
        }

    def _loss(self, arm: str, params: dict[str, Any]) -> float:
        sur = self._surrogates[arm]
        x = {**params, **YAHPO6_FIXED, "task_id": self.task}
        value = float(sur.predict([x])[0, self._column[arm]])
        error = value if sur.generation == "v0" else 1.0 - value
        return float(np.clip(error, 0.0, 1.0))


def _make(
    task: str | None = None,
    yahpo_data: str | None = None,
    yahpo_data_v0: str | None = None,
    **_: Any,
) -> Problem:
    return YahpoCash6(task, yahpo_data, yahpo_data_v0)


def _tasks(yahpo_data: str | None = None, yahpo_data_v0: str | None = None, **_: Any) -> Sequence[str]:
    return yahpo6_tasks(yahpo_data, yahpo_data_v0)


register_problem(ProblemSpec(
    "cash-yahpo6", _make, _tasks,
    "CASH, the paper's six YAHPO rbv2 classes (glmnet, rpart, svm, aknn, ranger, xgboost) at "
    "trainsize 0.525, loss mmce (min)",
    requires=("onnxruntime",), kind="cash",
))

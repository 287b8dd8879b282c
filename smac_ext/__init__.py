"""SMAC3 adapters of uvp-plugins: MaxUCB intensifier for CASH, Iterative-Deepening Hyperband
intensifier and Tobit ensemble model.

* :class:`MaxUCBIntensifier` – two-level CASH (Balef et al., *Put CASH on Bandits*): MaxUCB
  picks the model class, each class runs its own SMAC HPO on its subspace.
* :class:`IterativeDeepeningHyperbandIntensifier` – Hyperband brackets (as SMAC's ``Hyperband``)
  whose run continues on the same output directory with a larger ``max_budget`` (Brandt et al.);
  :func:`hyperband_trials` sizes ``n_trials``.
* :func:`split_cash_space` / :class:`CashSpace` – split a CASH ConfigSpace into per-arm
  subspaces and map configurations between the joint space and the arms.
* :func:`cash_configspace` / :func:`arm_params` – build a CASH ConfigSpace from per-arm
  :class:`uvp_plugins.space.SearchSpace` objects and map joint configurations back.
* :func:`configspace_from_space` – the one ``SearchSpace`` -> ``ConfigurationSpace`` conversion.
* :class:`TobitEnsembleModel`, :class:`CensoredRunHistoryEncoder`, :class:`CutoffRecorder`,
  :class:`TobitThompsonSampling`, :func:`tobit_facade_kwargs` – the Tobit-loss ensemble surrogate
  for right-censored observations (Eggensperger et al.), for algorithm configuration across
  instances with SMAC's adaptive capping, and usable per arm of the intensifier
  (``model_factory=lambda s: TobitEnsembleModel(s)``).
"""

from smac_ext._cash_space import CashSpace, arm_params, cash_configspace, split_cash_space
from smac_ext._cash_space import detect_selector as detect_selector
from smac_ext._cash_space import plain_config as plain_config
from smac_ext._censored_encoder import CensoredRunHistoryEncoder
from smac_ext._cutoff_recorder import CutoffRecorder
from smac_ext._idhb_intensifier import IterativeDeepeningHyperbandIntensifier, hyperband_trials
from smac_ext._maxucb_intensifier import MaxUCBIntensifier
from smac_ext._space import configspace_from_space
from smac_ext._space import hyperparameter_from_param as hyperparameter_from_param
from smac_ext._thompson import TobitThompsonSampling, tobit_arm_factories, tobit_facade_kwargs
from smac_ext._tobit_model import TobitEnsembleModel

# the drop-ins first, then what wires them into a facade, then the space tools; the helpers
# imported above as ``x as x`` stay importable from here as before but are not the public surface
__all__ = [
    "MaxUCBIntensifier",
    "IterativeDeepeningHyperbandIntensifier",
    "TobitEnsembleModel",
    "tobit_facade_kwargs",
    "tobit_arm_factories",
    "CensoredRunHistoryEncoder",
    "TobitThompsonSampling",
    "hyperband_trials",
    "CashSpace",
    "split_cash_space",
    "cash_configspace",
    "arm_params",
    "configspace_from_space",
    "CutoffRecorder",
]

"""Neural surrogate models for right-censored observations (Eggensperger, Haase, Müller,
Lindauer, Hutter: *Neural Model-based Optimization with Right-Censored Observations*).

* :func:`tobit_nll` / :func:`tobit_nll_grad` -- the Tobit negative log-likelihood of Eq. 4 and
  its gradient (Gaussian NLL of Eq. 3 for uncensored observations, ``-log(1 - Phi(z))`` for
  censored ones).
* :class:`TobitEnsemble` -- ensemble of 3 x 50 tanh MLPs with mean and softplus-std heads,
  Eq. 5 mean/variance, Thompson sampling.
* :func:`schmee_hahn_fit` -- the S&H imputation baseline.
* :func:`pair_rows` / :func:`marginal_over_instances` -- algorithm configuration across
  instances: model inputs ``[configuration, instance features]`` and the cost over instances
  (:meth:`TobitEnsemble.predict_members_over_instances`).

numpy/scipy only.
"""

from uvp_plugins.censored.ensemble import TobitEnsemble
from uvp_plugins.censored.instances import marginal_over_instances, pair_rows
from uvp_plugins.censored.mlp import AdamW, MLPEnsembleNet
from uvp_plugins.censored.schmee_hahn import schmee_hahn_fit
from uvp_plugins.censored.tobit import (
    censor_at_cutoffs,
    censor_nonfinite,
    gaussian_nll,
    inverse_mills_ratio,
    tobit_nll,
    tobit_nll_grad,
    truncated_normal_mean,
)

__all__ = [
    "AdamW",
    "MLPEnsembleNet",
    "TobitEnsemble",
    "censor_at_cutoffs",
    "censor_nonfinite",
    "gaussian_nll",
    "inverse_mills_ratio",
    "marginal_over_instances",
    "pair_rows",
    "schmee_hahn_fit",
    "tobit_nll",
    "tobit_nll_grad",
    "truncated_normal_mean",
]

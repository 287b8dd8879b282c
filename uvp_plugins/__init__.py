"""uvp-plugins core: framework-free budget-allocation algorithms for hyperparameter optimization.

Importing this package never imports Optuna, Ray or SMAC; the adapters live in the top-level
packages ``optuna_ext``, ``raytune_ext`` and ``smac_ext``.
"""

from uvp_plugins.space import CategoricalParam, FloatParam, IntParam, SearchSpace

__version__ = "0.1.0"

__all__ = ["CategoricalParam", "FloatParam", "IntParam", "SearchSpace", "__version__"]

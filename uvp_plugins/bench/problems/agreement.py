"""Synthetic multi-fidelity problems whose low fidelities agree with the full one to a chosen degree.

Two families, each with four levels of **rank agreement** between a low fidelity and the full
budget ``T`` (``high``, ``medium``, ``low``, ``none``), for checking that a sampler or pruner does
not trust cheap evidence further than it holds (docs/results/optuna.md, issue 29):

* ``mf-agree`` (minimise; fidelity levels ``1..100``): a Hartmann function ``f`` (3-d or 6-d,
  tasks ``h3-<level>`` and ``h6-<level>``) seen at fidelity ``b`` through a *distractor*
  ``g(x) = 3 ||x - (1 - x*)||^2 / n`` - a bowl around the mirror image of ``f``'s minimiser
  ``x*`` - and noise, both fading with the log-fidelity ``s = log b / log T``::

      F(x, b) = f(x) + (1 - s) * (bias * g(x) + 1) + (1 - s) * noise * |e(x, b)|

  ``e`` is a standard normal draw that is a deterministic function of ``(task, x, b)``. At
  ``b = T`` the value is ``f(x)`` exactly, and no lower fidelity is better than it (every added
  term is ``>= 0``). The offset ``1 - s`` makes values improve with the fidelity; ``bias`` moves
  the low-fidelity ranking from ``f``'s (``high``: bias 1, noise 0.1) towards ``g``'s
  (``none``: bias 20, noise 0.8, where ``g`` dominates the low fidelities and their ranking is
  unrelated to ``f``'s, slightly reversed). A low-fidelity result is another function, not a
  usable model: only evaluations at ``T`` are scored (``partial_results_usable = False``). The
  construction follows the multi-fidelity Hartmann functions of Kandasamy et al. (2017) and
  the correlation presets of Mallik et al. (2023, "PriorBand": a bias that flattens or moves
  the low fidelities, noise that fades with the fidelity); the distractor here is our own.
* ``lc-agree`` (maximise, accuracy-like in (0, 100); epochs ``1..52``): saturating learning
  curves on a Lipschitz landscape over ``[0, 1]^5``, ``v(x) = 95 - 40 ||x - x*|| / sqrt(5)``,
  ``A(x, b) = v(x) (1 - 0.6 exp(-b / tau(x)))``, whose speed ``tau`` is tied to the final
  value: ``tau(x) = 1 + lag (r(x)^2 + x_4) / 2`` with ``r(x) = 1 - ||x - x*|| / sqrt(5)`` -
  the closer a configuration is to the optimum (and the larger its last coordinate), the later
  it blooms. ``lag`` 0 (``high``: every curve has the same shape, values at epoch 5 rank
  exactly like final ones), 3, 8, 16 (``none``: the best configurations are behind at the
  exploration depth and overtake late; curves cross). Spearman correlation of epoch-5 with
  epoch-52 values over 1000 random configurations: 1.00, 0.75, 0.26, 0.21 (among the best
  tenth: 1.00, 0.38, 0.12, 0.06). These are learning curves with checkpoints: the envelope
  score is kept.

``mf-agree``'s Spearman correlation of fidelity-10 with fidelity-100 values over 300 random
configurations (3-d / 6-d): high 0.95 / 0.81, medium 0.76 / 0.51, low 0.10 / 0.17, none
-0.35 / -0.03. Each task is deterministic.

Example:
    >>> p = make_mf_agree("h3-none")
    >>> round(p.evaluate({"x0": 0.114614, "x1": 0.555649, "x2": 0.852547}, 100), 4)
    -3.8628
    >>> q = make_lc_agree("lc-none")
    >>> best, other = dict(zip(q.space.names, q.x_star)), {n: 0.3 for n in q.space.names}
    >>> q.evaluate(best, 5) < q.evaluate(other, 5), q.evaluate(best, 52) > q.evaluate(other, 52)
    (True, True)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from uvp_plugins.bench.problems.base import Problem
from uvp_plugins.bench.problems.synthetic import hartmann
from uvp_plugins.bench.registry import ProblemSpec, register_problem
from uvp_plugins.space import FloatParam, SearchSpace

__all__ = ["AGREEMENT_LEVELS", "MFAgree", "LCAgree", "make_mf_agree", "make_lc_agree"]

#: the levels of rank agreement between low fidelities and ``T``, from most to least
AGREEMENT_LEVELS = ("high", "medium", "low", "none")
#: ``mf-agree``: (bias of the distractor, noise) per level
_MF_SETTINGS = {"high": (1.0, 0.1), "medium": (3.0, 0.3), "low": (8.0, 0.5), "none": (20.0, 0.8)}
#: ``lc-agree``: the lag of the best configurations' curves per level
_LC_LAG = {"high": 0.0, "medium": 3.0, "low": 8.0, "none": 16.0}
#: Hartmann minimisers (3-d, 6-d) and minima
_H_OPT = {
    3: ((0.114614, 0.555649, 0.852547), -3.86278),
    6: ((0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573), -3.32237),
}
_LC_OPTIMA = (0.62, 0.31, 0.77, 0.18, 0.45)


def _level(task: str, prefix: str) -> str:
    level = task.split("-", 1)[1] if task.startswith(prefix + "-") else ""
    if level not in AGREEMENT_LEVELS:
        raise ValueError(
            f"task must be {prefix}-<level> with level in {', '.join(AGREEMENT_LEVELS)}, got {task!r}"
        )
    return level


def _normal(*parts: object) -> float:
    """A standard normal draw that is a deterministic function of ``parts``."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return float(np.random.default_rng(int.from_bytes(digest, "little")).standard_normal())


class MFAgree(Problem):
    """``mf-agree``: Hartmann seen through a fading distractor and noise (module doc)."""

    name = "mf-agree"
    direction = "min"
    metric = "loss"
    fidelity = "level"
    partial_results_usable = False

    def __init__(self, dim: int, level: str, max_budget: int = 100) -> None:
        if dim not in _H_OPT:
            raise ValueError(f"dim must be 3 or 6, got {dim!r}")
        if level not in AGREEMENT_LEVELS:
            raise ValueError(f"level must be one of {', '.join(AGREEMENT_LEVELS)}, got {level!r}")
        self.dim = dim
        self.level = level
        self.task = f"h{dim}-{level}"
        self.max_budget = int(max_budget)
        self.bias, self.noise = _MF_SETTINGS[level]
        self.space = SearchSpace([FloatParam(f"x{i}", 0.0, 1.0) for i in range(dim)])
        self.x_star, self.optimum = _H_OPT[dim]

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        b = self.check_budget(budget)
        x = np.array([float(config[f"x{i}"]) for i in range(self.dim)])
        fade = 1.0 - math.log(b) / math.log(self.max_budget)
        if fade <= 0.0:
            return hartmann(x)
        eps = abs(_normal(self.task, tuple(np.round(x, 12).tolist()), b))
        distractor = 3.0 * float(np.sum((x - (1.0 - np.asarray(self.x_star))) ** 2)) / self.dim
        return hartmann(x) + fade * (self.bias * distractor + 1.0) + fade * self.noise * eps


class LCAgree(Problem):
    """``lc-agree``: saturating learning curves whose best configurations bloom late (module doc)."""

    name = "lc-agree"
    direction = "max"
    metric = "accuracy"
    fidelity = "epoch"

    def __init__(self, level: str, max_budget: int = 52) -> None:
        if level not in AGREEMENT_LEVELS:
            raise ValueError(f"level must be one of {', '.join(AGREEMENT_LEVELS)}, got {level!r}")
        self.level = level
        self.task = f"lc-{level}"
        self.max_budget = int(max_budget)
        self.lag = _LC_LAG[level]
        self.x_star = np.array(_LC_OPTIMA)
        self.space = SearchSpace([FloatParam(f"x{i}", 0.0, 1.0) for i in range(len(_LC_OPTIMA))])
        self.optimum = None  # the slowest curves are not saturated at T: not known in closed form

    def _value(self, x: np.ndarray, b: int) -> float:
        dist = float(np.linalg.norm(x - self.x_star)) / math.sqrt(x.size)
        v = 95.0 - 40.0 * dist
        tau = 1.0 + self.lag * ((1.0 - dist) ** 2 + x[-1]) / 2.0
        return float(v * (1.0 - 0.6 * math.exp(-b / tau)))

    def evaluate(self, config: Mapping[str, Any], budget: int) -> float:
        b = self.check_budget(budget)
        return self._value(np.array([float(config[n]) for n in self.space.names]), b)


def make_mf_agree(task: str | None = None, **_: Any) -> MFAgree:
    """An ``mf-agree`` task: ``h3-<level>`` or ``h6-<level>`` (default ``h3-high``)."""
    task = task or "h3-high"
    dim = {"h3": 3, "h6": 6}.get(task.split("-", 1)[0])
    if dim is None:
        raise ValueError(f"task must be h3-<level> or h6-<level>, got {task!r}")
    return MFAgree(dim, _level(task, f"h{dim}"))


def make_lc_agree(task: str | None = None, **_: Any) -> LCAgree:
    """An ``lc-agree`` task: ``lc-<level>`` (default ``lc-high``)."""
    return LCAgree(_level(task or "lc-high", "lc"))


register_problem(
    ProblemSpec(
        "mf-agree",
        make_mf_agree,
        lambda **_: [f"h{d}-{lv}" for d in (3, 6) for lv in AGREEMENT_LEVELS],
        "Hartmann 3-d/6-d whose low fidelities agree with T from high to none (min), T=100",
    )
)
register_problem(
    ProblemSpec(
        "lc-agree",
        make_lc_agree,
        lambda **_: [f"lc-{lv}" for lv in AGREEMENT_LEVELS],
        "learning curves whose best configurations bloom late, from not to very (max), T=52",
    )
)

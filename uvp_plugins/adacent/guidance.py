"""Exploitation for online Enhanced-AdaCent: every trial's value at the exploration depth steers
the later centers (an extension of Bateni et al., Alg. 8, documented here).

**What the paper leaves on the table.** Enhanced-AdaCent (Alg. 8) probes every new center to the
exploration depth ``T_explore = floor(delta T)`` and prunes it with PRED; Enhanced-KCenter (Alg. 4)
then uses those values only to *reshape distances* (Sec. 3.2), so the next center is still the
candidate farthest from all centers: the method keeps covering the whole mesh after the good
region is known. Every trial that reached the depth - pruned ones included - holds a measurement
``A(x, T_explore)`` of the very quantity Alg. 4's ratios compare; Assumption 1.2 says nearby
configurations have nearby values. :class:`Guidance` uses that evidence:

1. **Coverage first (the paper).** Until ``n_init`` trials have a value at the depth, the next
   center is Enhanced-KCenter's (Alg. 4) over the free mesh candidates, exactly as in the paper.
2. **Then the candidate set narrows to where the evidence points.** A Gaussian process
   (:class:`~uvp_plugins.adacent.surrogate.GaussianProcess`, Matern-5/2 over the distance embedding
   of Sec. 4's mesh) is fitted to ``(configuration -> value at the depth)`` of every trial that
   has one, complete and pruned alike. Values are mapped through their ranks to standard normal
   quantiles first (a Gaussian copula: a few diverged trials at chance level would otherwise
   dominate the scale; the EI incumbent is the best rank's quantile). The candidate set ``X`` of
   Alg. 4 line 4 becomes the free mesh candidates plus ``n_local`` candidates around the
   ``local_top`` best configurations (Gaussian steps in unit coordinates at the scales
   ``local_scales``, so the search can refine below the mesh's resolution), and the next center is
   the candidate of ``X`` with the largest expected improvement (Jones et al. 1998) over the best
   value at the depth. With several workers, the candidates reserved for workers that asked
   earlier are removed from ``X`` first (one per worker), so simultaneous trials spread out.
3. **Coverage continues at a lower rate.** Every ``coverage_every``-th trial (default: every
   third) is still Enhanced-KCenter's step. Expected improvement alone can keep testing the
   corners of a parameter the model believes irrelevant (a long lengthscale makes the corners the
   most uncertain points); the paper's value-aware coverage keeps filling the space between.

Everything is a deterministic function of what was told (the GP's hyperparameters are refitted
from a fixed start at fixed checkpoints of the number of valued trials, on a fixed subset; local
candidates come from a generator seeded by the object's seed and the number of told trials), so
two processes told the same trials propose the same configuration.

**Cost.** Hyperparameters are fitted on at most ``n_fit`` trials, and only when the number of
valued trials has grown by ``refit_growth`` since the last fit; the posterior uses at most
``n_post`` trials (the best half, the rest evenly spaced in trial order).

**Choice of the default.** Measured on lcbench tasks 1-17 (seeds 100-104) only, before any
held-out run (docs/results/optuna.md, "Issue 17"): expected improvement beat restricting
Enhanced-KCenter to the top candidates by EI or by an upper confidence bound, a multi-fidelity
model over (configuration, budget) and a larger exploration depth; the rank transform and local
candidates at several scales helped; interleaving the coverage step every third trial cost
nothing there and removed the corner-seeking failure on a low-dimensional test function
(``tests/core/test_guidance.py``).

Example:
    >>> from uvp_plugins.space import FloatParam, SearchSpace
    >>> from uvp_plugins.adacent.online import OnlineEnhancedAdaCent
    >>> space = SearchSpace([FloatParam("x", 0.0, 1.0), FloatParam("y", 0.0, 1.0)])
    >>> ea = OnlineEnhancedAdaCent(space, n_candidates=128, max_resource=10, seed=0,
    ...                            guidance=Guidance(n_init=6))
    >>> for t in range(12):
    ...     p = ea.ask()
    ...     acc = 1.0 - abs(p.config["x"] - 0.3) - abs(p.config["y"] - 0.7)
    ...     ea.tell(t, p.config, status="pruned", curve={1: acc})
    >>> p = ea.ask(); abs(p.config["x"] - 0.3) + abs(p.config["y"] - 0.7) < 0.3
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from uvp_plugins.adacent.scores import copula, rank_scores
from uvp_plugins.adacent.surrogate import (
    LENGTHSCALE_PRIORS,
    GaussianProcess,
    log_expected_improvement,
)
from uvp_plugins.space import CategoricalParam, SearchSpace
from uvp_plugins.validation import check_choice, check_float, check_int

__all__ = [
    "Guidance",
    "GuidedModel",
    "local_candidates",
    "local_candidate_points",
    "local_count",
    "reflect_unit",
    "copula",
    "LOCAL_PER_DIMENSION",
    "MAX_MOVED_COORDINATES",
    "TARGETS",
    "BOUNDS",
]

#: local candidates per parameter of the space (at least ``Guidance.n_local``)
LOCAL_PER_DIMENSION = 25
#: in spaces with more parameters, a local step moves each coordinate with probability
#: ``MAX_MOVED_COORDINATES / d`` (at least one): small moves in a few directions, as trust-region
#: methods do in high dimensions (Eriksson et al. 2019, TuRBO; Regis & Shoemaker 2013, DYCORS)
MAX_MOVED_COORDINATES = 20
#: what the surrogate can learn (:attr:`Guidance.targets`)
TARGETS = ("final", "depth")
#: what a local step past a bound becomes (:attr:`Guidance.bounds`)
BOUNDS = ("reflect", "clip", "both")


@dataclass(frozen=True)
class Guidance:
    """Settings of the exploitation step (see the module doc). Validated at construction.

    Attributes:
        n_init: trials with a value at the depth before the surrogate is used (int >= 2).
        n_local: local candidates added to the mesh at every step (int >= 0).
        local_scales: standard deviations of the local steps in unit coordinates (each in (0, 1]),
            used in turn.
        local_top: the local candidates surround this many best configurations (int >= 1).
        n_fit: at most this many trials for the hyperparameter fit (int >= 4).
        n_post: at most this many trials in the posterior (int >= 4).
        refit_growth: refit the hyperparameters when the number of valued trials has grown by
            this factor (float > 1).
        coverage_every: every ``coverage_every``-th trial (by the number of trials told) is
            still Enhanced-KCenter's step (int >= 0; 0: never).
        coverage_growth: past this many trials the coverage period doubles each time the
            number of trials doubles, so a growing share of a long study refines (int >= 0;
            0: a fixed period). Default 20 (issue 29, chosen on BBOB and the synthetic tuning
            problems, docs/results/optuna.md): a coverage step every 3rd trial up to trial
            40, every 6th up to 80, every 12th up to 160, ...
        kcenter_max_dim: in a space with more coordinates than this (distance embedding), a
            coverage step takes the next free point of the Sobol mesh in its order instead of
            the point farthest from all centers, which there lies on the boundary of the space
            (int >= 0; 0: Enhanced-KCenter in every dimension).
        targets: what the surrogate learns once a trial completed - ``"final"`` (issue 29,
            :func:`uvp_plugins.adacent.targets.final_targets`: the complete trials' final values,
            the partial curves as calibrated lower fidelities) or ``"depth"`` (issue 17: every
            trial's value at the exploration depth ``floor(delta T)``, Alg. 8's ``T_explore``).
        bounds: a local step past a bound of the space is reflected back inside (``"reflect"``,
            issue 29: candidates do not pile up on a bound), clipped onto the bound
            (``"clip"``, issue 17), or both (``"both"``: the reflected point and the point on
            the bound are both candidates, and the expected improvement chooses).
        mix_share: the share of the local candidates whose base point takes each coordinate
            from a top configuration drawn for that coordinate, instead of one top
            configuration for all (float in [0, 1]; 0: none). Mixed bases recombine what the
            best configurations got right coordinate by coordinate, as TPE's independent
            per-parameter densities over its good trials do (Bergstra et al. 2011): on
            separable multimodal functions the best values of different coordinates sit in
            different incumbents. The expected improvement still chooses among all candidates.
            Not the default: the declared check of 0.5 on the tuning sets (docs/results/optuna.md,
            2026-11-27 22:02 UTC) found no gain on BBOB's multimodal functions and a loss on
            mf-agree; level or slightly better on lcbench.
        lengthscale_prior: the surrogate's lengthscale prior, a name of
            :data:`~uvp_plugins.adacent.surrogate.LENGTHSCALE_PRIORS`: ``"sqrt-d"`` (issue 29,
            median ``sqrt(D)``) or ``"hvarfner"`` (issue 17, Hvarfner et al.'s ``4.1 sqrt(D)``).
    """

    n_init: int = 10
    n_local: int = 400
    local_scales: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2)
    local_top: int = 5
    n_fit: int = 128
    n_post: int = 256
    refit_growth: float = 1.25
    coverage_every: int = 3
    coverage_growth: int = 20
    kcenter_max_dim: int = 0
    targets: str = "final"
    bounds: str = "reflect"
    lengthscale_prior: str = "sqrt-d"
    mix_share: float = 0.0

    def __post_init__(self) -> None:
        check_int("n_init", self.n_init, low=2)
        check_int("n_local", self.n_local, low=0)
        scales = tuple(self.local_scales)
        if not scales:
            raise ValueError("local_scales must hold at least one scale in (0, 1]")
        for s in scales:
            check_float("local_scales", s, 0.0, 1.0, low_open=True)
        object.__setattr__(self, "local_scales", tuple(float(s) for s in scales))
        check_int("local_top", self.local_top, low=1)
        check_int("n_fit", self.n_fit, low=4)
        check_int("n_post", self.n_post, low=4)
        check_float("refit_growth", self.refit_growth, low=1.0, low_open=True)
        check_int("coverage_every", self.coverage_every, low=0)
        check_int("coverage_growth", self.coverage_growth, low=0)
        check_int("kcenter_max_dim", self.kcenter_max_dim, low=0)
        check_choice("targets", self.targets, TARGETS)
        check_choice("bounds", self.bounds, BOUNDS)
        check_choice("lengthscale_prior", self.lengthscale_prior, tuple(LENGTHSCALE_PRIORS))
        check_float("mix_share", self.mix_share, 0.0, 1.0)

    def coverage_step(self, k: int) -> bool:
        """Whether the ``k``-th trial (``k`` trials told before it) is a coverage step.

        Example:
            >>> g = Guidance(coverage_every=3, coverage_growth=50)
            >>> [k for k in range(0, 130) if g.coverage_step(k)][-4:]
            [108, 114, 120, 126]
        """
        if not self.coverage_every:
            return False
        period = self.coverage_every
        if self.coverage_growth:
            period *= 2 ** max(0, int(math.floor(math.log2(max(1, k) / self.coverage_growth))))
        return k % period == 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["local_scales"] = list(self.local_scales)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Guidance:
        kw = dict(d)
        # a state written before these fields existed ran with the former behaviour; one
        # written before issue 29 (no coverage_growth) ran with all of issue 17's rules
        issue17 = "coverage_growth" not in d
        kw.setdefault("coverage_growth", 0)
        kw.setdefault("kcenter_max_dim", 0)
        kw.setdefault("targets", "depth" if issue17 else "final")
        kw.setdefault("bounds", "clip" if issue17 else "reflect")
        kw.setdefault("lengthscale_prior", "hvarfner" if issue17 else "sqrt-d")
        kw.setdefault("mix_share", 0.0)
        kw["local_scales"] = tuple(kw.get("local_scales", cls.local_scales))
        return cls(**kw)


def _subset(values: np.ndarray, numbers: np.ndarray, cap: int) -> np.ndarray:
    """Indices of at most ``cap`` observations: the best half, then evenly spaced by number."""
    n = values.size
    if n <= cap:
        return np.arange(n)
    best = np.argsort(-values, kind="stable")[: cap // 2]
    rest = np.setdiff1d(np.arange(n), best)
    rest = rest[np.argsort(numbers[rest], kind="stable")]
    pick = rest[np.linspace(0, rest.size - 1, cap - best.size).astype(int)]
    return np.sort(np.concatenate([best, pick]))


def _checkpoint(n: int, start: int, growth: float) -> int:
    """The largest checkpoint ``<= n`` of the sequence ``start, ceil(start*growth), ...``."""
    c = start
    while True:
        nxt = max(c + 1, int(math.ceil(c * growth)))
        if nxt > n:
            return c
        c = nxt


class GuidedModel:
    """The surrogate of one decision: fitted to the valued trials, scoring candidates by EI.

    Hyperparameters are cached per checkpoint (a pure function of the first trials in trial
    order), so refitting is rare and every process fits the same ones. The posterior is
    factorised on the first :meth:`acquisition` after an :meth:`update`, so a step that does not
    score candidates (Enhanced-KCenter's coverage step) does not pay for it.
    """

    def __init__(self, guidance: Guidance) -> None:
        self.guidance = guidance
        self._theta: dict[Hashable, np.ndarray] = {}
        self.gp: GaussianProcess | None = None
        self._posterior: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.best = math.nan
        self.top: list[dict[str, Any]] = []

    def update(
        self,
        X: np.ndarray,
        values: np.ndarray,
        numbers: np.ndarray,
        configs: Sequence[dict[str, Any]],
        noise: np.ndarray | None = None,
        fit_data: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
        fingerprint: Sequence[Hashable] | None = None,
    ) -> bool:
        """Fit to ``X`` (embedded configurations), ``values`` (higher is better) and trial
        ``numbers``; ``False`` (no model) while fewer than ``n_init`` trials are valued.

        Without ``noise`` the values are ranked first (:func:`copula`; issue 17's values at
        the depth). With ``noise`` (the variances of :func:`uvp_plugins.adacent.targets.final_targets`,
        0 for complete trials) the values are already normal scores of final values: they are
        fitted as they are, each with its variance, and the expected improvement is over the
        best exactly known one; ``fit_data(indices)`` then gives the targets and variances that
        those trials alone imply (for the hyperparameter fit, which must not depend on later
        trials), and ``fingerprint`` one hashable per trial that changes when what the trial
        says changes (status, curve)."""
        g = self.guidance
        if values.size < g.n_init:
            self.gp = None
            self._posterior = None
            return False
        if noise is None:
            y = rank_scores(values)
            extra = np.zeros(values.size)
            exact = np.ones(values.size, dtype=bool)
        else:
            y = np.asarray(values, dtype=float)
            extra = np.asarray(noise, dtype=float)
            exact = extra <= 0.0
        order = np.argsort(numbers, kind="stable")
        c = _checkpoint(values.size, g.n_init, g.refit_growth)
        first = order[:c]
        # the hyperparameters are a function of the first c trials alone (what they say now),
        # fitted once per checkpoint: every process that sees those trials fits the same ones
        if fit_data is None or fingerprint is None:
            ident: Hashable = (c, tuple(int(n) for n in numbers[first]))
        else:
            ident = (c, tuple(fingerprint[i] for i in first.tolist()))
        theta = self._theta.get(ident)
        if theta is None:
            if fit_data is None:
                yc, ec = rank_scores(values[first]), np.zeros(first.size)
            else:
                yc, ec = fit_data(first)
            keep = _subset(yc, numbers[first], g.n_fit)
            gp = GaussianProcess(lengthscale_prior=g.lengthscale_prior)
            theta = gp.fit(X[first[keep]], yc[keep], noise=ec[keep]).theta
            assert theta is not None
            if len(self._theta) > 64:
                self._theta.clear()
            self._theta[ident] = theta
        post = _subset(y, numbers, g.n_post)
        # the posterior is factorised on the first acquisition: a coverage step does not use it
        self.gp = None
        self._posterior = (X[post], y[post], theta, extra[post])
        self.best = float(y[exact].max()) if exact.any() else float(y.max())
        ranked = np.argsort(-y, kind="stable")[: g.local_top]
        self.top = [dict(configs[i]) for i in ranked]
        return True

    def acquisition(self, Z: np.ndarray) -> np.ndarray:
        """The logarithm of the expected improvement over the best value, at embedded
        candidates ``Z`` (computed without underflow, so candidates far below the best are
        still ordered: Ament et al. 2023, LogEI)."""
        if self.gp is None:
            if self._posterior is None:
                raise RuntimeError("update() with at least n_init values first")
            Xp, yp, theta, extra = self._posterior
            gp = GaussianProcess(lengthscale_prior=self.guidance.lengthscale_prior)
            self.gp = gp.fit(Xp, yp, theta=theta, noise=extra)
        mean, std = self.gp.predict(Z)
        return log_expected_improvement(mean, std, self.best)


def reflect_unit(u: np.ndarray) -> np.ndarray:
    """Fold coordinates back into ``[0, 1]`` by reflection at the bounds (a step past a bound
    lands as far inside; clipping would pile candidates up on the bound).

    Example:
        >>> reflect_unit(np.array([-0.1, 0.5, 1.2, 2.3])).round(2).tolist()
        [0.1, 0.5, 0.8, 0.3]
    """
    v = np.mod(np.asarray(u, dtype=float), 2.0)
    return np.where(v > 1.0, 2.0 - v, v)


def local_count(guidance: Guidance, dim: int) -> int:
    """Local candidates per step: ``guidance.n_local``, or :data:`LOCAL_PER_DIMENSION` per
    parameter when that is more (candidates must grow with the dimension to find the few
    improving directions around an incumbent).

    Example:
        >>> local_count(Guidance(), 5), local_count(Guidance(), 40)
        (400, 1000)
    """
    if guidance.n_local == 0:
        return 0
    return max(guidance.n_local, LOCAL_PER_DIMENSION * int(dim))


def local_candidates(
    space: SearchSpace,
    configs: Sequence[Mapping[str, Any]],
    n: int,
    scales: Sequence[float],
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """``n`` configurations around ``configs`` (taken in turn): Gaussian steps in unit
    coordinates with the standard deviations ``scales`` (taken in turn); a categorical takes a
    random choice with probability equal to the step's scale, else keeps its value.

    Example:
        >>> from uvp_plugins.space import FloatParam, SearchSpace
        >>> space = SearchSpace([FloatParam("x", 0.0, 1.0)])
        >>> near = local_candidates(space, [{"x": 0.5}], 4, [0.01], np.random.default_rng(0))
        >>> all(abs(c["x"] - 0.5) < 0.1 for c in near)
        True
    """
    return local_candidate_points(space, configs, n, scales, rng)[0]


def local_candidate_points(
    space: SearchSpace,
    configs: Sequence[Mapping[str, Any]],
    n: int,
    scales: Sequence[float],
    rng: np.random.Generator,
    bounds: str = "reflect",
    mix_share: float = 0.0,
) -> tuple[list[dict[str, Any]], np.ndarray]:
    """:func:`local_candidates` and their distance embedding (rows), decoded in one pass.
    ``bounds`` (:attr:`Guidance.bounds`): a step past a bound is reflected (``"reflect"``),
    clipped onto the bound (``"clip"``), or both (``"both"``: the clipped twin is added, so
    there are more than ``n`` candidates). The last ``round(mix_share n)`` candidates
    (:attr:`Guidance.mix_share`) start from mixed bases: each coordinate from a top
    configuration drawn for it."""
    if n <= 0 or not configs:
        return [], np.empty((0, space.embedding_dim))
    U = space.to_unit(list(configs))
    base = U[np.arange(n) % len(configs)]
    n_mixed = int(round(float(mix_share) * n)) if len(configs) > 1 else 0
    if n_mixed:
        donors = rng.integers(0, len(configs), size=(n_mixed, U.shape[1]))
        base[n - n_mixed :] = U[donors, np.arange(U.shape[1])]
    s = np.asarray(scales, dtype=float)[np.arange(n) % len(scales)]
    step = rng.normal(0.0, 1.0, size=base.shape) * s[:, None]
    d = base.shape[1]
    if d > MAX_MOVED_COORDINATES:  # move a random subset of coordinates (module doc)
        moved = rng.random(base.shape) < MAX_MOVED_COORDINATES / d
        moved[np.arange(n), rng.integers(0, d, size=n)] = True
        step *= moved
    raw = base + step
    out = np.clip(raw, 0.0, 1.0) if bounds == "clip" else reflect_unit(raw)
    numeric = np.ones(d, dtype=bool)
    for j, p in enumerate(space.params):
        if isinstance(p, CategoricalParam):
            numeric[j] = False
            flip = rng.random(n) < s
            out[:, j] = np.where(flip, rng.random(n), base[:, j])
    if bounds == "both":  # a step past a bound also lands on it (Guidance.bounds)
        crossed = np.any(((raw < 0.0) | (raw > 1.0)) & numeric, axis=1)
        twins = out[crossed].copy()
        twins[:, numeric] = np.clip(raw[crossed][:, numeric], 0.0, 1.0)
        out = np.concatenate([out, twins])
    return space.decode_unit(out)

"""Offline budget allocators for Unknown Value Probing (Bateni et al., Sec. 3).

* :func:`fullcent` - FullCent (Alg. 3): ``k = floor(B/T)`` greedy k-centers, each trained to ``T``.
* :func:`enhanced_fullcent` - Enhanced-FullCent (Alg. 5): centers by Enhanced-KCenter (Alg. 4).
* :func:`adacent` - AdaCent (Alg. 7): rounds of ``p`` k-centers trained in unit steps, pruned with
  PRED (Alg. 6) or the tail-fit predictor.
* :func:`enhanced_adacent` - Enhanced-AdaCent (Alg. 8): rounds of ``p`` Enhanced-KCenter picks,
  each explored to ``T_explore = max(1, floor(delta*T))``, then AdaCent's stepping and pruning.

The value function ``value_fn(index, budget) -> float`` gives ``A(x_index, budget)``, higher is
better (the enhanced variants need values > 0: the enhancement factors are ratios). The
allocators call it exactly once per ``(index, budget)`` with budgets ``1, 2, 3, ...`` in
increasing order per index, i.e. LEARN (Alg. 2) one unit at a time, so a caller can route every
call through its own ledger (the benchmark wraps ``RunContext.evaluate``).

Budget ledger: evaluating candidate ``i`` at budget ``b`` after it was evaluated up to ``b0``
costs ``b - b0`` (LEARN semantics: training continues). Every call costs one unit; the
allocators never spend more than ``total_budget`` and AdaCent / Enhanced-AdaCent stop exactly at
it, mid-step if need be (unless the candidate set is used up first: pruned configurations are
not resumed). FullCent and Enhanced-FullCent spend ``min(floor(B/T), n) * T`` (Lemmas 3.1 and
3.7): the remainder ``B mod T`` stays unspent.

Example:
    >>> import numpy as np
    >>> from uvp_plugins.adacent.allocators import enhanced_adacent
    >>> X = np.random.default_rng(0).random((200, 2))
    >>> def A(i, b):  # accuracy-like, concave in b, best near (0.7, 0.7)
    ...     return (0.9 - 0.3 * np.linalg.norm(X[i] - 0.7)) * (1 - 0.5 * np.exp(-b / 3))
    >>> res = enhanced_adacent(A, X, total_budget=200, max_budget=20, p=10)
    >>> res.budget_spent, len(res.histories[res.best_index]) == 20
    (200, True)

Histories are the raw values returned by ``value_fn``; decisions use their monotone envelope
``max_{t<=b} A(x, t)`` (Sec. 4, "Practical Refinements"), so ``H_last`` is the best value seen.

Choices the paper leaves open (documented here, cited in the functions):

* A configuration kept in the active pool across rounds is not paid again for budgets it has
  already reached (LEARN continues where it stopped); fully trained configurations stay in the
  pool as the incumbents that newer ones are pruned against.
* ``H_last`` of Alg. 4 is the envelope value at the center's deepest paid budget (centers of
  earlier rounds may be deeper than ``T_explore``).
* Alg. 8 writes ``C'``/``H'`` for the centers passed to Enhanced-KCenter; the global centers
  ``C`` and their histories are meant (otherwise later rounds would repeat the first).
* ``epsilon="auto"`` estimates epsilon (Sec. 4.1, 95th percentile of pairwise ``eps_ij``) from the
  histories of the configurations evaluated so far, i.e. only from paid evaluations, re-estimated
  before every Enhanced-KCenter pick. Without evidence it is ``inf`` (plain distances).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from uvp_plugins.adacent.curves import EPSILON_PERCENTILE
from uvp_plugins.adacent.online import OnlineEnhancedAdaCent
from uvp_plugins.adacent.pred import PREDICTORS, TAIL_FRACTION, check_delta, optimistic_prediction
from uvp_plugins.validation import check_choice, check_int, check_seed

__all__ = [
    "UVPResult",
    "fullcent",
    "enhanced_fullcent",
    "adacent",
    "enhanced_adacent",
    "predict_final",
]

ValueFn = Callable[[int, int], float]
OnEvaluate = Callable[[int, int, float, int], None]



@dataclass(frozen=True)
class UVPResult:
    """Outcome of an allocator run.

    Attributes:
        best_index: candidate with the best observed (envelope) value, ties to the earliest
            evaluated (``argmax_{x in C} H_last``, Alg. 3/5/7/8 last line).
        best_value: that value.
        budget_spent: units spent (number of ``value_fn`` calls).
        histories: raw values at budgets ``1..len`` per evaluated candidate.
        order: candidate indices in the order of their first evaluation.
        epsilon: the epsilon used by the last enhanced pick (``nan`` for plain variants).
    """

    best_index: int
    best_value: float
    budget_spent: int
    histories: dict[int, np.ndarray] = field(repr=False)
    order: list[int]
    epsilon: float = math.nan


# ----------------------------------------------------------------------------- validation
def _check_common(
    value_fn: ValueFn, candidates: np.ndarray, total_budget: int, max_budget: int
) -> tuple[np.ndarray, int, int]:
    if not callable(value_fn):
        raise TypeError(f"value_fn must be callable (index, budget) -> float, got {type(value_fn).__name__}")
    X = np.asarray(candidates, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"candidates must be a non-empty 2-D array (n, d), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("candidates must contain only finite coordinates")
    T = check_int("max_budget", max_budget, low=1)
    B = check_int("total_budget", total_budget, low=1)
    if B < T:
        raise ValueError(
            f"total_budget={B} is below one full evaluation (max_budget={T}); use total_budget >= max_budget"
        )
    return X, B, T


def _check_predictor(predictor: str, tail_fraction: float) -> None:
    check_choice("predictor", predictor, PREDICTORS)
    if not (0.0 < float(tail_fraction) <= 1.0):
        raise ValueError(f"tail_fraction must be in (0, 1], got {tail_fraction!r}")


def _check_epsilon_arg(epsilon: float | str, percentile: float) -> None:
    if isinstance(epsilon, str):
        if epsilon != "auto":
            raise ValueError(f"epsilon must be 'auto' or a float > 0, got {epsilon!r}")
    elif not (float(epsilon) > 0):
        raise ValueError(f"epsilon must be 'auto' or a float > 0, got {epsilon!r}")
    if not (0.0 <= float(percentile) <= 100.0):
        raise ValueError(f"epsilon_percentile must be in [0, 100], got {percentile!r}")


def _first_pick(n: int, seed: int | None) -> int | None:
    """``None`` (deterministic centroid rule of :func:`uvp_plugins.adacent.kcenter.first_center`) or,
    with a seed, a uniformly random first center as in the authors' code."""
    seed = check_seed("seed", seed, allow_none=True)
    if seed is None:
        return None
    return int(np.random.default_rng(seed).integers(n))


def _centers(
    X: np.ndarray,
    enhanced: bool,
    first: int | None,
    epsilon: float | str = "auto",
    percentile: float = EPSILON_PERCENTILE,
) -> OnlineEnhancedAdaCent:
    """The center selection of every allocator: the online object over the candidate array,
    with ``H_last`` (the value at the deepest paid budget, Alg. 4) as a center's value."""
    return OnlineEnhancedAdaCent(
        candidate_array=X,
        enhanced=enhanced,
        epsilon=epsilon,
        epsilon_percentile=percentile,
        center_value="last",
        first=first,
    )


def _tell(centers: OnlineEnhancedAdaCent, ledger: _Ledger, i: int) -> None:
    """Tell the online object the paid history of candidate ``i``."""
    h = ledger.raw.get(i, [])
    status = "complete" if len(h) >= ledger.T else ("pruned" if h else "running")
    curve = {b + 1: v for b, v in enumerate(h)}
    centers.tell(i, {"index": i}, status=status, curve=curve)


# --------------------------------------------------------------------------------- helpers
def predict_final(
    history: np.ndarray, max_budget: int, predictor: str = "tail", tail_fraction: float = TAIL_FRACTION
) -> float:
    """Optimistic prediction of ``A(x, T)`` from a history (higher is better): PRED (Alg. 6,
    ``"last_slope"``) or the tail fit (Sec. 4, ``"tail"``), both on the monotone envelope
    (:func:`uvp_plugins.adacent.pred.optimistic_prediction`)."""
    return optimistic_prediction(history, max_budget, predictor, tail_fraction)


class _Ledger:
    """Histories and the exact budget ledger of one run (LEARN semantics, Alg. 2)."""

    def __init__(
        self,
        value_fn: ValueFn,
        total_budget: int,
        max_budget: int,
        on_evaluate: OnEvaluate | None,
        positive: bool,
    ) -> None:
        self.value_fn = value_fn
        self.B = total_budget
        self.T = max_budget
        self.on_evaluate = on_evaluate
        self.positive = positive
        self.spent = 0
        self.raw: dict[int, list[float]] = {}
        self.env_last: dict[int, float] = {}
        self.order: list[int] = []

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.B

    def depth(self, i: int) -> int:
        return len(self.raw.get(i, ()))

    def learn(self, i: int, t: int) -> bool:
        """Continue training ``i`` up to budget ``min(t, T)``, one unit per call, while budget
        remains. Returns True if the target was reached."""
        t = min(int(t), self.T)
        h = self.raw.setdefault(i, [])
        if not h and i not in self.order:
            self.order.append(i)
        while len(h) < t:
            if self.spent >= self.B:
                return False
            b = len(h) + 1
            v = float(self.value_fn(int(i), b))
            if not math.isfinite(v):
                raise ValueError(f"value_fn({i}, {b}) returned {v!r}; values must be finite")
            if self.positive and v <= 0:
                raise ValueError(
                    f"value_fn({i}, {b}) returned {v!r}; the enhanced allocators need values > 0 "
                    "(higher is better): shift or rescale the objective"
                )
            self.spent += 1
            h.append(v)
            prev = self.env_last.get(i, -math.inf)
            self.env_last[i] = max(prev, v)
            if self.on_evaluate is not None:
                self.on_evaluate(int(i), b, v, self.spent)
        return True

    def history(self, i: int) -> np.ndarray:
        return np.asarray(self.raw.get(i, ()), dtype=float)

    def result(self, epsilon: float = math.nan) -> UVPResult:
        evaluated = [i for i in self.order if self.raw.get(i)]
        if not evaluated:
            raise RuntimeError("no evaluation was made (internal error)")
        best = max(evaluated, key=lambda i: (self.env_last[i], -evaluated.index(i)))
        return UVPResult(
            best_index=int(best),
            best_value=float(self.env_last[best]),
            budget_spent=int(self.spent),
            histories={int(i): self.history(i) for i in evaluated},
            order=[int(i) for i in evaluated],
            epsilon=float(epsilon),
        )


def _step_and_prune(
    ledger: _Ledger,
    active: list[int],
    t_from: int,
    predictor: str,
    tail_fraction: float,
) -> list[int]:
    """Alg. 7 lines 6-11 / Alg. 8 lines 7-12: for ``t = t_from..T`` advance every active
    configuration to ``t`` (one unit each, skipped if already deeper) while budget remains, then
    keep ``{x : PRED(H_x) >= max_{x' in A} H_last(x')}``."""
    T = ledger.T
    for t in range(t_from, T + 1):
        for x in active:
            if ledger.exhausted:
                break
            if ledger.depth(x) < t:
                ledger.learn(x, t)
        live = [x for x in active if ledger.depth(x) > 0]
        if not live:
            return active
        best = max(ledger.env_last[x] for x in live)
        active = [
            x
            for x in active
            if ledger.depth(x) == 0
            or predict_final(ledger.history(x), T, predictor, tail_fraction) >= best
        ]
        if ledger.exhausted:
            break
    return active


# ------------------------------------------------------------------------------ allocators
def fullcent(
    value_fn: ValueFn,
    candidates: np.ndarray,
    total_budget: int,
    max_budget: int,
    *,
    seed: int | None = None,
    on_evaluate: OnEvaluate | None = None,
) -> UVPResult:
    """FullCent (Bateni et al., Alg. 3): greedy k-center with ``k = min(floor(B/T), n)``, each
    center trained to ``T``; returns the best. ``(1 - 2 eps r_k*)``-approximation (Thm. 3.3).

    Args:
        value_fn: ``(index, budget) -> A(x_index, budget)``, higher is better.
        candidates: ``(n, d)`` embedded configurations.
        total_budget: ``B`` (int >= ``max_budget``).
        max_budget: ``T`` (int >= 1).
        seed: ``None`` for the deterministic first center (nearest the centroid), else the first
            center is drawn uniformly with this seed.
        on_evaluate: called as ``on_evaluate(index, budget, value, spent)`` after each call.
    """
    X, B, T = _check_common(value_fn, candidates, total_budget, max_budget)
    ledger = _Ledger(value_fn, B, T, on_evaluate, positive=False)
    centers = _centers(X, enhanced=False, first=_first_pick(X.shape[0], seed))
    for _ in range(min(B // T, X.shape[0])):
        i = int(centers.ask(key=None).config["index"])
        centers.tell(i, {"index": i}, status="running")
        ledger.learn(i, T)
    return ledger.result()


def enhanced_fullcent(
    value_fn: ValueFn,
    candidates: np.ndarray,
    total_budget: int,
    max_budget: int,
    *,
    epsilon: float | str = "auto",
    epsilon_percentile: float = 95.0,
    seed: int | None = None,
    on_evaluate: OnEvaluate | None = None,
) -> UVPResult:
    """Enhanced-FullCent (Bateni et al., Alg. 5): ``k = min(floor(B/T), n)`` picks of
    Enhanced-KCenter (Alg. 4) with probing budget ``t = T``. Values must be > 0.

    Args:
        epsilon: the Lipschitz constant of Assumption 1.2 (float > 0), or ``"auto"`` (estimated
            from the paid histories before every pick, see :func:`uvp_plugins.adacent.curves.resolve_epsilon`).
        epsilon_percentile: percentile of the pairwise estimates for ``"auto"`` (Sec. 4.1: 95).
        (other arguments as in :func:`fullcent`)
    """
    X, B, T = _check_common(value_fn, candidates, total_budget, max_budget)
    _check_epsilon_arg(epsilon, epsilon_percentile)
    ledger = _Ledger(value_fn, B, T, on_evaluate, positive=True)
    centers = _centers(X, True, _first_pick(X.shape[0], seed), epsilon, epsilon_percentile)
    for _ in range(min(B // T, X.shape[0])):
        i = int(centers.ask().config["index"])
        ledger.learn(i, T)
        _tell(centers, ledger, i)
    return ledger.result(centers.last_epsilon)


def adacent(
    value_fn: ValueFn,
    candidates: np.ndarray,
    total_budget: int,
    max_budget: int,
    *,
    p: int = 25,
    predictor: str = "tail",
    tail_fraction: float = 0.3,
    seed: int | None = None,
    on_evaluate: OnEvaluate | None = None,
) -> UVPResult:
    """AdaCent (Bateni et al., Alg. 7).

    Each round adds ``p`` greedy k-centers (Alg. 1, seeded with all earlier centers) to the
    active pool, then for ``t = 1..T`` advances every active configuration by one unit and prunes
    those whose prediction of ``A(x, T)`` is below the best ``H_last`` in the pool. Rounds repeat
    until ``B`` is spent (or every candidate is used and trained out).

    With ``predictor="last_slope"`` (PRED, Alg. 6) and concave curves (Assumption 3.10) this is
    a ``(1 - 2 eps r_k*)``-approximation (Thm. 3.14) when ``p`` divides ``floor(B/T)``: then the
    first ``floor(B/T)`` greedy centers are all selected in rounds that complete within ``B``.
    ``predictor="tail"`` (default) is the practical refinement used in the paper's experiments.

    Args:
        p: centers per round (int >= 1; 25 in the paper's experiments).
        predictor: ``"tail"`` (least squares on the last ``tail_fraction`` of the envelope) or
            ``"last_slope"`` (Alg. 6).
        tail_fraction: fraction of the history the tail fit uses (0.3 in the paper).
        (other arguments as in :func:`fullcent`)
    """
    X, B, T = _check_common(value_fn, candidates, total_budget, max_budget)
    p = check_int("p", p, low=1)
    _check_predictor(predictor, tail_fraction)
    ledger = _Ledger(value_fn, B, T, on_evaluate, positive=False)
    n = X.shape[0]
    centers = _centers(X, enhanced=False, first=_first_pick(n, seed))
    active: list[int] = []
    while not ledger.exhausted:
        n_new = min(p, n - len(ledger.order))
        if n_new == 0 and all(ledger.depth(x) >= T for x in active):
            break
        for _ in range(n_new):  # Alg. 7 line 4: p new centers by greedy k-center (Alg. 1)
            i = int(centers.ask().config["index"])
            centers.tell(i, {"index": i}, status="running")
            ledger.order.append(i)
            active.append(i)
        active = _step_and_prune(ledger, active, 1, predictor, tail_fraction)
    return ledger.result()


def enhanced_adacent(
    value_fn: ValueFn,
    candidates: np.ndarray,
    total_budget: int,
    max_budget: int,
    *,
    p: int = 25,
    epsilon: float | str = "auto",
    epsilon_percentile: float = 95.0,
    delta: float = 0.1,
    predictor: str = "tail",
    tail_fraction: float = 0.3,
    seed: int | None = None,
    on_evaluate: OnEvaluate | None = None,
) -> UVPResult:
    """Enhanced-AdaCent (Bateni et al., Alg. 8). Values must be > 0.

    Each round makes ``p`` Enhanced-KCenter picks (Alg. 4), each explored right away to
    ``T_explore = max(1, floor(delta * T))`` (so later picks of the round see its value), adds
    them to the active pool and runs AdaCent's stepping and pruning for
    ``t = T_explore + 1 .. T``. Rounds repeat until ``B`` is spent.

    Args:
        delta: exploration fraction in ``(0, 1)`` (0.1 in the paper). ``T_explore`` is at least 1
            so that every pick yields a value for the enhancement factors.
        (``p``, ``predictor``, ``tail_fraction`` as in :func:`adacent`; ``epsilon``,
        ``epsilon_percentile`` as in :func:`enhanced_fullcent`; others as in :func:`fullcent`)
    """
    X, B, T = _check_common(value_fn, candidates, total_budget, max_budget)
    p = check_int("p", p, low=1)
    _check_predictor(predictor, tail_fraction)
    _check_epsilon_arg(epsilon, epsilon_percentile)
    t_explore = max(1, int(math.floor(check_delta(delta) * T)))
    ledger = _Ledger(value_fn, B, T, on_evaluate, positive=True)
    n = X.shape[0]
    centers = _centers(X, True, _first_pick(n, seed), epsilon, epsilon_percentile)
    active: list[int] = []
    while not ledger.exhausted:
        new: list[int] = []
        for _ in range(p):  # Alg. 8 lines 4-5: p Enhanced-KCenter picks, each probed to T_explore
            if ledger.exhausted or len(ledger.order) >= n:
                break
            i = int(centers.ask().config["index"])
            new.append(i)
            ledger.learn(i, t_explore)
            _tell(centers, ledger, i)
        if not new and all(ledger.depth(x) >= T for x in active):
            break
        active += new
        trained = list(active)
        active = _step_and_prune(ledger, active, t_explore + 1, predictor, tail_fraction)
        for x in trained:  # deeper histories: H_last and epsilon of the next picks
            _tell(centers, ledger, x)
    return ledger.result(centers.last_epsilon)

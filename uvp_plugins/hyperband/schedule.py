"""Hyperband bracket arithmetic with integers only (Li et al., 2018, Alg. 1; Brandt et al., Alg. 2).

For a maximum budget ``R``, reduction factor ``eta`` and minimum budget ``r_min``:

* ``s_max`` is the largest ``s`` with ``r_min * eta**s <= R`` (``floor(log_eta(R / r_min))``
  computed with integers: the float ``math.log(243, 3)`` is ``4.999...`` and would lose a bracket,
  see the ID-HB reference facts in ``shared/papers/README.md``);
* ``B = (s_max + 1) * R`` and bracket ``s`` starts ``n_s = ceil((s_max + 1) * eta**s / (s + 1))``
  configurations (``ceil(B / R * eta**s / (s + 1))`` of Li et al.);
* rung ``i`` of bracket ``s`` holds ``n_{s,i} = floor(n_s / eta**i)`` configurations (Successive
  Halving keeps ``k = floor(n_i / eta)`` of them) at budget ``r_{s,i}``.

**Rounding rule** for budgets that are not powers of ``eta``: ``r_{s,i} = floor(R / eta**(s - i))``
(integer division). The last rung of every bracket is exactly ``R``, every rung is at least
``r_min``, and budgets are *stable under deepening*: bracket ``s`` at ``R`` and bracket ``s + 1``
at ``eta * R`` have the same rung budgets (``floor(eta R / eta**(s+1-i)) = floor(R / eta**(s-i))``),
so an Iterative-Deepening bracket keeps its minimum budget and gains exactly one rung at
``eta * R``. When ``R = r_min * eta**k`` this is Li et al.'s ``r_s = R eta^{-s}`` exactly.

Brackets are listed in Li et al.'s order, largest ``s`` (most configurations, smallest budget)
first; bracket *position* ``j`` has ``s = s_max - j``. Deepening appends the new ``s = 0``
bracket at the end, so positions are stable across deepening.
"""

from __future__ import annotations

from dataclasses import dataclass

from uvp_plugins.validation import check_int

__all__ = ["HyperbandSchedule", "BracketSpec", "RungSpec", "integer_log", "check_hyperband_args"]


def check_hyperband_args(
    max_budget: object, eta: object, min_budget: object
) -> tuple[int, int, int]:
    """Validate ``(max_budget, eta, min_budget)``; returns them as ints.

    Raises:
        TypeError: a value is not an integer.
        ValueError: ``eta < 2``, ``min_budget < 1`` or ``max_budget < eta * min_budget`` (a
            Hyperband needs at least two rungs: ``s_max >= 1``).
    """
    eta_i = check_int("eta", eta, low=2)
    min_i = check_int("min_budget", min_budget, low=1)
    max_i = check_int("max_budget", max_budget, low=1)
    if max_i < eta_i * min_i:
        raise ValueError(
            f"max_budget must be >= eta * min_budget = {eta_i * min_i} (at least two rungs), "
            f"got max_budget={max_i}"
        )
    return max_i, eta_i, min_i


def integer_log(x: int, base: int) -> int:
    """Largest ``s >= 0`` with ``base**s <= x`` (``floor(log_base(x))`` without floats), ``x >= 1``."""
    if x < 1 or base < 2:
        raise ValueError(f"integer_log needs x >= 1 and base >= 2, got x={x}, base={base}")
    s, p = 0, base
    while p <= x:
        s += 1
        p *= base
    return s


@dataclass(frozen=True)
class RungSpec:
    """Rung ``index`` of a bracket: ``n`` configurations evaluated at ``budget``."""

    index: int
    n: int
    budget: int


@dataclass(frozen=True)
class BracketSpec:
    """Bracket at position ``position`` (``s = s_max - position``) with pool size ``n``."""

    position: int
    s: int
    n: int
    rungs: tuple[RungSpec, ...]

    @property
    def min_budget(self) -> int:
        return self.rungs[0].budget

    @property
    def cost(self) -> int:
        """Full-charge cost of the bracket: ``sum_i n_i * r_i``."""
        return sum(r.n * r.budget for r in self.rungs)

    @property
    def continuation_cost(self) -> int:
        """Cost when every promoted configuration continues training: ``sum_i n_i (r_i - r_{i-1})``."""
        prev = 0
        total = 0
        for r in self.rungs:
            total += r.n * (r.budget - prev)
            prev = r.budget
        return total


class HyperbandSchedule:
    """The brackets of one Hyperband run (Li et al., Alg. 1) in integer arithmetic.

    Args:
        max_budget: ``R``, the largest budget one configuration receives (int >= eta * min_budget).
        eta: the reduction factor (int >= 2).
        min_budget: the smallest budget (int >= 1).

    Example:
        >>> sched = HyperbandSchedule(81, eta=3)
        >>> sched.s_max, [b.n for b in sched.brackets]
        (4, [81, 34, 15, 8, 5])
        >>> [(r.n, r.budget) for r in sched.brackets[1].rungs]
        [(34, 3), (11, 9), (3, 27), (1, 81)]
    """

    def __init__(self, max_budget: int, eta: int = 3, min_budget: int = 1) -> None:
        self.max_budget, self.eta, self.min_budget = check_hyperband_args(
            max_budget, eta, min_budget
        )
        self.s_max = integer_log(self.max_budget // self.min_budget, self.eta)
        self.brackets: tuple[BracketSpec, ...] = tuple(
            self._bracket(pos) for pos in range(self.s_max + 1)
        )

    def __repr__(self) -> str:
        return (
            f"HyperbandSchedule(max_budget={self.max_budget}, eta={self.eta}, "
            f"min_budget={self.min_budget}, s_max={self.s_max})"
        )

    @property
    def bracket_budget(self) -> int:
        """``B = (s_max + 1) R``, Li et al.'s per-bracket budget."""
        return (self.s_max + 1) * self.max_budget

    def pool_size(self, s: int) -> int:
        """``n_s = ceil((s_max + 1) eta**s / (s + 1))``."""
        self._check_s(s)
        num = (self.s_max + 1) * self.eta**s
        return -(-num // (s + 1))

    def budget(self, s: int, i: int) -> int:
        """``r_{s,i} = floor(R / eta**(s - i))`` (the documented rounding rule)."""
        self._check_s(s)
        if not 0 <= i <= s:
            raise ValueError(f"rung index i must be in [0, {s}] for bracket s={s}, got {i}")
        return self.max_budget // self.eta ** (s - i)

    def _check_s(self, s: int) -> None:
        if not 0 <= s <= self.s_max:
            raise ValueError(f"bracket s must be in [0, {self.s_max}], got {s}")

    def _bracket(self, position: int) -> BracketSpec:
        s = self.s_max - position
        n = self.pool_size(s)
        rungs = tuple(RungSpec(i, n // self.eta**i, self.budget(s, i)) for i in range(s + 1))
        return BracketSpec(position, s, n, rungs)

    @property
    def total_budget(self) -> int:
        """Full-charge cost of the whole run (each evaluation at ``r`` costs ``r``)."""
        return sum(b.cost for b in self.brackets)

    @property
    def continuation_budget(self) -> int:
        """Cost of the whole run when promoted configurations continue from checkpoints."""
        return sum(b.continuation_cost for b in self.brackets)

    @property
    def n_configs(self) -> int:
        """Number of configurations sampled by the whole run."""
        return sum(b.n for b in self.brackets)

    @property
    def n_evaluations(self) -> int:
        return sum(r.n for b in self.brackets for r in b.rungs)

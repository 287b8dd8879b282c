"""One Iterative-Deepening Successive-Halving bracket: its pool, rungs and promotion rules.

Promotion rules at rung ``i`` of a bracket with pool size ``n`` keep
``k = floor(n / eta**(i+1))`` configurations (``= floor(n_i / eta)`` of Li et al.), chosen per
variant exactly as in Brandt et al., *Iterative Deepening Hyperband* (Alg. 3-5, and the authors'
reference code ``idhb.py`` — see ``shared/papers/README.md``):

* ``"discarding"`` (dID-SH, Alg. 4): rank the rung's members only; earlier results are reused (no
  re-evaluation), but earlier promotions may be revised. On the same pool this is Successive
  Halving from scratch.
* ``"preserving"`` (pID-SH, Alg. 5): rank the rung's members *plus* every configuration of the
  bracket that already has a result at this rung from an earlier run (configurations discarded in
  the continued run may come back).
* ``"efficient"`` (eID-SH, Alg. 3): configurations already promoted to rung ``i + 1`` earlier are
  promoted again without ranking; the remaining ``k - #auto`` places go to the best of the other
  members. Decisions are never revised, so the total cost equals one Hyperband run at the new
  ``R``.

Ranking is by loss, ties broken by the position in the bracket's pool (sampling order), so the
decisions do not depend on the order in which results arrive. Failed configurations never enter
a ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["VARIANTS", "BracketState", "select_promotions"]

#: the three ID-HB variants (Brandt et al., Sec. 5.1-5.3)
VARIANTS = ("efficient", "preserving", "discarding")


def select_promotions(
    variant: str,
    k: int,
    members: Sequence[int],
    extra: Sequence[int],
    promoted_before: Collection[int],
    rank_key: Callable[[int], Any],
) -> list[int]:
    """Configurations promoted from a completed rung.

    Args:
        variant: one of :data:`VARIANTS`.
        k: number of places in the next rung.
        members: the rung's members that have a result at this rung (failed ones removed).
        extra: other configurations of the bracket with a result at this rung (used by
            ``"preserving"`` only).
        promoted_before: configurations that already reached the next rung in an earlier run
            (used by ``"efficient"`` only).
        rank_key: sort key, smaller is better.

    Returns:
        The promoted configurations (at most ``k``), best first.
    """
    if k <= 0:
        return []
    if variant == "discarding":
        return sorted(members, key=rank_key)[:k]
    if variant == "preserving":
        seen = set(members)
        pool = list(members) + [c for c in extra if c not in seen]
        return sorted(pool, key=rank_key)[:k]
    if variant == "efficient":
        auto = sorted((c for c in members if c in promoted_before), key=rank_key)[:k]
        chosen = set(auto)
        rest = sorted((c for c in members if c not in chosen), key=rank_key)
        return auto + rest[: k - len(auto)]
    raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


@dataclass
class BracketState:
    """Mutable state of bracket ``position`` (``s = s_max - position`` at the current ``R``).

    Attributes:
        position: the bracket's place in Hyperband's order (0 = most configurations).
        rng: the bracket's own random stream (configurations of this bracket are sampled from it,
            so a fresh Hyperband at ``eta * R`` with the same seed draws the same configurations
            first).
        pool: configuration ids in sampling order (old ones first after deepening).
        failed: configurations whose evaluation failed; they never enter a ranking again.
        n_target: pool size ``n_s`` at the current ``R``.
        s: index of the last rung at the current ``R``.
        opened: the bracket has started at the current ``R`` (or an earlier one).
        rung: the active rung.
        members: ``members[i]`` = configurations in rung ``i`` at the current ``R`` (``i <= rung``).
        done: the last rung is complete at the current ``R``.
        ready_from: scan cursor into ``members[rung]``: every member before it is settled or
            has a pending job (a member never goes back to "ready", so the cursor only moves
            forward; it makes handing out the rung's jobs linear instead of quadratic).
        settled_from: scan cursor into ``members[rung]``: every member before it is settled
            (has its result or failed). Both cursors are derived: not part of the state.
    """

    position: int
    rng: np.random.Generator
    pool: list[int] = field(default_factory=list)
    failed: set[int] = field(default_factory=set)
    n_target: int = 0
    s: int = 0
    opened: bool = False
    rung: int = 0
    members: list[list[int]] = field(default_factory=list)
    done: bool = False
    ready_from: int = field(default=0, compare=False)
    settled_from: int = field(default=0, compare=False)

    @property
    def free_slots(self) -> int:
        """New configurations still to be added to the pool at the current ``R``."""
        return max(0, self.n_target - len(self.pool)) if self.opened and self.rung == 0 else 0

    def restart(self) -> None:
        """Start the rungs again at rung 0 with the whole pool (after opening or deepening)."""
        self.rung = 0
        self.members = [list(self.pool)]
        self.done = False
        self.ready_from = self.settled_from = 0

    def enter_rung(self, promoted: list[int]) -> None:
        """Make ``promoted`` the members of the next rung and make it the active one."""
        self.members.append(promoted)
        self.rung += 1
        self.ready_from = self.settled_from = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "rng": self.rng.bit_generator.state,
            "pool": list(self.pool),
            "failed": sorted(self.failed),
            "n_target": self.n_target,
            "s": self.s,
            "opened": self.opened,
            "rung": self.rung,
            "members": [list(m) for m in self.members],
            "done": self.done,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BracketState:
        rng = np.random.default_rng()
        rng.bit_generator.state = d["rng"]
        return cls(
            position=int(d["position"]),
            rng=rng,
            pool=[int(c) for c in d["pool"]],
            failed={int(c) for c in d["failed"]},
            n_target=int(d["n_target"]),
            s=int(d["s"]),
            opened=bool(d["opened"]),
            rung=int(d["rung"]),
            members=[[int(c) for c in m] for m in d["members"]],
            done=bool(d["done"]),
        )

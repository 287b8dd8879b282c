"""The deepening ladder of Iterative-Deepening Hyperband: the maximum budgets ``R`` one run passes.

ID-HB deepens by ``R <- eta * R`` (Brandt et al., Alg. 1), so a run asked to reach budgets
``[R_0, R_1, ...]`` passes every intermediate power: ``[9, 81]`` with ``eta = 3`` is the ladder
``9, 27, 81``. Exact integer arithmetic throughout (a float logarithm loses levels, see
:func:`~uvp_plugins.hyperband.schedule.integer_log`).

Example:
    >>> deepening_ladder([9, 81], eta=3)
    [9, 27, 81]
    >>> deepening_ladder(27, eta=3, start=9)   # a run saved at R = 9, asked for 27
    [9, 27]
    >>> power_of(81, 3), power_of(18, 3)
    (4, None)
"""

from __future__ import annotations

from collections.abc import Sequence

from uvp_plugins.validation import check_int

__all__ = ["deepening_ladder", "power_of"]


def power_of(ratio: int, eta: int) -> int | None:
    """``k >= 0`` with ``ratio == eta**k``, else ``None`` (exact integer arithmetic).

    Example:
        >>> power_of(1, 2), power_of(8, 2), power_of(12, 2)
        (0, 3, None)
    """
    if ratio < 1:
        return None
    k = 0
    while ratio > 1 and ratio % eta == 0:
        ratio //= eta
        k += 1
    return k if ratio == 1 else None


def deepening_ladder(
    max_budget: int | Sequence[int],
    eta: int,
    start: int | None = None,
    *,
    name: str = "max_budget",
    eta_name: str = "eta",
) -> list[int]:
    """The maximum budgets ``R`` a run passes, one Hyperband level each.

    Args:
        max_budget: an int, or an increasing sequence whose consecutive ratios are powers of
            ``eta`` (intermediate levels are inserted).
        eta: the reduction factor (int >= 2).
        start: the level a resumed run is at: the ladder then starts there and keeps only the
            larger requested values.
        name: how error messages name ``max_budget`` (``"max_t"`` in the Ray adapter).
        eta_name: how error messages name ``eta`` (``"reduction_factor"`` in the Ray adapter).

    Raises:
        TypeError: a budget or ``eta`` is not an int (NaN included).
        ValueError: an empty sequence, a first budget below ``eta``, or a step that is not
            ``eta**k`` with ``k >= 1``.
    """
    e = check_int(eta_name, eta, low=2)
    if isinstance(max_budget, bool):
        raise TypeError(f"{name} must be an int >= {e} or an increasing sequence of ints")
    values = [max_budget] if not isinstance(max_budget, Sequence) else list(max_budget)
    if not values:
        raise ValueError(f"{name} must not be empty")
    ints = [check_int(name, v, low=1) for v in values]
    if start is None:
        if ints[0] < e:
            raise ValueError(
                f"{name} must be >= {eta_name}={e} (one Hyperband rung needs budget R >= eta), "
                f"got {name}={ints[0]}"
            )
        ladder = [ints[0]]
        rest = ints[1:]
    else:
        ladder = [check_int("start", start, low=1)]
        rest = [v for v in ints if v > ladder[0]]
    for v in rest:
        prev = ladder[-1]
        k = power_of(v // prev, e) if v % prev == 0 else None
        if v <= prev or k is None or k == 0:
            raise ValueError(
                f"{name} values must grow by powers of {eta_name}={e} (ID-HB deepens by "
                f"R <- eta * R): {v} is not {prev} * {e}**k for an integer k >= 1"
            )
        ladder.extend([prev * e**j for j in range(1, k + 1)])
    return ladder

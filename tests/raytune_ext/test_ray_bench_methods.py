"""The Ray benchmark methods charge the harness ledger and stop when the budget is used up."""

from __future__ import annotations

import pytest

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.methods.ray_methods import ray_idhb
from uvp_plugins.bench.problems.synthetic import LCSynthetic
from uvp_plugins.bench.registry import get_method
from uvp_plugins.hyperband import HyperbandSchedule

pytestmark = pytest.mark.ray


class ExpensiveLC(LCSynthetic):
    """Same curves, but the harness must not precompute them: the problem goes to the workers."""

    curve_is_cheap = False


def test_ray_idhb_consumes_the_core_continuation_ledger(ray_cluster: str) -> None:
    ctx = RunContext(LCSynthetic("0", max_budget=9), total_budget=1000, seed=3)
    sched = ray_idhb(ctx)
    hb = sched.core
    assert hb.finished and hb.max_budget == 9 and hb.n_deepenings == 1
    # eID after deepening costs one Hyperband at 9 (full charge); Ray trained the continuation
    # cost, and the harness charged exactly what Ray trained.
    assert hb.ledger.full_charge == HyperbandSchedule(9, 3).total_budget
    assert ctx.ledger.spent == hb.ledger.continuation == sched.consumed
    assert not ctx.exhausted
    assert get_method("ray-idhb").kind == "ours"


@pytest.mark.parametrize(
    ("method", "problem"),
    [
        ("ray-asha", LCSynthetic("1", max_budget=9)),
        ("ray-hyperband", ExpensiveLC("2", max_budget=9)),
        ("ray-pred", LCSynthetic("0", max_budget=9)),
        ("ray-median", LCSynthetic("2", max_budget=9)),
    ],
)
def test_native_ray_methods_stop_at_the_budget(ray_cluster: str, method: str, problem) -> None:
    ctx = RunContext(problem, total_budget=40, seed=0)
    get_method(method).run(ctx)
    assert ctx.exhausted and ctx.ledger.spent == pytest.approx(40)
    assert ctx.ledger.curve and ctx.ledger.curve[-1].spent <= 40
    assert get_method(method).kind == ("ours" if method == "ray-pred" else "native")

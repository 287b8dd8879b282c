"""The Ray benchmark methods charge the harness ledger and stop when the budget is used up."""

from __future__ import annotations

from typing import Any

import pytest

from uvp_plugins.bench.context import RunContext
from uvp_plugins.bench.methods.ray_methods import ray_idhb
from uvp_plugins.bench.problems.synthetic import LCSynthetic
from uvp_plugins.bench.registry import get_method
from uvp_plugins.hyperband import HyperbandSchedule
from uvp_plugins.space import config_key

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
        ("ray-eadacent-pred", LCSynthetic("1", max_budget=9)),
    ],
)
def test_native_ray_methods_stop_at_the_budget(ray_cluster: str, method: str, problem) -> None:
    ctx = RunContext(problem, total_budget=40, seed=0)
    get_method(method).run(ctx)
    assert ctx.exhausted and ctx.ledger.spent == pytest.approx(40)
    assert ctx.ledger.curve and ctx.ledger.curve[-1].spent <= 40
    assert get_method(method).kind == ("ours" if method in ("ray-pred", "ray-eadacent-pred") else "native")


class RecordingContext(RunContext):
    """Remembers the configuration each trial was charged for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.configs: dict[Any, dict[str, Any]] = {}

    def evaluate(self, trial: Any, config: Any, budget: int, restart: bool = False) -> float:
        self.configs.setdefault(trial, dict(config))
        return super().evaluate(trial, config, budget, restart)


def test_ray_eadacent_pred_trials_are_the_searchers_configurations(ray_cluster: str) -> None:
    ctx = RecordingContext(LCSynthetic("0", max_budget=9), total_budget=60, seed=1)
    get_method("ray-eadacent-pred").run(ctx)
    space = ctx.problem.space
    keys = {config_key(c, space.names) for c in ctx.configs.values()}
    assert len(keys) == len(ctx.configs) > 2  # one configuration per trial, none repeated
    for c in ctx.configs.values():  # configurations of the problem's space, typed as it types them
        assert set(c) == set(space.names)
        assert all(c[p.name] == p.validate(c[p.name]) for p in space.params)
    drawn = {config_key(c, space.names) for c in space.sample(50, ctx.rng(7919))}
    assert not keys & drawn  # not the harness's up-front random draws

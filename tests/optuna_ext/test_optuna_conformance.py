"""Optuna's own sampler conformance suite, run against EnhancedAdaCentSampler and MaxUCBCashSampler."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from optuna.samplers import BaseSampler
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    RelativeSamplerTestCase,
    SingleOnlySamplerTestCase,
)

from optuna_ext import EnhancedAdaCentSampler, MaxUCBCashSampler

pytestmark = pytest.mark.optuna


class TestEnhancedAdaCentConformance(
    BasicSamplerTestCase, RelativeSamplerTestCase, SingleOnlySamplerTestCase
):
    @pytest.fixture
    def sampler(self) -> Callable[[], BaseSampler]:
        return lambda: EnhancedAdaCentSampler(seed=0)


class TestPlainAdaCentConformance(RelativeSamplerTestCase, SingleOnlySamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Callable[[], BaseSampler]:
        return lambda: EnhancedAdaCentSampler(seed=1, n_candidates=64, enhanced=False)


class TestMaxUCBCashConformance(
    BasicSamplerTestCase, RelativeSamplerTestCase, SingleOnlySamplerTestCase
):
    @pytest.fixture
    def sampler(self) -> Callable[[], BaseSampler]:
        return lambda: MaxUCBCashSampler(seed=0)


class TestMaxUCBCashBurnInConformance(BasicSamplerTestCase, SingleOnlySamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Callable[[], BaseSampler]:
        return lambda: MaxUCBCashSampler(burn_in=2, seed=1)

"""Optuna's own sampler conformance suite, run against EnhancedAdaCentSampler."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from optuna.samplers import BaseSampler
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    RelativeSamplerTestCase,
    SingleOnlySamplerTestCase,
)

from optuna_ext import EnhancedAdaCentSampler

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

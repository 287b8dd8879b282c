"""The guided sampler's targets: what every trial says about its final value (issue 29)."""

from __future__ import annotations

import numpy as np

from uvp_plugins.adacent.targets import final_targets


def _trials() -> list:
    # two complete trials (the pruner let the best through) and five pruned at step 2
    complete = [
        ({1: 0.80, 2: 0.90, 10: 0.95}, "complete", 0.95),
        ({1: 0.75, 2: 0.85, 10: 0.93}, "complete", 0.93),
    ]
    pruned = [({1: v - 0.05, 2: v}, "pruned", None) for v in (0.2, 0.4, 0.5, 0.6, 0.7)]
    return complete + pruned


def test_minimising_mirrors_maximising() -> None:
    """The targets are oriented higher-is-better: a minimised study's negated values give the
    same targets."""
    flipped = [
        ({s: -v for s, v in c.items()}, status, None if f is None else -f)
        for c, status, f in _trials()
    ]
    up = final_targets(_trials(), max_resource=10, delta=0.2)[0]
    down = final_targets(flipped, max_resource=10, delta=0.2, maximize=False)[0]
    assert np.allclose(up, down)

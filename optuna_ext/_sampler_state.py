"""Per-process state of :class:`~optuna_ext.EnhancedAdaCentSampler`, derived from storage.

Nothing here decides anything on its own: every object is a cache of what the study's storage
says (trials never change once finished, taken configurations never become free), so a new
process that rebuilds them from storage makes the same choices.

* :class:`TrialEntry` - one trial as a center: configuration key, embedding row, value at the
  exploration depth.
* :class:`Centers` - the centers of one decision.
* :class:`FinishedCenters` - the finished trials' contribution, accumulated once per process.
* :class:`Mesh` - one candidate set with its configuration index, availability mask and the
  incremental candidate-to-trial distances (:class:`uvp_plugins.adacent.center_distances.CenterDistances`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from optuna.trial import TrialState

from uvp_plugins.adacent.center_distances import CenterDistances
from uvp_plugins.space import config_key

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

__all__ = ["TrialEntry", "Centers", "FinishedCenters", "Mesh"]


class TrialEntry(NamedTuple):
    key: tuple[Any, ...] | None
    row: np.ndarray | None
    value: float


class Centers:
    """Centers of one decision: rows by trial id, their ids and raw values in trial order, the
    configuration keys taken by any trial, and the number of pending workers."""

    __slots__ = ("rows", "ids", "raw", "numbers", "taken", "pending")

    def __init__(
        self,
        rows: dict[int, np.ndarray],
        ids: list[int],
        raw: list[float],
        numbers: list[int],
        taken: set[tuple[Any, ...]],
        pending: int,
    ) -> None:
        self.rows, self.ids, self.raw, self.numbers = rows, ids, raw, numbers
        self.taken, self.pending = taken, pending


class FinishedCenters:
    """What the finished trials of a study contribute to a decision, accumulated per process
    (finished trials never change): their rows, raw values at the exploration depth, numbers,
    taken configuration keys, and the largest step a COMPLETE trial reported. Rebuilt from the
    kept trials when the exploration depth changes (``T`` inferred from the trials)."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.trials: list[FrozenTrial] = []
        self.max_complete_step: int | None = None
        self.depth: int | None = None
        self._described = 0
        self._reset()

    def _reset(self) -> None:
        self.rows: dict[int, np.ndarray] = {}
        self.ids: list[int] = []
        self.raw: list[float] = []
        self.numbers: list[int] = []
        self.taken: set[tuple[Any, ...]] = set()
        self._described = 0

    def add_trials(self, trials: Sequence[FrozenTrial]) -> None:
        for t in trials:
            self.seen.add(t._trial_id)
            self.trials.append(t)
            if t.state == TrialState.COMPLETE and t.last_step:
                self.max_complete_step = max(self.max_complete_step or 0, t.last_step)

    def update(self, depth: int | None, describe: Any) -> None:
        """Describe the trials added since the last call (all of them if ``depth`` changed)."""
        if depth != self.depth:
            self.depth = depth
            self._reset()
        for t in self.trials[self._described :]:
            entry: TrialEntry = describe(t)
            if entry.key is None or entry.row is None:
                continue
            self.taken.add(entry.key)
            if t.state == TrialState.FAIL:
                continue
            self.rows[t._trial_id] = entry.row
            self.ids.append(t._trial_id)
            self.raw.append(entry.value)
            self.numbers.append(t.number)
        self._described = len(self.trials)


class Mesh:
    """One candidate set: configurations, their embedding, an index from configuration key to
    candidate indices, and the incremental center distances
    (:class:`uvp_plugins.adacent.center_distances.CenterDistances`, keyed by trial id)."""

    def __init__(
        self,
        configs: list[dict[str, Any]],
        Z: np.ndarray,
        names: Sequence[str],
        key: str,
        distances: CenterDistances | None = None,
    ) -> None:
        self.configs = configs
        self.Z = Z
        self.key = key
        self.names = list(names)
        self.index: dict[tuple[Any, ...], list[int]] = {}
        for i, c in enumerate(configs):
            self.index.setdefault(config_key(c, names), []).append(i)
        self.distances = CenterDistances(Z) if distances is None else distances
        self._free = np.ones(len(configs), dtype=bool)
        self._marked: set[tuple[Any, ...]] = set()

    def available(self, taken: set[tuple[Any, ...]]) -> np.ndarray:
        """Mask of the candidates whose configuration no trial has taken (a copy). A taken
        configuration stays taken (trials are never removed), so the mask is kept up to date
        incrementally."""
        for key in taken - self._marked:
            for i in self.index.get(key, ()):
                self._free[i] = False
            self._marked.add(key)
        return self._free.copy()

    def is_free(self, i: int) -> bool:
        """Whether candidate ``i`` was free at the last :meth:`available` call (no trial had
        taken its configuration)."""
        return bool(self._free[i])

    def grown(self, configs: list[dict[str, Any]], Z: np.ndarray, key: str) -> Mesh:
        """The mesh of ``configs`` (which extend this mesh's configurations), reusing the
        stored center distances for the shared candidates."""
        n = len(self.configs)
        prefix = [config_key(c, self.names) for c in configs[:n]]
        if prefix != [config_key(c, self.names) for c in self.configs]:
            return Mesh(configs, Z, self.names, key)
        return Mesh(configs, Z, self.names, key, self.distances.with_more_candidates(Z[n:]))

"""Progress of runs in worker processes, shown as one tqdm bar in the parent.

A worker reports how far its current run is (a fraction of its budget) through a queue the
parent hands to every worker when the pool starts (:func:`init_worker`); :class:`ProgressBar`
in the parent adds the fractions of the running runs to the number of finished ones, so the bar
moves while long runs train, not only when a run ends. Reports are throttled (one per
:data:`MIN_INTERVAL` seconds per worker); outside a worker (no queue) reporting does nothing.

Example (in a worker)::

    from uvp_plugins.bench import progress
    progress.update(spent / total)
"""

from __future__ import annotations

import queue as queue_module
import sys
import time
from typing import Any

__all__ = ["init_worker", "begin", "update", "ProgressBar", "MIN_INTERVAL"]

#: seconds between two reports of one worker
MIN_INTERVAL = 0.5

_QUEUE: Any = None
_LABEL: str | None = None
_LAST = 0.0


def init_worker(channel: Any) -> None:
    """Pool initializer: reports of this process go to ``channel`` (a multiprocessing queue)."""
    global _QUEUE
    _QUEUE = channel


def begin(label: str) -> None:
    """The run ``label`` starts in this process."""
    global _LABEL, _LAST
    _LABEL = label
    _LAST = 0.0
    update(0.0, force=True)


def update(fraction: float, force: bool = False) -> None:
    """The current run is ``fraction`` (0..1) done; sent at most every :data:`MIN_INTERVAL` s."""
    global _LAST
    if _QUEUE is None or _LABEL is None:
        return
    now = time.monotonic()
    if not force and now - _LAST < MIN_INTERVAL:
        return
    _LAST = now
    try:
        _QUEUE.put_nowait((_LABEL, min(1.0, max(0.0, float(fraction)))))
    except Exception:  # pragma: no cover - a full or closed queue never stops a run
        pass


class ProgressBar:
    """A tqdm bar over ``total`` runs that counts running runs by their reported fraction.

    Args:
        total: runs to do.
        desc: the bar's label.
        channel: the queue workers report to (None: the bar moves when runs finish only).
        enabled: draw the bar (False: :meth:`write` prints plain lines).
    """

    def __init__(self, total: int, desc: str, channel: Any = None, enabled: bool = True) -> None:
        self.channel = channel
        self.done = 0
        self.running: dict[str, float] = {}
        self._bar: Any = None
        self._interactive = sys.stderr.isatty()
        #: seconds between two redraws: a terminal redraws in place; a log gets a line every 10 s
        self._every = 0.5 if self._interactive else 10.0
        self._drawn = 0.0
        if enabled:
            from tqdm.auto import tqdm

            interactive = self._interactive
            self._bar = tqdm(
                total=total, desc=desc, unit="run", file=sys.stderr, dynamic_ncols=True,
                mininterval=0.5 if interactive else 10.0,
                bar_format="{desc} {percentage:3.0f}%|{bar}| {n:.1f}/{total} runs "
                "[{elapsed}<{remaining}]{postfix}",
            )

    def poll(self) -> None:
        """Read the workers' reports and redraw."""
        if self.channel is not None:
            while True:
                try:
                    label, fraction = self.channel.get_nowait()
                except (queue_module.Empty, EOFError, OSError):
                    break
                self.running[label] = fraction
        self._draw()

    def finished(self, label: str) -> None:
        self.running.pop(label, None)
        self.done += 1
        self._draw(force=self._interactive)

    def _draw(self, force: bool = False) -> None:
        if self._bar is None:
            return
        now = time.monotonic()
        if not force and now - self._drawn < self._every:
            return
        self._drawn = now
        self._bar.n = self.done + sum(self.running.values())
        active = ", ".join(f"{k} {100 * v:.0f}%" for k, v in sorted(self.running.items()))
        self._bar.set_postfix_str(active, refresh=False)
        self._bar.refresh()

    def write(self, message: str) -> None:
        """A line above the bar (or a plain line on stderr without one)."""
        if self._bar is not None:
            self._bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.n = self.done
            self._bar.refresh()
            self._bar.close()

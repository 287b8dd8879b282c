"""What the Ray ID-HB scheduler must never lose, each change journaled before it has an effect.

:class:`RunState` holds the core (:class:`~uvp_plugins.hyperband.IterativeDeepeningHyperband`),
the ladder of maximum budgets and the level reached, the trials that left, and what every trial
last reported (progress, latest checkpoint, metrics). Every change goes through a method that
applies it and appends a record to the :class:`~raytune_ext._journal.Journal`; the records of one
scheduler hook are appended at once when the hook returns (:meth:`RunState.flush`),
before Ray acts on the hook's decisions. :meth:`RunState.load` rebuilds the state from the
snapshot and replays the records: the core is deterministic, so replaying its calls in order
gives back the same jobs (checked: every replayed job must carry its journaled id).

Records (JSON arrays, one per line, encoded by :func:`raytune_ext._journal.record_line`):

* ``["c", trial, t, iteration, checkpoint, row]`` — a result that took no decision (``t`` is
  ``time_attr``; ``row`` the whole result as Ray gives it to the scheduler, flattened); written
  at once when nothing else of the hook is buffered (the hot path: most results);
* ``["R", trial, t, checkpoint, row]`` — a result that reached a rung budget (``row["done"]`` is
  true when the scheduler stopped the trial with it, as Ray logs it);
* ``["h", trial, row]`` — a result Ray logged without showing it to the scheduler (a stopper
  ended the trial);
* ``["c", trial, t, iteration, checkpoint]`` and ``["r", trial, t, checkpoint, metrics]`` (a rung
  result with the metrics Ray's analysis needs) — the same without the row, written before
  version 3 and still read;
* ``["e", job]`` / ``["n", trial, job]`` — the core's ``ask_existing`` / ``ask_new``;
* ``["t", job, value]`` / ``["f", job]`` — the core's ``tell`` / ``fail``;
* ``["d"]`` deepen, ``["z"]`` the last level is done, ``["x", trial]`` a trial left for good;
* ``["a", trial]`` — Ray added a trial for the first time. The order of these records is the
  order in which new configurations are taken from the trials; a resumed experiment keeps it
  (Ray re-adds restored trials in another order), so that it makes the decisions of the run that
  was never interrupted.

**Rows.** Every result row is in the same record as what the scheduler decided with it, so a
killed driver leaves both or neither. :meth:`RunState.load` collects the rows of every trial -
from the journal's archive of compacted logs and its current log, so rows of earlier runs are
kept - in :attr:`RunState.rows`, from which a resumed experiment completes Ray's per-trial
history (:mod:`raytune_ext._result_logs`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from raytune_ext._journal import Journal, JournalError, record_line
from uvp_plugins.contract import StateFormat
from uvp_plugins.hyperband import IterativeDeepeningHyperband, Job

__all__ = ["RunState", "STATE_FORMAT"]


def _same_snapshot(state: dict[str, Any]) -> dict[str, Any]:
    """Versions 1-3 differ from the next in their log records only (read by every version),
    and 1 lacks ``added`` and ``seen`` (read as empty): the snapshot itself reads as it is."""
    return state


#: the format of the snapshot (:mod:`uvp_plugins.contract`). Versions 1-3 were written with an
#: integer ``"version"`` key instead of the ``"format"`` tag (still read): 1 a state file without
#: journal, 2 the journal, 3 result rows in the records; 4 is 3 under the tag.
STATE_FORMAT = StateFormat(
    "uvp-ray-idhb-scheduler",
    4,
    upgrades={1: _same_snapshot, 2: _same_snapshot, 3: _same_snapshot},
    legacy_key="version",
)
#: record kinds that carry a result row (and where the row is in the record)
_ROW_AT = {"c": 5, "R": 4, "h": 2}
#: snapshot (compact) the journal after this many records: bounds the replay at a restart
COMPACT_EVERY = 20_000


class RunState:
    """The scheduler's durable state (see the module docstring).

    Args:
        hb: the core.
        ladder: the maximum budgets ``R`` of the run, ``hb.max_budget == ladder[level]``.
        params: the scheduler parameters stored with every snapshot (``time_attr``, ``metric``,
            ``mode``, ``reduction_factor``, ``variant``, ``min_t``, ``seed``).
        journal: where changes go; None keeps the state in memory only.
    """

    def __init__(
        self,
        hb: IterativeDeepeningHyperband,
        ladder: list[int],
        params: dict[str, Any],
        journal: Journal | None = None,
    ) -> None:
        self.hb = hb
        self.ladder = list(ladder)
        self.level = 0
        self.done = False
        self.params = dict(params)
        self.time_attr = str(params["time_attr"])
        self.metric = params["metric"]
        self.dead: set[str] = set()
        self.added: list[str] = []  # trial ids in the order Ray first added them
        self.order: dict[str, int] = {}  # trial id -> its index in ``added``
        self.progress: dict[str, float] = {}  # trial -> last time_attr reported
        # trial -> [latest checkpoint, t, training_iteration, metrics of the last rung result]
        self.seen: dict[str, list[Any]] = {}
        self.consumed = 0.0  # time_attr units trained (restarts count again)
        self.journal = journal
        #: the journaled result rows of every trial, oldest first (filled by :meth:`load`, for a
        #: resumed experiment; rows journaled afterwards are not kept in memory)
        self.rows: dict[str, list[dict[str, Any]]] = {}
        self._lines: list[bytes] = []  # the records of the current hook, encoded
        #: the last "R" record of the hook: (its line in _lines, the record)
        self._rung_row: tuple[int, list[Any]] | None = None

    # ------------------------------------------------------------------ journaled changes
    def ask_existing(self) -> Job | None:
        job = self.hb.ask_existing()
        if job is not None:
            self._log(["e", job.job_id])
        return job

    def ask_new(self, tid: str | None) -> Job | None:
        job = self.hb.ask_new({"trial_id": tid})
        if job is not None:
            self._log(["n", tid, job.job_id])
        return job

    def tell(self, job: Job, value: float) -> bool:
        """The core's ``tell``; returns whether a rung or bracket was completed."""
        advanced = self.hb.tell(job, value)
        self._log(["t", job.job_id, value])
        return advanced

    def fail(self, job: Job) -> bool:
        """The core's ``fail``; returns whether a rung or bracket was completed."""
        advanced = self.hb.fail(job)
        self._log(["f", job.job_id])
        return advanced

    def deepen(self) -> None:
        self.hb.deepen()
        self.level += 1
        self._log(["d"])

    def finish(self) -> None:
        self.done = True
        self._log(["z"])

    def add_trial(self, tid: str) -> int:
        """Register a trial Ray added; returns its place in the order of first additions."""
        index = self.order.get(tid)
        if index is None:
            index = self.order[tid] = len(self.added)
            self.added.append(tid)
            self._log(["a", tid])
        return index

    def mark_dead(self, tid: str) -> None:
        if tid not in self.dead:
            self.dead.add(tid)
            self._log(["x", tid])

    def progress_seen(
        self,
        tid: str,
        now: float,
        iteration: Any,
        ckpt: str | None,
        row: Mapping[str, Any] | None = None,
    ) -> None:
        """A result that took no decision: the hot path (most results), written at once as one
        line when nothing else of the hook is buffered. ``row`` is the result (journaled whole,
        for Ray's history)."""
        last = self.progress.get(tid, 0.0)
        self.consumed += now - last if now > last else now  # now <= last: restarted
        self.progress[tid] = now
        seen = self.seen.get(tid)
        if seen is None:
            seen = self.seen[tid] = [ckpt, now, iteration, {}]
        else:
            if ckpt:
                seen[0] = ckpt
            seen[1] = now
            seen[2] = iteration
        journal = self.journal
        if journal is None:
            return
        record = ["c", tid, now, iteration, seen[0]]
        if row is not None:
            record.append(row)
        line = record_line(record)
        if self._lines:
            self._lines.append(line)
        else:
            journal.append_line(line)
            if journal.n_records >= COMPACT_EVERY:
                self.snapshot()

    def result_seen(
        self, tid: str, now: float, ckpt: str | None, row: dict[str, Any]
    ) -> None:
        """A result that reached a rung budget: journaled whole (``row``); :meth:`stop_row`
        marks it as the trial's last when the scheduler stops the trial with it."""
        self._progress(tid, now)
        seen = self.seen.get(tid)
        if not ckpt and seen is not None:
            ckpt = seen[0]
        self.seen[tid] = [ckpt, now, row.get("training_iteration"), row]
        if self.journal is not None:
            record = ["R", tid, now, ckpt, row]
            self._rung_row = (len(self._lines), record)
            self._lines.append(record_line(record))

    def stop_row(self) -> None:
        """The last rung result ended its trial (the scheduler returned ``STOP``): its row says
        ``done``, as Ray logs it."""
        if self._rung_row is not None:
            index, record = self._rung_row
            record[-1]["done"] = True  # the row, also the trial's last report (seen)
            self._lines[index] = record_line(record)
        self._rung_row = None

    def history_seen(self, tid: str, row: Mapping[str, Any]) -> None:
        """A result Ray logged without showing it to the scheduler (journaled for the history)."""
        if self.journal is not None:
            self._lines.append(record_line(["h", tid, row]))

    def _progress(self, tid: str, now: float) -> None:
        last = self.progress.get(tid, 0.0)
        self.consumed += now - last if now > last else now  # now <= last: restarted
        self.progress[tid] = now

    def last_report(self, tid: str) -> tuple[str | None, dict[str, Any]] | None:
        """``(latest checkpoint, metrics)`` of the last result ``tid`` reported, or None."""
        seen = self.seen.get(tid)
        if seen is None:
            return None
        ckpt, now, iteration, metrics = seen
        out = dict(metrics)
        out[self.time_attr] = now
        if iteration is not None:
            out["training_iteration"] = iteration
        return ckpt, out

    # ------------------------------------------------------------------ writing
    def _log(self, record: list[Any]) -> None:
        if self.journal is not None:
            self._lines.append(record_line(record))

    def flush(self) -> None:
        """Write the records of this hook (appended at once); compact when the log is long."""
        journal = self.journal
        if journal is None or not self._lines:
            return
        journal.append_lines(self._lines)
        self._lines = []
        self._rung_row = None
        if journal.n_records >= COMPACT_EVERY:
            self.snapshot()

    def snapshot(self) -> None:
        """Replace the journal by a snapshot of the current state (the buffered records are in
        it and are dropped; journaled rows stay in the journal's archive)."""
        self._lines = []
        self._rung_row = None
        if self.journal is not None:
            self.journal.write_snapshot(self.state_dict())

    def state_dict(self) -> dict[str, Any]:
        return STATE_FORMAT.stamp({
            "params": self.params,
            "ladder": self.ladder,
            "level": self.level,
            "done": self.done,
            "core": self.hb.state_dict(),
            "dead": sorted(self.dead),
            "added": self.added,
            "progress": self.progress,
            "consumed": self.consumed,
            "seen": self.seen,
        })

    # ------------------------------------------------------------------ reading
    @classmethod
    def load(cls, journal: Journal, expected: Mapping[str, Any]) -> RunState:
        """The state saved in ``journal`` (snapshot plus records), checking that the saved
        parameters equal ``expected`` where given (a clear error names the first difference)."""
        state, records = journal.load()
        where = journal.path
        try:
            state = STATE_FORMAT.read(state)
        except ValueError as err:
            raise ValueError(f"{where} is not an IterativeDeepeningHyperBandScheduler state: {err}") from None
        params = state["params"]
        run = cls(
            IterativeDeepeningHyperband.from_state_dict(state["core"]),
            [int(v) for v in state["ladder"]],
            params,
            journal,
        )
        run.level = int(state["level"])
        run.done = bool(state["done"])
        run.dead = set(state["dead"])
        for tid in state.get("added", []):
            run.order[tid] = len(run.added)
            run.added.append(tid)
        run.progress = {k: float(v) for k, v in state["progress"].items()}
        run.consumed = float(state["consumed"])
        for tid, seen in state.get("seen", {}).items():
            if isinstance(seen, list) and len(seen) == 4:
                run.seen[tid] = list(seen)
        for record in journal.archived_records():  # rows of compacted logs
            run._collect_row(record)
        journaling, run.journal = run.journal, None  # replay without writing
        try:
            for number, record in enumerate(records, 1):
                try:
                    run._replay(record)
                except (KeyError, IndexError, TypeError, ValueError) as err:
                    raise JournalError(
                        f"{where}: journal record {number} {record!r} does not follow from the "
                        f"snapshot ({err})"
                    ) from None
            run._complete_logged_rungs()
        finally:
            run.journal = journaling
        run.check_params(expected)
        return run

    def check_params(self, expected: Mapping[str, Any]) -> None:
        """Raise a ``ValueError`` naming the first saved parameter that differs from
        ``expected`` (a run continues only with the parameters it was started with)."""
        where = self.journal.path if self.journal is not None else "the saved state"
        for key, value in expected.items():
            if self.params[key] != value:
                raise ValueError(
                    f"{key}={value!r} differs from the saved experiment's {key}="
                    f"{self.params[key]!r} ({where}); use the same value to continue it"
                )

    def knows(self, tid: str) -> bool:
        """``tid`` is a trial of this state (added, a configuration of the core, reported or
        left)."""
        if tid in self.order or tid in self.seen or tid in self.dead:
            return True
        return any(
            isinstance(cfg, Mapping) and cfg.get("trial_id") == tid
            for cfg in self.hb.configs.values()
        )

    def _collect_row(self, record: list[Any]) -> None:
        at = _ROW_AT.get(record[0])
        if at is not None and len(record) > at and isinstance(record[at], dict):
            self.rows.setdefault(record[1], []).append(record[at])

    def _replay(self, record: list[Any]) -> None:
        hb = self.hb
        kind = record[0]
        self._collect_row(record)
        if kind == "c":
            _, tid, now, iteration, ckpt = record[:5]
            self.progress_seen(tid, float(now), iteration, ckpt)
        elif kind in ("r", "R"):
            _, tid, now, ckpt, metrics = record
            self.result_seen(tid, float(now), ckpt, dict(metrics))
        elif kind == "h":
            pass
        elif kind in ("e", "n"):
            job = hb.ask_existing() if kind == "e" else hb.ask_new({"trial_id": record[1]})
            expected = record[-1]
            if job is None or job.job_id != expected:
                got = None if job is None else job.job_id
                raise ValueError(f"the core hands out job {got}, the journal says {expected}")
        elif kind == "t":
            hb.tell(int(record[1]), float(record[2]))
        elif kind == "f":
            hb.fail(int(record[1]))
        elif kind == "x":
            self.dead.add(record[1])
        elif kind == "a":
            self.add_trial(record[1])
        elif kind == "d":
            hb.deepen()
            self.level += 1
        elif kind == "z":
            self.done = True
        else:
            raise ValueError(f"unknown record kind {kind!r}")

    def _complete_logged_rungs(self) -> None:
        """Tell the core the rung results the journal holds but had not told (a machine crash
        between the two records of one hook; a killed process writes both or neither)."""
        for job in sorted(self.hb.pending, key=lambda j: j.job_id):
            tid = job.config.get("trial_id") if isinstance(job.config, Mapping) else None
            report = self.last_report(tid) if tid is not None else None
            if report is None:
                continue
            _ckpt, metrics = report
            reached = metrics.get(self.time_attr)
            value = metrics.get(self.metric) if self.metric else None
            if reached is None or float(reached) < job.budget or value is None:
                continue
            if math.isnan(float(value)):
                self.hb.fail(job)
            else:
                self.hb.tell(job, float(value))

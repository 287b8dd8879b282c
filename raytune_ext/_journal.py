"""Durable state of a scheduler: a JSON snapshot plus an append-only log of records.

Rewriting the whole state after every decision made the Ray scheduler's time per result grow
with the experiment (issue 19, item 7). Instead, the state lives in two files next to each other:

* ``<path>`` — a snapshot (one JSON object) with a ``generation`` number, replaced atomically
  (temporary file, ``fsync``, ``os.replace``, ``fsync`` of the directory);
* ``<path>.log<generation>`` — the records written after that snapshot, one JSON array per line,
  copied into a shared memory mapping of the file (``mmap``; the file is preallocated in 1 MiB
  steps with ``posix_fallocate``, each step faulted in for writing at once with
  ``madvise(MADV_POPULATE_WRITE)`` where Linux offers it, and cut to its records when closed). A
  copy into the mapping costs a fraction of a ``write`` system call, which matters: the Ray
  schedulers journal every result, row included.

**Encoding.** :func:`record_line` encodes a record with ``orjson`` when every value in it is a
plain ``str``/``int``/``float``/``bool``/``None`` (at the top level or in a ``dict`` of such
values, as Ray's flattened result rows are) and every float is finite: for such records its text
reads back (``json.loads``) to exactly what the standard library's would, at about a tenth of
the cost (a 19-key Ray result: ~1 µs against ~12 µs). Anything else - NaN or infinity (which
``orjson`` would write as ``null``), lists, numpy values, subclasses, integers beyond 64 bits -
goes through the standard library's encoder with :func:`jsonable` as fallback, as before. Logs
are read with the standard library either way. ``orjson`` comes with the ``ray`` extra; where it
is not installed every record is encoded by the standard library (the same values, slower).

**Kill safety and fsync policy.** A shared mapping *is* the operating system's page cache of the
file: a record is in the kernel as soon as it is copied, so a driver killed at any instant
(``kill -9`` included) loses nothing it had appended, exactly as with ``write``. By default
records are not ``fsync``-ed: a crash of the machine itself (power loss, kernel panic) may lose
the last records; pass ``fsync=True`` to flush every append to disk (``msync``; it then survives
that too, at the cost of a disk flush per append). Snapshots are always ``fsync``-ed. A record
cut short by a machine crash (no final newline, or zero bytes after it) is ignored when loading;
every complete record before it is kept. Where a file cannot be mapped the log falls back to
one ``write`` per append, with the same guarantees.

**Compaction.** :meth:`Journal.write_snapshot` writes generation ``g + 1`` and starts its empty
log; the old log is removed afterwards. A crash between the two steps leaves either the old
snapshot with its complete log, or the new snapshot (the old log is then stale and removed at the
next load): never a state that mixes both.

**Archive.** The records of a compacted log are not dropped: before the new snapshot is written
they are appended to ``<path>.archive`` (``fsync``-ed), and the snapshot stores the archive's
length (``archive_size``). :meth:`Journal.archived_records` reads them back, so that records
which carry history (the schedulers journal every result row) survive any number of compactions
and resumed runs. An archive longer than its snapshot says (a crash after the archive append,
before the snapshot replace) is cut back when loading: the old snapshot's log still holds those
records.

The file names avoid ``*.json`` and ``*.pkl``: on a resume Ray copies those files of the experiment
directory to its staging directory and uploads them back later, which would overwrite a newer
state with an older copy.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "sched.state")
    >>> j = Journal(path)
    >>> j.write_snapshot({"x": 1})
    >>> j.append(["add", 2])
    >>> j.close()
    >>> Journal(path).load()
    ({'x': 1, 'generation': 0, 'archive_size': 0}, [['add', 2]])
"""

from __future__ import annotations

import errno
import json
import math
import mmap
import os
import sys
import time
from typing import Any

from uvp_plugins.files import write_text_atomically

try:  # the ``ray`` extra installs it; without it every record takes the standard library's path
    import orjson as _orjson
except ImportError:
    _orjson = None  # type: ignore[assignment]

__all__ = ["Journal", "JournalError", "jsonable", "record_line", "save_checkpoint_json"]

_GENERATION = "generation"
_ARCHIVE_SIZE = "archive_size"


class JournalError(ValueError):
    """A snapshot or log that cannot be read (names the file)."""


class Journal:
    """Snapshot + append-only log at ``path`` (see the module docstring).

    Args:
        path: the snapshot's file name; the log is ``<path>.log<generation>`` beside it.
        fsync: ``fsync`` every appended record (survives a machine crash, not only a killed
            process); snapshots are always ``fsync``-ed.
    """

    def __init__(self, path: str | os.PathLike[str], fsync: bool = False) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.fsync = bool(fsync)
        self._generation = 0
        self._archive_size = 0  # bytes of the archive the current snapshot covers
        self._known = False  # the snapshot on disk is the one this object loaded or wrote
        self._log: _AppendLog | None = None
        self.n_records = 0  # records in the current log (since the last snapshot)

    # ------------------------------------------------------------------ reading
    def exists(self) -> bool:
        return os.path.exists(self.path)

    def load(self) -> tuple[dict[str, Any], list[list[Any]]]:
        """The snapshot and the records appended after it, in order.

        Raises:
            FileNotFoundError: no snapshot at ``path``.
            JournalError: the snapshot is not a JSON object or a log line in the middle of the
                log is not a JSON array.
        """
        try:
            with open(self.path, encoding="utf-8") as fh:
                snapshot = json.load(fh)
        except json.JSONDecodeError as err:
            raise JournalError(f"scheduler state {self.path} is not valid JSON: {err}") from None
        if not isinstance(snapshot, dict):
            raise JournalError(f"scheduler state {self.path} is not a JSON object")
        generation = int(snapshot.get(_GENERATION, 0))
        records = self._read_log(self._log_path(generation))
        self._remove_stale_logs(generation)
        self._generation = generation
        self._archive_size = int(snapshot.get(_ARCHIVE_SIZE, 0))
        self._known = True
        self.n_records = len(records)
        return snapshot, records

    def archived_records(self) -> list[list[Any]]:
        """The records of every compacted log, oldest first (see *Archive*; call after
        :meth:`load`)."""
        path = self._archive_path()
        if not self._archive_size or not os.path.exists(path):
            return []
        with open(path, "rb") as fh:
            data = fh.read(self._archive_size)
        return self._parse(data, path)

    def _read_log(self, log: str) -> list[list[Any]]:
        return self._parse(_complete_lines(log), log)

    @staticmethod
    def _parse(data: bytes, log: str) -> list[list[Any]]:
        complete = data.split(b"\n")[:-1]
        records = []
        for number, line in enumerate(complete, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise JournalError(f"{log}, line {number}: not a JSON record ({err})") from None
            if not isinstance(record, list) or not record:
                raise JournalError(f"{log}, line {number}: not a JSON array")
            records.append(record)
        return records

    def set_aside(self) -> str:
        """Rename the snapshot and its logs to ``<name>.replaced-<UTC time>[.logN]`` (an
        earlier experiment's state a new experiment must not continue); returns the new
        snapshot name."""
        self.close()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        target = f"{self.path}.replaced-{stamp}"
        directory, base = os.path.split(self.path)
        for name in os.listdir(directory):
            suffix = name[len(base) :]
            if name.startswith(base) and (
                suffix in ("", ".archive") or (suffix.startswith(".log") and suffix[4:].isdigit())
            ):
                os.replace(os.path.join(directory, name), target + suffix)
        self._generation = 0
        self._archive_size = 0
        self._known = False
        self.n_records = 0
        return target

    # ------------------------------------------------------------------ writing
    def write_snapshot(self, state: dict[str, Any]) -> None:
        """Replace the snapshot by ``state`` (generation + 1) and start its empty log; the
        records of the old log move to the archive first."""
        generation = self._generation + 1 if self.exists() else self._generation
        old_log = self._log_path(self._generation)
        self.close()
        if self._known and self.exists():
            self._archive(_complete_lines(old_log))
        body = dict(state)
        body[_GENERATION] = generation
        body[_ARCHIVE_SIZE] = self._archive_size
        directory = os.path.dirname(self.path)
        os.makedirs(directory, exist_ok=True)
        new_log = self._log_path(generation)
        if os.path.exists(new_log):  # a log of an interrupted earlier compaction
            os.unlink(new_log)
        write_text_atomically(
            self.path, json.dumps(body, separators=(",", ":"), default=jsonable), durable=True
        )
        self._generation = generation
        self._known = True
        self.n_records = 0
        if old_log != new_log and os.path.exists(old_log):
            os.unlink(old_log)

    def append(self, record: list[Any]) -> None:
        """Append one record (a JSON-serialisable list)."""
        self.append_line(record_line(record))

    def append_line(self, data: bytes) -> None:
        """Append one already serialised record, :func:`record_line`'s bytes (a JSON array
        *ending with a newline*; the schedulers' hot path, one call per result: the mapped copy
        is inlined)."""
        log = self._log
        if log is None:
            log = self._log = _AppendLog(self._log_path(self._generation))
        mapped = log.map
        end = log.pos + len(data)
        if mapped is not None and end <= log.size:
            mapped[log.pos : end] = data
            log.pos = end
        else:
            log.write(data)
        if self.fsync:
            log.sync()
        self.n_records += 1

    def append_lines(self, lines: list[bytes]) -> None:
        """Append already serialised records (:func:`record_line`'s bytes, each ending with a
        newline) at once."""
        log = self._log
        if log is None:
            log = self._log = _AppendLog(self._log_path(self._generation))
        log.write(b"".join(lines))
        if self.fsync:
            log.sync()
        self.n_records += len(lines)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __getstate__(self) -> dict[str, Any]:  # an open file does not pickle
        state = dict(self.__dict__)
        state["_log"] = None
        return state

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ internals
    def _log_path(self, generation: int) -> str:
        return f"{self.path}.log{generation}"

    def _archive_path(self) -> str:
        return f"{self.path}.archive"

    def _archive(self, data: bytes) -> None:
        """Append ``data`` (complete records) to the archive, after the part the current
        snapshot covers (a longer archive is the rest of an interrupted compaction)."""
        if not data:
            return
        fd = os.open(self._archive_path(), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, self._archive_size)
            written = 0
            while written < len(data):
                written += os.pwrite(fd, data[written:], self._archive_size + written)
            os.fsync(fd)
        finally:
            os.close(fd)
        self._archive_size += len(data)

    def _remove_stale_logs(self, generation: int) -> None:
        directory, base = os.path.split(self.path)
        prefix = base + ".log"
        for name in os.listdir(directory):
            if name.startswith(prefix) and name[len(prefix) :].isdigit():
                if int(name[len(prefix) :]) != generation:
                    try:
                        os.unlink(os.path.join(directory, name))
                    except FileNotFoundError:  # pragma: no cover - removed concurrently
                        pass


class _AppendLog:
    """An append-only file written through a shared memory mapping (module docstring).

    The data end is the first zero byte (the rest is preallocated); a torn last line (no
    newline) found when opening an existing file is overwritten by the next record.
    """

    _STEP = 1 << 20  # preallocation step

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        size = os.fstat(self.fd).st_size
        with open(path, "rb") as fh:
            data = fh.read()
        end = data.find(b"\0")
        data = data[:end] if end >= 0 else data
        self.pos = data.rfind(b"\n") + 1  # after the last complete record
        if len(data) > self.pos:  # a torn record: zero it, the next record takes its place
            os.pwrite(self.fd, b"\0" * (len(data) - self.pos), self.pos)
        self.size = size
        self.map: mmap.mmap | None = None
        try:
            self._grow(max(self._STEP, self.pos + 1))
        except (OSError, ValueError):  # a file system that cannot map: plain writes
            self.map = None
            os.lseek(self.fd, self.pos, os.SEEK_SET)
            os.ftruncate(self.fd, self.pos)

    def _grow(self, needed: int) -> None:
        size = max(self.size, -(-needed // self._STEP) * self._STEP)
        if size > self.size or self.map is None:
            if self.map is not None:
                self.map.close()
            if size > self.size:
                _allocate(self.fd, self.size, size - self.size)
                self.size = size
            self.map = mmap.mmap(self.fd, self.size)
            _prefault(self.map, self.pos)

    def write(self, data: bytes) -> None:
        if self.map is None:
            written = 0
            while written < len(data):
                written += os.write(self.fd, data[written:])
            self.pos += len(data)
            return
        end = self.pos + len(data)
        if end > self.size:
            self._grow(end)
            assert self.map is not None
        self.map[self.pos : end] = data
        self.pos = end

    def sync(self) -> None:
        if self.map is not None:
            self.map.flush()
        else:
            os.fsync(self.fd)

    def close(self) -> None:
        if self.map is not None:
            self.map.close()
            self.map = None
        os.ftruncate(self.fd, self.pos)  # drop the preallocated rest
        os.close(self.fd)


def _complete_lines(log: str) -> bytes:
    """The complete records of a log file (up to its last newline; nothing if it is missing)."""
    if not os.path.exists(log):
        return b""
    with open(log, "rb") as fh:
        data = fh.read()
    end = data.find(b"\0")  # the preallocated, never written rest of the file
    if end >= 0:
        data = data[:end]
    # The part after the last newline is a record cut short by a machine crash (or empty).
    return data[: data.rfind(b"\n") + 1]


def _allocate(fd: int, offset: int, length: int) -> None:
    """Reserve disk blocks (a full disk then fails here, not with SIGBUS in a mapped write)."""
    fallocate = getattr(os, "posix_fallocate", None)
    if fallocate is not None:
        try:
            fallocate(fd, offset, length)
            return
        except OSError as err:
            if err.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
    os.ftruncate(fd, offset + length)


#: ``madvise(MADV_POPULATE_WRITE)``: Linux >= 5.14 (the ``mmap`` module of older Pythons does not
#: name it; its value is 23 on every Linux architecture)
_MADV_POPULATE_WRITE: int | None = getattr(
    mmap, "MADV_POPULATE_WRITE", 23 if sys.platform.startswith("linux") else None
)


def _prefault(mapped: mmap.mmap, start: int) -> None:
    """Fault in the mapping's pages from ``start`` on for writing, all at once.

    Without it the first record copied into each page takes a write fault (the file system
    marks the page dirty and maps its preallocated block): in a Ray driver about one result in
    ten paid 10-20 µs for it. One ``madvise`` for the whole 1 MiB step costs about 1 ms, a
    fraction of its ~256 separate faults, and writes nothing (the file keeps its zeros, so a
    record is still complete only once its newline is copied). Where the kernel or platform
    does not offer it, the pages fault one by one as before.
    """
    madvise = getattr(mapped, "madvise", None)
    if _MADV_POPULATE_WRITE is None or madvise is None:
        return
    offset = start - start % mmap.PAGESIZE
    try:
        madvise(_MADV_POPULATE_WRITE, offset, len(mapped) - offset)
    except (OSError, ValueError):  # an older kernel (EINVAL), a file system that refuses it
        pass


#: exact types whose JSON text ``orjson`` and the standard library agree on (finite floats)
_PLAIN = frozenset((str, int, float, bool, type(None)))
_ORJSON_LINE = 0 if _orjson is None else _orjson.OPT_APPEND_NEWLINE


def save_checkpoint_json(path: str, state: Any) -> None:
    """Ray's ``save(checkpoint_path)`` of a scheduler or searcher: ``state`` as JSON, replacing
    ``path`` whole (:func:`uvp_plugins.files.write_text_atomically`: a reader sees the old or the
    new file)."""
    write_text_atomically(path, json.dumps(state))


def record_line(record: list[Any]) -> bytes:
    """``record`` as one log line: compact JSON and a newline (see *Encoding* in the module
    docstring: ``orjson`` for plain records, the standard library for the rest).

    Example:
        >>> record_line(["c", "t_00001", 3.0, 3, None, {"loss": 0.25, "done": False}])
        b'["c","t_00001",3.0,3,null,{"loss":0.25,"done":false}]\\n'
        >>> record_line(["t", 4, float("nan")])  # orjson would write null
        b'["t",4,NaN]\\n'
    """
    if _orjson is None:  # not installed
        return (_ENCODE(record) + "\n").encode()
    plain = _PLAIN
    for item in record:
        kind = type(item)
        if kind is dict:
            if not plain.issuperset(map(type, item.values())):
                break
        elif kind not in plain:
            break
    else:
        try:
            line: bytes = _orjson.dumps(record, option=_ORJSON_LINE)
        except TypeError:  # an int beyond 64 bits, a lone surrogate, a key that is not a str
            pass
        else:
            # orjson writes NaN and infinities as null: only a record with null needs a look
            if b"null" not in line or _all_finite(record):
                return line
    return (_ENCODE(record) + "\n").encode()


def _all_finite(record: list[Any]) -> bool:
    """No float in ``record`` (or in one of its dicts) is NaN or infinite."""
    isfinite = math.isfinite
    for item in record:
        kind = type(item)
        if kind is float:
            if not isfinite(item):
                return False
        elif kind is dict:
            for value in item.values():
                if type(value) is float and not isfinite(value):
                    return False
    return True


def jsonable(value: Any) -> Any:
    """JSON fallback for values results may carry: numpy scalars/arrays, other objects as text."""
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError):
            pass
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    return str(value)


#: the standard library's compact encoder, built once (``json.dumps`` with arguments builds an
#: encoder per call)
_ENCODE = json.JSONEncoder(separators=(",", ":"), default=jsonable).encode

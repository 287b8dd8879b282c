"""Ray's per-trial result history (``result.json``, ``progress.csv``) completed from the rows a
scheduler journaled, after a killed driver.

**Why rows were lost (checked on Ray 2.60).** Ray's driver writes every result of a trial to
``result.json`` and ``progress.csv`` in its *staging* directory
(``/tmp/ray/session_*/artifacts/<time>/<experiment>/driver_artifacts/<trial>``) and uploads that
directory to the experiment directory only with its experiment snapshot, every 10 s or more.
A driver killed with ``kill -9`` leaves the rows of its last seconds in its staging directory
only. When the experiment is resumed in another Ray session (a new ``ray.init()``, the usual case
after a killed driver that started its own cluster), Ray knows only the experiment directory:
when a trial restarts, Ray's loggers copy its older ``result.json`` from there and append, so
those rows are gone from ``ResultGrid.get_dataframe()`` and ``Result.metrics_dataframe``. With
Ray's own schedulers the loss is invisible because the trials restart from Ray's older
snapshot and report those steps again; our schedulers bring a trial up to what they journaled
(its last result and latest checkpoint, :func:`raytune_ext._ray_trials.restore_progress`), so a
trial continues where it was and the rows in between were never written again, and
``get_dataframe()`` disagreed with ``Result.metrics`` (a trial ``PAUSED`` or stopped by the
scheduler never restarts, so its history was not even partly rewritten). Counts:
``docs/results/reliability.md``.

**What this module does.** The schedulers journal every result row they see (the flattened
result Ray gives a scheduler, ``done`` set as Ray logs it) in the same record as their decision
(:mod:`raytune_ext._journal`). When a resumed experiment re-adds a trial,
:func:`complete_result_logs` appends to its ``result.json`` and ``progress.csv`` - in the
experiment directory and in the driver's current staging copy, if there is one - the journaled
rows after the last row they hold (rows are matched by ``training_iteration``,
``time_total_s`` and ``timestamp``, which Ray fills in for every result). A history that
does not end with a journaled row (written by something else) is left as it is, with a
warning. Rows are written as Ray's loggers write them: nested ``config``, ``progress.csv``
without it and flattened with ``/``. With Ray's default logger callbacks switched off
(``TUNE_DISABLE_AUTO_CALLBACK_LOGGERS=1``) only files that exist are completed (a logger the
user added): none is created.

Example:
    >>> rows = [{"training_iteration": i, "time_total_s": 0.5 * i, "timestamp": 7, "loss": 1 / i,
    ...          "config/x": 0.3} for i in (1, 2, 3)]
    >>> [r["training_iteration"] for r in rows_after(rows[0], rows)]
    [2, 3]
    >>> nested({"loss": 1.0, "config/x": 0.3, "config/net/units": 8})
    {'loss': 1.0, 'config': {'x': 0.3, 'net': {'units': 8}}}
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ray.tune.result import EXPR_PROGRESS_FILE, EXPR_RESULT_FILE

__all__ = ["ROW_KEY", "row_key", "rows_after", "nested", "complete_result_logs"]

logger = logging.getLogger(__name__)

#: result keys Ray fills in for every result; together they tell the rows of a trial apart
ROW_KEY = ("training_iteration", "time_total_s", "timestamp")
_DELIMITER = "/"  # Ray's flatten_dict delimiter


def row_key(row: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The identity of a result row (None when it has none of :data:`ROW_KEY`)."""
    key = (row.get("training_iteration"), row.get("time_total_s"), row.get("timestamp"))
    return None if key == (None, None, None) else key


def _text_key(key: Sequence[Any] | None) -> tuple[str, ...] | None:
    """A row key as ``progress.csv`` holds it (Python's ``str`` of each value, ``""`` for None)."""
    return None if key is None else tuple("" if v is None else str(v) for v in key)


def rows_after(last: Mapping[str, Any] | None, rows: Sequence[Mapping[str, Any]]) -> list | None:
    """The rows after the one ``last`` is: all of them when ``last`` is None or has no key,
    None when ``last`` is not among them."""
    key = row_key(last) if last else None
    if key is None:
        return list(rows)
    for i in range(len(rows) - 1, -1, -1):
        if row_key(rows[i]) == key:
            return list(rows[i + 1 :])
    return None


def nested(row: Mapping[str, Any]) -> dict[str, Any]:
    """A flattened result (``"config/x"``) nested again (``{"config": {"x": ...}}``), as Ray's
    JSON logger and ``Trial.last_result`` hold it."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        parts = key.split(_DELIMITER)
        node = out
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):  # "a" and "a/b" both reported: keep the flat name
                node = out
                parts = [key]
                break
            node = child
        node[parts[-1]] = value
    return out


def complete_result_logs(trial: Any, rows: Sequence[Mapping[str, Any]]) -> int:
    """Append to ``trial``'s ``result.json`` and ``progress.csv`` the ``rows`` (flattened results
    the scheduler journaled, oldest first) after the last row each file holds; in the experiment
    directory and in the driver's staging copy when that exists. Returns the number of rows
    added to the experiment directory's ``result.json``."""
    import pyarrow.fs

    storage = getattr(trial, "storage", None)
    if not rows or storage is None or not storage.trial_dir_name:
        return 0
    fs = storage.storage_filesystem
    remote = storage.trial_fs_path
    added = _complete(fs, remote, rows, trial.trial_id, create=_ray_writes_result_logs())
    local = trial.local_path
    if local and os.path.abspath(local) != os.path.abspath(remote) and os.path.isdir(local):
        # The staging copy is what Ray uploads next: it must not be shorter (same Ray session).
        _complete(pyarrow.fs.LocalFileSystem(), local, rows, trial.trial_id, create=False)
    return added


def _ray_writes_result_logs() -> bool:
    """Whether Ray's default JSON and CSV logger callbacks run (Ray's own switch)."""
    return os.environ.get("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "0") != "1"


def _complete(
    fs: Any, directory: str, rows: Sequence[Mapping[str, Any]], tid: str, create: bool
) -> int:
    json_path = os.path.join(directory, EXPR_RESULT_FILE)
    text = _read(fs, json_path)
    if text is None and not create:
        return 0
    lines = [line for line in (text or "").split("\n") if line.strip()]
    last = json.loads(lines[-1]) if lines else None
    missing = _missing(last, rows, json_path, tid)
    if missing:
        body = "".join(json.dumps(nested(row)) + "\n" for row in missing)
        if text and not text.endswith("\n"):
            body = "\n" + body
        fs.create_dir(directory, recursive=True)
        _write(fs, json_path, (text or "") + body)
    _complete_csv(fs, os.path.join(directory, EXPR_PROGRESS_FILE), rows, tid, create)
    return len(missing)


def _missing(
    last: Mapping[str, Any] | None, rows: Sequence[Mapping[str, Any]], path: str, tid: str
) -> list:
    if last is None:
        return list(rows)
    missing = rows_after(last, rows) if row_key(last) is not None else None
    if missing is None:
        logger.warning(
            "trial %s: %s ends with a row the scheduler did not journal; it is left as it is",
            tid,
            path,
        )
        return []
    return missing


def _complete_csv(
    fs: Any, path: str, rows: Sequence[Mapping[str, Any]], tid: str, create: bool
) -> None:
    text = _read(fs, path)
    if text is None and not create:
        return
    records = list(csv.reader(io.StringIO(text or "")))
    header = records[0] if records else None
    if header is not None and len(records) > 1:
        stored = dict(zip(header, records[-1], strict=False))
        key = tuple(stored.get(k, "") for k in ROW_KEY)
        index = [i for i, r in enumerate(rows) if _text_key(row_key(r)) == key]
        if not index:
            logger.warning(
                "trial %s: %s ends with a row the scheduler did not journal; it is left as it is",
                tid,
                path,
            )
            return
        missing = list(rows[index[-1] + 1 :])
    else:
        missing = list(rows)
    if not missing:
        return
    flat = [_csv_row(row) for row in missing]
    out = io.StringIO()
    if header is None:
        header = list(flat[0])
        csv.writer(out).writerow(header)
    writer = csv.DictWriter(out, header, extrasaction="ignore")
    for row in flat:
        writer.writerow(row)
    prefix = text or ""
    if prefix and not prefix.endswith("\n"):
        prefix += "\n"
    _write(fs, path, prefix + out.getvalue())


def _csv_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A journaled row as Ray's CSV logger writes it: without ``config``, nested keys joined by
    ``/`` (the journaled row is already flattened that way)."""
    return {
        k: v for k, v in row.items() if k != "config" and not k.startswith("config" + _DELIMITER)
    }


def _read(fs: Any, path: str) -> str | None:
    import pyarrow.fs

    if fs.get_file_info(path).type == pyarrow.fs.FileType.NotFound:
        return None
    with fs.open_input_stream(path) as fh:
        return bytes(fh.readall()).decode("utf-8")


def _write(fs: Any, path: str, text: str) -> None:
    with fs.open_output_stream(path) as fh:
        fh.write(text.encode("utf-8"))

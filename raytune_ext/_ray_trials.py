"""The few places where the scheduler touches Ray's ``Trial`` objects beyond the scheduler API.

Checked on Ray 2.60. Each function says which Ray behaviour it completes:

* :func:`prepare_held_trial` — a trial the scheduler holds back (``PAUSED`` before it ever ran)
  gets its trial directory and an empty result log, as Ray gives a trial that started and has not
  reported yet. Ray creates a trial's directory only when it starts the trial; at the end of
  ``tune.run`` / ``Tuner.fit`` it reads every trial's directory, so a trial that never started made
  ``Tuner.fit()`` crash (``RuntimeError: Should not access `trial_fs_path` without setting
  `trial_dir_name```) and ``tune.run`` warn "Failed to fetch metrics" once per such trial.
* :func:`publish_result_logs` — before a paused trial restarts, its result logs (``result.json``,
  ``progress.csv``, written by the driver into its staging directory and uploaded by Ray every
  few seconds) are uploaded to the experiment directory. When a trial restarts, Ray's JSON and CSV
  loggers replace the staging copy by the experiment directory's copy; between two uploads that
  copy is older (or missing: "Remote file not found: .../result.json"), and the rows reported in
  between were lost from Ray's per-trial history (14 of 49 trials of an ID-HB run at R = 27 lost
  rows, any scheduler that pauses trials is affected).
* :func:`restore_progress` — after a driver was killed, Ray's own view of a trial (its last result
  and latest checkpoint, in the experiment snapshot Ray writes every few seconds) can be older
  than what the scheduler logged with every result. The trial is brought up to the scheduler's
  record: its result history (:mod:`raytune_ext._result_logs`), its last result (so
  ``Result.metrics``, Ray's analysis and ``get_best_*`` see it, and it is the last row of the
  history) and its latest checkpoint (so a resumed trial continues from there instead of
  retraining from an older checkpoint or from iteration 0).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ray.tune.experiment import Trial
from ray.tune.result import EXPR_PROGRESS_FILE, EXPR_RESULT_FILE

from raytune_ext._result_logs import complete_result_logs, nested, rows_after

__all__ = ["prepare_held_trial", "publish_result_logs", "restore_progress", "checkpoint_index"]

logger = logging.getLogger(__name__)

_CHECKPOINT_PREFIX = "checkpoint_"


def prepare_held_trial(trial: Trial) -> None:
    """Give a trial that never ran its directory and an empty ``result.json``.

    ``init_local_path`` is Ray's own call before a trial starts (idempotent; Ray also makes it
    for every trial of a restored experiment). The empty result log is what Ray's JSON logger
    creates when a trial starts; it is written to the driver's staging directory, which Ray
    uploads to the experiment directory, and only for a trial that has neither results nor a
    checkpoint nor a result log in storage (an existing log is never replaced).
    """
    trial.init_local_path()
    if trial.has_reported_at_least_once or trial.checkpoint is not None:
        return
    local = trial.local_path
    if not local:
        return
    storage = trial.storage
    assert storage is not None
    remote = os.path.join(storage.trial_fs_path, EXPR_RESULT_FILE)
    if _exists(storage.storage_filesystem, remote):
        return
    result_file = os.path.join(local, EXPR_RESULT_FILE)
    if not os.path.exists(result_file):
        with open(result_file, "a", encoding="utf-8"):
            pass


def publish_result_logs(trial: Trial) -> None:
    """Upload ``trial``'s result logs from the driver's staging directory to the experiment
    directory, where they are at least as long there (a resumed experiment's fresh staging
    directory never replaces the stored history)."""
    import pyarrow.fs

    storage = trial.storage
    if storage is None or not storage.trial_dir_name:
        return
    local_dir = trial.local_path
    if not local_dir:
        return
    fs = storage.storage_filesystem
    for name in (EXPR_RESULT_FILE, EXPR_PROGRESS_FILE):
        local = os.path.join(local_dir, name)
        try:
            size = os.path.getsize(local)
        except OSError:
            continue
        remote = os.path.join(storage.trial_fs_path, name)
        if os.path.abspath(local) == os.path.abspath(remote):
            continue
        info = fs.get_file_info(remote)
        if info.type != pyarrow.fs.FileType.NotFound and (info.size or 0) > size:
            continue
        pyarrow.fs.copy_files(local, remote, destination_filesystem=fs)


def _exists(fs: Any, path: str) -> bool:
    import pyarrow.fs

    return bool(fs.get_file_info(path).type != pyarrow.fs.FileType.NotFound)


def checkpoint_index(name: str | None) -> int | None:
    """The index of a checkpoint directory named by Ray (``checkpoint_000012`` -> 12)."""
    if not name or not name.startswith(_CHECKPOINT_PREFIX):
        return None
    digits = name[len(_CHECKPOINT_PREFIX) :]
    return int(digits) if digits.isdigit() else None


def restore_progress(
    trial: Trial,
    metrics: Mapping[str, Any],
    checkpoint_dir_name: str | None,
    time_attr: str,
    rows: Sequence[Mapping[str, Any]] = (),
) -> bool:
    """Bring ``trial`` up to what the scheduler logged, where Ray's view of it is older.

    ``rows`` are the trial's results as the scheduler journaled them (flattened, oldest first):
    its result logs are completed with them, and those newer than Ray's last result are given
    to the trial in order (``Trial.update_last_result``, as Ray does with every result), so
    its last result is the last row of its history. Without rows (a state saved before rows
    were journaled) ``metrics``, the logged subset of the last result, is merged into Ray's
    last result. ``checkpoint_dir_name`` is the latest checkpoint the trial had reported
    (``None``: none). Returns True when the trial was changed.
    """
    changed = False
    if rows:
        changed = complete_result_logs(trial, rows) > 0
        known = trial.last_result if trial.has_reported_at_least_once else None
        newer = rows_after(known, rows)
        if newer is None:  # Ray's last result is not a journaled row: take the last if newer
            theirs = known.get(time_attr) if known else None
            ours = rows[-1].get(time_attr)
            newer = [rows[-1]] if ours is not None and (
                theirs is None or float(ours) > float(theirs)
            ) else []
        for row in newer:
            trial.update_last_result(nested(row))
            changed = True
    else:
        ours = metrics.get(time_attr)
        theirs = trial.last_result.get(time_attr) if trial.last_result else None
        if ours is not None and (theirs is None or float(ours) > float(theirs)):
            merged = dict(trial.last_result or {})
            merged.update(metrics)
            merged.setdefault("config", trial.config)
            if checkpoint_dir_name:
                merged["checkpoint_dir_name"] = checkpoint_dir_name
            trial.update_last_result(merged)
            changed = True
    metrics = dict(trial.last_result or metrics)
    if checkpoint_dir_name and _register_checkpoint(trial, checkpoint_dir_name, metrics):
        changed = True
    if changed:
        trial.invalidate_json_state()
        trial.run_metadata.invalidate_cache()
    return changed


def _register_checkpoint(trial: Trial, name: str, metrics: dict[str, Any]) -> bool:
    index = checkpoint_index(name)
    latest = trial.checkpoint
    latest_index = checkpoint_index(os.path.basename(latest.path)) if latest is not None else None
    if index is None or (latest_index is not None and latest_index >= index):
        return False
    from ray.train import Checkpoint
    from ray.train._internal.session import _TrainingResult

    storage = trial.storage
    manager = trial.run_metadata.checkpoint_manager
    assert storage is not None and manager is not None
    path = os.path.join(storage.trial_fs_path, name)
    fs = storage.storage_filesystem
    if not _exists(fs, path):
        logger.warning(
            "trial %s: its checkpoint %s is gone from storage; it continues from %s",
            trial.trial_id,
            path,
            latest.path if latest is not None else "scratch",
        )
        return False
    checkpoint = Checkpoint(path=path, filesystem=fs)
    manager.register_checkpoint(_TrainingResult(checkpoint, metrics))
    # The next checkpoint the trainable reports goes to index + 1 (Ray increments first).
    storage.current_checkpoint_index = max(storage.current_checkpoint_index, index)
    return True

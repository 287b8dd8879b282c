"""Kill-safe files: the intensifier state and the run history are replaced atomically.

SMAC writes ``runhistory.json`` and ``intensifier.json`` with ``open(path, "w")`` + ``json.dump``
after every ``tell``; a driver killed during such a write leaves a truncated file, which SMAC's
``load`` skips with a warning ("Not adding any trials!") -- the run would continue with an empty
run history or intensifier state, everything before lost. Our intensifiers write the same
content to a temporary file in the same directory and ``os.replace`` it over the old one, so
after a kill each file is either its previous or its new complete version (the restart
reconciles a run history that is one ``tell`` ahead of the intensifier state). The run history
is SMAC's object: its ``save`` is wrapped on the instance the facade hands to the intensifier
(SMAC saves the run history, then calls the intensifier's ``save``; from the second save on the
run history's writes are atomic too).

SMAC's ``optimization.json`` (walltime used, ``finished``) is written first and directly by
SMAC's optimizer, which we cannot reach; a truncated one makes SMAC's restart fail with a
``JSONDecodeError``. After every save the intensifier keeps a copy of the last complete one
(``optimization.json.uvp-backup``), and :func:`repair_output_directory` (called when one of our
intensifiers is constructed for a scenario with a ``name``) puts it back if the file is
unreadable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from uvp_plugins.files import replace_atomically, write_text_atomically

__all__ = ["AtomicSaveMixin", "repair_output_directory", "write_json_atomic"]

_BACKUP = "optimization.json.uvp-backup"


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as JSON atomically."""
    write_text_atomically(path, json.dumps(data, indent=4))


class AtomicSaveMixin:
    """``save`` of a SMAC intensifier, made atomic (put before the SMAC base class)."""

    def save(self, filename: str | Path) -> None:
        """SMAC's ``save`` (incumbents, trajectory, ``get_state()``) into a temporary file of the
        same directory, then ``os.replace`` over ``filename``; also makes the run history's
        later saves atomic (module docstring)."""
        replace_atomically(filename, super().save)  # type: ignore[misc]
        _backup_optimization_json(Path(filename).parent)
        runhistory = getattr(self, "_runhistory", None)
        if runhistory is not None and not getattr(runhistory, "_uvp_atomic_save", False):
            original = runhistory.save

            def save_runhistory(filename: str | Path = "runhistory.json") -> None:
                replace_atomically(filename, original)

            runhistory.save = save_runhistory
            runhistory._uvp_atomic_save = True


def _backup_optimization_json(directory: Path) -> None:
    """Copy SMAC's ``optimization.json`` atomically if it is complete (module docstring)."""
    try:
        data = json.loads((directory / "optimization.json").read_text())
    except (OSError, ValueError):
        return
    write_json_atomic(directory / _BACKUP, data)


def repair_output_directory(directory: str | Path) -> bool:
    """Put back the last complete ``optimization.json`` if SMAC's is unreadable (a kill during
    SMAC's write); returns True if it did."""
    path = Path(directory) / "optimization.json"
    backup = Path(directory) / _BACKUP
    if not path.exists() or not backup.exists():
        return False
    try:
        json.loads(path.read_text())
        return False
    except ValueError:
        pass
    os.replace(backup, path)
    return True

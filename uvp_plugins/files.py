"""Files replaced whole: a reader, or a restart after a killed process, sees a file's previous or
its new content, never a part.

Every state an adapter persists outside the framework's own storage (SMAC's
``intensifier.json`` and run history, Ray's scheduler and searcher checkpoints and journal
snapshots) and every result file of the harness is written through :func:`replace_atomically`:
the content goes to a temporary file in the same directory (same file system, so
:func:`os.replace` is atomic), which then replaces the target. The temporary keeps the target's
suffix (SMAC's writers want a ``.json`` name), has a name no other process uses at the same time,
and is removed if writing fails. With ``durable=True`` the data and the directory entry are also
``fsync``-ed, so the new file survives a power loss, not only a killed process.

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> target = Path(tempfile.mkdtemp()) / "state.json"
    >>> write_text_atomically(target, json.dumps({"round": 1}))
    >>> json.loads(target.read_text())
    {'round': 1}
    >>> def broken(tmp: Path) -> None:
    ...     tmp.write_text('{"round": ')      # a writer that fails half-way
    ...     raise OSError("disk full")
    >>> replace_atomically(target, broken)
    Traceback (most recent call last):
    ...
    OSError: disk full
    >>> json.loads(target.read_text()), sorted(p.name for p in target.parent.iterdir())
    ({'round': 1}, ['state.json'])
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

__all__ = ["TEMPORARY_MARK", "replace_atomically", "write_text_atomically"]

#: part of every temporary file's name (a crash between writing and replacing leaves one behind)
TEMPORARY_MARK = ".uvp-tmp"


def _temporary_beside(path: Path) -> Path:
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    return path.with_name(f".{path.stem}.{token}{TEMPORARY_MARK}{path.suffix}")


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - a file system that cannot sync a directory
        pass
    finally:
        os.close(fd)


def replace_atomically(
    path: str | os.PathLike[str], write: Callable[[Path], object], *, durable: bool = False
) -> None:
    """Replace ``path`` with what ``write(temporary)`` writes into a temporary file beside it.

    ``path``'s directory is created if missing. If ``write`` raises, ``path`` is unchanged, the
    temporary is removed and the error propagates. ``durable``: ``fsync`` the temporary before
    and the directory after the replacement.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary_beside(target)
    try:
        write(tmp)
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        _fsync_directory(target.parent)


def write_text_atomically(
    path: str | os.PathLike[str], text: str, *, durable: bool = False
) -> None:
    """:func:`replace_atomically` with ``text`` (UTF-8) as the new content."""
    replace_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), durable=durable)

"""Kill-safe files: the intensifier state is replaced atomically, never left half-written.

SMAC writes ``intensifier.json`` with ``open(path, "w")`` + ``json.dump`` after every ``tell``;
a driver killed during that write leaves a truncated file, which SMAC's ``load`` skips with a
warning ("Not adding any trials!") -- the run would then continue with an empty intensifier
state. Our intensifiers write the same content to a temporary file in the same directory and
``os.replace`` it over the old one, so after a kill the file is either the previous or the new
complete state (the restart reconciles either with the run history).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["AtomicSaveMixin", "write_json_atomic"]


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as JSON atomically."""
    tmp = path.with_name(path.name + ".uvp-tmp")
    tmp.write_text(json.dumps(data, indent=4))
    os.replace(tmp, path)


class AtomicSaveMixin:
    """``save`` of a SMAC intensifier, made atomic (put before the SMAC base class)."""

    def save(self, filename: str | Path) -> None:
        """SMAC's ``save`` (incumbents, trajectory, ``get_state()``) into a temporary file of the
        same directory, then ``os.replace`` over ``filename``."""
        path = Path(filename)
        tmp = path.with_name(path.stem + ".uvp-tmp" + path.suffix)  # SMAC wants a .json name
        try:
            super().save(tmp)  # type: ignore[misc]
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, path)

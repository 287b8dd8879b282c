"""``uvp_plugins.files``: a file is replaced whole or not at all, by any number of writers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from uvp_plugins.files import TEMPORARY_MARK, replace_atomically, write_text_atomically


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    write_text_atomically(target, '{"n": 1}')

    def dies_half_way(tmp: Path) -> None:
        tmp.write_text('{"n": ')
        raise KeyboardInterrupt  # not only Exception: a ^C during the write

    with pytest.raises(KeyboardInterrupt):
        replace_atomically(target, dies_half_way)
    assert json.loads(target.read_text()) == {"n": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_the_temporary_sits_beside_the_target_and_keeps_its_suffix(tmp_path: Path) -> None:
    seen: list[Path] = []
    target = tmp_path / "deeper" / "intensifier.json"  # a missing directory is created

    def write(tmp: Path) -> None:
        seen.append(tmp)
        tmp.write_text("{}")

    replace_atomically(target, write, durable=True)
    (tmp,) = seen
    assert tmp.parent == target.parent and tmp.suffix == ".json" and TEMPORARY_MARK in tmp.name
    assert target.read_text() == "{}" and not tmp.exists()


def test_a_replaced_file_keeps_the_usual_permissions(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    target = tmp_path / "result.json"
    write_text_atomically(target, "{}")
    assert os.stat(target).st_mode & 0o777 == os.stat(plain).st_mode & 0o777


WRITER = """
import sys
from uvp_plugins.files import write_text_atomically
path, tag = sys.argv[1], sys.argv[2]
for i in range(300):
    write_text_atomically(path, (tag + str(i)) * 2000)
"""


def test_concurrent_writers_and_a_reader_never_see_a_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    write_text_atomically(target, "a0" * 2000)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    writers = [subprocess.Popen([sys.executable, str(script), str(target), tag], env=env)
               for tag in ("a", "b")]
    reads = 0
    while any(w.poll() is None for w in writers) or reads == 0:
        text = target.read_text()
        unit = text[: len(text) // 2000]
        assert text == unit * 2000, "a partial or mixed file was read"
        reads += 1
    assert all(w.wait() == 0 for w in writers)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.txt", "writer.py"]

"""The scheduler's durable state: snapshot + memory-mapped append-only log (no Ray cluster).

Kill safety is tested with a real ``SIGKILL`` of a writing process; the replay of the run state
is checked against the live state it was journaled from."""

from __future__ import annotations

import dataclasses
import datetime
import doctest
import enum
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import raytune_ext._journal as journal_module
from raytune_ext._journal import Journal, JournalError, jsonable, record_line
from raytune_ext._run_state import STATE_FORMAT, RunState
from uvp_plugins.hyperband import IterativeDeepeningHyperband

PARAMS = {
    "time_attr": "training_iteration",
    "metric": "loss",
    "mode": "min",
    "reduction_factor": 3,
    "variant": "efficient",
    "min_t": 1,
    "seed": 0,
}


def test_snapshot_and_records_round_trip_and_compaction(tmp_path) -> None:
    path = tmp_path / "s.state"
    j = Journal(path)
    j.write_snapshot({"a": 1})
    j.append(["x", 1])
    j.append_lines([b'["y",2.5]\n', b'["z",null,"q"]\n'])
    assert j.n_records == 3
    j.close()
    state, records = Journal(path).load()
    assert state == {"a": 1, "generation": 0, "archive_size": 0}
    assert records == [["x", 1], ["y", 2.5], ["z", None, "q"]]
    # the log is cut to its records when closed (no preallocated zeros left)
    assert (tmp_path / "s.state.log0").read_bytes().endswith(b'["z",null,"q"]\n')

    j2 = Journal(path)
    j2.load()
    j2.write_snapshot({"a": 2})  # compaction: generation 1, empty log, old log removed
    assert not (tmp_path / "s.state.log0").exists()
    j2.append(["w"])
    j2.close()
    # the compacted log's records moved to the archive, which the snapshot covers
    archived = (tmp_path / "s.state.archive").read_bytes()
    assert archived == b'["x",1]\n["y",2.5]\n["z",null,"q"]\n'
    j3 = Journal(path)
    assert j3.load() == ({"a": 2, "generation": 1, "archive_size": len(archived)}, [["w"]])
    assert j3.archived_records() == records
    # a second compaction appends; a crash after the archive append, before the snapshot
    # replace, leaves a longer archive: it is cut back to what the snapshot covers
    j3.write_snapshot({"a": 3})
    j3.close()
    j4 = Journal(path)
    j4.load()
    assert j4.archived_records() == records + [["w"]]
    with open(tmp_path / "s.state.archive", "ab") as fh:
        fh.write(b'["w"]\n')  # what an interrupted compaction left
    assert j4.archived_records() == records + [["w"]]
    j4.append(["v"])
    j4.write_snapshot({"a": 4})
    j4.close()
    j5 = Journal(path)
    j5.load()
    assert j5.archived_records() == records + [["w"], ["v"]]


def test_appends_survive_sigkill_of_the_writer(tmp_path) -> None:
    """Records copied into the mapping are in the kernel's page cache: a process killed with
    SIGKILL right after appending (no close, no flush) loses none of them."""
    path = tmp_path / "s.state"
    script = textwrap.dedent(
        f"""
        import sys, time
        from raytune_ext._journal import Journal
        j = Journal({str(path)!r})
        j.write_snapshot({{"start": True}})
        for i in range(5000):
            j.append(["r", i])
        print("appended", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, env=dict(os.environ), text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "appended"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    state, records = Journal(path).load()
    assert state["start"] is True
    assert records == [["r", i] for i in range(5000)]


def test_log_grows_past_its_preallocation_and_reopens_after_a_torn_record(tmp_path) -> None:
    path = tmp_path / "s.state"
    j = Journal(path)
    j.write_snapshot({})
    big = "x" * 1000
    for i in range(3000):  # ~3 MB: several 1 MiB preallocation steps
        j.append([i, big])
    j.close()
    log = tmp_path / "s.state.log0"
    with open(log, "ab") as fh:
        fh.write(b'[3000,"torn')  # a record cut short by a machine crash
    j = Journal(path)
    _, records = j.load()
    assert len(records) == 3000 and records[-1] == [2999, big]
    j.append(["after"])  # takes the torn record's place
    j.close()
    _, records = Journal(path).load()
    assert records[-1] == ["after"] and len(records) == 3001


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MADV_POPULATE_WRITE is Linux's")
def test_appends_into_the_mapping_take_no_page_fault(tmp_path) -> None:
    """The preallocated step is faulted in for writing when it is mapped (one madvise), so the
    records copied into it afterwards cost no fault each (about 190 faults for these 2000
    records without it)."""
    import resource

    j = Journal(tmp_path / "s.state")
    j.write_snapshot({})
    line = record_line(["c", "x" * 380])
    j.append_line(line)  # opens and maps the log
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(2000):  # ~0.8 MB: within the first 1 MiB step
        j.append_line(line)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    j.close()
    assert faults < 20
    _, records = Journal(tmp_path / "s.state").load()
    assert len(records) == 2001 and records[-1] == ["c", "x" * 380]


def test_plain_writes_where_the_file_cannot_be_mapped(tmp_path, monkeypatch) -> None:
    import raytune_ext._journal as journal_module

    def refuse(*args: object, **kwargs: object) -> object:
        raise OSError("mmap not supported here")

    monkeypatch.setattr(journal_module.mmap, "mmap", refuse)
    path = tmp_path / "s.state"
    j = Journal(path, fsync=True)
    j.write_snapshot({"k": 1})
    j.append(["a"])
    j.append(["b"])
    j.close()
    assert Journal(path).load() == ({"k": 1, "generation": 0, "archive_size": 0}, [["a"], ["b"]])


def test_unreadable_state_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "s.state"
    path.write_text("{not json")
    with pytest.raises(JournalError, match="s.state is not valid JSON"):
        Journal(path).load()
    path.write_text(json.dumps({"generation": 0}))
    (tmp_path / "s.state.log0").write_bytes(b'["ok"]\n{"a": 1}\n["later"]\n')
    with pytest.raises(JournalError, match="line 2: not a JSON array"):
        Journal(path).load()


def _drive(run: RunState, rng: np.random.Generator, steps: int) -> None:
    """Random scheduler traffic through RunState (asks, results, tells, failures, deaths)."""
    trials = iter(f"trial_{i:05d}" for i in range(10_000))
    for _ in range(steps):
        job = run.ask_existing()
        if job is None and run.hb.free_slots:
            job = run.ask_new(next(trials))
        pending = run.hb.pending
        if pending:
            j = pending[int(rng.integers(len(pending)))]
            tid = j.config["trial_id"]
            it = int(run.progress.get(tid, 0)) + 1
            while it < j.budget:
                run.progress_seen(tid, float(it), it, f"checkpoint_{it:06d}")
                it += 1
            if rng.uniform() < 0.05:
                run.mark_dead(tid)
                run.fail(j)
            else:
                value = float(rng.uniform())
                run.result_seen(
                    tid, float(it), f"checkpoint_{it:06d}", {"loss": value, "training_iteration": it}
                )
                run.tell(j, value)
        elif run.hb.finished:
            if run.level + 1 < len(run.ladder):
                run.deepen()
            else:
                run.finish()
                return
        if rng.uniform() < 0.7:
            run.flush()  # the end of a scheduler hook


@pytest.mark.parametrize("seed", range(4))
def test_run_state_replays_to_the_state_it_was_journaled_from(tmp_path, seed: int) -> None:
    """Everything flushed is replayed to the same state; records buffered in a hook that never
    returned (a kill) are lost as a whole, never half."""
    path = tmp_path / "s.state"
    run = RunState(IterativeDeepeningHyperband(9, 3, seed=seed), [9, 27], PARAMS, Journal(path))
    run.snapshot()
    rng = np.random.default_rng(seed)
    _drive(run, rng, 150)
    run.flush()
    flushed = json.dumps(run.state_dict(), sort_keys=True)
    _drive(run, rng, 3)  # more changes, buffered only: the process dies here
    assert run._lines or run.done
    loaded = RunState.load(Journal(path), {"variant": "efficient"})
    assert json.dumps(loaded.state_dict(), sort_keys=True) == flushed
    with pytest.raises(ValueError, match="variant='preserving' differs from the saved"):
        RunState.load(Journal(path), {"variant": "preserving"})


def test_a_record_that_does_not_follow_from_the_snapshot_is_refused(tmp_path) -> None:
    path = tmp_path / "s.state"
    run = RunState(IterativeDeepeningHyperband(9, 3, seed=0), [9], PARAMS, Journal(path))
    run.snapshot()
    run.ask_new("trial_a")
    run.flush()
    run.journal.append(["e", 99])  # type: ignore[union-attr]
    run.journal.close()  # type: ignore[union-attr]
    with pytest.raises(JournalError, match="record 2 .* does not follow from the snapshot"):
        RunState.load(Journal(path), {})


STATES = Path(__file__).resolve().parent / "states"


@pytest.mark.parametrize("stored", sorted(STATES.glob("uvp-ray-idhb-scheduler.v*")), ids=lambda p: p.name)
def test_a_journal_written_by_an_earlier_version_loads_with_nothing_lost(tmp_path, stored) -> None:
    """A journal (snapshot, log, archive) stored as an earlier release wrote it - versions 2
    (rung records ``"r"`` without rows) and 3, with an integer ``"version"`` key - loads to the
    state (and, from version 3, the rows) that release loaded (``loaded.json``, made by it), goes
    on, and is written in the current format."""
    for f in stored.iterdir():
        if f.name != "loaded.json":
            shutil.copy(f, tmp_path / f.name)
    expected = json.loads((stored / "loaded.json").read_text())
    snapshot = json.loads((tmp_path / "idhb_scheduler.state").read_text())
    version = int(stored.name.split(".v")[1].split(".")[0])
    assert snapshot.get("version", version) == version

    run = RunState.load(Journal(tmp_path / "idhb_scheduler.state"), {"variant": "efficient"})
    state = json.loads(json.dumps(run.state_dict()))
    assert state.pop("format") == STATE_FORMAT.tag
    assert expected["state"].pop("version", None) in (version, None)
    expected["state"].pop("format", None)
    assert state == expected["state"]
    if "rows" in expected:
        assert json.loads(json.dumps(run.rows)) == expected["rows"]

    _drive(run, np.random.default_rng(1), 20)  # it goes on: the new records follow the old
    run.flush()
    run.snapshot()
    flushed = json.dumps(run.state_dict(), sort_keys=True)
    assert json.loads((tmp_path / "idhb_scheduler.state").read_text())["format"] == STATE_FORMAT.tag
    again = RunState.load(Journal(tmp_path / "idhb_scheduler.state"), {})
    assert json.dumps(again.state_dict(), sort_keys=True) == flushed


def test_a_snapshot_of_another_format_is_refused(tmp_path) -> None:
    path = tmp_path / "s.state"
    run = RunState(IterativeDeepeningHyperband(9, 3, seed=0), [9], PARAMS, Journal(path))
    run.snapshot()
    run.journal.close()  # type: ignore[union-attr]
    for bad in ({"version": 5}, {"format": "uvp-ray-idhb-scheduler/5"}, {"format": "uvp-idhb/1"}):
        state = {k: v for k, v in run.state_dict().items() if k != "format"}
        path.write_text(json.dumps({**state, **bad}))
        with pytest.raises(ValueError, match="not an IterativeDeepeningHyperBandScheduler state: "
                           "state format must be 'uvp-ray-idhb-scheduler/4'"):
            RunState.load(Journal(path), {})


def _stdlib_line(record: list) -> bytes:
    """The line the journal wrote before it used orjson (the standard library's encoding)."""
    return (json.dumps(record, separators=(",", ":"), default=jsonable) + "\n").encode()


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)


@given(
    head=st.lists(_SCALARS, max_size=5),
    row=st.dictionaries(st.text(), _SCALARS, max_size=25),
)
def test_plain_records_read_back_as_the_standard_library_encoded_them(head, row) -> None:
    """Ray's flattened rows of str/int/float/bool/None (the fast path): the line reads back to
    exactly what the standard library's line reads back to, floats bit for bit."""
    line = record_line(["c", *head, row])
    assert line.endswith(b"\n") and line.count(b"\n") == 1 and b"\0" not in line
    back, expected = json.loads(line), json.loads(_stdlib_line(["c", *head, row]))
    assert back == expected
    floats = [v for v in [*head, *row.values()] if type(v) is float]
    read = [v for v in [*back[1:-1], *back[-1].values()] if type(v) is float]
    assert [math.copysign(1.0, v) for v in read] == [math.copysign(1.0, v) for v in floats]


class _Colour(enum.Enum):
    RED = 1


class _Text(str):
    pass


@dataclasses.dataclass
class _Point:
    x: float


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        -float("inf"),
        np.float64(0.5),
        np.float32(float("nan")),
        np.int64(3),
        np.arange(3),
        [1.0, float("nan")],
        {"inner": float("nan")},
        (1, 2),
        2**70,
        "\ud800",
        _Colour.RED,
        _Text("x"),
        _Point(1.0),
        datetime.datetime(2026, 11, 27, 7, 0),
    ],
    ids=repr,
)
@pytest.mark.parametrize("where", ["row", "head"])
def test_other_values_are_encoded_as_the_standard_library_does(value, where) -> None:
    """NaN and infinities (orjson writes null), containers, numpy values, enums, subclasses,
    big ints, lone surrogates: the same line as before orjson, byte for byte."""
    if where == "head":
        record = ["c", "t_1", value, {"loss": 0.5}]
    else:
        record = ["c", "t_1", 1.0, {"m": value}]
    assert record_line(record) == _stdlib_line(record)


def test_a_key_that_is_not_a_string_is_encoded_as_the_standard_library_does() -> None:
    record = ["h", "t_1", {1: 0.5, "a": None}]
    assert record_line(record) == _stdlib_line(record) == b'["h","t_1",{"1":0.5,"a":null}]\n'


def test_without_orjson_every_record_is_the_standard_librarys_line(tmp_path, monkeypatch) -> None:
    """orjson is optional (the ``ray`` extra): the journal module imported where it is missing
    encodes every record with the standard library, and its logs read back."""
    import importlib.util

    monkeypatch.setitem(sys.modules, "orjson", None)  # ``import orjson`` raises ImportError
    spec = importlib.util.spec_from_file_location("journal_without_orjson", journal_module.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module._orjson is None
    for record in (["c", "t_1", 3.0, 3, None, {"loss": 0.25, "done": False}], ["t", 4, math.nan]):
        assert module.record_line(record) == _stdlib_line(record)
    j = module.Journal(tmp_path / "s.state")
    j.write_snapshot({})
    j.append(["c", "t_1", {"loss": 0.5}])
    j.close()
    assert module.Journal(tmp_path / "s.state").load()[1] == [["c", "t_1", {"loss": 0.5}]]


def test_journal_docstring_examples() -> None:
    assert doctest.testmod(journal_module, raise_on_error=True).attempted >= 5

"""The scheduler's durable state: snapshot + memory-mapped append-only log (no Ray cluster).

Kill safety is tested with a real ``SIGKILL`` of a writing process; the replay of the run state
is checked against the live state it was journaled from."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from raytune_ext._journal import Journal, JournalError
from raytune_ext._run_state import RunState
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
    j.append_lines(['["y",2.5]', '["z",null,"q"]'])
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
            j.append_lines([f'["r",{{i}}]'])
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

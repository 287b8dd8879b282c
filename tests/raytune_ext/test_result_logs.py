"""Completing a trial's result logs from journaled rows (no Ray cluster: a stand-in trial with
Ray's storage attributes on a local directory)."""

from __future__ import annotations

import csv
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.fs
import pytest

from raytune_ext._result_logs import complete_result_logs, nested, rows_after


@dataclass
class Storage:
    trial_fs_path: str
    trial_dir_name: str = "trial_0"
    storage_filesystem: Any = field(default_factory=pyarrow.fs.LocalFileSystem)


@dataclass
class StandInTrial:
    """The attributes of ``ray.tune.experiment.Trial`` the module reads."""

    storage: Storage
    local_path: str | None = None
    trial_id: str = "t_00000"


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "loss": 1.0 / i,
            "training_iteration": i,
            "time_total_s": 0.25 * i,
            "timestamp": 1000 + i,
            "done": False,
            "config/x": 0.5,
            "config/net/units": 8,
        }
        for i in range(1, n + 1)
    ]


def write_logs(directory: Path, logged: list[dict[str, Any]]) -> None:
    """result.json and progress.csv as Ray's JSON and CSV loggers write them."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "result.json", "w") as fh:
        for row in logged:
            fh.write(json.dumps(nested(row)) + "\n")
    with open(directory / "progress.csv", "w", newline="") as fh:
        flat = [{k: v for k, v in r.items() if not k.startswith("config/")} for r in logged]
        writer = csv.DictWriter(fh, list(flat[0]))
        writer.writeheader()
        writer.writerows(flat)


def read_json(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_the_missing_tail_is_appended_once_in_storage_and_staging(tmp_path) -> None:
    journaled = rows(6)
    remote, local = tmp_path / "exp" / "trial_0", tmp_path / "staging" / "trial_0"
    write_logs(remote, journaled[:2])  # Ray's last upload
    write_logs(local, journaled[:5])  # the dead driver's staging copy (same Ray session)
    trial = StandInTrial(Storage(str(remote)), str(local))
    assert complete_result_logs(trial, journaled) == 4
    for directory in (remote, local):
        assert read_json(directory / "result.json") == [nested(r) for r in journaled]
        table = read_csv(directory / "progress.csv")
        assert [int(r["training_iteration"]) for r in table] == [1, 2, 3, 4, 5, 6]
        assert table[-1]["time_total_s"] == "1.5" and "config/x" not in table[-1]
    assert complete_result_logs(trial, journaled) == 0  # nothing twice


def test_a_trial_never_uploaded_gets_its_history_unless_ray_writes_none(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journaled = rows(3)
    remote = tmp_path / "exp" / "trial_0"
    monkeypatch.setenv("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")
    assert complete_result_logs(StandInTrial(Storage(str(remote))), journaled) == 0
    assert not remote.exists()  # Ray's loggers are off: no file it would not have written
    monkeypatch.delenv("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS")
    assert complete_result_logs(StandInTrial(Storage(str(remote))), journaled) == 3
    assert read_json(remote / "result.json")[-1]["config"] == {"x": 0.5, "net": {"units": 8}}
    assert list(read_csv(remote / "progress.csv")[0]) == [
        "loss",
        "training_iteration",
        "time_total_s",
        "timestamp",
        "done",
    ]


def test_a_history_that_does_not_end_with_a_journaled_row_is_left_alone(
    tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    journaled = rows(4)
    other = [dict(journaled[0], time_total_s=99.0)]  # not a row the scheduler journaled
    remote = tmp_path / "exp" / "trial_0"
    write_logs(remote, other)
    before = (remote / "result.json").read_text()
    with caplog.at_level(logging.WARNING, logger="raytune_ext._result_logs"):
        assert complete_result_logs(StandInTrial(Storage(str(remote))), journaled) == 0
    assert (remote / "result.json").read_text() == before
    assert "ends with a row the scheduler did not journal" in caplog.text


def test_rows_after_finds_the_row_or_says_it_is_not_there() -> None:
    journaled = rows(3)
    assert rows_after(None, journaled) == journaled
    assert rows_after(nested(journaled[1]), journaled) == journaled[2:]
    assert rows_after({"training_iteration": 7, "time_total_s": 1.0, "timestamp": 3}, journaled) is None

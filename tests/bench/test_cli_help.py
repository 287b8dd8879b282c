"""Every option of every subcommand explains itself; unknown names get suggestions and short lists."""

from __future__ import annotations

import argparse

import pytest

from uvp_plugins.bench.cli import main, parser
from uvp_plugins.bench.suggest import short_list, unknown_name


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _undocumented(parser: argparse.ArgumentParser) -> list[str]:
    return [
        "/".join(a.option_strings) or a.dest
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction) and not (a.help or "").strip()
    ]


def test_every_option_of_every_subcommand_has_help_text() -> None:
    subs = _subparsers(parser())
    assert {"list", "run", "report", "demo", "idhb", "overhead", "ray-overhead", "idhb-ray",
            "tobit-runtime", "tobit-ac", "censored-quality"} <= set(subs)
    for name, sub in subs.items():
        assert not _undocumented(sub), (name, _undocumented(sub))
        assert sub.description, name


def test_demo_help_describes_its_options(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = capsys.readouterr().out
    for option, words in (("--out", "output directory"), ("--jobs", "parallel worker processes"),
                          ("--threads", "BLAS/OpenMP threads"), ("--force", "rerun runs")):
        assert option in text and words in text


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run", "--problem", "lc-synthetic", "--methods", "optuna-tpee"], "unknown method 'optuna-tpee' (did you mean 'optuna-tpe'"),
        (["run", "--problem", "lcsynthetic", "--methods", "random"], "(did you mean 'lc-synthetic'"),
        (["run", "--problem", "lc-synthetic", "--methods", "random", "--tasks", "00"], "unknown task '00' for lc-synthetic"),
    ],
)
def test_unknown_names_get_suggestions_and_a_short_list(argv, expected, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert len(err) < 400, err  # not every method on one line
    assert "see 'uvp-bench list'" in err or "valid problems: bbob" in err or "valid tasks: 0, 1, 2" in err


def test_short_list_cuts_long_lists_with_a_count_and_a_hint() -> None:
    assert short_list(["a", "b"]) == "a, b"
    text = short_list([str(i) for i in range(40)], hint="see X")
    assert text.startswith("0, 1, 2") and text.endswith("... (40 in all; see X)") and "39" not in text
    assert unknown_name("task", "x", ["1", "2"]) == "unknown task 'x'; valid tasks: 1, 2"


def test_list_prints_one_problems_tasks(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["list", "--tasks", "lc-synthetic"]) == 0
    assert "Tasks of lc-synthetic (3):\n  0, 1, 2" in capsys.readouterr().out
    assert main(["list", "--tasks", "lc-synth"]) == 2
    assert "did you mean 'lc-synthetic'" in capsys.readouterr().err


def test_report_filter_suggests_the_method_meant(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "res"
    assert main(["run", "--problem", "lc-synthetic", "--methods", "random", "--budget-factor", "2",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--methods", "randm"]) == 2
    err = capsys.readouterr().err
    assert "--methods: no runs of method 'randm' in" in err and "(did you mean 'random'?)" in err
    assert "methods with runs there: random" in err

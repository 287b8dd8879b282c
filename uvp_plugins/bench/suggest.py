"""Error messages for unknown names: "did you mean" suggestions (difflib) and short lists.

Example:
    >>> print(unknown_name("method", "optuna-tpee", ["optuna-tpe", "optuna-tpe-hyperband", "random"]))
    unknown method 'optuna-tpee' (did you mean 'optuna-tpe' or 'optuna-tpe-hyperband'?); valid methods: optuna-tpe, optuna-tpe-hyperband, random
    >>> print(unknown_name("problem", "lcbenc", ["lcbench", "rbv2_xgboost"]))
    unknown problem 'lcbenc' (did you mean 'lcbench'?); valid problems: lcbench, rbv2_xgboost
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = ["unknown_name", "did_you_mean", "short_list"]

#: lists up to this long are printed in full; longer ones are cut with a count and a hint
MAX_LISTED = 16


def short_list(values: Sequence[str], hint: str = "", limit: int = MAX_LISTED) -> str:
    """``values`` comma-separated; past ``limit`` the first ``limit - 4`` and ``"... (N in all;
    hint)"``."""
    values = [str(v) for v in values]
    if len(values) <= limit:
        return ", ".join(values)
    more = f"... ({len(values)} in all{'; ' + hint if hint else ''})"
    return ", ".join(values[: limit - 4]) + ", " + more


def did_you_mean(name: str, valid: Sequence[str]) -> str:
    """``" (did you mean 'a' or 'b'?)"`` for the close matches of ``name`` (difflib), else ``""``."""
    close = [repr(c) for c in difflib.get_close_matches(str(name), [str(v) for v in valid], n=3, cutoff=0.6)]
    if not close:
        return ""
    either = close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]
    return f" (did you mean {either}?)"


def unknown_name(
    kind: str, name: str, valid: Sequence[str], context: str = "", hint: str = ""
) -> str:
    """``unknown <kind> '<name>'<context> (did you mean ...?); valid <kind>s: <short list>``."""
    plural = kind if kind.endswith("s") else f"{kind}s"
    return (
        f"unknown {kind} {name!r}{context}{did_you_mean(name, valid)}; "
        f"valid {plural}: {short_list(valid, hint)}"
    )

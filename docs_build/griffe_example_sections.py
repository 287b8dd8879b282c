"""A griffe extension for the documentation site: our docstrings head their runnable examples
``Example:`` (singular, as in the Google style guide), which griffe's Google parser reads as an
admonition whose ``>>>`` lines Markdown would render as nested block quotes. This reads them as
the ``Examples:`` section, so that the examples render as code. The docstrings are not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE_HEADING = re.compile(r"^(\s*)Example:\s*$", flags=re.M)


class ExampleSections(griffe.Extension):
    """Renames ``Example:`` section headings to ``Examples:`` in every docstring it loads."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE_HEADING.sub(r"\1Examples:", obj.docstring.value)

"""Did you mean: the name closest to a misspelt part of a dotted path.

A leaf: ``facts`` (names found live) and ``shipped`` (names in the shipped
table) both suggest with it, so neither imports the other for it.
"""

from __future__ import annotations

import difflib


def suggest(names: list[str], parent_parts: list[str], part: str) -> str | None:
    """Did you mean: the name of ``names`` closest to ``part``, as a path under ``parent_parts``."""
    close = difflib.get_close_matches(part, names, n=1, cutoff=0.75)
    if not close:
        lowered = {n.lower(): n for n in names}
        if part.lower() in lowered:
            close = [lowered[part.lower()]]
    return f"did you mean '{'.'.join([*parent_parts, close[0]])}'?" if close else None

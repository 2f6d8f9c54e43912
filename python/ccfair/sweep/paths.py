"""Dotted scenario paths such as ``link.rate``, ``flows[0].count`` or ``flows[1].cc_params.beta``: parsing,
setting a value inside a user-level scenario dict, and the catalog column named after a path."""

from __future__ import annotations

import re
from typing import Any

from ccfair.errors import InputError

Segment = str | int
"""A table key or a list index."""

_KEY = r"[A-Za-z_][A-Za-z0-9_]*"
_PART = re.compile(rf"({_KEY})((?:\[[0-9]+\])*)")
_INDEX = re.compile(r"\[([0-9]+)\]")


def parse_path(text: object, field: str) -> tuple[Segment, ...]:
    """``"flows[0].count"`` -> ``("flows", 0, "count")``; an InputError on ``field`` if malformed."""
    if not isinstance(text, str) or not text:
        raise InputError(field, f"expected a dotted scenario path such as 'link.rate', got {text!r}")
    segments: list[Segment] = []
    for part in text.split("."):
        match = _PART.fullmatch(part)
        if match is None:
            raise InputError(
                field,
                f"{text!r} is not a dotted scenario path: write keys separated by dots, list entries as "
                "[N], e.g. 'link.buffer' or 'flows[0].count'",
            )
        segments.append(match.group(1))
        segments.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return tuple(segments)


def is_prefix(a: tuple[Segment, ...], b: tuple[Segment, ...]) -> bool:
    """Whether path ``a`` is ``b`` or contains it (``link.aqm`` contains ``link.aqm.target``)."""
    return len(a) <= len(b) and b[: len(a)] == a


def set_path(doc: dict[str, Any], path: tuple[Segment, ...], value: Any, field: str) -> None:
    """Sets ``value`` at ``path`` inside ``doc`` (in place). Missing tables on the way are created (so
    ``measure.start`` works without a ``[measure]`` table); list entries must already exist. Whether the
    final key is a scenario key is left to the scenario's own validation, which names unknown keys."""
    node: Any = doc
    walked = ""
    for i, segment in enumerate(path):
        last = i == len(path) - 1
        if isinstance(segment, int):
            if not isinstance(node, list):
                raise InputError(field, f"{walked} is not a list in the scenario, so [{segment}] is unknown")
            if segment >= len(node):
                raise InputError(
                    field,
                    f"{walked}[{segment}] does not exist: the scenario has {len(node)} entries in {walked}",
                )
            walked = f"{walked}[{segment}]"
            if last:
                node[segment] = value
            else:
                node = node[segment]
            continue
        if not isinstance(node, dict):
            raise InputError(
                field,
                f"{walked} is a {type(node).__name__} in the scenario, not a table, so it has no key "
                f"{segment!r}",
            )
        walked = f"{walked}.{segment}" if walked else segment
        if last:
            node[segment] = value
        else:
            if segment not in node:
                node[segment] = [] if isinstance(path[i + 1], int) else {}
            node = node[segment]


def column_name(text: str) -> str:
    """A path's catalog column: ``link.rate`` -> ``link_rate``, ``flows[0].count`` -> ``flows0_count``."""
    words = re.sub(r"[^A-Za-z0-9]+", "_", text.replace("[", "").replace("]", ""))
    return words.strip("_")

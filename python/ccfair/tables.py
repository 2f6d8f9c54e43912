"""Plain-text tables with aligned columns, for the command line."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

MISSING = "-"


def is_missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fixed(digits: int, scale: float = 1.0) -> Callable[[Any], str]:
    """A formatter: ``x / scale`` with ``digits`` decimals; ``-`` for None or NaN."""

    def fmt(x: Any) -> str:
        return MISSING if is_missing(x) else f"{float(x) / scale:.{digits}f}"

    return fmt


def integer(x: Any) -> str:
    """Thousands-separated integer; ``-`` for None or NaN."""
    return MISSING if is_missing(x) else f"{int(x):,}"


def text(x: Any) -> str:
    return MISSING if is_missing(x) else str(x)


@dataclass(frozen=True)
class Column:
    """A table column: header, the row key it shows, how to format it, and its alignment."""

    header: str
    key: str
    fmt: Callable[[Any], str] = text
    align: Literal["left", "right"] = "right"


def render(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column], indent: str = "  ") -> str:
    """The table as lines of text: a header row, then one row per mapping."""
    cells = [[c.fmt(row.get(c.key)) for c in columns] for row in rows]
    widths = [max([len(c.header)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.ljust(w) if c.align == "left" else v.rjust(w)
            for v, w, c in zip(values, widths, columns, strict=True)
        ]
        return (indent + "  ".join(parts)).rstrip()

    return "\n".join([line([c.header for c in columns]), *(line(r) for r in cells)])


def render_pairs(pairs: Sequence[tuple[str, str]], indent: str = "  ") -> str:
    """Two columns, name and value, the names padded to one width."""
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{indent}{k.ljust(width)}  {v}".rstrip() for k, v in pairs)

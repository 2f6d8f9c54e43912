"""Plain-text tables with aligned columns, for the command line. Every cell and header is shown through
:func:`ccfair.terminal.printable`: tables show what results directories hold, which anyone may have
written."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ccfair.terminal import printable

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


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in its number: ``1 scenario``, ``3 scenarios`` (``plural``: an irregular one)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def yes_no(x: Any) -> str:
    """``yes`` or ``no`` for a flag; ``-`` for None or NaN."""
    return MISSING if is_missing(x) else ("yes" if x else "no")


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
    cells = [[printable(c.fmt(row.get(c.key))) for c in columns] for row in rows]
    headers = [printable(c.header) for c in columns]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.ljust(w) if c.align == "left" else v.rjust(w)
            for v, w, c in zip(values, widths, columns, strict=True)
        ]
        return (indent + "  ".join(parts)).rstrip()

    return "\n".join([line(headers), *(line(r) for r in cells)])


def render_pairs(pairs: Sequence[tuple[str, str]], indent: str = "  ") -> str:
    """Two columns, name and value, the names padded to one width."""
    shown = [(printable(k), printable(v)) for k, v in pairs]
    width = max((len(k) for k, _ in shown), default=0)
    return "\n".join(f"{indent}{k.ljust(width)}  {v}".rstrip() for k, v in shown)

"""Snapshot text: comment lines, then sections of aligned columns; rendering, parsing and a cell-level diff.

::

    # ccfair snapshot: reno-fifo
    # ...

    [window] per flow, measurement window 600000000 to 3000000000 ns
    flow  group  cc    delivered_bytes  sent_segments  ...
    0     0      reno          2167656           1520  ...

Every section is a table whose first column is the row's key (a flow id, a counter's name, a series column).
Cells never contain spaces. Numbers are right-aligned, text is left-aligned, so a changed value changes one
line and a review diff shows it in place. A float is written as ``0x`` and the 16 hex digits of its IEEE-754
bits (exact, and the same from any language); the diff shows the values they stand for beside them.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

_SECTION = re.compile(r"\[(\w+)\](?: (.*))?")
_NUMBER = re.compile(r"-?\d+")
_FLOAT_BITS = re.compile(r"0x[0-9a-f]{16}")
DIGEST_COLUMN = "sha256"
T = TypeVar("T")


@dataclass(frozen=True)
class Section:
    """A table: ``name`` (its key in the text), a free-text ``title``, column names, rows of cells."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def row(self, key: str) -> dict[str, str] | None:
        """The row whose first cell is ``key``, as column -> cell."""
        for r in self.rows:
            if r[0] == key:
                return dict(zip(self.columns, r, strict=True))
        return None


@dataclass(frozen=True)
class Snapshot:
    """A snapshot: ``header`` lines (shown after ``#``) and its sections."""

    header: tuple[str, ...]
    sections: tuple[Section, ...]

    def section(self, name: str) -> Section | None:
        for s in self.sections:
            if s.name == name:
                return s
        return None


def render(snapshot: Snapshot) -> str:
    """The text of a snapshot (ends with one newline)."""
    lines = [f"# {h}".rstrip() for h in snapshot.header]
    for s in snapshot.sections:
        lines += ["", f"[{s.name}] {s.title}".rstrip(), *_aligned(s.columns, s.rows)]
    return "\n".join(lines) + "\n"


def _aligned(columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> list[str]:
    table = [columns, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    numeric = [
        all(_NUMBER.fullmatch(r[i]) or r[i] == "-" for r in rows) and bool(rows) for i in range(len(columns))
    ]
    out = []
    for r in table:
        cells = [
            cell.rjust(w) if num and i > 0 else cell.ljust(w)
            for i, (cell, w, num) in enumerate(zip(r, widths, numeric, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return out


def parse(text: str) -> Snapshot:
    """Reads the text :func:`render` writes; raises ValueError naming the line of a malformed table."""
    header: list[str] = []
    sections: list[Section] = []
    current: tuple[str, str] | None = None
    columns: tuple[str, ...] = ()
    rows: list[tuple[str, ...]] = []

    def close() -> None:
        if current is not None:
            sections.append(Section(current[0], current[1], columns, tuple(rows)))

    for number, line in enumerate(text.splitlines(), start=1):
        if current is None and line.startswith("#"):
            header.append(line[2:] if line.startswith("# ") else line[1:])
            continue
        if not line.strip():
            continue
        m = _SECTION.fullmatch(line)
        if m:
            close()
            current, columns, rows = (m.group(1), m.group(2) or ""), (), []
            continue
        if current is None:
            raise ValueError(f"line {number}: a table row before any [section]")
        cells = tuple(line.split())
        if not columns:
            columns = cells
        elif len(cells) != len(columns):
            raise ValueError(f"line {number}: {len(cells)} cells under {len(columns)} columns")
        else:
            rows.append(cells)
    close()
    return Snapshot(tuple(header), tuple(sections))


def diff(expected: Snapshot, got: Snapshot) -> list[str]:
    """What moved from ``expected`` to ``got``, one line per changed cell, row, column set or section."""
    out: list[str] = []
    for i, (a, b) in enumerate(zip(expected.header, got.header, strict=False)):
        if a != b:
            out.append(f"header line {i + 1}: expected {a!r}, got {b!r}")
    if len(expected.header) != len(got.header):
        out.append(f"header: expected {len(expected.header)} lines, got {len(got.header)}")
    names = _union([s.name for s in expected.sections], [s.name for s in got.sections])
    for e, g in _on_both_sides(names, expected.section, got.section, lambda n: f"[{n}]", "section", out):
        out += _section_diff(e, g)
    return out


def _on_both_sides(
    keys: list[str],
    expected: Callable[[str], T | None],
    got: Callable[[str], T | None],
    label: Callable[[str], str],
    noun: str,
    out: list[str],
) -> Iterator[tuple[T, T]]:
    """The (expected, got) items of the ``keys`` both sides have; a line in ``out`` for each key that one
    side lacks ("a new row", "the row is gone")."""
    for key in keys:
        e, g = expected(key), got(key)
        if e is None:
            out.append(f"{label(key)}: a new {noun}")
        elif g is None:
            out.append(f"{label(key)}: the {noun} is gone")
        else:
            yield e, g


def _union(first: list[str], second: list[str]) -> list[str]:
    """The keys of ``first`` in their order, then those only ``second`` has."""
    return first + [k for k in second if k not in first]


def _section_diff(e: Section, g: Section) -> list[str]:
    out: list[str] = []
    if e.title != g.title:
        out.append(f"[{e.name}] title: expected {e.title!r}, got {g.title!r}")
    if e.columns != g.columns:
        return [*out, f"[{e.name}] columns: expected {' '.join(e.columns)}, got {' '.join(g.columns)}"]
    what = e.columns[0]
    keys = _union([r[0] for r in e.rows], [r[0] for r in g.rows])
    for er, gr in _on_both_sides(keys, e.row, g.row, lambda k: f"[{e.name}] {what} {k}", "row", out):
        key = er[what]
        for column in e.columns[1:]:
            if er[column] == gr[column]:
                continue
            if column == DIGEST_COLUMN:
                out.append(f"[{e.name}] {key}: digest changed ({er[column]} -> {gr[column]})")
            else:
                was, now = _shown(er[column]), _shown(gr[column])
                out.append(f"[{e.name}] {what} {key}, {column}: expected {was}, got {now}")
    return out


def _shown(cell: str) -> str:
    """A cell for a diff line: a float's bits with the value they stand for."""
    if _FLOAT_BITS.fullmatch(cell):
        (value,) = struct.unpack("<d", struct.pack("<Q", int(cell, 16)))
        return f"{cell} ({value!r})"
    return cell

"""TOML in and out: reading a user's file safely, and a small writer for scenario documents.

Reading (:func:`read_toml`): every problem is an InputError naming the file, a document nested deeper than
:data:`MAX_DEPTH` tables and arrays included (no scenario or plan needs more than about six levels, and deeper
data would exhaust the recursion of the parser and of every walker after it).

Writing (:func:`dumps`): tables of scalars, inline tables, arrays of tables. Top-level scalars come first,
then one ``[table]`` per nested table and one ``[[name]]`` per element of an array of tables. Dictionaries
inside a table are written as inline tables. ``None`` values are left out (TOML has no null). Output parses
back with :mod:`tomllib` to the same data.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ccfair import _native
from ccfair.errors import InputError

MAX_DEPTH: int = _native.defaults()["max_depth"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _key(k: str) -> str:
    return k if _BARE_KEY.fullmatch(k) else _string(k)


def _string(s: str) -> str:
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, Mapping):
        items = [f"{_key(k)} = {_value(x)}" for k, x in v.items() if x is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(v, Sequence):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_array(v: Any) -> bool:
    return (
        isinstance(v, Sequence)
        and not isinstance(v, str)
        and len(v) > 0
        and all(isinstance(x, Mapping) for x in v)
    )


def _body(table: Mapping[str, Any]) -> list[str]:
    return [f"{_key(k)} = {_value(v)}" for k, v in table.items() if v is not None]


def dumps(document: Mapping[str, Any]) -> str:
    """The TOML text of ``document``."""
    scalars = {k: v for k, v in document.items() if not isinstance(v, Mapping) and not _is_table_array(v)}
    lines = _body(scalars)
    for k, v in document.items():
        if isinstance(v, Mapping):
            lines += ["", f"[{_key(k)}]", *_body(v)]
        elif _is_table_array(v):
            for element in v:
                lines += ["", f"[[{_key(k)}]]", *_body(element)]
    return "\n".join(lines).lstrip("\n") + "\n"


def check_depth(value: object, field: str) -> None:
    """Raises an InputError on ``field`` if ``value`` nests tables and arrays more than :data:`MAX_DEPTH`
    deep (the document itself is level 1): the scenario crate's check (``crates/ccfair-scenario/src/
    value.rs``), which the resolution of a scenario makes too."""
    try:
        _native.check_depth(value, field)
    except _native.InputError as e:
        raise InputError(e.field, e.message) from None


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file as a dict; a missing or unreadable file, bad TOML or too deep nesting is an InputError
    whose field is the path (the parser's message gives line and column)."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise InputError(str(p), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(p), "is a directory, not a TOML file") from None
    except OSError as e:
        raise InputError(str(p), f"cannot read: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(str(p), f"invalid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise InputError(str(p), f"invalid TOML: not UTF-8 text ({e.reason})") from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise InputError(
            str(p), f"nested too deeply: more than {MAX_DEPTH} levels of tables and arrays"
        ) from None
    check_depth(data, str(p))
    return data

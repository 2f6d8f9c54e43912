"""Reading JSON that anyone may have written (a results directory's catalog, a saved run's summary, a truth
file): nested at most :data:`MAX_DEPTH` levels, the limit of a scenario's TOML (:mod:`ccfair.toml_text`).
Every document ccfair writes nests a few levels (plan -> scenario -> flows -> flow -> cc_params -> ...); a
deeper one is not ccfair's, and would exhaust recursion in the parser or in the code that walks it."""

from __future__ import annotations

import json
from typing import Any

from ccfair.errors import InputError
from ccfair.toml_text import MAX_DEPTH

__all__ = ["MAX_DEPTH", "parse_json"]


def parse_json(text: object, what: str) -> Any:
    """The JSON document ``text``, nested at most :data:`MAX_DEPTH` levels; an InputError on ``what``
    (naming where it was read) if it is not one."""
    if not isinstance(text, str):
        raise InputError(what, "missing (expected a JSON document)")
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputError(what, f"nested more than {MAX_DEPTH} levels") from None
    except ValueError as e:
        raise InputError(what, f"not valid JSON ({e})") from None
    if _depth(value) > MAX_DEPTH:
        raise InputError(what, f"nested more than {MAX_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in a JSON value (iteratively: the value may be deep)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest

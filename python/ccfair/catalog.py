"""The native catalog of congestion controls and queue disciplines, the single source of their names and
parameters (nothing here repeats a parameter list)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from ccfair import _native


@cache
def catalog() -> dict[str, Any]:
    """``{"congestion_controls": [...], "queue_disciplines": [...]}`` as documented by ``_native.catalog``."""
    data: dict[str, Any] = json.loads(_native.catalog())
    return data


def queue_discipline(name: str) -> dict[str, Any] | None:
    """The catalog entry of the queue discipline ``name``, or None."""
    for q in catalog()["queue_disciplines"]:
        if q["name"] == name:
            entry: dict[str, Any] = q
            return entry
    return None


def queue_discipline_names() -> list[str]:
    return [q["name"] for q in catalog()["queue_disciplines"]]

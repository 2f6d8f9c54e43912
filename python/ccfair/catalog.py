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


def canonical_cc(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The canonical configuration of a congestion control (all defaults filled) from ``_native.check_cc``.

    Raises ``ValueError("field: message")`` from the native side, where field is ``cc`` (unknown name),
    ``cc_params`` (not a table, unknown or mistyped parameter) or ``cc_params.<name>`` (out of range)."""
    config: dict[str, Any] = json.loads(_native.check_cc(name, json.dumps(params)))
    return config

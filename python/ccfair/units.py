"""Quantities with units, as written in scenarios, sweep plans and command-line options: parsed into integers
in base units and formatted back, by the scenario crate's one implementation (``crates/ccfair-scenario/src/
units.rs``: the accepted forms, tc's spellings, the refusal of spellings with two meanings and of byte rates,
exact arithmetic, the 10^±40 bound), through ``_native.parse_quantity`` and ``_native.format_quantity``.

Base units: bit/s for rates, bytes for sizes, nanoseconds for durations. Every error is a
:class:`~ccfair.errors.InputError` naming the field and the allowed forms.

Numbers typed on a command line are read here too (:func:`whole_number`, :func:`decimal_number`), in ASCII
digits only: Python's ``int()`` and ``float()`` also take the decimal digits of other scripts (U+0661,
ARABIC-INDIC DIGIT ONE, reads as 1) and ``int()`` takes underscores (``1_0``), which no tool a scenario is
compared with (tc, sysctl, the kernel's netlink) accepts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from ccfair import _native
from ccfair.errors import InputError

BufferKind = Literal["packets", "bytes", "bdp", "time"]

# A decimal number in ASCII digits, optionally signed, optionally with an exponent.
_DECIMAL = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")
# A count: ASCII digits only, and few enough that int() is quick (its own limit is 4300 digits, and anything
# beyond 30 is far beyond every range checked).
_WHOLE = re.compile(r"\s*[0-9]{1,30}\s*")


def whole_number(text: str) -> int | None:
    """``text`` as a whole number written in ASCII digits (spaces around it allowed), or None: no sign, no
    underscores, no other script's digits, at most 30 digits."""
    return int(text) if _WHOLE.fullmatch(text) else None


def decimal_number(text: str) -> float | None:
    """``text`` as a finite decimal number written in ASCII digits (``0.9``, ``-2``, ``1e11``), or None
    (``nan``, ``inf``, other scripts' digits, an exponent beyond float range)."""
    if not _DECIMAL.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _parse(kind: str, value: object, field: str, allow_zero: bool = False) -> object:
    try:
        return _native.parse_quantity(kind, value, field, allow_zero)
    except _native.InputError as e:
        raise InputError(e.field, e.message) from None


def _parse_int(kind: str, value: object, field: str, allow_zero: bool = False) -> int:
    """A quantity the native parser returns as a whole number (every kind but ``bdp``)."""
    n = _parse(kind, value, field, allow_zero)
    assert isinstance(n, int)
    return n


def parse_rate_bps(value: object, field: str, *, allow_zero: bool = False) -> int:
    """A rate in bit/s, e.g. ``"10Mbps"``, ``"10Mbit/s"`` or ``"10mbit"`` -> 10_000_000. Positive unless
    ``allow_zero``."""
    return _parse_int("rate", value, field, allow_zero)


def parse_size_bytes(value: object, field: str) -> int:
    """A positive size in bytes, e.g. ``"150KB"`` -> 150_000, ``"64KiB"`` -> 65_536."""
    return _parse_int("size", value, field)


def parse_duration_ns(value: object, field: str, *, allow_zero: bool = False) -> int:
    """A duration in ns, e.g. ``"50ms"`` -> 50_000_000. Positive unless ``allow_zero``."""
    return _parse_int("duration", value, field, allow_zero)


def parse_packets(value: object, field: str) -> int:
    """A positive whole number of packets, e.g. ``"1000pkt"`` -> 1000."""
    return _parse_int("packets", value, field)


def parse_bdp_multiple(value: object, field: str) -> float:
    """A positive multiple of the bandwidth-delay product, e.g. ``"0.5bdp"`` -> 0.5."""
    x = _parse("bdp", value, field)
    assert isinstance(x, float)
    return x


@dataclass(frozen=True)
class Buffer:
    """A bottleneck buffer as written: ``kind`` says how to read ``value``.

    - ``packets``: ``value`` packets (int)
    - ``bytes``: ``value`` bytes (int)
    - ``bdp``: ``value`` times rate x base RTT (float)
    - ``time``: the bytes the link sends in ``value`` nanoseconds (int)
    """

    kind: BufferKind
    value: int | float

    def __str__(self) -> str:
        return format_buffer(self)


def parse_buffer(value: object, field: str) -> Buffer:
    """A buffer: ``'1bdp'`` (multiple of rate x base_rtt), ``'1000pkt'``, ``'150KB'`` / ``'64KiB'`` (bytes)
    or ``'20ms'`` (queueing delay at the link rate)."""
    pair = _parse("buffer", value, field)
    assert isinstance(pair, tuple)
    kind, amount = pair
    return Buffer(kind, amount)


def _whole(value: float) -> int:
    """A quantity in base units to write: a float (a value read back from JSON) is written rounded."""
    return value if isinstance(value, int) else round(value)


def format_rate(bps: float) -> str:
    """``10_000_000`` -> ``"10Mbps"``; parses back to the same integer."""
    return _native.format_quantity("rate", _whole(bps))


def format_size(n_bytes: float) -> str:
    """``150_000`` -> ``"150KB"``, ``65_536`` -> ``"64KiB"``; parses back to the same integer."""
    return _native.format_quantity("size", _whole(n_bytes))


def format_duration(ns: float) -> str:
    """``50_000_000`` -> ``"50ms"``, ``12_500_000`` -> ``"12.5ms"``; parses back to the same integer."""
    return _native.format_quantity("duration", _whole(ns))


def format_buffer(buffer: Buffer) -> str:
    """The scenario form of a buffer; parses back to an equal :class:`Buffer`."""
    return _native.format_quantity(buffer.kind, buffer.value)

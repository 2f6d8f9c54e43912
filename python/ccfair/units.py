"""Quantities with units, as written in scenarios: parsing into integers in base units and formatting back.

Base units: bit/s for rates, bytes for sizes, nanoseconds for durations. Decimal prefixes (k, M, G, T) are
powers of 1000, binary ones (Ki, Mi, Gi, Ti) powers of 1024. Results that are not whole base units are rounded
to the nearest one (halves up); a quantity that must be positive and rounds to zero is rejected.

Accepted forms:

- rates, in bits per second: ``1000bps``, ``800kbps`` (or ``800Kbps``), ``10Mbps``, ``2.5Gbps``, ``1Tbps``;
  the SI spelling ``10Mbit/s`` (``bit/s``, ``kbit/s``, ``Mbit/s``, ``Gbit/s``, ``Tbit/s``, or ``Mb/s``);
  tc's ``10mbit`` (``bit``, ``kbit``, ``mbit``, ``gbit``, ``tbit``, any case, as tc reads them)
- sizes: ``1500B``, ``150KB``, ``1.5MB``, ``1GB``, ``1TB``, ``64KiB``, ``1MiB``, ``1GiB``, ``1TiB``
- durations: ``10ns``, ``200us`` (or ``200µs``), ``50ms``, ``1.5s``, ``2min``, ``1h``
- packets: ``1000pkt``
- multiples of the bandwidth-delay product: ``0.5bdp``

Rate spellings with two meanings are refused, with both readings in the message: tc (``man tc``, "UNITS")
reads ``mbps``, ``gbps`` and ``tbps`` as mega-, giga- and terabytes per second, while elsewhere they are
often bits, so a tc line copied into a scenario would be 8 times off either way. The capitalised ``Mbps``,
``Gbps`` and ``Tbps`` are the networking literature's megabits and are kept; ``bps`` and ``kbps`` are bits
as everywhere outside tc (tc alone reads them as bytes: its ``rate 100kbps`` is ``800kbit``). Byte rates
(``MB/s``, ``MBps``) are refused with the bit rate to write instead.

Every error is a :class:`~ccfair.errors.ScenarioError` naming the field and the allowed forms.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

from ccfair.errors import ScenarioError

RATE_PREFIXES: dict[str, int] = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
RATE_UNITS_BPS: dict[str, int] = {
    "bps": 1,
    "kbps": 10**3,
    "Kbps": 10**3,
    "Mbps": 10**6,
    "Gbps": 10**9,
    "Tbps": 10**12,
    # b/s (a lower-case b is a bit, IEEE 1541)
    **{f"{p}b/s": n for p, n in RATE_PREFIXES.items()},
    "Kb/s": 10**3,
}
# The words with "bit" in them are read in any case (tc ignores case): bit/s, kbit/s, ...; bit, kbit, ...
BIT_RATE_UNITS_BPS: dict[str, int] = {
    f"{p.lower()}bit{s}": n for p, n in RATE_PREFIXES.items() for s in ("/s", "")
}
# Refused: spellings with two readings (tc's bytes, elsewhere bits), and byte rates.
AMBIGUOUS_RATE_UNITS = ("mbps", "gbps", "tbps")
BYTE_RATE_UNITS = tuple(f"{p}B/s" for p in (*RATE_PREFIXES, "K")) + tuple(
    f"{p}Bps" for p in (*RATE_PREFIXES, "K") if p
)
SIZE_UNITS_BYTES: dict[str, int] = {
    "B": 1,
    "KB": 10**3,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
DURATION_UNITS_NS: dict[str, int] = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
PACKET_UNITS: dict[str, int] = {"pkt": 1}
BDP_UNITS: dict[str, int] = {"bdp": 1}

RATE_FORMS = (
    "a rate such as '10Mbps', '10Mbit/s' or tc's '10mbit' (units: bps, kbps, Mbps, Gbps, Tbps; "
    "bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s; bit, kbit, mbit, gbit, tbit)"
)
SIZE_FORMS = "a size such as '150KB' or '64KiB' (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
DURATION_FORMS = "a duration such as '50ms' (units: ns, us, ms, s, min, h)"
PACKET_FORMS = "a packet count such as '1000pkt'"
BDP_FORMS = "a multiple of the bandwidth-delay product such as '0.5bdp'"
BUFFER_FORMS = (
    "a buffer such as '1bdp' (multiple of rate x base_rtt), '1000pkt' (packets), "
    "'150KB' / '64KiB' (bytes) or '20ms' (queueing delay at the link rate)"
)

# A decimal number (optionally signed, optionally with an exponent) followed by a unit made of letters.
_QUANTITY = re.compile(
    r"^\s*(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>[A-Za-zµ/]*)\s*$"
)
_NON_FINITE = re.compile(r"^\s*[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
# Every quantity fits in 64 bits of its base unit, and no unit is worth more than 10^13 base units, so a
# number beyond 10^±40 is out of range whatever its unit; refusing it before exact arithmetic keeps
# "1e99999999ms" from building a hundred-million-digit integer.
MAX_DECIMAL_EXPONENT = 40
MAX_BASE_UNITS = 2**64 - 1


def _exact_quantity(value: object, field: str, units: dict[str, int], forms: str) -> tuple[Fraction, str]:
    """Parses ``value`` into (amount in base units, unit as written). Rejects negatives, NaN and inf."""
    if isinstance(value, bool) or not isinstance(value, str):
        if isinstance(value, int | float):
            raise ScenarioError(field, f"missing unit in {value!r}: expected {forms}")
        raise ScenarioError(field, f"expected {forms}, got {type(value).__name__} {value!r}")
    if _NON_FINITE.match(value):
        raise ScenarioError(field, f"{value!r} is not a finite number: expected {forms}")
    m = _QUANTITY.match(value)
    if m is None:
        raise ScenarioError(field, f"cannot read {value!r}: expected {forms}")
    unit = m["unit"]
    if unit == "":
        raise ScenarioError(field, f"missing unit in {value!r}: expected {forms}")
    if unit not in units:
        raise ScenarioError(field, f"unknown unit {unit!r} in {value!r}: expected {forms}")
    try:
        written = Decimal(m["num"])
    except (InvalidOperation, ValueError) as e:  # pragma: no cover - the pattern admits only valid decimals
        raise ScenarioError(field, f"cannot read {value!r}: expected {forms}") from e
    if written != 0 and written.adjusted() > MAX_DECIMAL_EXPONENT:
        raise ScenarioError(field, f"{value!r} is too large")
    if written != 0 and written.adjusted() < -MAX_DECIMAL_EXPONENT:
        raise ScenarioError(field, f"{value!r} is too small: it rounds to zero")
    number = Fraction(written)
    if number < 0:
        raise ScenarioError(field, f"must not be negative, got {value!r}")
    return number * units[unit], unit


def _round_half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def _integer(value: object, field: str, units: dict[str, int], forms: str, positive: bool) -> int:
    amount, _ = _exact_quantity(value, field, units, forms)
    n = _round_half_up(amount)
    if positive and amount == 0:
        raise ScenarioError(field, f"must be positive, got {value!r}")
    if positive and n == 0:
        raise ScenarioError(field, f"{value!r} rounds to zero: must be at least one base unit")
    if n > MAX_BASE_UNITS:
        raise ScenarioError(field, f"{value!r} is too large")
    return n


def _rate_units(value: str, field: str) -> dict[str, int]:
    """The rate units to read ``value`` with: :data:`RATE_UNITS_BPS`, plus its own unit if that is a "bit"
    word in any case (``Mbit/s``, tc's ``MBIT``). Raises for a spelling with two meanings or a byte rate,
    saying what to write instead."""
    m = _QUANTITY.match(value)
    if m is None:
        return RATE_UNITS_BPS
    unit, number = m["unit"], m["num"]
    if unit.lower() in BIT_RATE_UNITS_BPS:
        return {**RATE_UNITS_BPS, unit: BIT_RATE_UNITS_BPS[unit.lower()]}
    if unit in AMBIGUOUS_RATE_UNITS:
        prefix = unit[0].upper()
        raise ScenarioError(
            field,
            f"{value.strip()!r} is ambiguous: tc reads {unit!r} as {prefix}B per second (bytes: "
            f"{number}{unit} = {_times_eight(number)}{prefix}bit/s), elsewhere it often means {prefix}bit/s; "
            f"write '{number}{prefix}bit/s' or '{number}{prefix}bps' for bits per second",
        )
    if unit in BYTE_RATE_UNITS:
        prefix = unit[:-3].replace("K", "k")
        raise ScenarioError(
            field,
            f"{value.strip()!r} is a rate in bytes per second; rates are in bits per second: write "
            f"'{_times_eight(number)}{prefix}bit/s'",
        )
    return RATE_UNITS_BPS


def _times_eight(number: str) -> str:
    return format((Decimal(number) * 8).normalize(), "f")


def parse_rate_bps(value: object, field: str, *, allow_zero: bool = False) -> int:
    """A rate in bit/s, e.g. ``"10Mbps"``, ``"10Mbit/s"`` or ``"10mbit"`` -> 10_000_000. Positive unless
    ``allow_zero``."""
    units = _rate_units(value, field) if isinstance(value, str) else RATE_UNITS_BPS
    return _integer(value, field, units, RATE_FORMS, positive=not allow_zero)


def parse_size_bytes(value: object, field: str) -> int:
    """A positive size in bytes, e.g. ``"150KB"`` -> 150_000, ``"64KiB"`` -> 65_536."""
    return _integer(value, field, SIZE_UNITS_BYTES, SIZE_FORMS, positive=True)


def parse_duration_ns(value: object, field: str, *, allow_zero: bool = False) -> int:
    """A duration in ns, e.g. ``"50ms"`` -> 50_000_000. Positive unless ``allow_zero``."""
    return _integer(value, field, DURATION_UNITS_NS, DURATION_FORMS, positive=not allow_zero)


def parse_packets(value: object, field: str) -> int:
    """A positive whole number of packets, e.g. ``"1000pkt"`` -> 1000."""
    amount, _ = _exact_quantity(value, field, PACKET_UNITS, PACKET_FORMS)
    if amount.denominator != 1:
        raise ScenarioError(field, f"a packet count must be a whole number, got {value!r}")
    if amount == 0:
        raise ScenarioError(field, f"must be positive, got {value!r}")
    if amount > MAX_BASE_UNITS:
        raise ScenarioError(field, f"{value!r} is too large")
    return int(amount)


def parse_bdp_multiple(value: object, field: str) -> float:
    """A positive multiple of the bandwidth-delay product, e.g. ``"0.5bdp"`` -> 0.5."""
    amount, _ = _exact_quantity(value, field, BDP_UNITS, BDP_FORMS)
    if amount == 0:
        raise ScenarioError(field, f"must be positive, got {value!r}")
    multiple = float(amount)  # within float range: the exponent is bounded (MAX_DECIMAL_EXPONENT)
    if not math.isfinite(multiple):
        raise ScenarioError(field, f"{value!r} is too large")
    return multiple


BufferKind = Literal["packets", "bytes", "bdp", "time"]


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
    """A buffer in any of the forms of :data:`BUFFER_FORMS`."""
    if isinstance(value, str):
        m = _QUANTITY.match(value)
        unit = m["unit"] if m else None
        if unit in PACKET_UNITS:
            return Buffer("packets", parse_packets(value, field))
        if unit in BDP_UNITS:
            return Buffer("bdp", parse_bdp_multiple(value, field))
        if unit in DURATION_UNITS_NS:
            return Buffer("time", parse_duration_ns(value, field))
        if unit in SIZE_UNITS_BYTES:
            return Buffer("bytes", parse_size_bytes(value, field))
    all_units = PACKET_UNITS | BDP_UNITS | DURATION_UNITS_NS | SIZE_UNITS_BYTES
    _exact_quantity(value, field, all_units, BUFFER_FORMS)  # raises the precise error
    raise ScenarioError(field, f"cannot read {value!r}: expected {BUFFER_FORMS}")  # pragma: no cover


def _decimal_text(numerator: int, unit: int) -> str:
    d = Decimal(numerator) / Decimal(unit)
    return format(d.normalize(), "f")


def _scaled(value: int, units: list[tuple[str, int]], zero: str) -> str:
    """``value`` in the largest unit not above it (units sorted from largest), as an exact decimal."""
    if value == 0:
        return "0" + zero
    for name, size in units:
        if value >= size:
            return _decimal_text(value, size) + name
    name, size = units[-1]
    return _decimal_text(value, size) + name


def format_rate(bps: int) -> str:
    """``10_000_000`` -> ``"10Mbps"``; parses back to the same integer."""
    return _scaled(
        bps, [("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3), ("bps", 1)], "bps"
    )


def format_size(n_bytes: int) -> str:
    """``150_000`` -> ``"150KB"``, ``65_536`` -> ``"64KiB"``; parses back to the same integer."""
    if n_bytes >= 1024 and n_bytes % 1024 == 0 and n_bytes % 1000 != 0:
        return _scaled(n_bytes, [("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)], "B")
    return _scaled(n_bytes, [("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3), ("B", 1)], "B")


def format_duration(ns: int) -> str:
    """``50_000_000`` -> ``"50ms"``, ``12_500_000`` -> ``"12.5ms"``; parses back to the same integer."""
    return _scaled(ns, [("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)], "s")


def format_buffer(buffer: Buffer) -> str:
    """The scenario form of a buffer; parses back to an equal :class:`Buffer`."""
    if buffer.kind == "packets":
        return f"{int(buffer.value)}pkt"
    if buffer.kind == "bytes":
        return format_size(int(buffer.value))
    if buffer.kind == "time":
        return format_duration(int(buffer.value))
    multiple = float(buffer.value)
    return f"{int(multiple)}bdp" if multiple.is_integer() and multiple < 1e15 else f"{multiple!r}bdp"

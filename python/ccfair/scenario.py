"""Scenarios: typed models of the TOML format, their validation, and resolution into the native spec.

A scenario file::

    duration = "60s"
    interval = "100ms"          # time-series interval, default 100ms
    seed = 1                    # optional
    [measure]                   # optional; default start = 20 % of duration, end = duration
    start = "12s"
    end = "60s"
    [link]
    rate = "10Mbps"
    buffer = "1bdp"             # "0.5bdp" | "1000pkt" | "150KB" | "20ms"
    base_rtt = "50ms"           # optional, for bdp buffers; default = the smallest flow-group rtt
    aqm = "fifo"                # or a table [link.aqm] with name = "codel" and the discipline's parameters
                                # (see `ccfair list`; *_ns take "5ms", *_bps "10Mbps", *_bytes "30KB" too)
    mtu = 1500                  # bytes, 576..9000
    [[flows]]
    cc = "cubic"                # a congestion control or alias (see `ccfair list`)
    count = 1
    rtt = "50ms"                # base propagation RTT of this group
    start = "0s"
    stop = "40s"                # optional, default: end of run
    initial_window = 10
    pacing = false
    loss = 0.0                  # Bernoulli loss on this group's own path, [0, 1)
    ecn = "off"                 # "off" | "classic" (RFC 3168, ECT(0)) | "l4s" (ECT(1), Accurate ECN)
    cc_params = { beta = 0.7 }
    label = "bulk"              # free text for tables

Quantities are held in base units (``rate_bps``, ``rtt_ns``, ...). Every problem is a
:class:`~ccfair.errors.ScenarioError` whose field is a dotted path such as ``flows[1].rtt``.

Buffer resolution: ``Npkt`` is a packet limit of N. ``bdp`` and duration forms are first converted to bytes,
rate x time / 8 (the bdp form uses ``base_rtt`` x the multiple), then to a packet limit of
round(bytes / mtu) (halves up). Byte forms (``B``, ``KB``, ``KiB``, ...) are a byte limit. A buffer smaller
than one packet (fewer bytes than the MTU) is rejected.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from ccfair import _native
from ccfair.catalog import canonical_cc, catalog
from ccfair.errors import ScenarioError
from ccfair.resources import Estimate
from ccfair.toml_text import check_depth, read_toml
from ccfair.toml_text import dumps as toml_dumps
from ccfair.units import (
    Buffer,
    format_buffer,
    format_duration,
    format_rate,
    parse_buffer,
    parse_duration_ns,
    parse_rate_bps,
    parse_size_bytes,
)

_LIMITS = catalog()["limits"]
MIN_MTU_BYTES: int = _LIMITS["min_mtu_bytes"]
MAX_MTU_BYTES: int = _LIMITS["max_mtu_bytes"]
HEADER_BYTES: int = _LIMITS["header_bytes"]
MAX_FLOWS: int = _LIMITS["max_flows"]
DEFAULT_INTERVAL_NS = 100_000_000
# Per-flow ECN: off; classic = RFC 3168 (ECT(0), ECE until CWR); l4s = RFC 9331 (ECT(1), per-packet feedback).
ECN_MODES = ("off", "classic", "l4s")
DEFAULT_SEED = 1
DEFAULT_MEASURE_START_FRACTION = Fraction(1, 5)
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

_TOP_KEYS = ("duration", "interval", "seed", "measure", "link", "flows")
_MEASURE_KEYS = ("start", "end")
_LINK_KEYS = ("rate", "buffer", "base_rtt", "aqm", "mtu")
_FLOW_KEYS = (
    "cc",
    "count",
    "rtt",
    "start",
    "stop",
    "initial_window",
    "pacing",
    "loss",
    "ecn",
    "cc_params",
    "label",
)


@dataclass(frozen=True)
class Aqm:
    """A queue discipline by catalog name, with its parameters (the limit comes from ``link.buffer``)."""

    name: str = "fifo"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Link:
    """The bottleneck link."""

    rate_bps: int
    buffer: Buffer
    base_rtt_ns: int | None = None
    aqm: Aqm = field(default_factory=Aqm)
    mtu_bytes: int = 1500


@dataclass(frozen=True)
class FlowGroup:
    """``count`` identical bulk flows."""

    cc: str
    rtt_ns: int
    count: int = 1
    start_ns: int = 0
    stop_ns: int | None = None
    initial_window: int = 10
    pacing: bool = False
    loss: float = 0.0
    ecn: str = "off"
    cc_params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None


@dataclass(frozen=True)
class Measure:
    """The measurement window; None means the default (start = 20 % of the duration, end = the duration)."""

    start_ns: int | None = None
    end_ns: int | None = None


@dataclass(frozen=True)
class Scenario:
    """A whole experiment: one bottleneck link shared by groups of flows."""

    duration_ns: int
    link: Link
    flows: tuple[FlowGroup, ...]
    interval_ns: int = DEFAULT_INTERVAL_NS
    measure: Measure = field(default_factory=Measure)
    seed: int | None = None

    # ----------------------------------------------------------------------------------------- derived values

    def measure_window_ns(self) -> tuple[int, int]:
        """(start, end) of the measurement window in ns, defaults applied."""
        start = self.measure.start_ns
        if start is None:
            start = math.floor(self.duration_ns * DEFAULT_MEASURE_START_FRACTION)
        end = self.measure.end_ns if self.measure.end_ns is not None else self.duration_ns
        return start, end

    def base_rtt_ns(self) -> int:
        """The RTT that bdp buffers refer to: ``link.base_rtt``, else the smallest flow-group RTT."""
        if self.link.base_rtt_ns is not None:
            return self.link.base_rtt_ns
        if not self.flows:
            raise ScenarioError("flows", "at least one flow group is needed")
        return min(g.rtt_ns for g in self.flows)

    def flow_count(self) -> int:
        return sum(g.count for g in self.flows)

    def mss_bytes(self) -> int:
        """Payload bytes per segment."""
        return self.link.mtu_bytes - HEADER_BYTES

    def buffer_limit(self) -> dict[str, int]:
        """The queue limit, ``{"packets": N}`` or ``{"bytes": N}`` (see the module docstring)."""
        buf, mtu, rate = self.link.buffer, self.link.mtu_bytes, self.link.rate_bps
        text = format_buffer(buf)
        if buf.kind == "packets":
            packets = int(buf.value)
            if packets < 1:
                raise ScenarioError("link.buffer", f"{text} must hold at least one packet")
            _check_range("link.buffer", packets, 1, U32_MAX)
            return {"packets": packets}
        if buf.kind == "bytes":
            n_bytes = int(buf.value)
            if n_bytes < mtu:
                raise ScenarioError(
                    "link.buffer", f"{text} ({n_bytes} bytes) is less than one {mtu}-byte packet"
                )
            return {"bytes": n_bytes}
        if buf.kind == "bdp":
            rtt = self.base_rtt_ns()
            n_bytes = Fraction(rate) * rtt * Fraction(repr(float(buf.value))) / 8 / 10**9
            how = f"{format_rate(rate)} x {format_duration(rtt)} x {float(buf.value):g}"
        elif buf.kind == "time":
            n_bytes = Fraction(rate) * int(buf.value) / 8 / 10**9
            how = f"{format_rate(rate)} x {format_duration(int(buf.value))}"
        else:  # pragma: no cover - Buffer.kind is a closed set
            raise ScenarioError("link.buffer", f"unknown buffer kind {buf.kind!r}")
        packets = math.floor(n_bytes / mtu + Fraction(1, 2))
        if n_bytes < mtu:
            raise ScenarioError(
                "link.buffer",
                f"{text} is {float(n_bytes):.0f} bytes ({how} / 8), less than one {mtu}-byte packet",
            )
        _check_range("link.buffer", packets, 1, U32_MAX)
        return {"packets": packets}

    # ------------------------------------------------------------------------------------------- resolution

    def resolve(self) -> dict[str, Any]:
        """The native spec (see ``crates/ccfair-sim/src/scenario.rs``). Checks every value, then lets
        ``_native.validate`` check the result; raises :class:`ScenarioError`."""
        return self.resolve_estimated()[0]

    def resolve_estimated(self) -> tuple[dict[str, Any], Estimate]:
        """:meth:`resolve`, with the estimate of the run's cost the native check returns with it (see
        :mod:`ccfair.resources`)."""
        duration = self.duration_ns
        _check_positive("duration", duration)
        if not 0 < self.interval_ns <= duration:
            raise ScenarioError(
                "interval", f"must be positive and at most the duration ({format_duration(duration)})"
            )
        start, end = self.measure_window_ns()
        if end > duration:
            raise ScenarioError("measure.end", f"must be at most the duration ({format_duration(duration)})")
        if start >= end:
            default = " (default: 20 % of the duration)" if self.measure.start_ns is None else ""
            raise ScenarioError(
                "measure.start",
                f"{format_duration(start)}{default} must be before measure.end ({format_duration(end)})",
            )
        if self.seed is not None:
            _check_range("seed", self.seed, 0, U64_MAX)
        link = self.link
        _check_positive("link.rate", link.rate_bps)
        if not MIN_MTU_BYTES <= link.mtu_bytes <= MAX_MTU_BYTES:
            raise ScenarioError(
                "link.mtu", f"must be between {MIN_MTU_BYTES} and {MAX_MTU_BYTES} bytes, got {link.mtu_bytes}"
            )
        if link.base_rtt_ns is not None:
            _check_positive("link.base_rtt", link.base_rtt_ns)
        if not self.flows:
            raise ScenarioError("flows", "at least one flow group is needed")
        groups = [_resolve_group(i, g, duration) for i, g in enumerate(self.flows)]
        aqm = _resolve_aqm(link.aqm, self.buffer_limit(), link.mtu_bytes, len(self.flows))
        spec: dict[str, Any] = {
            "duration_ns": duration,
            "interval_ns": self.interval_ns,
            "measure_start_ns": start,
            "measure_end_ns": end,
            "link": {"rate_bps": link.rate_bps, "mtu_bytes": link.mtu_bytes, "aqm": aqm},
            "groups": groups,
        }
        try:
            estimate = _native.validate(json.dumps(spec))
        except ValueError as e:
            raise native_error(e) from None
        return spec, Estimate.from_json(estimate)

    def validate(self) -> None:
        """Raises :class:`ScenarioError` if the scenario cannot run."""
        self.resolve()

    def with_seed(self, seed: int | None) -> Scenario:
        return dataclasses.replace(self, seed=seed)

    def effective_seed(self, seed: int | None = None) -> int:
        """A run's seed: ``seed`` if given, else the scenario's, else 1."""
        if seed is not None:
            return seed
        return self.seed if self.seed is not None else DEFAULT_SEED

    # ----------------------------------------------------------------------------------------- conversions

    def to_dict(self, *, explicit: bool = False) -> dict[str, Any]:
        """The user-level form (unit strings), which :meth:`from_dict` reads back to an equal scenario.

        With ``explicit`` every default is written out (measurement window, base RTT, the congestion
        controls' canonical names and all their parameters), so the document still means the same run if
        defaults change; it resolves to the same native spec."""
        d: dict[str, Any] = {"duration": format_duration(self.duration_ns)}
        d["interval"] = format_duration(self.interval_ns)
        if self.seed is not None:
            d["seed"] = self.seed
        if explicit:
            start, end = self.measure_window_ns()
            d["measure"] = {"start": format_duration(start), "end": format_duration(end)}
        else:
            measure = {}
            if self.measure.start_ns is not None:
                measure["start"] = format_duration(self.measure.start_ns)
            if self.measure.end_ns is not None:
                measure["end"] = format_duration(self.measure.end_ns)
            if measure:
                d["measure"] = measure
        link: dict[str, Any] = {
            "rate": format_rate(self.link.rate_bps),
            "buffer": format_buffer(self.link.buffer),
        }
        base_rtt = self.base_rtt_ns() if explicit else self.link.base_rtt_ns
        if base_rtt is not None:
            link["base_rtt"] = format_duration(base_rtt)
        link["aqm"] = self._aqm_to_dict(explicit)
        link["mtu"] = self.link.mtu_bytes
        d["link"] = link
        d["flows"] = [_group_to_dict(g, explicit) for g in self.flows]
        return d

    def _aqm_to_dict(self, explicit: bool) -> str | dict[str, Any]:
        """``link.aqm`` as written, or with ``explicit`` every parameter the discipline resolves to (unset
        optional ones, which have no TOML form, stay out: they mean the same derived default)."""
        aqm = self.link.aqm
        params = dict(aqm.params)
        if explicit:
            resolved = _resolve_aqm(aqm, self.buffer_limit(), self.link.mtu_bytes, len(self.flows))
            params = {k: v for k, v in resolved.items() if k not in ("name", "limit") and v is not None}
        return {"name": aqm.name, **params} if params else aqm.name

    def to_toml(self, *, explicit: bool = False) -> str:
        """:meth:`to_dict` as TOML text."""
        return toml_dumps(self.to_dict(explicit=explicit))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Scenario:
        """Reads and fully validates the user-level form; raises :class:`ScenarioError`."""
        check_depth(d, "scenario")
        top = _table(d, "", _TOP_KEYS)
        duration = parse_duration_ns(_required(top, "duration", "duration"), "duration")
        interval = DEFAULT_INTERVAL_NS
        if "interval" in top:
            interval = parse_duration_ns(top["interval"], "interval")
        seed = _check_range("seed", top["seed"], 0, U64_MAX) if "seed" in top else None
        measure = Measure()
        if "measure" in top:
            m = _table(top["measure"], "measure", _MEASURE_KEYS)
            measure = Measure(
                start_ns=parse_duration_ns(m["start"], "measure.start", allow_zero=True)
                if "start" in m
                else None,
                end_ns=parse_duration_ns(m["end"], "measure.end") if "end" in m else None,
            )
        link = _link_from_dict(_required(top, "link", "link"))
        flows_value = _required(top, "flows", "flows")
        if (
            isinstance(flows_value, Mapping)
            or isinstance(flows_value, str)
            or not isinstance(flows_value, Sequence)
        ):
            raise ScenarioError("flows", f"expected an array of tables ([[flows]]), got {_kind(flows_value)}")
        if len(flows_value) == 0:
            raise ScenarioError("flows", "at least one flow group is needed")
        flows = tuple(_group_from_dict(g, f"flows[{i}]") for i, g in enumerate(flows_value))
        scenario = cls(
            duration_ns=duration, link=link, flows=flows, interval_ns=interval, measure=measure, seed=seed
        )
        scenario.validate()
        return scenario

    @classmethod
    def from_toml(cls, path: str | Path) -> Scenario:
        """Reads a TOML file; a missing or unreadable file, a TOML syntax error or too deep nesting is a
        ScenarioError whose field is the path (the parser's message gives line and column)."""
        data = read_toml(path)
        return cls.from_dict(data)


def load_scenario(source: Scenario | Mapping[str, Any] | str | Path) -> Scenario:
    """A Scenario from a Scenario, a user-level dict, or the path of a TOML file."""
    if isinstance(source, Scenario):
        return source
    if isinstance(source, Mapping):
        return Scenario.from_dict(source)
    if isinstance(source, str | Path):
        return Scenario.from_toml(source)
    raise TypeError(f"expected a Scenario, a dict or a path, got {type(source).__name__}")


def check_seed(seed: int) -> int:
    """A seed must be an integer in [0, 2^64)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= U64_MAX:
        raise ScenarioError("seed", f"must be an integer in [0, 2^64), got {seed!r}")
    return seed


def native_error(e: ValueError) -> ScenarioError:
    """A native ``ValueError("field: message")`` as a ScenarioError."""
    text = str(e)
    head, sep, rest = text.partition(": ")
    if sep and head and " " not in head:
        return ScenarioError(head.rstrip("."), rest)  # an empty key leaves a trailing dot: name its table
    return ScenarioError("scenario", text)


# ------------------------------------------------------------------------------------------------ resolution


def _check_range(name: str, value: object, low: int, high: int) -> int:
    """``value`` if it is an integer (not a boolean) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(name, f"expected an integer, got {_kind(value)} {value!r}")
    if value < low:
        raise ScenarioError(name, f"must be at least {low}, got {_shown(value)}")
    if value > high:
        raise ScenarioError(name, f"must be at most {high}, got {_shown(value)}")
    return value


def _shown(value: int) -> str:
    """An integer for a message; one too long to read is described by its length."""
    text = str(value)
    return text if len(text) <= 24 else f"a {len(text.lstrip('-'))}-digit number"


def _check_positive(name: str, value: int) -> None:
    """A quantity in base units (ns, bit/s): a positive integer that fits in 64 bits."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(name, f"expected an integer, got {_kind(value)} {value!r}")
    if value <= 0:
        raise ScenarioError(name, "must be positive")
    if value > U64_MAX:
        raise ScenarioError(name, "is too large")


def _check_finite(params: Mapping[str, Any], field: str) -> None:
    """JSON, which carries parameters to the native side, has no NaN or infinity: such a value is named
    here, with its key, before the parameters are serialised."""
    for key, value in params.items():
        try:
            json.dumps(value, allow_nan=False)
        except ValueError:
            raise ScenarioError(_join(field, str(key)), f"must be a finite number, got {value!r}") from None
        except TypeError:
            pass  # not a JSON value at all: the caller's serialisation names it


def _resolve_cc(i: int, g: FlowGroup) -> dict[str, Any]:
    _check_finite(g.cc_params, f"flows[{i}].cc_params")
    try:
        return canonical_cc(g.cc, g.cc_params)
    except TypeError as e:
        raise ScenarioError(
            f"flows[{i}].cc_params", f"values must be numbers, booleans or strings ({e})"
        ) from None
    except ValueError as e:
        head, sep, rest = str(e).partition(": ")
        if not sep:
            raise ScenarioError(f"flows[{i}].cc", str(e)) from None
        if head == "cc":
            raise ScenarioError(f"flows[{i}].cc", rest) from None
        if head == "cc_params" or head.startswith("cc_params."):
            raise ScenarioError(f"flows[{i}].{head}", rest) from None
        raise ScenarioError(f"flows[{i}].cc", str(e)) from None


def _resolve_group(i: int, g: FlowGroup, duration_ns: int) -> dict[str, Any]:
    f = f"flows[{i}]"
    cc = _resolve_cc(i, g)
    _check_range(f"{f}.count", g.count, 1, U32_MAX)
    _check_positive(f"{f}.rtt", g.rtt_ns)
    _check_range(f"{f}.start", g.start_ns, 0, U64_MAX)
    if g.start_ns >= duration_ns:
        raise ScenarioError(
            f"{f}.start", f"must be before the end of the run ({format_duration(duration_ns)})"
        )
    if g.stop_ns is not None:
        _check_range(f"{f}.stop", g.stop_ns, 0, U64_MAX)
        if g.stop_ns <= g.start_ns:
            raise ScenarioError(f"{f}.stop", f"must be after start ({format_duration(g.start_ns)})")
    _check_range(f"{f}.initial_window", g.initial_window, 1, U32_MAX)
    if not (isinstance(g.loss, int | float) and not isinstance(g.loss, bool) and 0.0 <= g.loss < 1.0):
        raise ScenarioError(f"{f}.loss", f"must be a probability in [0, 1), got {g.loss!r}")
    return {
        "cc": cc,
        "count": g.count,
        "rtt_ns": g.rtt_ns,
        "start_ns": g.start_ns,
        "stop_ns": g.stop_ns,
        "initial_window": g.initial_window,
        "pacing": bool(g.pacing),
        "loss": float(g.loss),
        "ecn": g.ecn,
    }


def _resolve_aqm(aqm: Aqm, limit: dict[str, int], mtu_bytes: int, flow_groups: int) -> dict[str, Any]:
    """The canonical native configuration of ``link.aqm`` (every parameter, defaults filled) from
    ``_native.check_aqm``, which checks names, types and ranges against the Rust definitions."""
    params = {key: _aqm_quantity(key, value) for key, value in aqm.params.items()}
    _check_finite(params, "link.aqm")
    try:
        params_json = json.dumps(params, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ScenarioError(
            "link.aqm", f"parameters must be finite numbers, booleans, strings or arrays ({e})"
        ) from None
    try:
        text = _native.check_aqm(aqm.name, params_json, json.dumps(limit), mtu_bytes, flow_groups)
    except ValueError as e:
        raise native_error(e) from None
    config: dict[str, Any] = json.loads(text)
    return config


def _aqm_quantity(key: str, value: object) -> object:
    """A queue-discipline parameter named with its unit (``target_ns``, ``bandwidth_bps``, ``min_bytes``) may
    be written as a quantity string (``"5ms"``, ``"10Mbps"``, ``"30KB"``): it becomes the integer in that
    unit."""
    if not isinstance(value, str):
        return value
    field = f"link.aqm.{key}"
    if key.endswith("_ns"):
        return parse_duration_ns(value, field, allow_zero=True)
    if key.endswith("_bps"):
        return parse_rate_bps(value, field)
    if key.endswith("_bytes"):
        return parse_size_bytes(value, field)
    return value


def _group_to_dict(g: FlowGroup, explicit: bool) -> dict[str, Any]:
    cc, params = g.cc, dict(g.cc_params)
    if explicit:
        canonical = canonical_cc(g.cc, g.cc_params)
        cc = canonical.pop("name")
        params = canonical
    d: dict[str, Any] = {"cc": cc, "count": g.count, "rtt": format_duration(g.rtt_ns)}
    d["start"] = format_duration(g.start_ns)
    if g.stop_ns is not None:
        d["stop"] = format_duration(g.stop_ns)
    d["initial_window"] = g.initial_window
    d["pacing"] = g.pacing
    d["loss"] = g.loss
    d["ecn"] = g.ecn
    if params:
        d["cc_params"] = params
    if g.label is not None:
        d["label"] = g.label
    return d


# --------------------------------------------------------------------------------------------------- reading


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "table"
    if isinstance(value, Sequence):
        return "array"
    return type(value).__name__


def _join(path: str, key: str) -> str:
    """The field of ``key`` in the table at ``path``; an empty key is named by its table."""
    if not key:
        return path or "scenario"
    return f"{path}.{key}" if path else key


def _table(value: object, path: str, allowed: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScenarioError(path or "scenario", f"expected a table, got {_kind(value)}")
    for key in value:
        if key not in allowed:
            raise ScenarioError(
                _join(path, str(key)), f"unknown key {key!r}; allowed keys: {', '.join(allowed)}"
            )
    return value


def _required(table: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in table:
        raise ScenarioError(path, "is required")
    return table[key]


def _bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise ScenarioError(path, f"expected true or false, got {_kind(value)} {value!r}")
    return value


def _choice(value: object, path: str, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ScenarioError(path, f"expected one of {', '.join(repr(a) for a in allowed)}, got {value!r}")
    return value


def _str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise ScenarioError(path, f"expected a string, got {_kind(value)} {value!r}")
    return value


def _probability(value: object, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(path, f"expected a number in [0, 1), got {_kind(value)} {value!r}")
    p = float(value)
    if not 0.0 <= p < 1.0:  # also rejects NaN
        raise ScenarioError(path, f"must be a probability in [0, 1), got {value!r}")
    return p


def _link_from_dict(value: object) -> Link:
    t = _table(value, "link", _LINK_KEYS)
    rate = parse_rate_bps(_required(t, "rate", "link.rate"), "link.rate")
    buffer = parse_buffer(_required(t, "buffer", "link.buffer"), "link.buffer")
    base_rtt = parse_duration_ns(t["base_rtt"], "link.base_rtt") if "base_rtt" in t else None
    aqm = Aqm()
    if "aqm" in t:
        raw = t["aqm"]
        if isinstance(raw, str):
            aqm = Aqm(name=raw)
        elif isinstance(raw, Mapping):
            name = _str(_required(raw, "name", "link.aqm.name"), "link.aqm.name")
            aqm = Aqm(name=name, params={str(k): v for k, v in raw.items() if k != "name"})
        else:
            raise ScenarioError("link.aqm", f"expected a name or a table, got {_kind(raw)} {raw!r}")
    mtu = _check_range("link.mtu", t["mtu"], 1, U32_MAX) if "mtu" in t else 1500
    return Link(rate_bps=rate, buffer=buffer, base_rtt_ns=base_rtt, aqm=aqm, mtu_bytes=mtu)


def _group_from_dict(value: object, f: str) -> FlowGroup:
    t = _table(value, f, _FLOW_KEYS)
    cc = _str(_required(t, "cc", f"{f}.cc"), f"{f}.cc")
    rtt = parse_duration_ns(_required(t, "rtt", f"{f}.rtt"), f"{f}.rtt")
    params: dict[str, Any] = {}
    if "cc_params" in t:
        raw = t["cc_params"]
        if not isinstance(raw, Mapping):
            raise ScenarioError(f"{f}.cc_params", f"expected a table, got {_kind(raw)} {raw!r}")
        params = dict(raw)
    return FlowGroup(
        cc=cc,
        rtt_ns=rtt,
        count=_check_range(f"{f}.count", t["count"], 1, U32_MAX) if "count" in t else 1,
        start_ns=parse_duration_ns(t["start"], f"{f}.start", allow_zero=True) if "start" in t else 0,
        stop_ns=parse_duration_ns(t["stop"], f"{f}.stop") if "stop" in t else None,
        initial_window=_check_range(f"{f}.initial_window", t["initial_window"], 1, U32_MAX)
        if "initial_window" in t
        else 10,
        pacing=_bool(t["pacing"], f"{f}.pacing") if "pacing" in t else False,
        loss=_probability(t["loss"], f"{f}.loss") if "loss" in t else 0.0,
        ecn=_choice(t["ecn"], f"{f}.ecn", ECN_MODES) if "ecn" in t else "off",
        cc_params=params,
        label=_str(t["label"], f"{f}.label") if "label" in t else None,
    )

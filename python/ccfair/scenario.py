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
    size = "1MB"                # optional: bytes each flow writes, then closes; or a table
                                # { distribution = "exponential" | "pareto" | "lognormal" | "fixed",
                                #   mean = "1MB", shape = 1.2 } drawn per flow (default: until stop)
    arrivals = { process = "poisson", mean_interval = "200ms" }   # optional: flows start at start + the
                                # arrival times of a Poisson process (or "uniform" with window = "10s")
    [flows.host]                # optional, laid over the scenario's [host] key by key
    preset = "home"
    [host]                      # optional: the end hosts (see crates/ccfair-sim/src/host/)
    preset = "ideal"            # "ideal" (default) | "testbed" | "home"
    start_jitter = "50ms"       # flows of a group start within [start, start + start_jitter)
    noise = "exponential"       # per-packet processing delay at both ends: "none" | "exponential" | "uniform"
    noise_scale = "5us"         # its mean
    pacing_slack = "10us"       # the pacing timer fires within [deadline, deadline + pacing_slack)
    delack_granularity = "1ms"  # the delayed-ACK timer fires on the next tick of this
    hz = 1000                   # the host kernel's CONFIG_HZ (100, 250, 300, 1000): Cubic's and BBR's clock
    tick_phase = "random"       # where its ticks fall: "zero" (at the run's start) | "random" (per seed)
    tso = true                  # unpaced flows send TSO bursts too (paced flows always do)
    nic_rate = "10Gbps"         # the sending host's NIC serializes a burst at this rate (0: infinitely fast)
    gro = true                  # the receiving host coalesces segments into aggregates (stretch ACKs)
    gro_flush = "16us"          # ... arriving within this of an aggregate's first segment
    rcv_window = true           # the receiver offers a receive window from its buffer (false: unlimited)
    rcv_autotune = true         # the receive buffer grows (Linux's tcp_moderate_rcvbuf)
    rmem = [4096, 131072, "32MiB"]  # Linux's tcp_rmem: min, default (initial), max (autotuning cap)
    rcv_scaling_ratio = 128     # the payload's share of the buffer, in 1/256
    rcv_initial_window = 0      # the route's initrwnd: the first window in segments at most (0: Linux's)

Quantities are held in base units (``rate_bps``, ``rtt_ns``, ...). Every problem is a
:class:`~ccfair.errors.ScenarioError` whose field is a dotted path such as ``flows[1].rtt``.

This module owns syntax and units: the keys and value types of the format, quantities in base units, and the
buffer arithmetic. What the values mean (ranges, defaults such as the measurement window, algorithm and
queue-discipline names and parameters, the rules between fields) is the native side's, in one call,
``_native.resolve`` (``crates/ccfair-sim/src/scenario.rs``), which returns the spec the simulator runs or
raises ``_native.ScenarioError`` with ``field`` and ``message``. A :class:`Scenario` keeps what it resolved
to, so running it does not resolve it again.

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
from functools import cached_property
from pathlib import Path
from typing import Any

from ccfair import _native
from ccfair.catalog import catalog
from ccfair.errors import ScenarioError
from ccfair.resources import Estimate
from ccfair.toml_text import check_depth, read_toml
from ccfair.toml_text import dumps as toml_dumps
from ccfair.units import (
    Buffer,
    format_buffer,
    format_duration,
    format_rate,
    format_size,
    parse_buffer,
    parse_duration_ns,
    parse_rate_bps,
    parse_size_bytes,
)

HEADER_BYTES: int = catalog()["limits"]["header_bytes"]
DEFAULT_INTERVAL_NS = 100_000_000
DEFAULT_SEED = 1
U64_MAX = 2**64 - 1
# The native side reads integers as 128-bit values (so that it can name the range of one that is out of it).
_WIRE_INT_BITS = 127

_TOP_KEYS = ("duration", "interval", "seed", "measure", "link", "flows", "host")
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
    "host",
    "size",
    "arrivals",
)
_SIZE_KEYS = ("distribution", "mean", "shape")
_ARRIVAL_KEYS = ("process", "mean_interval", "window")
# The arrival keys that are durations, read and written as durations and sent in ns.
_ARRIVAL_DURATIONS = ("mean_interval", "window")
_HOST_KEYS = (
    "preset",
    "start_jitter",
    "noise",
    "noise_scale",
    "pacing_slack",
    "delack_granularity",
    "hz",
    "tick_phase",
    "tso",
    "nic_rate",
    "gro",
    "gro_flush",
    "rcv_window",
    "rcv_autotune",
    "rmem",
    "rcv_scaling_ratio",
    "rcv_initial_window",
)
# The host's duration keys, read and written as durations (``"5us"``) and sent in ns.
_HOST_DURATIONS = ("start_jitter", "noise_scale", "pacing_slack", "delack_granularity", "gro_flush")
# The host's switches, booleans.
_HOST_SWITCHES = ("tso", "gro", "rcv_window", "rcv_autotune")


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
class Host:
    """A ``[host]`` table as written: a preset and the parameters that override it (None: not written).
    What they mean, and the preset's values, are the native side's (``crates/ccfair-sim/src/host/``)."""

    preset: str | None = None
    start_jitter_ns: int | None = None
    noise: str | None = None
    noise_scale_ns: int | None = None
    pacing_slack_ns: int | None = None
    delack_granularity_ns: int | None = None
    hz: int | None = None
    tick_phase: str | None = None
    tso: bool | None = None
    nic_rate_bps: int | None = None
    gro: bool | None = None
    gro_flush_ns: int | None = None
    rcv_window: bool | None = None
    rcv_autotune: bool | None = None
    rmem_bytes: tuple[int, ...] | None = None
    rcv_scaling_ratio: int | None = None
    rcv_initial_window: int | None = None


@dataclass(frozen=True)
class Size:
    """A group's ``size`` as written: a number of bytes (``distribution`` None), or a table naming a
    distribution with its mean (and ``shape`` for pareto and lognormal). What they mean is the native
    side's (``crates/ccfair-sim/src/traffic.rs``)."""

    mean_bytes: int
    distribution: str | None = None
    shape: float | None = None


@dataclass(frozen=True)
class Arrivals:
    """A group's ``arrivals`` table as written (durations in ns; None: not written)."""

    process: str
    mean_interval_ns: int | None = None
    window_ns: int | None = None


@dataclass(frozen=True)
class FlowGroup:
    """``count`` identical flows: bulk, or finite (``size``), starting together or as they arrive
    (``arrivals``)."""

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
    host: Host | None = None
    size: Size | None = None
    arrivals: Arrivals | None = None


@dataclass(frozen=True)
class Measure:
    """The measurement window; None means the default (start = 20 % of the duration, end = the duration)."""

    start_ns: int | None = None
    end_ns: int | None = None


@dataclass(frozen=True)
class Resolution:
    """What a scenario resolves to: the native spec as the JSON text ``_native.run`` takes, and the estimate
    of the run's cost (see :mod:`ccfair.resources`)."""

    spec_json: str
    estimate: Estimate

    def spec(self) -> dict[str, Any]:
        """A fresh copy of the spec (see ``crates/ccfair-sim/src/scenario.rs``)."""
        spec: dict[str, Any] = json.loads(self.spec_json)
        return spec


@dataclass(frozen=True)
class Scenario:
    """A whole experiment: one bottleneck link shared by groups of flows. It resolves once (on first use) and
    keeps the result; :func:`dataclasses.replace` makes a new scenario that resolves afresh."""

    duration_ns: int
    link: Link
    flows: tuple[FlowGroup, ...]
    interval_ns: int = DEFAULT_INTERVAL_NS
    measure: Measure = field(default_factory=Measure)
    seed: int | None = None
    host: Host | None = None

    # ----------------------------------------------------------------------------------------- derived values

    def measure_window_ns(self) -> tuple[int, int]:
        """(start, end) of the measurement window in ns, defaults applied (by the resolution)."""
        spec = self.resolve()
        return spec["measure_start_ns"], spec["measure_end_ns"]

    def base_rtt_ns(self) -> int:
        """The RTT that bdp buffers refer to: ``link.base_rtt``, else the smallest flow-group RTT (whose
        range the resolution checks). ``link.base_rtt`` is the buffer arithmetic's own value, checked here."""
        if self.link.base_rtt_ns is not None:
            _check_positive("link.base_rtt", self.link.base_rtt_ns)
            return self.link.base_rtt_ns
        if not self.flows:
            raise ScenarioError("flows", "at least one flow group is needed")
        return min(_wire_int(f"flows[{i}].rtt", g.rtt_ns) for i, g in enumerate(self.flows))

    def flow_count(self) -> int:
        return sum(g.count for g in self.flows)

    def mss_bytes(self) -> int:
        """Payload bytes per segment."""
        return self.link.mtu_bytes - HEADER_BYTES

    def buffer_limit(self) -> dict[str, int]:
        """The queue limit, ``{"packets": N}`` or ``{"bytes": N}`` (see the module docstring). A bdp or
        duration form that comes to less than one packet is refused here, where its arithmetic is; the limits
        themselves are checked by the resolution."""
        buf, mtu, rate = self.link.buffer, self.link.mtu_bytes, self.link.rate_bps
        if buf.kind == "packets":
            return {"packets": _wire_int("link.buffer", buf.value)}
        if buf.kind == "bytes":
            return {"bytes": _wire_int("link.buffer", buf.value)}
        rtt = self.base_rtt_ns() if buf.kind == "bdp" else 1
        if _wire_int("link.rate", rate) <= 0 or _wire_int("link.mtu", mtu) <= 0 or rtt <= 0:
            return {"packets": 0}  # no arithmetic on a bad input: the resolution names it
        if buf.kind == "bdp":
            n_bytes = Fraction(rate) * rtt * Fraction(repr(float(buf.value))) / 8 / 10**9
            how = f"{format_rate(rate)} x {format_duration(rtt)} x {float(buf.value):g}"
        elif buf.kind == "time":
            n_bytes = Fraction(rate) * int(buf.value) / 8 / 10**9
            how = f"{format_rate(rate)} x {format_duration(int(buf.value))}"
        else:  # pragma: no cover - Buffer.kind is a closed set
            raise ScenarioError("link.buffer", f"unknown buffer kind {buf.kind!r}")
        if n_bytes < mtu:
            raise ScenarioError(
                "link.buffer",
                f"{format_buffer(buf)} is {float(n_bytes):.0f} bytes ({how} / 8), less than one {mtu}-byte "
                "packet",
            )
        return {"packets": math.floor(n_bytes / mtu + Fraction(1, 2))}

    # ------------------------------------------------------------------------------------------- resolution

    def resolve(self) -> dict[str, Any]:
        """The native spec (see ``crates/ccfair-sim/src/scenario.rs``); raises :class:`ScenarioError`."""
        return self.resolution().spec()

    def resolve_estimated(self) -> tuple[dict[str, Any], Estimate]:
        """:meth:`resolve`, with the estimate of the run's cost (see :mod:`ccfair.resources`)."""
        resolution = self.resolution()
        return resolution.spec(), resolution.estimate

    def resolution(self) -> Resolution:
        """The spec and estimate, from one native call the first time; raises :class:`ScenarioError`."""
        return self._resolution

    @cached_property
    def _resolution(self) -> Resolution:
        try:
            text = _native.resolve(json.dumps(self.native_input(), allow_nan=False))
        except _native.ScenarioError as e:
            raise ScenarioError(e.field, e.message) from None
        resolved = json.loads(text)
        return Resolution(
            spec_json=json.dumps(resolved["spec"]), estimate=Estimate.from_dict(resolved["estimate"])
        )

    def native_input(self) -> dict[str, Any]:
        """The scenario in base units as ``_native.resolve`` reads it (``ScenarioInput`` in
        ``crates/ccfair-sim/src/scenario.rs``): values as written, the buffer as a limit, nothing defaulted
        that the native side decides."""
        if not self.flows:
            raise ScenarioError("flows", "at least one flow group is needed")
        link = self.link
        native: dict[str, Any] = {
            "duration_ns": _wire_int("duration", self.duration_ns),
            "interval_ns": _wire_int("interval", self.interval_ns),
            "measure_start_ns": _optional_int("measure.start", self.measure.start_ns),
            "measure_end_ns": _optional_int("measure.end", self.measure.end_ns),
            "link": {
                "rate_bps": _wire_int("link.rate", link.rate_bps),
                "mtu_bytes": _wire_int("link.mtu", link.mtu_bytes),
                "buffer": self.buffer_limit(),
                "aqm": _str(link.aqm.name, "link.aqm.name"),
                "aqm_params": _aqm_params(link.aqm),
            },
            "flows": [_group_input(i, g) for i, g in enumerate(self.flows)],
        }
        if self.host is not None:
            native["host"] = _host_input(self.host, "host")
        return native

    def validate(self) -> None:
        """Raises :class:`ScenarioError` if the scenario cannot run."""
        self.resolve()

    def with_seed(self, seed: int | None) -> Scenario:
        """The same scenario with another seed; the seed is not part of the resolution, so a resolution
        already made is kept."""
        other = dataclasses.replace(self, seed=seed)
        if "_resolution" in self.__dict__:
            other.__dict__["_resolution"] = self.__dict__["_resolution"]
        return other

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
        groups = self.resolve()["groups"] if explicit else [None] * len(self.flows)
        d["flows"] = [_group_to_dict(g, resolved) for g, resolved in zip(self.flows, groups, strict=True)]
        if self.host is not None:
            d["host"] = _host_to_dict(self.host)
        return d

    def _aqm_to_dict(self, explicit: bool) -> str | dict[str, Any]:
        """``link.aqm`` as written, or with ``explicit`` every parameter the discipline resolves to (unset
        optional ones, which have no TOML form, stay out: they mean the same derived default)."""
        aqm = self.link.aqm
        params = dict(aqm.params)
        if explicit:
            resolved = self.resolve()["link"]["aqm"]
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
        seed = check_seed(top["seed"]) if "seed" in top else None
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
        host = _host_from_dict(top["host"], "host") if "host" in top else None
        scenario = cls(
            duration_ns=duration,
            link=link,
            flows=flows,
            interval_ns=interval,
            measure=measure,
            seed=seed,
            host=host,
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


def check_seed(seed: object) -> int:
    """A seed is an integer in [0, 2^64) (it goes to the native run as it is, not through the resolution)."""
    return _check_range("seed", seed, 0, U64_MAX)


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
    """A quantity in base units (ns, bit/s) that the buffer arithmetic uses: a positive integer."""
    if _wire_int(name, value) <= 0:
        raise ScenarioError(name, "must be positive")


def _wire_int(name: str, value: object) -> int:
    """An integer (not a boolean) for the native side; its range is the native side's to check."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(name, f"expected an integer, got {_kind(value)} {value!r}")
    if abs(value) >= 2**_WIRE_INT_BITS:
        raise ScenarioError(name, f"is too large ({_shown(value)})")
    return value


def _optional_int(name: str, value: object) -> int | None:
    return None if value is None else _wire_int(name, value)


def _json_params(params: object, field: str, allowed: str) -> dict[str, Any]:
    """Parameters as JSON carries them: a table of finite numbers, booleans, strings (and arrays)."""
    if not isinstance(params, Mapping):
        raise ScenarioError(field, f"expected a table, got {_kind(params)} {params!r}")
    for key, value in params.items():
        try:
            json.dumps(value, allow_nan=False)
        except ValueError:
            raise ScenarioError(_join(field, str(key)), f"must be a finite number, got {value!r}") from None
        except TypeError as e:
            raise ScenarioError(field, f"values must be {allowed} ({e})") from None
    return {str(k): v for k, v in params.items()}


def _group_input(i: int, g: FlowGroup) -> dict[str, Any]:
    f = f"flows[{i}]"
    loss = g.loss
    if isinstance(loss, bool) or not isinstance(loss, int | float):
        raise ScenarioError(f"{f}.loss", f"expected a number in [0, 1), got {_kind(loss)} {loss!r}")
    if not math.isfinite(loss):
        raise ScenarioError(f"{f}.loss", f"must be a probability in [0, 1), got {loss!r}")
    native: dict[str, Any] = {
        "cc": _str(g.cc, f"{f}.cc"),
        "cc_params": _json_params(g.cc_params, f"{f}.cc_params", "numbers, booleans or strings"),
        "count": _wire_int(f"{f}.count", g.count),
        "rtt_ns": _wire_int(f"{f}.rtt", g.rtt_ns),
        "start_ns": _wire_int(f"{f}.start", g.start_ns),
        "stop_ns": _optional_int(f"{f}.stop", g.stop_ns),
        "initial_window": _wire_int(f"{f}.initial_window", g.initial_window),
        "pacing": _bool(g.pacing, f"{f}.pacing"),
        "loss": float(loss),
        "ecn": _str(g.ecn, f"{f}.ecn"),
    }
    if g.host is not None:
        native["host"] = _host_input(g.host, f"{f}.host")
    if g.size is not None:
        native["size"] = _size_input(g.size, f"{f}.size")
    if g.arrivals is not None:
        native["arrivals"] = _arrivals_input(g.arrivals, f"{f}.arrivals")
    return native


def _size_input(size: Size, f: str) -> dict[str, Any]:
    table = size.distribution is not None
    native: dict[str, Any] = {
        "distribution": None if size.distribution is None else _str(size.distribution, f"{f}.distribution"),
        "mean_bytes": _wire_int(f"{f}.mean" if table else f, size.mean_bytes),
    }
    if size.shape is not None:
        shape = size.shape
        if isinstance(shape, bool) or not isinstance(shape, int | float) or not math.isfinite(shape):
            raise ScenarioError(f"{f}.shape", f"expected a finite number, got {_kind(shape)} {shape!r}")
        native["shape"] = float(shape)
    return native


def _arrivals_input(a: Arrivals, f: str) -> dict[str, Any]:
    native: dict[str, Any] = {"process": _str(a.process, f"{f}.process")}
    for key in _ARRIVAL_DURATIONS:
        native[f"{key}_ns"] = _optional_int(f"{f}.{key}", getattr(a, f"{key}_ns"))
    return native


def _size_to_dict(size: Size) -> str | dict[str, Any]:
    if size.distribution is None:
        return format_size(size.mean_bytes)
    d: dict[str, Any] = {"distribution": size.distribution, "mean": format_size(size.mean_bytes)}
    if size.shape is not None:
        d["shape"] = size.shape
    return d


def _arrivals_to_dict(a: Arrivals) -> dict[str, Any]:
    d: dict[str, Any] = {"process": a.process}
    for key in _ARRIVAL_DURATIONS:
        ns = getattr(a, f"{key}_ns")
        if ns is not None:
            d[key] = format_duration(ns)
    return d


def _size_bytes(value: object, f: str) -> int:
    """A size as a quantity string (``"1MB"``) or an integer of bytes (its range is the native side's)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _wire_int(f, value)
    return parse_size_bytes(value, f)


def _size_from_dict(value: object, f: str) -> Size:
    if not isinstance(value, Mapping):
        return Size(mean_bytes=_size_bytes(value, f))
    t = _table(value, f, _SIZE_KEYS)
    distribution = _str(_required(t, "distribution", f"{f}.distribution"), f"{f}.distribution")
    mean = _size_bytes(_required(t, "mean", f"{f}.mean"), f"{f}.mean")
    shape = None
    if "shape" in t:
        raw = t["shape"]
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise ScenarioError(f"{f}.shape", f"expected a number, got {_kind(raw)} {raw!r}")
        shape = float(raw)
    return Size(mean_bytes=mean, distribution=distribution, shape=shape)


def _arrivals_from_dict(value: object, f: str) -> Arrivals:
    t = _table(value, f, _ARRIVAL_KEYS)
    process = _str(_required(t, "process", f"{f}.process"), f"{f}.process")
    durations = {
        f"{key}_ns": parse_duration_ns(t[key], f"{f}.{key}", allow_zero=True)
        for key in _ARRIVAL_DURATIONS
        if key in t
    }
    return Arrivals(process=process, **durations)


def _host_input(h: Host, f: str) -> dict[str, Any]:
    native: dict[str, Any] = {
        name: None if getattr(h, name) is None else _str(getattr(h, name), f"{f}.{name}")
        for name in ("preset", "noise", "tick_phase")
    }
    for key in _HOST_DURATIONS:
        native[f"{key}_ns"] = _optional_int(f"{f}.{key}", getattr(h, f"{key}_ns"))
    for key in _HOST_SWITCHES:
        native[key] = None if getattr(h, key) is None else _bool(getattr(h, key), f"{f}.{key}")
    native["nic_rate_bps"] = _optional_int(f"{f}.nic_rate", h.nic_rate_bps)
    native["hz"] = _optional_int(f"{f}.hz", h.hz)
    native["rmem_bytes"] = None if h.rmem_bytes is None else [_wire_int(f"{f}.rmem", v) for v in h.rmem_bytes]
    native["rcv_scaling_ratio"] = _optional_int(f"{f}.rcv_scaling_ratio", h.rcv_scaling_ratio)
    native["rcv_initial_window"] = _optional_int(f"{f}.rcv_initial_window", h.rcv_initial_window)
    return native


def _host_to_dict(h: Host) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for key in _HOST_KEYS:
        if key in _HOST_DURATIONS:
            ns = getattr(h, f"{key}_ns")
            if ns is not None:
                d[key] = format_duration(ns)
        elif key == "nic_rate":
            if h.nic_rate_bps is not None:
                d[key] = format_rate(h.nic_rate_bps)
        elif key == "rmem":
            if h.rmem_bytes is not None:
                d[key] = list(h.rmem_bytes)
        elif getattr(h, key) is not None:
            d[key] = getattr(h, key)
    return d


def _host_from_dict(value: object, f: str) -> Host:
    t = _table(value, f, _HOST_KEYS)

    def name(key: str) -> str | None:
        return _str(t[key], f"{f}.{key}") if key in t else None

    def duration_ns(key: str) -> int | None:
        return parse_duration_ns(t[key], f"{f}.{key}", allow_zero=True) if key in t else None

    def switch(key: str) -> bool | None:
        return _bool(t[key], f"{f}.{key}") if key in t else None

    def nic_rate_bps() -> int | None:
        if "nic_rate" not in t:
            return None
        value = t["nic_rate"]
        # 0, bare, is the infinitely fast NIC (as "0bps" is).
        if value == 0 and type(value) is int:
            return 0
        return parse_rate_bps(value, f"{f}.nic_rate", allow_zero=True)

    def rmem_bytes() -> tuple[int, ...] | None:
        if "rmem" not in t:
            return None
        value = t["rmem"]
        if not isinstance(value, list):
            raise ScenarioError(
                f"{f}.rmem", f"expected an array [min, default, max] of sizes, got {_kind(value)} {value!r}"
            )
        # Each bytes (``131072``, as the sysctl writes it) or a size (``"32MiB"``); their range, count and
        # order are the native side's rules.
        return tuple(
            _wire_int(f"{f}.rmem[{i}]", v) if isinstance(v, int) else parse_size_bytes(v, f"{f}.rmem[{i}]")
            for i, v in enumerate(value)
        )

    def ratio() -> int | None:
        return (
            _wire_int(f"{f}.rcv_scaling_ratio", t["rcv_scaling_ratio"]) if "rcv_scaling_ratio" in t else None
        )

    return Host(
        preset=name("preset"),
        start_jitter_ns=duration_ns("start_jitter"),
        noise=name("noise"),
        noise_scale_ns=duration_ns("noise_scale"),
        pacing_slack_ns=duration_ns("pacing_slack"),
        delack_granularity_ns=duration_ns("delack_granularity"),
        hz=_wire_int(f"{f}.hz", t["hz"]) if "hz" in t else None,
        tick_phase=name("tick_phase"),
        tso=switch("tso"),
        nic_rate_bps=nic_rate_bps(),
        gro=switch("gro"),
        gro_flush_ns=duration_ns("gro_flush"),
        rcv_window=switch("rcv_window"),
        rcv_autotune=switch("rcv_autotune"),
        rmem_bytes=rmem_bytes(),
        rcv_scaling_ratio=ratio(),
        rcv_initial_window=(
            _wire_int(f"{f}.rcv_initial_window", t["rcv_initial_window"])
            if "rcv_initial_window" in t
            else None
        ),
    )


def _aqm_params(aqm: Aqm) -> dict[str, Any]:
    """``link.aqm``'s parameters, quantity strings in the unit each name carries."""
    params = {key: _aqm_quantity(key, value) for key, value in aqm.params.items()}
    return _json_params(params, "link.aqm", "finite numbers, booleans, strings or arrays")


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


def _group_to_dict(g: FlowGroup, resolved: Mapping[str, Any] | None) -> dict[str, Any]:
    """The user-level form of a group; with its ``resolved`` spec, the algorithm by its canonical name with
    every parameter."""
    cc, params = g.cc, dict(g.cc_params)
    if resolved is not None:
        canonical = dict(resolved["cc"])
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
    if g.host is not None:
        d["host"] = _host_to_dict(g.host)
    if g.size is not None:
        d["size"] = _size_to_dict(g.size)
    if g.arrivals is not None:
        d["arrivals"] = _arrivals_to_dict(g.arrivals)
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


def _str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise ScenarioError(path, f"expected a string, got {_kind(value)} {value!r}")
    return value


def _number(value: object, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(path, f"expected a number in [0, 1), got {_kind(value)} {value!r}")
    return float(value)


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
    mtu = _wire_int("link.mtu", t["mtu"]) if "mtu" in t else 1500
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
        count=_wire_int(f"{f}.count", t["count"]) if "count" in t else 1,
        start_ns=parse_duration_ns(t["start"], f"{f}.start", allow_zero=True) if "start" in t else 0,
        stop_ns=parse_duration_ns(t["stop"], f"{f}.stop") if "stop" in t else None,
        initial_window=_wire_int(f"{f}.initial_window", t["initial_window"]) if "initial_window" in t else 10,
        pacing=_bool(t["pacing"], f"{f}.pacing") if "pacing" in t else False,
        loss=_number(t["loss"], f"{f}.loss") if "loss" in t else 0.0,
        ecn=_str(t["ecn"], f"{f}.ecn") if "ecn" in t else "off",
        cc_params=params,
        label=_str(t["label"], f"{f}.label") if "label" in t else None,
        host=_host_from_dict(t["host"], f"{f}.host") if "host" in t else None,
        size=_size_from_dict(t["size"], f"{f}.size") if "size" in t else None,
        arrivals=_arrivals_from_dict(t["arrivals"], f"{f}.arrivals") if "arrivals" in t else None,
    )

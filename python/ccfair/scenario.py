"""Scenarios: the typed front of the scenario document, which ``crates/ccfair-scenario`` reads and resolves.

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
                                # (see `ccfair list`: target = "5ms", bandwidth = "10Mbps", min = "30KB")
    mtu = 1500                  # bytes, 576..9000
    [[flows]]
    cc = "cubic"                # a congestion control or alias (see `ccfair list`); optional with a profile
    profile = "google-2019"     # optional: a named stack (cc, initial_window, pacing; `ccfair list`) laid
                                # under the group's own keys: a key the group writes wins
    count = 1
    rtt = "50ms"                # base propagation RTT of this group
    start = "0s"
    stop = "40s"                # optional, default: end of run
    initial_window = 10
    pacing = false
    loss = 0.0                  # Bernoulli loss on this group's own path, [0, 1)
    ecn = "off"                 # "off" | "classic" (RFC 3168, ECT(0)) | "l4s" (ECT(1), Accurate ECN)
    connect = "at_start"        # the connection opens at the flow's start, its SYN through the queue as it
                                # stands then | "before_run" (established over the empty path before the run)
    cc_params = { beta = 0.7 }
    label = "bulk"              # free text for tables
    size = "1MB"                # optional: bytes each flow writes, then closes; or a table
                                # { distribution = "exponential" | "pareto" | "lognormal" | "fixed",
                                #   mean = "1MB", shape = 1.2 } drawn per flow (default: until stop)
    arrivals = { process = "poisson", mean_interval = "200ms" }   # optional: flows start at start + the
                                # arrival times of a Poisson process (or "uniform" with window = "10s")
    delay = "split"             # kernel backend only: "split" | "data" | "ack" (where the base RTT sits)
    [flows.host]                # optional, laid over the scenario's [host] key by key
    preset = "home"
    [host]                      # optional: the end hosts (see crates/ccfair-scenario/src/host.rs)
    preset = "kernel-lab"       # "kernel-lab" (default: the validated hosts) | "ideal" | "testbed" | "home";
                                # its other keys in `ccfair list`

Every key, with its type, unit, default and rule, is in ``catalog()["scenario_keys"]`` (the crate's
``catalog.rs``). The document is read and resolved natively, in one call, ``_native.resolve``: the keys, the
type and unit of each value, every default, the buffer arithmetic, the ranges, names and rules, for the
simulator or (:class:`KernelScenario`) the kernel backend. What it returns is kept: the scenario in base
units, which this module's dataclasses hold (``rate_bps``, ``rtt_ns``, ...), the spec, the run's estimate and
the document written back (plain and explicit), so running a scenario or writing it out does not resolve it
again. A dataclass changed with :func:`dataclasses.replace` resolves afresh, from its fields. Every problem is
a :class:`~ccfair.errors.InputError` whose field is a dotted path such as ``flows[1].rtt``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ccfair import _native
from ccfair.errors import InputError
from ccfair.resources import Estimate
from ccfair.toml_text import dumps as toml_dumps
from ccfair.toml_text import read_toml
from ccfair.units import Buffer

_DEFAULTS: dict[str, Any] = _native.defaults()
HEADER_BYTES: int = _DEFAULTS["header_bytes"]
DEFAULT_INTERVAL_NS: int = _DEFAULTS["interval_ns"]
DEFAULT_SEED: int = _DEFAULTS["seed"]
U64_MAX = 2**64 - 1


@dataclass(frozen=True)
class Aqm:
    """A queue discipline by catalog name, with its parameters as written (the limit comes from
    ``link.buffer``)."""

    name: str = _DEFAULTS["aqm"]
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Link:
    """The bottleneck link."""

    rate_bps: int
    buffer: Buffer
    base_rtt_ns: int | None = None
    aqm: Aqm = field(default_factory=Aqm)
    mtu_bytes: int = _DEFAULTS["mtu_bytes"]


@dataclass(frozen=True)
class Host:
    """A ``[host]`` table as written: a preset and the parameters that override it (None: not written)."""

    preset: str | None = None
    start_jitter_ns: int | None = None
    start_spacing_ns: int | None = None
    noise: str | None = None
    noise_scale_ns: int | None = None
    turnaround_ns: int | None = None
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
    """A group's ``size`` as written: a number of bytes (``distribution`` None), or a distribution with its
    mean (and ``shape`` for pareto and lognormal)."""

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
    (``arrivals``). ``delay`` is the kernel backend's placement of the base RTT (None: split). ``profile``
    names the stack the group's ``cc``, ``initial_window`` and ``pacing`` were laid over when its document
    was read (``crates/ccfair-scenario/src/profile.rs``); here they hold the values as laid, so a group built
    in Python sets them itself (:func:`profile_keys` gives a profile's)."""

    cc: str
    rtt_ns: int
    count: int = _DEFAULTS["count"]
    start_ns: int = _DEFAULTS["start_ns"]
    stop_ns: int | None = None
    initial_window: int = _DEFAULTS["initial_window"]
    pacing: bool = _DEFAULTS["pacing"]
    loss: float = _DEFAULTS["loss"]
    ecn: str = _DEFAULTS["ecn"]
    connect: str = _DEFAULTS["connect"]
    cc_params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    host: Host | None = None
    size: Size | None = None
    arrivals: Arrivals | None = None
    delay: str | None = None
    profile: str | None = None


@dataclass(frozen=True)
class Measure:
    """The measurement window; None means the default (start = 20 % of the duration, end = the duration)."""

    start_ns: int | None = None
    end_ns: int | None = None


@dataclass(frozen=True)
class Resolution:
    """What a scenario resolves to: the spec the backend runs as the JSON text ``_native.run`` (or the kernel
    backend) takes, the simulator's spec behind it (the same for the simulator; the stand-in's for the kernel
    backend: it gives the estimate and the flows' starts and sizes), the estimate of the run's cost (see
    :mod:`ccfair.resources`), the document written back (plain and explicit) and the RTT a bdp buffer refers
    to."""

    spec_json: str
    estimate: Estimate
    sim_spec_json: str
    document_json: str
    explicit_json: str
    base_rtt_ns: int | None

    def spec(self) -> dict[str, Any]:
        """A fresh copy of the spec (see ``crates/ccfair-scenario/src/spec.rs``)."""
        spec: dict[str, Any] = json.loads(self.spec_json)
        return spec


def _resolve(scenario: object, backend: str | None) -> tuple[Resolution, dict[str, Any]]:
    """One native resolution of ``scenario`` (a document, or the JSON text of a scenario in base units) for
    ``backend`` (its JSON; None: the simulator): the resolution and the scenario in base units."""
    try:
        text = _native.resolve(scenario, backend)
    except _native.InputError as e:
        raise InputError(e.field, e.message) from None
    r = json.loads(text)
    resolution = Resolution(
        spec_json=json.dumps(r["spec"]),
        estimate=Estimate.from_dict(r["estimate"], sum(int(g["count"]) for g in r["spec"]["groups"])),
        sim_spec_json=json.dumps(r["sim_spec"]) if "sim_spec" in r else "",
        document_json=json.dumps(r["document"]),
        explicit_json=json.dumps(r["explicit"]),
        base_rtt_ns=r["base_rtt_ns"],
    )
    return resolution, r


def profile_keys(name: str) -> dict[str, Any]:
    """The group keys the flow profile ``name`` sets (``cc``, ``initial_window``, ``pacing``) with the
    profile named, for a :class:`FlowGroup` built in Python; raises :class:`InputError` for an unknown
    name."""
    from ccfair.catalog import catalog

    for p in catalog()["flow_profiles"]:
        if p["name"] == name:
            return {
                "cc": p["cc"]["value"],
                "initial_window": p["initial_window"]["value"],
                "pacing": p["pacing"]["value"],
                "profile": name,
            }
    names = ", ".join(p["name"] for p in catalog()["flow_profiles"])
    raise InputError("profile", f"unknown profile {name!r}; profiles: {names}")


def _host(h: Mapping[str, Any] | None) -> Host | None:
    if h is None:
        return None
    rmem = h["rmem_bytes"]
    return Host(**{**h, "rmem_bytes": None if rmem is None else tuple(rmem)})


def _group(g: Mapping[str, Any]) -> FlowGroup:
    size, arrivals = g["size"], g["arrivals"]
    return FlowGroup(
        **{
            **g,
            "host": _host(g["host"]),
            "size": None if size is None else Size(**size),
            "arrivals": None if arrivals is None else Arrivals(**arrivals),
        }
    )


@dataclass(frozen=True)
class Scenario:
    """A whole experiment: one bottleneck link shared by groups of flows, for the simulator. It resolves once
    (on first use, or when read) and keeps the result; :func:`dataclasses.replace` makes a new scenario that
    resolves afresh."""

    duration_ns: int
    link: Link
    flows: tuple[FlowGroup, ...]
    interval_ns: int = DEFAULT_INTERVAL_NS
    measure: Measure = field(default_factory=Measure)
    seed: int | None = None
    host: Host | None = None

    # ------------------------------------------------------------------------------------------- the backend

    @classmethod
    def _backend_json(cls) -> str | None:
        """The backend this class resolves for, as ``_native.resolve`` takes it (None: the simulator)."""
        return None

    @classmethod
    def _from_native(cls, input_: Mapping[str, Any], seed: int | None) -> Scenario:
        link = input_["link"]
        buffer = link["buffer"]
        return cls(
            duration_ns=input_["duration_ns"],
            link=Link(
                rate_bps=link["rate_bps"],
                buffer=Buffer(buffer["kind"], buffer["value"]),
                base_rtt_ns=link["base_rtt_ns"],
                aqm=Aqm(link["aqm"]["name"], dict(link["aqm"]["params"])),
                mtu_bytes=link["mtu_bytes"],
            ),
            flows=tuple(_group(g) for g in input_["flows"]),
            interval_ns=input_["interval_ns"],
            measure=Measure(**input_["measure"]),
            seed=seed,
            host=_host(input_["host"]),
        )

    # ----------------------------------------------------------------------------------------- derived values

    def measure_window_ns(self) -> tuple[int, int]:
        """(start, end) of the measurement window in ns, defaults applied (by the resolution)."""
        spec = self.resolve()
        return spec["measure_start_ns"], spec["measure_end_ns"]

    def base_rtt_ns(self) -> int:
        """The RTT that bdp buffers refer to: ``link.base_rtt``, else the smallest flow-group RTT."""
        rtt = self.resolution().base_rtt_ns
        if rtt is None:  # pragma: no cover - a scenario that resolves has a positive RTT
            raise InputError("link.base_rtt", "must be positive")
        return rtt

    def flow_count(self) -> int:
        return sum(g.count for g in self.flows)

    def mss_bytes(self) -> int:
        """Payload bytes per segment."""
        return self.link.mtu_bytes - HEADER_BYTES

    def buffer_limit(self) -> dict[str, int]:
        """The queue limit, ``{"packets": N}`` or ``{"bytes": N}``, as the resolution worked it out from
        ``link.buffer``."""
        limit: dict[str, int] = self.resolve()["link"]["aqm"]["limit"]
        return limit

    # ------------------------------------------------------------------------------------------- resolution

    def resolve(self) -> dict[str, Any]:
        """The spec the backend runs (see ``crates/ccfair-scenario/src/spec.rs``); raises
        :class:`InputError`."""
        return self.resolution().spec()

    def resolve_estimated(self) -> tuple[dict[str, Any], Estimate]:
        """:meth:`resolve`, with the estimate of the run's cost (see :mod:`ccfair.resources`)."""
        resolution = self.resolution()
        return resolution.spec(), resolution.estimate

    def resolution(self) -> Resolution:
        """The spec, estimate and documents, from one native call the first time; raises
        :class:`InputError`."""
        return self._resolution

    @cached_property
    def _resolution(self) -> Resolution:
        try:
            text = json.dumps(self.native_input())
        except (TypeError, ValueError) as e:
            raise InputError("scenario", f"cannot be resolved: {e}") from None
        return _resolve(text, self._backend_json())[0]

    def native_input(self) -> dict[str, Any]:
        """The scenario in base units as ``_native.resolve`` reads it (``ScenarioInput`` in
        ``crates/ccfair-scenario/src/spec.rs``): the dataclasses' fields, the seed aside."""
        d = dataclasses.asdict(self)
        d.pop("seed")
        return d

    def validate(self) -> None:
        """Raises :class:`InputError` if the scenario cannot run."""
        self.resolution()

    def with_seed(self, seed: int | None) -> Scenario:
        """The same scenario with another seed; the seed is not part of the resolution, so a resolution
        already made is kept."""
        other = dataclasses.replace(self, seed=seed)
        if "_resolution" in self.__dict__:
            other.__dict__["_resolution"] = self.__dict__["_resolution"]
        return other

    def effective_seed(self, seed: int | None = None) -> int:
        """A run's seed: ``seed`` if given, else the scenario's, else the default."""
        if seed is not None:
            return seed
        return self.seed if self.seed is not None else DEFAULT_SEED

    # ----------------------------------------------------------------------------------------- conversions

    def to_dict(self, *, explicit: bool = False) -> dict[str, Any]:
        """The user-level form (unit strings), which :meth:`from_dict` reads back to an equal scenario.

        With ``explicit`` every default is written out (measurement window, base RTT, the congestion
        controls' canonical names and all their parameters, the queue discipline's parameters), so the
        document still means the same run if defaults change; it resolves to the same spec."""
        r = self.resolution()
        written: dict[str, Any] = json.loads(r.explicit_json if explicit else r.document_json)
        d: dict[str, Any] = {}
        for key, value in written.items():
            d[key] = value
            if key == "interval" and self.seed is not None:
                d["seed"] = self.seed
        return d

    def to_toml(self, *, explicit: bool = False) -> str:
        """:meth:`to_dict` as TOML text."""
        return toml_dumps(self.to_dict(explicit=explicit))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Scenario:
        """Reads and fully resolves the user-level form; raises :class:`InputError`."""
        resolution, r = _resolve(d, cls._backend_json())
        scenario = cls._from_native(r["input"], r["seed"])
        scenario.__dict__["_resolution"] = resolution
        return scenario

    @classmethod
    def from_toml(cls, path: str | Path) -> Scenario:
        """Reads a TOML file; a missing or unreadable file, a TOML syntax error or too deep nesting is a
        InputError whose field is the path (the parser's message gives line and column)."""
        return cls.from_dict(read_toml(path))


@dataclass(frozen=True)
class KernelScenario(Scenario):
    """A scenario for the kernel backend (``crates/ccfair-scenario/src/kernel.rs``: its algorithms are this
    kernel's modules, ``kernel:NAME`` for one the simulator does not model; ``flows[].delay`` places the
    base RTT; only the host keys it can set on this machine). :meth:`resolve` is the spec the kernel backend
    runs; :meth:`resolution`'s estimate is the simulator's for this link and these flows."""

    @classmethod
    def _backend_json(cls) -> str | None:
        # The kernel backend's module reads this machine's facts; it loads for kernel scenarios only.
        from ccfair.emu import host

        return json.dumps({"name": "kernel", "available_ccs": host.kernel_ccs()})

    def offloads(self) -> dict[str, Any]:
        """The offloads of the run's hosts (``tso``, ``gro``, ``gro_flush_ns``: one sender and one receiver
        veth for every group)."""
        offloads: dict[str, Any] = self.resolve()["offloads"]
        return offloads

    def flow_plans(self, seed: int) -> list[dict[str, int]]:
        """Every flow's start and size (``start_ns``, ``size_bytes``, 0 for a bulk flow) under ``seed``, as
        the simulator draws them from ``arrivals`` and ``size``, so both backends start and size the same
        flows."""
        plans: list[dict[str, int]] = json.loads(_native.flow_plans(self.resolution().sim_spec_json, seed))
        return plans

    def simulator_scenario(self) -> Scenario:
        """The same experiment for the simulator; raises :class:`InputError` if it cannot run there
        (an algorithm the simulator does not model, or a delay placement other than ``split``)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(Scenario)}
        scenario = Scenario(**fields)
        scenario.validate()
        return scenario


def kernel_scenario(source: Scenario | Mapping[str, Any] | str | Path) -> KernelScenario:
    """A :class:`KernelScenario` (resolved) from a scenario, a user-level dict or a TOML file path."""
    if isinstance(source, KernelScenario):
        source.validate()
        return source
    if isinstance(source, Scenario):
        fields = {f.name: getattr(source, f.name) for f in dataclasses.fields(Scenario)}
        scenario = KernelScenario(**fields)
        scenario.validate()
        return scenario
    if isinstance(source, Mapping | str | Path):
        loaded = load_scenario(source, KernelScenario)
        assert isinstance(loaded, KernelScenario)
        return loaded
    raise TypeError(f"expected a Scenario, a dict or a path, got {type(source).__name__}")


def load_scenario(
    source: Scenario | Mapping[str, Any] | str | Path, kind: type[Scenario] = Scenario
) -> Scenario:
    """A Scenario (of ``kind``) from a Scenario, a user-level dict, or the path of a TOML file."""
    if isinstance(source, Scenario):
        return source
    if isinstance(source, Mapping):
        return kind.from_dict(source)
    if isinstance(source, str | Path):
        return kind.from_toml(source)
    raise TypeError(f"expected a Scenario, a dict or a path, got {type(source).__name__}")


def check_seed(seed: object) -> int:
    """A seed is an integer in [0, 2^64) (it goes to the native run as it is, not through the resolution)."""
    try:
        value = _native.parse_quantity("seed", seed, "seed")
    except _native.InputError as e:
        raise InputError(e.field, e.message) from None
    assert isinstance(value, int)
    return value

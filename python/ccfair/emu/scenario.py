"""Scenarios for the kernel backend: the same TOML as the simulator, read by the same :class:`Scenario`, with
the rules a real kernel imposes.

- ``flows[].cc`` names a congestion control of the running kernel
  (``/proc/sys/net/ipv4/tcp_available_congestion_control``; nothing is loaded). An algorithm the simulator
  models keeps its plain name (``cubic``, and an alias such as ``newreno`` maps to the module it models);
  one it does not model is written ``kernel:NAME`` (``kernel:vegas``), so a scenario says in its text that
  it runs on the kernel only: the simulator refuses such a name, naming the field, and a plain unknown
  name is refused here with the spelling to use. ``kernel:`` before a name the simulator models is refused
  too (one experiment, one name).
- ``flows[].cc_params`` must be empty: a kernel algorithm's parameters are host-wide module parameters, not
  per-socket settings, and ccfair changes nothing host-wide.
- ``flows[].delay`` (kernel backend only) places the base RTT: ``"split"`` (default, as the simulator: half
  on the data direction after the bottleneck, half on the ACK direction), ``"data"`` (all of it after the
  bottleneck) or ``"ack"`` (all of it on the ACK path). The simulator always splits, so a scenario with
  another placement does not run there.
- ``flows[].ecn`` is ``off`` or ``classic`` (RFC 3168 through a per-group route feature); ``l4s`` is refused.
- ``flows[].size`` and ``flows[].arrivals`` work as in the simulator: the flows start at the times and write
  the sizes the simulator draws for the same seed (:meth:`KernelScenario.flow_plans`); a finite flow's sender
  shuts down its sending side after its last byte, and its completion is when the receiver reads that byte.
- At most :data:`MAX_KERNEL_FLOWS` flows and :data:`MAX_KERNEL_GROUPS` groups (ports and addresses).
- ``[host]`` and ``[flows.host]``: the kernel's hosts are this machine's, so it honours what it can set on
  them, :data:`HONOURED_HOST_KEYS`: ``preset``, ``start_jitter`` (the flows' starts are drawn as the
  simulator draws them), ``tso`` (segmentation offload on the senders' veth), ``gro`` (receive
  coalescing on the receiver's veth), ``gro_flush`` (its interrupt moderation, ``gro_flush_timeout``),
  and the receive buffer: ``rmem`` and ``rcv_autotune`` become the receiver namespace's ``tcp_rmem`` and
  ``tcp_moderate_rcvbuf``. A kernel always has a receive window, so ``rcv_window = false`` (and the ideal
  preset) cannot switch it off: the receivers then get the largest buffer the run could use
  (``sysctls_for`` in ``run.py``), the documented difference from the simulator's unlimited window.
  Every group's flows share one sender veth and one receiver veth (and namespace), so these must come out
  the same for every group. Another key written in a table (``noise``, ``pacing_slack``,
  ``delack_granularity``, ``nic_rate``, ...) would set this machine's timers, noise or NIC rate, which the
  kernel backend cannot do, ``hz`` and ``tick_phase`` are the kernel's build and boot (its ``CONFIG_HZ``
  is recorded with every run as ``kernel_hz``), ``rcv_scaling_ratio`` is the kernel's own measurement, and
  ``rcv_initial_window`` is the receiver route's ``initrwnd``, which the backend sets to the largest initial
  window of the scenario's groups (``netns.Topology.build``): each is refused, naming the field. A
  preset's own values for them are this machine's real ones instead (the run's provenance says so); its
  offloads apply.

Everything else (units, buffer, window, ...) is validated by :class:`Scenario` itself: the kernel scenario
is validated as the simulator scenario it would be with a stand-in algorithm, then carries its own names.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ccfair import _native
from ccfair.catalog import catalog
from ccfair.emu.netns import HostOffloads
from ccfair.errors import ScenarioError
from ccfair.scenario import Host, Resolution, Scenario
from ccfair.toml_text import check_depth, read_toml
from ccfair.units import format_duration

AVAILABLE_CC_FILE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
DELAY_PLACEMENTS = ("split", "data", "ack")
MAX_KERNEL_FLOWS = 1000
MAX_KERNEL_GROUPS = 250
# Linux's TCP_CA_NAME_MAX is 16 bytes with the terminating NUL.
KERNEL_MODULE_NAME_MAX = 15
KERNEL_MODULE_NAME = re.compile(rf"[A-Za-z0-9_-]{{1,{KERNEL_MODULE_NAME_MAX}}}")
# A simulator algorithm that stands in while the rest of the scenario is validated.
_STAND_IN_CC = "reno"
# The host keys the kernel backend sets on its real hosts (see the module docstring).
HONOURED_HOST_KEYS = (
    "preset",
    "start_jitter",
    "tso",
    "gro",
    "gro_flush",
    "rcv_window",
    "rcv_autotune",
    "rmem",
)
# The offload keys, by their :class:`HostOffloads` (and resolved spec) names.
OFFLOAD_KEYS = ("tso", "gro", "gro_flush_ns")
# The receive-buffer keys, by their resolved spec names, with the values of a host that leaves them out.
RECEIVE_BUFFER_DEFAULTS: dict[str, Any] = {
    "rcv_window": False,
    "rcv_autotune": True,
    "rmem_bytes": [4096, 131072, 32 << 20],
}


def kernel_ccs() -> list[str]:
    """The congestion controls the running kernel offers."""
    try:
        return AVAILABLE_CC_FILE.read_text().split()
    except OSError:
        return []


def _simulator_aliases() -> dict[str, str]:
    aliases = {}
    for cc in catalog()["congestion_controls"]:
        aliases[cc["name"]] = cc["name"]
        for a in cc["aliases"]:
            aliases[a] = cc["name"]
    return aliases


def kernel_cc_prefix() -> str:
    """How a kernel-only congestion control is written (``kernel:``; defined with the scenario's rules in
    ``crates/ccfair-sim/src/scenario.rs``)."""
    prefix: str = catalog()["kernel_cc_prefix"]
    return prefix


def kernel_cc_name(name: str, field: str, available: list[str]) -> str:
    """The kernel module for ``name`` (see the module docstring): ``kernel:NAME`` is the module NAME, a name
    the simulator models is itself or the module a simulator alias stands for; the module must be one this
    kernel offers. Raises :class:`ScenarioError` naming ``field`` otherwise."""
    prefix = kernel_cc_prefix()
    aliases = _simulator_aliases()
    listed = " ".join(available) if available else "none (cannot read " + str(AVAILABLE_CC_FILE) + ")"
    if name.startswith(prefix):
        module = name.removeprefix(prefix)
        if not KERNEL_MODULE_NAME.fullmatch(module):
            raise ScenarioError(
                field,
                f"{name!r}: after {prefix!r} comes a kernel module's name (letters, digits, '_' or '-', at "
                f"most {KERNEL_MODULE_NAME_MAX} characters, as in {AVAILABLE_CC_FILE})",
            )
        if module in aliases:
            raise ScenarioError(
                field,
                f"the simulator models {module!r}: write cc = {module!r} (the kernel backend runs the "
                f"kernel's {aliases[module]!r} under that name); {prefix!r} is for algorithms it does not "
                "model",
            )
        if module not in available:
            raise ScenarioError(field, f"{module!r} is not available in this kernel; available: {listed}")
        return module
    if name in aliases:
        if name in available:
            return name
        if aliases[name] in available:
            return aliases[name]
        raise ScenarioError(field, f"{name!r} is not available in this kernel; available: {listed}")
    raise ScenarioError(
        field,
        f"the simulator does not model {name!r}: a congestion control of the kernel only is written "
        f"{prefix + name!r} (available in this kernel: {listed})",
    )


def _user_key(name: str) -> str:
    """The TOML key of a :class:`Host` field (``noise_scale_ns`` is ``noise_scale``)."""
    for suffix in ("_ns", "_bps", "_bytes"):
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def _check_host(host: Host | None, field: str) -> None:
    """Refuses a written host key the kernel backend cannot honour (see the module docstring)."""
    if host is None:
        return
    for name, value in dataclasses.asdict(host).items():
        key = _user_key(name)
        if value is not None and key not in HONOURED_HOST_KEYS:
            raise ScenarioError(
                f"{field}.{key}",
                f"the kernel backend runs this machine's own hosts and cannot set their {key}; it honours "
                f"{', '.join(HONOURED_HOST_KEYS)} (a preset's other values are the machine's real ones); "
                "remove the key",
            )


@dataclass(frozen=True)
class KernelScenario(Scenario):
    """A :class:`Scenario` whose algorithms are kernel modules. ``delays[i]`` is flow group i's RTT
    placement (see the module docstring)."""

    delays: tuple[str, ...] = ()

    def delay_of(self, group: int) -> str:
        return self.delays[group] if group < len(self.delays) else "split"

    def offloads(self, spec: Mapping[str, Any]) -> HostOffloads:
        """The offloads of the run's hosts, from the resolved ``spec`` (each group's ``host``: its preset's
        values with the tables' keys laid over them; an ideal host, which the spec leaves out, has none);
        raises :class:`ScenarioError` when groups disagree (they share the sender's and the receiver's
        veth)."""
        chosen: HostOffloads | None = None
        for i, group in enumerate(spec["groups"]):
            resolved = group.get("host") or {}
            mine = HostOffloads(
                tso=bool(resolved.get("tso", False)),
                gro=bool(resolved.get("gro", False)),
                gro_flush_ns=int(resolved.get("gro_flush_ns", 0)),
            )
            if chosen is None:
                chosen = mine
            for key in OFFLOAD_KEYS:
                if getattr(mine, key) != getattr(chosen, key):
                    raise ScenarioError(
                        f"flows[{i}].host.{_user_key(key)}",
                        "every flow group runs on the same sender and receiver veth in the kernel backend, "
                        f"so {_user_key(key)} must be the same for all: group 0 has "
                        f"{_show(getattr(chosen, key))}, this group {_show(getattr(mine, key))}",
                    )
        return chosen or HostOffloads()

    def receive_buffer(self, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        """The receivers' buffer settings (``rcv_window``, ``rcv_autotune``, ``rmem_bytes``) from the
        resolved ``spec``, or None when the hosts model no receive window; raises :class:`ScenarioError`
        when groups disagree (their receivers share one namespace, whose sysctls these are)."""
        chosen: dict[str, Any] | None = None
        for i, group in enumerate(spec["groups"]):
            resolved = group.get("host") or {}
            mine = {key: resolved.get(key, default) for key, default in RECEIVE_BUFFER_DEFAULTS.items()}
            if chosen is None:
                chosen = mine
            for key in RECEIVE_BUFFER_DEFAULTS:
                if mine[key] != chosen[key]:
                    raise ScenarioError(
                        f"flows[{i}].host.{_user_key(key)}",
                        "every flow group's receiver runs in the same namespace in the kernel backend, so "
                        f"{_user_key(key)} must be the same for all: group 0 has {chosen[key]}, this group "
                        f"{mine[key]}",
                    )
        return chosen if chosen is not None and chosen["rcv_window"] else None

    def _stand_in(self) -> Scenario:
        """The simulator scenario with a stand-in algorithm, made (and so resolved) once."""
        return self._stand_in_scenario

    @cached_property
    def _stand_in_scenario(self) -> Scenario:
        groups = tuple(dataclasses.replace(g, cc=_STAND_IN_CC, cc_params={}) for g in self.flows)
        return Scenario(
            duration_ns=self.duration_ns,
            link=self.link,
            flows=groups,
            interval_ns=self.interval_ns,
            measure=self.measure,
            seed=self.seed,
            host=self.host,
        )

    def resolve(self) -> dict[str, Any]:
        """The kernel spec: the native spec's shape, with ``groups[i].cc = {"name": <kernel module>}`` and
        ``groups[i].delay``, and the hosts' ``offloads`` (``{"tso": bool, "gro": bool}``); raises
        :class:`ScenarioError`."""
        available = kernel_ccs()
        _check_host(self.host, "host")
        names = []
        for i, g in enumerate(self.flows):
            names.append(kernel_cc_name(g.cc, f"flows[{i}].cc", available))
            _check_host(g.host, f"flows[{i}].host")
            if g.cc_params:
                raise ScenarioError(
                    f"flows[{i}].cc_params",
                    "the kernel backend cannot set algorithm parameters per flow (they are host-wide module "
                    "parameters); remove cc_params",
                )
            if g.ecn not in ("off", "classic"):
                raise ScenarioError(
                    f"flows[{i}].ecn",
                    f"{g.ecn!r} needs an L4S congestion control and Accurate ECN in the kernel; the kernel "
                    "backend runs off and classic (RFC 3168)",
                )
            if self.delay_of(i) not in DELAY_PLACEMENTS:
                raise ScenarioError(
                    f"flows[{i}].delay",
                    f"must be one of {', '.join(DELAY_PLACEMENTS)}, got {self.delay_of(i)!r}",
                )
        if len(self.flows) > MAX_KERNEL_GROUPS:
            raise ScenarioError("flows", f"the kernel backend runs at most {MAX_KERNEL_GROUPS} flow groups")
        if self.flow_count() > MAX_KERNEL_FLOWS:
            raise ScenarioError(
                "flows", f"the kernel backend runs at most {MAX_KERNEL_FLOWS} flows, got {self.flow_count()}"
            )
        spec = self._stand_in().resolve()
        for i, group in enumerate(spec["groups"]):
            group["cc"] = {"name": names[i]}
            group["delay"] = self.delay_of(i)
        spec["offloads"] = dataclasses.asdict(self.offloads(spec))
        spec["receive_buffer"] = self.receive_buffer(spec)
        return spec

    def resolution(self) -> Resolution:
        """The stand-in's resolution (its spec runs the simulator's stand-in algorithm; its estimate is the
        simulator's for this link and these flows), after the kernel's own checks."""
        self.resolve()
        return self._stand_in().resolution()

    def flow_plans(self, seed: int) -> list[dict[str, int]]:
        """Every flow's start and size (``start_ns``, ``size_bytes``, 0 for a bulk flow) under ``seed``, as
        the simulator draws them from ``arrivals`` and ``size``, so both backends start and size the same
        flows."""
        plans: list[dict[str, int]] = json.loads(_native.flow_plans(self.resolution().spec_json, seed))
        return plans

    def to_dict(self, *, explicit: bool = False) -> dict[str, Any]:
        d = self._stand_in().to_dict(explicit=explicit)
        for i, (g, out) in enumerate(zip(self.flows, d["flows"], strict=True)):
            out["cc"] = g.cc
            out.pop("cc_params", None)
            if self.delay_of(i) != "split":  # the default stays implicit: the file still loads as a
                out["delay"] = self.delay_of(i)  # simulator scenario when its algorithms are modelled
        return d

    def simulator_scenario(self) -> Scenario:
        """The same experiment for the simulator; raises :class:`ScenarioError` if it cannot run there
        (an algorithm the simulator does not model, or a delay placement other than ``split``)."""
        for i in range(len(self.flows)):
            if self.delay_of(i) != "split":
                raise ScenarioError(
                    f"flows[{i}].delay",
                    f"{self.delay_of(i)!r} runs on the kernel backend only (the simulator splits the RTT "
                    "half and half)",
                )
        d = self.to_dict()
        for f in d["flows"]:
            f.pop("delay", None)
        return Scenario.from_dict(d)


def kernel_scenario(source: Scenario | Mapping[str, Any] | str | Path) -> KernelScenario:
    """A :class:`KernelScenario` from a scenario, a user-level dict or a TOML file path."""
    if isinstance(source, KernelScenario):
        source.validate()
        return source
    if isinstance(source, Scenario):
        fields = {f.name: getattr(source, f.name) for f in dataclasses.fields(Scenario)}
        scenario = KernelScenario(**fields)
        scenario.validate()
        return scenario
    if isinstance(source, str | Path):
        path = Path(source)
        try:
            Scenario.from_toml(path)  # the file's own errors (missing, syntax) exactly as the simulator says
        except ScenarioError as e:
            # Kernel names and keys (flows' algorithms and delays, host offloads) are read below.
            if not e.field.startswith(("flows[", "host.")):
                raise
        return _from_dict(read_toml(path))
    if isinstance(source, Mapping):
        return _from_dict(source)
    raise TypeError(f"expected a Scenario, a dict or a path, got {type(source).__name__}")


def _from_dict(data: Mapping[str, Any]) -> KernelScenario:
    check_depth(data, "scenario")
    d = copy.deepcopy(dict(data))
    flows = d.get("flows")
    delays: list[str] = []
    names: list[Any] = []
    if isinstance(flows, list):
        for i, f in enumerate(flows):
            if not isinstance(f, Mapping):
                continue
            f = dict(f)
            delay = f.pop("delay", "split")
            if not isinstance(delay, str) or delay not in DELAY_PLACEMENTS:
                raise ScenarioError(
                    f"flows[{i}].delay", f"must be one of {', '.join(DELAY_PLACEMENTS)}, got {delay!r}"
                )
            delays.append(delay)
            names.append(f.get("cc"))
            if isinstance(f.get("cc"), str):
                f["cc"] = _STAND_IN_CC
                if f.get("cc_params"):
                    raise ScenarioError(
                        f"flows[{i}].cc_params",
                        "the kernel backend cannot set algorithm parameters per flow (they are host-wide "
                        "module parameters); remove cc_params",
                    )
                f.pop("cc_params", None)
            flows[i] = f
    base = Scenario.from_dict(d)
    groups = tuple(
        dataclasses.replace(g, cc=name) if isinstance(name, str) else g
        for g, name in zip(base.flows, names, strict=False)
    )
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(Scenario)}
    fields["flows"] = groups
    scenario = KernelScenario(**fields, delays=tuple(delays))
    scenario.validate()
    return scenario


def _show(value: bool | int) -> str:
    """An offload value as a scenario writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    return format_duration(value)

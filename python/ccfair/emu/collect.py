"""The kernel run's results in the simulator's format: the three programs' JSON outputs (emulator, senders,
receiver) become the ``{"flows", "timeseries", "queue", "totals"}`` dict that ``_native.run`` returns, with
the same column names, meanings and dtypes, so :meth:`RunResult.from_native` and every metric work unchanged.

Where each column comes from:

- goodput, ``delivered_bytes``: the receiving application's byte counts (in-order payload); a finite flow's
  ``completion_ns``: when the receiver read its last byte, after its start
- ``cwnd``, ``ssthresh``, ``srtt_ns``, ``min_rtt_ns``, ``pacing_rate_bps``, ``inflight``, ``ca_state``,
  ``retransmits``, sent and retransmitted segments, RTO events: the sender's TCP_INFO; ``cc_bw_bps``,
  ``cc_min_rtt_ns``, ``cc_pacing_gain``, ``cc_cwnd_gain``: BBR's TCP_CC_INFO. Sampled at the interval's end.
- drops (queue and path), CE marks, RTT samples, the queue series and the link's bytes: the emulator
- NaN where the kernel does not expose a value: ``cc_mode`` is -1 (BBR's state is not in TCP_CC_INFO),
  ``cc_inflight_hi``/``lo`` and ``cc_aux`` (Cubic's W_max) are NaN, and so is ``pacing_rate_bps`` while
  the kernel's pacing rate is unlimited; ``arrived_segments`` is NaN
- the L4S and classic sojourns split the queue's departures by the ECN codepoint they arrived with (ECT(1) is
  L4S), through the simulator's queue meter; kernel flows are classic (ECN ``off`` or ``classic``), so the L4S
  sojourn is NaN
- kernel-only extra columns: ``delivery_rate_bps`` (time series), ``lateness_p99_ns`` (queue)

The columns, their order and dtypes come from the output schema (:func:`ccfair.catalog.output_table`); this
module only says where each kernel value comes from. A column the kernel cannot measure gets the placeholder
the schema names (NaN for floats, ``cc_mode`` -1); a simulator-only column is left out.

A flow has a time-series row for interval (t - interval, t] if it started before t and had not finished
(stopped and everything acknowledged) before the interval began, as in the simulator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ccfair.catalog import output_table

FlowInfo = tuple[
    int, int, str, int, int, int, int
]  # flow_id, group, cc, rtt_ns, start_ns, stop_ns, size_bytes


def _col(values: Sequence[Any], dtype: str) -> tuple[str, bytes]:
    """A native-style column; None is NaN, and NaN in an integer column (a value TCP_INFO could not give)
    is 0."""
    floats = np.asarray([math.nan if v is None else v for v in values], dtype="f8")
    dt = np.dtype(dtype)
    arr = floats.astype(dt) if dt.kind == "f" else np.nan_to_num(floats, nan=0.0).astype(dt)
    return (dt.str, arr.tobytes())


def _table(table: str, values: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """The kernel backend's columns of ``table`` in schema order, with the schema's dtypes. A column that
    may be float where the kernel lacks a counter (``kernel_dtypes`` names float64) is float64 when it holds
    a NaN."""
    out: dict[str, Any] = {}
    for c in output_table(table):
        if "kernel" not in c["backends"]:
            continue
        v = values[c["name"]]
        if c["dtype"] == "str":
            out[c["name"]] = list(v)
            continue
        floats = [math.nan if x is None else float(x) for x in v]
        nan = any(math.isnan(x) for x in floats)
        dtype = "<f8" if nan and "<f8" in c["kernel_dtypes"] else c["dtype"]
        out[c["name"]] = _col(floats, dtype)
    return out


def _f(v: Any) -> float:
    return math.nan if v is None else float(v)


def flow_infos(spec: Mapping[str, Any], plans: Sequence[Mapping[str, int]] | None = None) -> list[FlowInfo]:
    """Per flow: id, group, cc, base RTT, start, stop, size (0: bulk). ``plans`` are the flows' starts and
    sizes as the simulator draws them (``_native.flow_plans``); without them every flow starts at its
    group's start and is bulk."""
    infos: list[FlowInfo] = []
    for g, group in enumerate(spec["groups"]):
        stop = group["stop_ns"] if group["stop_ns"] is not None else spec["duration_ns"]
        for _ in range(group["count"]):
            plan = (
                plans[len(infos)] if plans is not None else {"start_ns": group["start_ns"], "size_bytes": 0}
            )
            infos.append(
                (
                    len(infos),
                    g,
                    group["cc"]["name"],
                    group["rtt_ns"],
                    plan["start_ns"],
                    stop,
                    plan["size_bytes"],
                )
            )
    return infos


def _delta(end: Any, start: Any) -> float:
    return _f(end) - _f(start)


def to_native(
    spec: Mapping[str, Any],
    infos: list[FlowInfo],
    emu: Mapping[str, Any],
    sender: Mapping[str, Any],
    receiver: Mapping[str, Any],
    wall_seconds: float,
) -> dict[str, Any]:
    n = len(infos)
    interval = spec["interval_ns"]
    s_flows, e_flows = sender["flows"], emu["flows"]
    flows: dict[str, Any] = {
        "flow_id": [i[0] for i in infos],
        "group": [i[1] for i in infos],
        "cc": [i[2] for i in infos],
        "rtt_ns": [i[3] for i in infos],
        "start_ns": [i[4] for i in infos],
        "stop_ns": [i[5] for i in infos],
        "size_bytes": [i[6] for i in infos],
    }
    for prefix in ("window", "total"):
        if prefix == "window":
            delivered = [receiver["window_end"][f] - receiver["window_start"][f] for f in range(n)]
            snd = [
                {k: _delta(s["window_end"][k], s["window_start"][k]) for k in s["window_end"]}
                for s in s_flows
            ]
        else:
            delivered = list(receiver["total"])
            snd = [{k: _f(v) for k, v in s["total"].items()} for s in s_flows]
        emu_counts = [e[prefix] for e in e_flows]
        flows[f"{prefix}_delivered_bytes"] = delivered
        flows[f"{prefix}_sent_segments"] = [c["sent_segments"] for c in emu_counts]
        flows[f"{prefix}_retransmitted_segments"] = [s["total_retrans"] for s in snd]
        flows[f"{prefix}_queue_drops"] = [c["queue_drops"] for c in emu_counts]
        flows[f"{prefix}_path_drops"] = [c["path_drops"] for c in emu_counts]
        flows[f"{prefix}_ce_marks"] = [c["ce_marks"] for c in emu_counts]
        # NaN on kernels without tcpi_total_rto (before 6.7): the column is float64 then
        flows[f"{prefix}_rto_events"] = [s["total_rto"] for s in snd]
        # The emulator cannot see the senders' congestion state: NaN (the column is float64 then)
        flows[f"{prefix}_cwnd_reductions"] = [None] * n
    flows["rtt_samples"] = [e["rtt_samples"] for e in e_flows]
    flows["rtt_mean_ns"] = [_f(e["rtt_mean_ns"]) for e in e_flows]
    flows["rtt_p99_ns"] = [_f(e["rtt_p99_ns"]) for e in e_flows]
    completed = receiver.get("completed_ns") or [None] * n
    flows["completion_ns"] = [
        math.nan if c is None else c - info[4] for c, info in zip(completed, infos, strict=True)
    ]

    rows: dict[str, list[Any]] = {c["name"]: [] for c in output_table("timeseries")}
    t_all = receiver["t_ns"]
    for k, t in enumerate(t_all):
        for f, (_, _, _, _, start, _, _) in enumerate(infos):
            s = s_flows[f]
            finished = s.get("finished_ns")
            if not (start < t and (finished is None or finished > t - interval)):
                continue
            if k >= len(s["cwnd"]) or k >= len(e_flows[f]["interval_drops"]):
                continue
            prev = receiver["delivered"][f][k - 1] if k > 0 else 0
            delivered = receiver["delivered"][f][k] - prev
            prev_rtx = _f(s["total_retrans"][k - 1]) if k > 0 else 0.0
            rows["t_ns"].append(t)
            rows["flow_id"].append(f)
            rows["delivered_bytes"].append(delivered)
            rows["goodput_bps"].append(delivered * 8 / (interval / 1e9))
            rows["cwnd"].append(_f(s["cwnd"][k]))
            rows["ssthresh"].append(s["ssthresh"][k])
            rows["srtt_ns"].append(_f(s["srtt_ns"][k]))
            rows["min_rtt_ns"].append(_f(s["min_rtt_ns"][k]))
            rows["pacing_rate_bps"].append(_f(s["pacing_rate_bps"][k]))
            rows["inflight"].append(_f(s["inflight"][k]))
            rows["retransmits"].append(max(0.0, _f(s["total_retrans"][k]) - prev_rtx))
            rows["drops"].append(e_flows[f]["interval_drops"][k])
            rows["ca_state"].append(_f(s["ca_state"][k]))
            rows["cc_mode"].append(-1)
            rows["cc_pacing_gain"].append(_f(s["cc_pacing_gain"][k]))
            rows["cc_cwnd_gain"].append(_f(s["cc_cwnd_gain"][k]))
            rows["cc_bw_bps"].append(_f(s["cc_bw_bps"][k]))
            rows["cc_min_rtt_ns"].append(_f(s["cc_min_rtt_ns"][k]))
            rows["cc_inflight_hi"].append(math.nan)
            rows["cc_inflight_lo"].append(math.nan)
            rows["cc_aux"].append(math.nan)
            rows["delivery_rate_bps"].append(_f(s["delivery_rate_bps"][k]))
    known = {
        **emu["totals"],  # the emulator's totals, under the schema's names
        "sim_end_ns": spec["duration_ns"],
        "window_ns": spec["measure_end_ns"] - spec["measure_start_ns"],
        "arrived_segments": None,  # not measured
        "in_flight_at_end": emu["health"]["held_at_end"],
        "wall_seconds": wall_seconds,
    }
    totals: dict[str, Any] = {}
    for c in output_table("totals"):
        if "kernel" in c["backends"]:
            v = known[c["name"]]
            totals[c["name"]] = _f(v) if v is None or c["dtype"] == "<f8" else int(v)
    return {
        "flows": _table("flows", flows),
        "timeseries": _table("timeseries", rows),
        "queue": _table("queue", emu["queue"]),
        "totals": totals,
    }

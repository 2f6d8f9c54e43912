"""The kernel backend's pure parts (no root needed): kernel scenarios, delay placement, sysctls, the results
in the simulator's format, the emulator's health verdict, the doctor's rate check and the stale sweep."""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

import ccfair
from ccfair import _native
from ccfair.catalog import output_table
from ccfair.emu import collect, doctor, netns
from ccfair.emu import host as emu_host
from ccfair.emu import probe as emu_probe
from ccfair.emu import run as emu_run
from ccfair.emu.binary import emulator_binary
from ccfair.errors import InputError
from ccfair.result import RunResult
from ccfair.scenario import KernelScenario, kernel_scenario

BBR_VS_CUBIC: dict[str, Any] = {
    "duration": "2s",
    "interval": "500ms",
    "measure": {"start": "1s", "end": "2s"},
    "link": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [{"cc": "bbr", "rtt": "50ms"}, {"cc": "cubic", "rtt": "20ms", "start": "1s", "count": 2}],
}


@pytest.fixture(autouse=True)
def kernel_with_bbr(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's list of algorithms, fixed so these tests do not depend on the host's modules."""
    monkeypatch.setattr(emu_host, "kernel_ccs", lambda: ["reno", "cubic", "bbr"])


def test_kernel_scenarios_take_kernel_algorithms_and_map_simulator_aliases() -> None:
    sc = kernel_scenario(BBR_VS_CUBIC)
    spec = sc.resolve()
    assert [g["cc"] for g in spec["groups"]] == [{"name": "bbr"}, {"name": "cubic"}]
    assert spec["link"]["aqm"]["limit"] == {"packets": 17}  # 1 BDP of the smallest RTT: 10 Mbps x 20 ms
    d = {**BBR_VS_CUBIC, "flows": [{"cc": "newreno", "rtt": "50ms"}]}
    assert kernel_scenario(d).resolve()["groups"][0]["cc"] == {"name": "reno"}


def test_bdp_buffer_uses_the_smallest_rtt_as_in_the_simulator() -> None:
    d = {**BBR_VS_CUBIC, "flows": [{"cc": "cubic", "rtt": "50ms"}, {"cc": "reno", "rtt": "20ms"}]}
    assert (
        kernel_scenario(d).resolve()["link"]["aqm"] == ccfair.Scenario.from_dict(d).resolve()["link"]["aqm"]
    )


@pytest.mark.parametrize(
    ("flow", "field", "words"),
    [
        (
            {"cc": "kernel:vegas", "rtt": "50ms"},
            "flows[0].cc",
            "'vegas' is not available in this kernel; available: reno cubic bbr",
        ),
        (
            {"cc": "vegas", "rtt": "50ms"},
            "flows[0].cc",
            "the simulator does not model 'vegas': a congestion control of the kernel only is written "
            "'kernel:vegas'",
        ),
        (
            {"cc": "kernel:cubic", "rtt": "50ms"},
            "flows[0].cc",
            "the simulator models 'cubic': write cc = 'cubic'",
        ),
        ({"cc": "kernel:newreno", "rtt": "50ms"}, "flows[0].cc", "runs the kernel's 'reno' under that name"),
        ({"cc": "kernel:", "rtt": "50ms"}, "flows[0].cc", "after 'kernel:' comes a kernel module's name"),
        ({"cc": "kernel:tcp vegas", "rtt": "50ms"}, "flows[0].cc", "letters, digits, '_' or '-'"),
        ({"cc": "kernel:" + "v" * 16, "rtt": "50ms"}, "flows[0].cc", "at most 15 characters"),
        ({"cc": "cubic", "rtt": "50ms", "cc_params": {"beta": 0.5}}, "flows[0].cc_params", "host-wide"),
        ({"cc": "cubic", "rtt": "50ms", "delay": "middle"}, "flows[0].delay", "split, data, ack"),
        ({"cc": "cubic", "rtt": "50ms", "ecn": "l4s"}, "flows[0].ecn", "off and classic"),
        ({"cc": "cubic", "rtt": "-5ms"}, "flows[0].rtt", ""),
        ({"cc": "cubic", "rtt": "50ms", "host": {"noise": "none"}}, "flows[0].host.noise", "machine's own"),
        (
            {"cc": "cubic", "rtt": "50ms", "host": {"preset": "testbed", "pacing_slack": "1us"}},
            "flows[0].host.pacing_slack",
            "honours preset, start_jitter, tso, gro, gro_flush, rcv_window, rcv_autotune, rmem",
        ),
        (
            {"cc": "cubic", "rtt": "50ms", "host": {"preset": "testbed", "rcv_scaling_ratio": 188}},
            "flows[0].host.rcv_scaling_ratio",
            "cannot set their rcv_scaling_ratio",
        ),
        (
            {"cc": "cubic", "rtt": "50ms", "host": {"preset": "testbed", "rcv_initial_window": 10}},
            "flows[0].host.rcv_initial_window",
            "cannot set their rcv_initial_window",
        ),
        (
            {"cc": "cubic", "rtt": "50ms", "host": {"preset": "testbed", "hz": 1000}},
            "flows[0].host.hz",
            "cannot set their hz",
        ),
        (
            {"cc": "cubic", "rtt": "50ms", "host": {"tick_phase": "zero"}},
            "flows[0].host.tick_phase",
            "tick_phase",
        ),
        ({"cc": "cubic", "rtt": "50ms", "host": {"tso": 1}}, "flows[0].host.tso", "true or false"),
        (
            {"cc": "cubic", "rtt": "50ms", "host": {"gro_flush": "soon"}},
            "flows[0].host.gro_flush",
            "duration",
        ),
    ],
)
def test_kernel_scenario_errors_name_the_field(flow: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(InputError) as e:
        kernel_scenario({**BBR_VS_CUBIC, "flows": [flow]})
    assert e.value.field == field
    assert words in e.value.message


def test_kernel_scenario_file_errors_are_the_simulators(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        kernel_scenario(tmp_path / "missing.toml")
    assert e.value.message == "no such file"
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "10s"\n[link]\nrate = "fast"\n')
    with pytest.raises(InputError) as e:
        kernel_scenario(bad)
    assert e.value.field == "link.rate"


def test_to_dict_round_trips_and_keeps_the_kernel_names() -> None:
    d = {
        **BBR_VS_CUBIC,
        "flows": [{"cc": "bbr", "rtt": "50ms", "delay": "ack"}, {"cc": "cubic", "rtt": "20ms"}],
    }
    sc = kernel_scenario(d)
    assert kernel_scenario(sc.to_dict()) == sc
    again = kernel_scenario(sc.to_dict(explicit=True))
    assert again.resolve() == sc.resolve()
    assert [g.delay for g in again.flows] == ["ack", None]
    assert "cc_params" not in sc.to_dict(explicit=True)["flows"][0]
    assert "delay" not in sc.to_dict(explicit=True)["flows"][1]


def test_simulator_scenario_refuses_other_delay_placements() -> None:
    sc = kernel_scenario({**BBR_VS_CUBIC, "flows": [{"cc": "cubic", "rtt": "50ms", "delay": "data"}]})
    with pytest.raises(InputError) as e:
        sc.simulator_scenario()
    assert e.value.field == "flows[0].delay"
    plain = kernel_scenario({**BBR_VS_CUBIC, "flows": [{"cc": "cubic", "rtt": "50ms"}]}).simulator_scenario()
    assert type(plain) is ccfair.Scenario
    assert plain.flows[0].cc == "cubic"


def derived(role: str, cfg: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """What ``ccfair-emu ROLE`` derives from the configuration the orchestrator writes (nothing starts)."""
    path = tmp_path / f"{role}.config.json"
    path.write_text(json.dumps(cfg))
    done = subprocess.run(
        [emulator_binary(), "check", role, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_programs_derive_their_flows_from_the_spec_as_the_simulator_does(tmp_path: Path) -> None:
    d = {
        **BBR_VS_CUBIC,
        "flows": [
            {"cc": "bbr", "rtt": "50000001ns", "delay": "split", "loss": 0.01},
            {
                "cc": "cubic",
                "rtt": "10ns",
                "delay": "data",
                "size": "1MB",
                "count": 2,
                "arrivals": {"process": "uniform", "window": "2s"},
            },
            {"cc": "newreno", "rtt": "10ns", "delay": "ack", "start": "1s"},
        ],
        "link": {"rate": "10Mbps", "buffer": "100pkt"},
    }
    sc = kernel_scenario(d)
    spec = sc.resolve()
    fwd = derived("forward", emu_run.forward_config(spec, 7, [0], tmp_path / "rtr.json"), tmp_path)
    paths = [(f["data_delay_ns"], f["ack_delay_ns"], f["group"]) for f in fwd["flows"]]
    assert paths == [(25_000_000, 25_000_001, 0), (10, 0, 1), (10, 0, 1), (0, 10, 2)]
    assert fwd["flows"][0]["loss"] == 0.01 and fwd["seed"] == 7
    assert fwd["schedule"] == {
        k: spec[k] for k in ("duration_ns", "interval_ns", "measure_start_ns", "measure_end_ns")
    }
    send = derived("send", emu_run.program_config(spec, 7, [], tmp_path / "snd.json"), tmp_path)
    plans = sc.flow_plans(7)
    assert [f["start_ns"] for f in send["flows"]] == [p["start_ns"] for p in plans]
    assert [f["cc"] for f in send["flows"]] == ["bbr", "cubic", "cubic", "reno"]
    assert [f["port"] for f in send["flows"]] == [emu_run.PORT_BASE + i for i in range(4)]
    assert send["flows"][1]["dst"] == netns.receiver_ip(1)
    assert [f["size_bytes"] for f in send["flows"]] == [None, 1_000_000, 1_000_000, None]
    recv = derived("recv", emu_run.program_config(spec, 7, [], tmp_path / "rcv.json"), tmp_path)
    assert recv["sizes"] == [p["size_bytes"] for p in plans] == [0, 1_000_000, 1_000_000, 0]
    # The forwarder's probe (doctor) is a kernel scenario too: one flow on a path without delay to speak of.
    probe = emu_run.forward_config(emu_probe.probe_spec(10**8, 5), 1, [], tmp_path / "p.json")
    assert derived("forward", probe, tmp_path)["flows"] == [
        {"data_delay_ns": 0, "ack_delay_ns": 1, "loss": 0.0, "group": 0}
    ]


def test_socket_buffer_maxima_cover_four_bdp_plus_buffer() -> None:
    spec = kernel_scenario(
        {
            **BBR_VS_CUBIC,
            "link": {"rate": "1Gbps", "buffer": "2bdp"},
            "flows": [{"cc": "cubic", "rtt": "200ms"}],
        }
    ).resolve()
    sysctls = emu_run.sysctls_for(spec)
    wmax = int(sysctls["snd"]["net.ipv4.tcp_wmem"].split()[2])
    bdp = 10**9 * 0.2 / 8
    assert wmax >= 4 * 3 * bdp * 0.99
    assert sysctls["rcv"]["net.ipv4.tcp_rmem"] == sysctls["snd"]["net.ipv4.tcp_rmem"]
    assert sysctls["rtr"]["net.ipv4.ip_forward"] == "0"
    small = emu_run.sysctls_for(kernel_scenario(BBR_VS_CUBIC).resolve())
    assert small["snd"]["net.ipv4.tcp_wmem"].split()[2] == str(64 << 20)


def test_the_receivers_buffer_is_the_hosts_and_the_ideal_host_gets_the_largest() -> None:
    ideal = emu_run.sysctls_for(kernel_scenario(BBR_VS_CUBIC).resolve())
    assert ideal["rcv"]["net.ipv4.tcp_rmem"] == f"4096 131072 {64 << 20}"
    assert "net.ipv4.tcp_moderate_rcvbuf" not in ideal["rcv"]
    testbed = emu_run.sysctls_for(kernel_scenario({**BBR_VS_CUBIC, "host": {"preset": "testbed"}}).resolve())
    assert testbed["rcv"]["net.ipv4.tcp_rmem"] == f"4096 131072 {32 << 20}"
    assert testbed["rcv"]["net.ipv4.tcp_moderate_rcvbuf"] == "1"
    # The sender's own receive buffer is not the receiver's.
    assert testbed["snd"]["net.ipv4.tcp_rmem"] == ideal["snd"]["net.ipv4.tcp_rmem"]
    written = {"preset": "testbed", "rmem": [4096, 65536, "8MiB"], "rcv_autotune": False}
    fixed = emu_run.sysctls_for(kernel_scenario({**BBR_VS_CUBIC, "host": written}).resolve())
    assert fixed["rcv"]["net.ipv4.tcp_rmem"] == f"4096 65536 {8 << 20}"
    assert fixed["rcv"]["net.ipv4.tcp_moderate_rcvbuf"] == "0"


def test_groups_must_agree_on_the_receive_buffer() -> None:
    flows = [{**f, "host": {"preset": "testbed"}} for f in BBR_VS_CUBIC["flows"]]
    flows[1]["host"] = {"preset": "testbed", "rmem": [4096, 131072, "8MiB"]}
    with pytest.raises(InputError) as e:
        kernel_scenario({**BBR_VS_CUBIC, "flows": flows})
    assert e.value.field == "flows[1].host.rmem"
    assert "same namespace" in e.value.message


def fake_outputs(spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Program outputs as the three programs write them, for `BBR_VS_CUBIC` (2 s, 4 intervals, 3 flows)."""
    t = [500_000_000, 1_000_000_000, 1_500_000_000, 2_000_000_000]
    n = 3
    delivered = [[125_000, 250_000, 375_000, 500_000], [0, 0, 62_500, 125_000], [0, 0, 0, 62_500]]
    receiver = {
        "t_ns": t,
        "delivered": delivered,
        "window_start": [250_000, 0, 0],
        "window_end": [500_000, 125_000, 62_500],
        "total": [500_000, 125_000, 62_500],
        "connected": [True] * n,
    }

    def series(k: int) -> dict[str, Any]:
        nan = None
        return {
            "cc": "bbr" if k == 0 else "cubic",
            "cwnd": [10.0, 20.0, 30.0, 40.0],
            "ssthresh": [-1, -1, 15, 15],
            "srtt_ns": [5e7] * 4,
            "min_rtt_ns": [5e7] * 4,
            "pacing_rate_bps": [nan] * 4,
            "delivery_rate_bps": [1e6] * 4,
            "inflight": [9.0] * 4,
            "total_retrans": [0.0, 1.0, 3.0, 3.0],
            "ca_state": [0.0, 0.0, 3.0, 0.0],
            "cc_bw_bps": [2e6] * 4 if k == 0 else [nan] * 4,
            "cc_min_rtt_ns": [5e7] * 4 if k == 0 else [nan] * 4,
            "cc_pacing_gain": [2.885] * 4 if k == 0 else [nan] * 4,
            "cc_cwnd_gain": [2.0] * 4 if k == 0 else [nan] * 4,
            "window_start": {"data_segs_out": 10.0, "total_retrans": 1.0, "total_rto": 0.0},
            "window_end": {"data_segs_out": 30.0, "total_retrans": 3.0, "total_rto": 1.0},
            "total": {"data_segs_out": 30.0, "total_retrans": 3.0, "total_rto": 1.0},
            "finished_ns": None,
        }

    sender = {"t_ns": t, "flows": [series(k) for k in range(n)]}
    counters = {"sent_segments": 20, "queue_drops": 2, "path_drops": 0, "ce_marks": 0}
    emu = {
        "queue": {
            "t_ns": t,
            "backlog_bytes": [0, 1500, 3000, 0],
            "backlog_packets": [0, 1, 2, 0],
            "sojourn_p50_ns": [1e6] * 4,
            "sojourn_p99_ns": [2e6] * 4,
            "sojourn_max_ns": [3e6] * 4,
            "drops": [0, 1, 1, 0],
            "marks": [0] * 4,
            "departures": [10] * 4,
            "tx_bytes": [625_000] * 4,
            # The meter's L4S/classic split of all-classic kernel traffic (NaN is JSON null).
            "sojourn_l4s_p99_ns": [None] * 4,
            "sojourn_classic_p99_ns": [2e6] * 4,
            "lateness_p99_ns": [2e4] * 4,
        },
        "flows": [
            {
                "window": counters,
                "total": counters,
                "rtt_samples": 5,
                "rtt_mean_ns": 6e7,
                "rtt_p99_ns": 7e7,
                "interval_drops": [0, 1, 1, 0],
                "ack_frames": 10,
            }
            for _ in range(n)
        ],
        "totals": {
            "window_link_tx_bytes": 1_250_000,
            "window_queue_drops": 2,
            "window_path_drops": 0,
            "window_marks": 0,
            "window_sojourn_p50_ns": 1e6,
            "window_sojourn_p99_ns": 2e6,
            "window_sojourn_mean_ns": 1.2e6,
            "window_sojourn_l4s_p99_ns": None,
            "window_sojourn_classic_p99_ns": 2e6,
            "window_departures": 20,
            "sent_segments": 60,
            "queue_drops": 2,
            "path_drops": 0,
            "events": 100,
        },
        "lateness_window": {"count": 10, "p50_ns": 1e4, "p99_ns": 3e4, "max_ns": 5e4, "mean_ns": 1e4},
        "lateness_run": {"count": 10, "p50_ns": 1e4, "p99_ns": 3e4, "max_ns": 5e4, "mean_ns": 1e4},
        "health": {
            "rx_kernel_drops": 0,
            "pool_exhausted": 0,
            "oversize_frames": 0,
            "gso_frames": 0,
            "gso_segments": 0,
            "tx_errors": 0,
            "passthrough_frames": 0,
            "held_at_end": 3,
            "pool_slots": 1000,
            "realtime": True,
        },
    }
    return emu, sender, receiver


def fake_kernel_output(document: dict[str, Any]) -> tuple[Any, Any]:
    """The kernel scenario of ``document`` and the native output its fake endpoints' outputs collect to (a
    run of 2.5 s of wall time)."""
    sc = kernel_scenario(document)
    spec = sc.resolve()
    emu, sender, receiver = fake_outputs(spec)
    return sc, collect.to_native(spec, collect.flow_infos(spec), emu, sender, receiver, 2.5)


def test_kernel_results_have_the_simulators_columns_and_dtypes() -> None:
    sc, native = fake_kernel_output(BBR_VS_CUBIC)
    kernel = RunResult.from_native(native, sc, 1)
    sim = ccfair.run({**BBR_VS_CUBIC, "flows": [{"cc": "cubic", "rtt": "50ms"}]})
    float_when_missing = {
        c["name"] for c in output_table("flows") if "<f8" in c["kernel_dtypes"] and c["dtype"] != "<f8"
    }
    assert "window_cwnd_reductions" in float_when_missing
    for name in ("flows", "classes", "timeseries", "queue"):
        k, s = getattr(kernel, name), getattr(sim, name)
        missing = set(s.columns) - set(k.columns)
        assert not missing, f"{name} lacks {missing}"
        for col in s.columns:
            if k[col].dtype != s[col].dtype and col in float_when_missing:
                # A counter the kernel cannot give here is float64 NaN, as the schema says.
                assert k[col].dtype == "float64" and k[col].isna().all(), f"{name}.{col}"
                continue
            assert k[col].dtype == s[col].dtype, f"{name}.{col}: {k[col].dtype} vs {s[col].dtype}"
    assert set(sim.summary) <= set(kernel.summary)


def test_kernel_results_compute_goodput_activity_and_counters() -> None:
    sc, native = fake_kernel_output(BBR_VS_CUBIC)
    r = RunResult.from_native(native, sc, 1)
    # Window 1 s .. 2 s: flow 0 got 250 kB (2 Mbps), flow 1 125 kB, flow 2 62.5 kB.
    assert r.flows["goodput_bps"].tolist() == pytest.approx([2e6, 1e6, 0.5e6])
    assert r.flows["retransmissions"].tolist() == [2, 2, 2]
    assert r.flows["window_rto_events"].tolist() == [1.0, 1.0, 1.0]
    assert r.summary["utilization"] == pytest.approx(1_250_000 * 8 / 1e7)
    ts = r.timeseries
    # Flows 1 and 2 start at 1 s: no rows for intervals ending at or before it.
    assert sorted(ts[ts["flow_id"] == 1]["t_ns"]) == [1_500_000_000, 2_000_000_000]
    first = ts[(ts["flow_id"] == 0) & (ts["t_ns"] == 500_000_000)].iloc[0]
    assert first["goodput_bps"] == pytest.approx(125_000 * 8 / 0.5)
    assert first["ssthresh"] == -1
    assert math.isnan(first["pacing_rate_bps"])
    assert first["cc_pacing_gain"] == pytest.approx(2.885)
    assert r.timeseries[r.timeseries["flow_id"] == 0]["retransmits"].tolist() == [0, 1, 2, 0]
    assert r.queue["sojourn_classic_p99_ns"].tolist() == r.queue["sojourn_p99_ns"].tolist()
    assert r.queue["sojourn_l4s_p99_ns"].isna().all()
    assert r.summary["queue_sojourn_l4s_p99_ns"] is None  # no L4S traffic: no value
    assert r.summary["queue_sojourn_classic_p99_ns"] == pytest.approx(2e6)


def test_health_flags_lateness_beyond_two_percent_of_the_rtt_and_any_loss() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()  # smallest RTT 20 ms: limit 400 us
    emu, _, _ = fake_outputs(spec)
    assert emu_run.health_summary(emu, spec)["emulator_limited"] == 0
    emu["lateness_window"]["p99_ns"] = 401_000
    h = emu_run.health_summary(emu, spec)
    assert h["emulator_limited"] == 1
    assert "lateness p99 401 us > 400 us" in h["emulator_note"]
    emu["lateness_window"]["p99_ns"] = 1e4
    emu["health"]["rx_kernel_drops"] = 3
    assert (
        "3 frames dropped before the emulator read them" in emu_run.health_summary(emu, spec)["emulator_note"]
    )
    emu["health"]["rx_kernel_drops"] = 0
    emu["health"]["oversize_frames"] = 2
    assert "2 frames it could not handle" in emu_run.health_summary(emu, spec)["emulator_note"]


def test_health_flags_an_emulator_stall_beyond_a_tenth_of_the_rtt() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()  # smallest RTT 20 ms: a stall may last 2 ms
    emu, _, _ = fake_outputs(spec)
    emu["health"].update(stall_max_ns=2_000_000, stalls=1, stall_total_ns=2_000_000)
    h = emu_run.health_summary(emu, spec)
    assert (h["emulator_limited"], h["emulator_stall_max_ns"], h["emulator_stalls"]) == (0, 2_000_000, 1)
    # A second of SCHED_FIFO at 200 Mbit/s: one stall of about 30 ms, while the lateness p99 stays small.
    emu["health"].update(
        stall_max_ns=29_224_077, stalls=10, stall_total_ns=196_218_273, stall_count_ns=1_000_000
    )
    h = emu_run.health_summary(emu, spec)
    assert h["emulator_limited"] == 1
    assert "the emulator stalled 29.2 ms (> 2.0 ms; 10 stalls over 1 ms)" in h["emulator_note"]
    # The floor: on a 1 ms path a stall of 1 ms is still healthy.
    assert emu_run.stall_limit_ns(1_000_000) == emu_run.STALL_FLOOR_NS


def test_health_flags_an_endpoint_program_that_waited_for_a_cpu_over_a_fifth_of_the_window() -> None:
    # The window of the Cubic-vs-Cubic 200 Mbit/s cell (4-12 s) and its programs' run-queue waits as measured
    # on a 2-CPU host: quiet (receiver waited 17.7 %, link 0.98 used) and under a two-job compile (27.1 %,
    # link 0.81 used, queue p50 0.9 ms).
    spec = {
        **kernel_scenario(BBR_VS_CUBIC).resolve(),
        "measure_start_ns": 4 * 10**9,
        "measure_end_ns": 12 * 10**9,
    }
    emu, sender, receiver = fake_outputs(spec)
    sender["window_cpu"] = {"run_ns": 48_000_000, "wait_ns": 150_500_000}
    receiver["window_cpu"] = {"run_ns": 1_240_000_000, "wait_ns": 1_419_096_462}
    quiet = emu_run.health_summary(emu, spec, sender, receiver)
    assert quiet["receiver_cpu_wait_share"] == pytest.approx(0.1774, abs=1e-4)
    assert quiet["sender_cpu_wait_share"] == pytest.approx(0.0188, abs=1e-4)
    assert quiet["emulator_limited"] == 0, quiet["emulator_note"]
    receiver["window_cpu"] = {"run_ns": 1_060_000_000, "wait_ns": 2_170_157_465}
    busy = emu_run.health_summary(emu, spec, sender, receiver)
    assert busy["emulator_limited"] == 1
    assert "the receiving program waited for a CPU 27 % of the window (> 20 %)" in busy["emulator_note"]
    assert "sending" not in busy["emulator_note"]
    # Exactly a fifth is not over it; the sender is judged the same way.
    receiver["window_cpu"] = {"run_ns": 1, "wait_ns": 1_600_000_000}
    sender["window_cpu"] = {"run_ns": 1, "wait_ns": 1_600_000_001}
    edge = emu_run.health_summary(emu, spec, sender, receiver)
    assert edge["emulator_note"].startswith("the sending program waited for a CPU 20 %")
    assert "receiving" not in edge["emulator_note"]


def test_endpoint_cpu_wait_unknown_is_nan_and_never_flags() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()
    emu, sender, receiver = fake_outputs(spec)  # no window_cpu: a kernel without scheduler statistics
    h = emu_run.health_summary(emu, spec, sender, receiver)
    assert math.isnan(h["sender_cpu_wait_share"]) and math.isnan(h["receiver_cpu_wait_share"])
    assert h["emulator_limited"] == 0
    receiver["window_cpu"] = None
    assert math.isnan(emu_run.health_summary(emu, spec)["receiver_cpu_wait_share"])


def test_health_reports_how_long_frames_waited_in_the_emulators_sockets() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()
    emu, _, _ = fake_outputs(spec)
    # An output from before the emulator read the kernel's arrival stamps: not measured, not zero.
    h = emu_run.health_summary(emu, spec)
    assert math.isnan(h["emulator_read_latency_p50_ns"]) and math.isnan(h["emulator_ack_read_latency_p99_ns"])
    emu["read_latency_senders"] = {"count": 9, "p50_ns": 43e3, "p99_ns": 186e3, "max_ns": 4e5, "mean_ns": 5e4}
    emu["read_latency_receiver"] = {"count": 5, "p50_ns": 46e3, "p99_ns": 94e3, "max_ns": 3e5, "mean_ns": 5e4}
    h = emu_run.health_summary(emu, spec)
    assert (h["emulator_read_latency_p50_ns"], h["emulator_read_latency_p99_ns"]) == (43e3, 186e3)
    assert (h["emulator_ack_read_latency_p50_ns"], h["emulator_ack_read_latency_p99_ns"]) == (46e3, 94e3)
    # Informational: waiting to be read does not flag the run.
    assert h["emulator_limited"] == 0


def test_health_reports_the_hosts_turnaround_of_the_unpaced_flows() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()
    emu, _, _ = fake_outputs(spec)
    # From before the emulator timed the hosts: not measured, not zero.
    h = emu_run.health_summary(emu, spec, paced=[True, False])
    assert math.isnan(h["host_receiver_turnaround_p50_ns"]) and math.isnan(h["host_sender_turnaround_p50_ns"])
    emu["turnaround_receiver"] = {"count": 90, "p10_ns": 20e3, "p50_ns": 31e3, "p90_ns": 50e3, "p99_ns": 9e4}
    emu["turnaround_sender"] = [
        {"count": 50, "p10_ns": 1e5, "p50_ns": 4e5, "p90_ns": 8e5, "p99_ns": 9e5},  # BBR: its pacing
        {"count": 70, "p10_ns": 21e3, "p50_ns": 28e3, "p90_ns": 40e3, "p99_ns": 6e4},
    ]
    h = emu_run.health_summary(emu, spec, paced=[True, False])
    assert (h["host_receiver_turnaround_p50_ns"], h["host_sender_turnaround_p50_ns"]) == (31e3, 28e3)
    assert (h["host_receiver_turnaround_p10_ns"], h["host_receiver_turnaround_p90_ns"]) == (20e3, 50e3)
    assert (h["host_sender_turnaround_p10_ns"], h["host_sender_turnaround_p90_ns"]) == (21e3, 40e3)
    # Only paced flows: the sender's turnaround is not known; a flow without samples does not count.
    assert math.isnan(emu_run.health_summary(emu, spec, paced=[True, True])["host_sender_turnaround_p50_ns"])
    emu["turnaround_sender"][1]["count"] = 0
    assert math.isnan(emu_run.health_summary(emu, spec, paced=[True, False])["host_sender_turnaround_p50_ns"])
    assert emu_run.paces("bbr", {"pacing": False}) and emu_run.paces("cubic", {"pacing": True})
    assert not emu_run.paces("cubic", {"pacing": False})
    assert h["emulator_limited"] == 0


def test_health_reports_segmented_bursts_and_acks_per_data_segment() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()
    emu, _, _ = fake_outputs(spec)
    emu["health"]["gso_frames"], emu["health"]["gso_segments"] = 4, 30
    h = emu_run.health_summary(emu, spec)
    assert (h["emulator_gso_frames"], h["emulator_gso_segments"]) == (4, 30)
    # Three flows, each 10 ACK frames for 20 data segments.
    assert h["emulator_acks_per_segment"] == pytest.approx(0.5)
    for f in emu["flows"]:
        f["total"] = {**f["total"], "sent_segments": 0}
    assert math.isnan(emu_run.acks_per_segment(emu))


def test_rate_check_needs_a_doctor_measurement_of_this_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(doctor.ENV_VAR, str(tmp_path / "doctor.json"))
    with pytest.raises(InputError) as e:
        doctor.check_rate(10_000_000)
    assert (
        e.value.field == "link.rate" and 'run `sudo "$(command -v ccfair)" doctor` first' in e.value.message
    )
    doctor.save_measurement(
        {"host_key": doctor.host_key(), "clean_rate_bps": 100_000_000, "measured_at": "x"}
    )
    doctor.check_rate(100_000_000)
    with pytest.raises(InputError) as e:
        doctor.check_rate(100_000_001)
    assert "above what the forwarder handles cleanly on this host (100Mbps" in e.value.message
    other = {"host_key": {**doctor.host_key(), "kernel_release": "0.0"}, "clean_rate_bps": 10**12}
    (tmp_path / "doctor.json").write_text(json.dumps(other))
    with pytest.raises(InputError):
        doctor.check_rate(1)


def test_kernel_runs_need_root_before_anything_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    built = []
    monkeypatch.setattr(netns.Topology, "build", lambda *a, **k: built.append(1))
    with pytest.raises(InputError) as e:
        ccfair.run(BBR_VS_CUBIC, backend="kernel")
    assert e.value.field == "backend" and "needs root" in e.value.message
    assert not built
    with pytest.raises(InputError) as e:
        ccfair.run(BBR_VS_CUBIC, backend="ns3")
    assert e.value.field == "backend"


def test_stale_sweep_removes_only_namespaces_of_dead_owners(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A private temporary directory: the host's own /tmp may hold work directories of other dead runs.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = tmp_path / f"{netns.WORKDIR_PREFIX}{netns.new_run_id()}-x"
    dead = tmp_path / f"{netns.WORKDIR_PREFIX}999999999-1-x"
    mine.mkdir()
    dead.mkdir()
    me = netns.new_run_id()
    names = [
        f"ccfair-{me}-snd",
        "ccfair-999999999-1-rtr",
        "ccfair-1-123456789-rcv",
        "other-ns",
        "ccfair-x-1-snd",
    ]
    monkeypatch.setattr(netns, "list_namespaces", lambda: names)
    removed: list[str] = []
    monkeypatch.setattr(netns, "remove_namespace", removed.append)
    assert netns.sweep_stale() == ["ccfair-999999999-1-rtr", "ccfair-1-123456789-rcv", str(dead)]
    assert removed == ["ccfair-999999999-1-rtr", "ccfair-1-123456789-rcv"]
    assert mine.is_dir() and not dead.exists()


def test_kernel_scenario_class_is_a_scenario() -> None:
    assert isinstance(kernel_scenario(BBR_VS_CUBIC), KernelScenario)
    assert isinstance(kernel_scenario(BBR_VS_CUBIC), ccfair.Scenario)


def test_clean_rate_is_the_top_of_the_clean_ladder() -> None:
    def p(rate: int, clean: bool) -> dict[str, Any]:
        return {"rate_bps": rate, "clean": clean}

    assert doctor.clean_rate([p(2, True), p(1, True), p(5, False), p(3, True)]) == 3
    assert doctor.clean_rate([p(2, False), p(1, True), p(3, True)]) == 1
    assert doctor.clean_rate([p(1, True), p(2, True)]) == 2
    assert doctor.clean_rate([p(1, False), p(2, True)]) == 0
    assert doctor.clean_rate([]) == 0


def probe_result(rate_bps: int, clean: bool) -> dict[str, Any]:
    return {
        "rate_bps": rate_bps,
        "clean": clean,
        "utilization": 1.0 if clean else 0.9,
        "lateness_p50_ns": 3_000,
        "lateness_p99_ns": 20_000 if clean else 400_000,
        "lateness_max_ns": 500_000,
        "frames_lost_in_emulator": 0,
    }


def test_a_new_measurement_replaces_an_old_failure_below_its_clean_rates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported case: a failed 10 Mbps probe from an earlier `--rates` run outlived a clean ladder from
    100 Mbps to 1 Gbps, and the clean rate came out as none."""
    monkeypatch.setenv(doctor.ENV_VAR, str(tmp_path / "doctor.json"))
    monkeypatch.setattr("ccfair.emu.binary.emulator_binary", lambda: "/bin/true")
    outcome = {10**7: False, 10**8: True, 2 * 10**8: True, 5 * 10**8: True, 10**9: True, 2 * 10**9: False}
    monkeypatch.setattr(emu_probe, "probe", lambda rate, seconds, binary: probe_result(rate, outcome[rate]))
    doctor.save_measurement(emu_probe.measure([10**7]))
    assert doctor.load_measurement()["clean_rate_bps"] == 0
    m = emu_probe.measure(list(emu_probe.DEFAULT_RATES_BPS))
    assert m["clean_rate_bps"] == 10**9
    assert [p["rate_bps"] for p in m["probes"]] == [10**8, 2 * 10**8, 5 * 10**8, 10**9, 2 * 10**9]


def test_merging_keeps_what_the_new_probes_do_not_contradict() -> None:
    old = [probe_result(r, c) for r, c in ((10, True), (20, True), (50, True), (100, True), (200, False))]
    # Measuring only higher rates keeps the low ones.
    merged = doctor.merge_probes(old, [probe_result(500, False)])
    assert [p["rate_bps"] for p in merged] == [10, 20, 50, 100, 200, 500]
    assert doctor.clean_rate(merged) == 100
    # A failure now at 50 drops the earlier clean probes at and above it.
    merged = doctor.merge_probes(old, [probe_result(50, False)])
    assert [(p["rate_bps"], p["clean"]) for p in merged] == [
        (10, True),
        (20, True),
        (50, False),
        (200, False),
    ]
    assert doctor.clean_rate(merged) == 20
    # A clean probe now at 300 drops the earlier failure at 200.
    merged = doctor.merge_probes(old, [probe_result(300, True)])
    assert doctor.clean_rate(merged) == 300 and 200 not in [p["rate_bps"] for p in merged]


@pytest.mark.parametrize(
    ("checks_ok", "clean_rate_bps", "code"),
    [(True, None, 0), (False, None, 1), (True, 10**8, 0), (True, 0, 1)],
)
def test_doctor_exit_code_says_whether_kernel_runs_can_start(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    checks_ok: bool,
    clean_rate_bps: int | None,
    code: int,
) -> None:
    from ccfair.cli import main

    monkeypatch.setenv(doctor.ENV_VAR, str(tmp_path / "doctor.json"))
    checks = [("root", True, "yes"), ("iproute2", checks_ok, "ip utility" if checks_ok else "not found")]
    monkeypatch.setattr(doctor, "checks", lambda: checks)
    if clean_rate_bps is not None:
        probes = [probe_result(10**7, False)] if clean_rate_bps == 0 else [probe_result(clean_rate_bps, True)]
        doctor.save_measurement(
            {
                "host_key": doctor.host_key(),
                "clean_rate_bps": clean_rate_bps,
                "probes": probes,
                "measured_at": "x",
            }
        )
    assert main(["doctor", "--no-measure"]) == code
    out = capsys.readouterr().out
    assert ("NO  iproute2: not found" in out) == (not checks_ok)
    if clean_rate_bps == 0:
        assert "Clean rate: none (at 10Mbps: lateness p99 400 us over 100 us, utilization 90.0 %)" in out
        assert "doctor --rates 10Mbps,20Mbps,50Mbps" in out
    assert main(["doctor", "--no-measure", "--json"]) == code
    assert json.loads(capsys.readouterr().out)["ok"] == (code == 0)


def test_doctor_does_not_measure_when_a_check_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ccfair.cli import main

    monkeypatch.setenv(doctor.ENV_VAR, str(tmp_path / "doctor.json"))
    monkeypatch.setattr(doctor, "checks", lambda: [("root", False, "no")])
    monkeypatch.setattr(emu_probe, "measure", lambda *a: pytest.fail("measured without root"))
    assert main(["doctor"]) == 1
    assert "cannot measure the forwarder: root not available" in capsys.readouterr().err
    assert not (tmp_path / "doctor.json").exists()


def test_doctor_never_replaces_a_file_it_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ccfair.cli import main

    path = tmp_path / "doctor.json"
    monkeypatch.setenv(doctor.ENV_VAR, str(path))
    monkeypatch.setattr(emu_probe, "measure", lambda *a: pytest.fail("measured into a file it may not write"))
    for text in ("my notes\n", json.dumps({"generator": "something else", "host_key": {}})):
        path.write_text(text)
        with pytest.raises(InputError) as e:
            doctor.save_measurement({"host_key": doctor.host_key(), "clean_rate_bps": 0})
        assert e.value.field == doctor.ENV_VAR and "not a measurement ccfair doctor wrote" in e.value.message
        # Refused before the checks and the probes run, exit code 2, the file as it was.
        assert main(["doctor"]) == 2
        assert doctor.ENV_VAR in capsys.readouterr().err and path.read_text() == text
    # A measurement of the format before the generator field, and one of this format, are ccfair's own.
    earlier = {"host_key": doctor.host_key(), "measured_at": "x", "clean_rate_bps": 0, "probes": []}
    for data in (earlier, {**earlier, "generator": doctor.GENERATOR}):
        path.write_text(json.dumps(data))
        assert doctor.save_measurement({**earlier, "clean_rate_bps": 10**8}) == path
        assert doctor.load_measurement() == {**earlier, "clean_rate_bps": 10**8}


def test_a_host_without_a_clean_rate_gets_advice_that_helps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(doctor.ENV_VAR, str(tmp_path / "doctor.json"))
    doctor.save_measurement(
        {
            "host_key": doctor.host_key(),
            "clean_rate_bps": 0,
            "probes": [probe_result(10**8, False)],
            "measured_at": "x",
        }
    )
    with pytest.raises(InputError) as e:
        doctor.check_rate(10**7)
    assert "no rate was clean" in e.value.message and "at 100Mbps: lateness p99 400 us" in e.value.message
    assert "--rates 10Mbps,20Mbps,50Mbps" in e.value.message


def test_a_host_that_keeps_the_forwarder_from_its_cpu_is_told_that_a_lower_rate_does_not_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Measured on an idle VM whose host preempts its vCPUs: at 10 Mbps the forwarder kept up, and departures
    were up to 9.5 ms late. Lower rates would not help, so the advice does not suggest them."""
    from ccfair.cli import main

    monkeypatch.setenv(doctor.ENV_VAR, str(tmp_path / "doctor.json"))
    preempted = {**probe_result(10**7, False), "utilization": 1.0, "lateness_p99_ns": 1_810_432}
    preempted["lateness_max_ns"] = 9_502_100
    measurement = {
        "host_key": doctor.host_key(),
        "clean_rate_bps": 0,
        "probes": [preempted],
        "measured_at": "x",
    }
    doctor.save_measurement(measurement)
    with pytest.raises(InputError) as e:
        doctor.check_rate(10**7)
    assert "kept from its CPU for up to 9.5 ms" in e.value.message
    assert "--rates" not in e.value.message and "when nothing else runs on the host" in e.value.message
    monkeypatch.setattr(doctor, "checks", lambda: [("root", True, "yes")])
    assert main(["doctor", "--no-measure"]) == 1
    out = capsys.readouterr().out
    assert "kept from its CPU for up to 9.5 ms" in out and "--rates" not in out
    # A forwarder that fell behind (utilization 90 %) is told about lower rates, as before.
    assert doctor.kept_from_cpu_ms({"probes": [probe_result(10**7, False)]}) is None
    slow = {**preempted, "utilization": 0.9}
    assert "--rates 10Mbps" in doctor.no_clean_rate_advice({"probes": [slow]})


def test_require_root_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same check as above without dropping privileges, so it runs wherever the checkout lives.
    from ccfair.emu import netns
    from ccfair.errors import InputError

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(InputError) as e:
        netns.require_root()
    assert e.value.field == "backend" and "needs root" in e.value.message


def offloads_of(scenario: dict[str, Any]) -> netns.HostOffloads:
    return netns.HostOffloads(**kernel_scenario(scenario).resolve()["offloads"])


def test_host_offloads_come_from_the_tables_and_the_preset() -> None:
    assert offloads_of(BBR_VS_CUBIC) == netns.HostOffloads()
    assert offloads_of({**BBR_VS_CUBIC, "host": {"preset": "ideal"}}) == netns.HostOffloads()
    assert offloads_of({**BBR_VS_CUBIC, "host": {"tso": True}}) == netns.HostOffloads(tso=True)
    # The presets' offloads as the simulator resolves them (crates/ccfair-sim/src/host): TSO, GRO and the
    # receive moderation window (testbed 16 us, home 50 us).
    testbed = offloads_of({**BBR_VS_CUBIC, "host": {"preset": "testbed"}})
    assert testbed == netns.HostOffloads(tso=True, gro=True, gro_flush_ns=16_000)
    # A written key replaces the preset's; a group's table is laid over the scenario's, key by key.
    assert offloads_of({**BBR_VS_CUBIC, "host": {"preset": "home", "gro": False}}) == netns.HostOffloads(
        tso=True, gro_flush_ns=50_000
    )
    flows = [{**f, "host": {"gro": True, "gro_flush": "200us"}} for f in BBR_VS_CUBIC["flows"]]
    assert offloads_of({**BBR_VS_CUBIC, "host": {"tso": True}, "flows": flows}) == netns.HostOffloads(
        tso=True, gro=True, gro_flush_ns=200_000
    )


def test_groups_share_one_sender_and_one_receiver_veth_so_their_offloads_must_agree() -> None:
    flows = [BBR_VS_CUBIC["flows"][0], {**BBR_VS_CUBIC["flows"][1], "host": {"preset": "testbed"}}]
    with pytest.raises(InputError) as e:
        kernel_scenario({**BBR_VS_CUBIC, "flows": flows})
    assert e.value.field == "flows[1].host.tso"
    assert "group 0 has false, this group true" in e.value.message
    flows = [BBR_VS_CUBIC["flows"][0], {**BBR_VS_CUBIC["flows"][1], "host": {"gro_flush": "1ms"}}]
    with pytest.raises(InputError) as e:
        kernel_scenario({**BBR_VS_CUBIC, "host": {"gro_flush": "200us"}, "flows": flows})
    assert e.value.field == "flows[1].host.gro_flush"
    assert "group 0 has 200us, this group 1ms" in e.value.message


def test_the_resolved_specs_host_values_win_over_the_tables() -> None:
    # The offloads are the resolved hosts' (the preset's values, the written keys laid over them).
    sc = kernel_scenario({**BBR_VS_CUBIC, "host": {"preset": "testbed"}})
    assert sc.offloads() == {"tso": True, "gro": True, "gro_flush_ns": 16_000}
    sc = kernel_scenario({**BBR_VS_CUBIC, "host": {"preset": "testbed", "tso": False, "gro_flush": "5us"}})
    assert netns.HostOffloads(**sc.offloads()) == netns.HostOffloads(tso=False, gro=True, gro_flush_ns=5000)


def test_host_offload_keys_round_trip_through_to_dict() -> None:
    flows = [{**f, "host": {"gro_flush": "50us"}} for f in BBR_VS_CUBIC["flows"]]
    sc = kernel_scenario({**BBR_VS_CUBIC, "host": {"preset": "testbed", "tso": False}, "flows": flows})
    d = sc.to_dict()
    assert d["host"] == {"preset": "testbed", "tso": False}
    assert d["flows"][0]["host"] == {"gro_flush": "50us"}
    assert kernel_scenario(d) == sc
    # Run identity: the offloads are part of the explicit document a sweep hashes.
    other = kernel_scenario({**BBR_VS_CUBIC, "host": {"preset": "testbed"}, "flows": flows})
    assert other.to_dict(explicit=True) != sc.to_dict(explicit=True)


def test_start_jitter_draws_the_kernel_flows_starts_as_the_simulator_does() -> None:
    flows = [{"cc": "cubic", "rtt": "20ms", "count": 5}]
    host = {"preset": "ideal", "start_jitter": "100ms"}
    sc = kernel_scenario({**BBR_VS_CUBIC, "flows": flows, "host": host})
    starts = [p["start_ns"] for p in sc.flow_plans(3)]
    assert all(0 <= t < 100_000_000 for t in starts)
    assert len(set(starts)) == 5
    simulator = ccfair.Scenario.from_dict({**BBR_VS_CUBIC, "flows": flows, "host": host})
    assert starts == [
        p["start_ns"] for p in json.loads(_native.flow_plans(simulator.resolution().spec_json, 3))
    ]


def test_offloads_go_to_the_senders_and_the_receivers_veth_and_are_read_back() -> None:
    assert netns.veth_offloads(netns.HostOffloads()) == {}
    assert netns.veth_offloads(netns.HostOffloads(tso=True, gro=True)) == {"s0": "tso", "r0": "gro"}
    readback = {
        "snd": {"offloads": {"s0": {"tso": "on", "gso": "on", "gro": "off"}}},
        "rcv": {
            "offloads": {"r0": {"tso": "off", "gro": "on"}},
            "gro_flush": {"r0": {"gro_flush_timeout": 200000, "napi_defer_hard_irqs": 1}},
        },
        "rtr": {"offloads": {"rs": {"tso": "off"}}},
    }
    assert emu_run.offload_provenance(readback) == (
        "s0: tso gso; r0: gro gro_flush_timeout=200000 napi_defer_hard_irqs=1; rs: none"
    )
    spec = kernel_scenario({**BBR_VS_CUBIC, "host": {"preset": "testbed", "gro_flush": "1ms"}}).resolve()
    assert emu_run.host_provenance(spec) == (
        "preset testbed; offloads tso gro gro_flush=1000000ns; start jitter as drawn, timers and noise this "
        "machine's own"
    )


def test_kernel_hz_is_read_from_the_kernels_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    boot = tmp_path / "config"
    boot.write_text("# CONFIG_HZ_1000 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n")
    real_path = emu_run.Path

    def fake_path(name: str) -> Path:
        return boot if name.startswith("/boot/config-") else real_path(tmp_path / "absent")

    monkeypatch.setattr(emu_run, "Path", fake_path)
    assert emu_run.kernel_hz("6.18.0") == 250
    boot.write_text("CONFIG_HZ_PERIODIC=y\n")
    assert emu_run.kernel_hz("6.18.0") is None


def test_the_real_time_limit_is_lifted_for_a_run_and_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sysctl, saved = tmp_path / "sched_rt_runtime_us", tmp_path / "saved"
    sysctl.write_text("950000\n")
    monkeypatch.setattr(emu_run, "RT_RUNTIME_SYSCTL", sysctl)
    monkeypatch.setattr(emu_run, "RT_RUNTIME_SAVED", saved)
    monkeypatch.setattr(emu_run, "REALTIME", True)
    with pytest.raises(KeyboardInterrupt), emu_run.rt_unthrottled() as setting:
        assert sysctl.read_text() == "-1\n" and saved.read_text() == "950000\n"
        assert setting == "kernel.sched_rt_runtime_us=-1 (the host's 950000 put back after the run)"
        raise KeyboardInterrupt
    assert sysctl.read_text() == "950000\n" and not saved.exists()
    # A run killed inside the block left -1 and the saved value: the next run puts back the saved one.
    sysctl.write_text("-1\n")
    saved.write_text("900000\n")
    with emu_run.rt_unthrottled():
        assert sysctl.read_text() == "-1\n"
    assert sysctl.read_text() == "900000\n" and not saved.exists()
    # A saved file that holds no number is not put into the sysctl: the current value is kept.
    saved.write_text("not a number")
    with emu_run.rt_unthrottled():
        assert sysctl.read_text() == "-1\n"
    assert sysctl.read_text() == "900000\n" and not saved.exists()
    # Where the limit cannot be changed (here: nowhere to save it), the run goes on, the sysctl untouched.
    monkeypatch.setattr(emu_run, "RT_RUNTIME_SAVED", tmp_path / "missing-dir" / "saved")
    with emu_run.rt_unthrottled() as setting:
        assert sysctl.read_text() == "900000\n"
        # ... and its provenance (and the note of a run flagged for a stall) says so.
        assert setting.startswith(emu_run.RT_LIMIT_NOT_LIFTED)
    assert sysctl.read_text() == "900000\n"
    monkeypatch.setattr(emu_run, "RT_RUNTIME_SAVED", saved)
    # Without SCHED_FIFO the host's limit is left alone.
    monkeypatch.setattr(emu_run, "REALTIME", False)
    with emu_run.rt_unthrottled() as setting:
        assert sysctl.read_text() == "900000\n" and setting == ""


def test_the_emulators_arrival_choice_is_checked_and_passed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()
    assert emu_run.forward_config(spec, 1, [0], tmp_path / "rtr.json")["router"]["arrival_at_stamp"] is True
    monkeypatch.setenv("CCFAIR_EMU_ARRIVAL", "read")
    assert emu_run.forward_config(spec, 1, [0], tmp_path / "rtr.json")["router"]["arrival_at_stamp"] is False
    monkeypatch.setenv("CCFAIR_EMU_ARRIVAL", "kernel")
    with pytest.raises(InputError, match=r"CCFAIR_EMU_ARRIVAL.*'stamp' or 'read'"):
        emu_run.forward_config(spec, 1, [0], tmp_path / "rtr.json")
    # Refused before anything is built: no namespace, no working directory.
    with pytest.raises(InputError, match="CCFAIR_EMU_ARRIVAL"):
        emu_run.execute(spec, 1, "/bin/false")


def test_the_default_kernel_lab_hosts_are_the_machine_as_it_comes_on_the_kernel() -> None:
    # kernel-lab is the kernel backend's own hosts: on the kernel its values set nothing (offloads off, the
    # receivers' largest buffer, starts as written), the spec keeps the preset's name, and a written key
    # still applies, as over the ideal preset; another preset's offloads apply as before.
    flows = [{"cc": "cubic", "rtt": "20ms", "count": 3}]
    plain = kernel_scenario({**BBR_VS_CUBIC, "flows": flows})
    spec = plain.resolve()
    assert spec["offloads"] == {"tso": False, "gro": False, "gro_flush_ns": 0}
    assert spec["receive_buffer"] is None
    assert {g["host"]["preset"] for g in spec["groups"]} == {"kernel-lab"}
    assert [p["start_ns"] for p in plain.flow_plans(3)] == [0, 0, 0]
    written = kernel_scenario({**BBR_VS_CUBIC, "flows": flows, "host": {"tso": True, "start_jitter": "1ms"}})
    assert written.resolve()["offloads"]["tso"] is True
    assert all(0 <= p["start_ns"] < 1_000_000 for p in written.flow_plans(3))
    testbed = kernel_scenario({**BBR_VS_CUBIC, "flows": flows, "host": {"preset": "testbed"}})
    assert testbed.resolve()["offloads"] == {"tso": True, "gro": True, "gro_flush_ns": 16_000}
    # The simulator runs the preset's own values for the same document.
    sim = json.loads(ccfair.Scenario.from_dict({**BBR_VS_CUBIC, "flows": flows}).resolution().spec_json)
    assert all(g["host"]["start_spacing_ns"] == 150_000 for g in sim["groups"])

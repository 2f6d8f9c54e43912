"""Kernel runs end to end (root): the emulated link delivers its rate and its RTT, kernel BBR against kernel
Cubic reproduces the published split, a SIGKILLed run leaves nothing after the next one, `compare` gives
both backends and their difference, `validate --kernel` writes its runs with their machine into a truth
file, bad input fails before anything is built, and a small harm study runs on the kernel one run at a
time, resumes after SIGKILL and stays apart from the simulator's. Scenarios are short (3-30 s); the whole
module takes about four minutes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ccfair
from ccfair import toml_text
from ccfair.catalog import catalog
from ccfair.devtools import output_schema
from ccfair.emu import collect, doctor, netns
from ccfair.emu import run as emu_run
from ccfair.emu.binary import emulator_binary
from ccfair.emu.host import kernel_ccs
from ccfair.scenario import kernel_scenario
from ccfair.studies.validate.grid import PLAN_SEED
from ccfair.sweep.identity import run_seed
from conftest import default_sigint, run_cli, suite_toml

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"

to_native = collect.to_native

# Real kernel runs, seconds each and one at a time on the host: `make test` only.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="kernel runs need root (network namespaces, AF_PACKET)"),
]


@pytest.fixture(scope="module", autouse=True)
def measured_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`ccfair doctor` measures this host once (into a private file) so the kernel runs may start."""
    path = tmp_path_factory.mktemp("doctor") / "doctor.json"
    old = os.environ.get(doctor.ENV_VAR)
    os.environ[doctor.ENV_VAR] = str(path)
    try:
        # A burst of other work on a 2-core host can spoil one 3 s probe: try three times before giving up.
        for _attempt in range(3):
            done = run_cli("doctor", "--rates", "20Mbps", "--seconds", "3")
            assert "ok  network namespaces" in done.stdout and "ok  veth pairs" in done.stdout, done.stdout
            m = json.loads(path.read_text())
            probe = m["probes"][0]
            assert 0 < probe["lateness_p50_ns"] <= probe["lateness_p99_ns"] <= probe["lateness_max_ns"]
            # doctor exits 1 exactly when the probe was not clean (a spoiled probe), 0 when it was.
            assert done.returncode == (0 if m["clean_rate_bps"] >= 20_000_000 else 1), done.stderr
            if done.returncode == 0:
                break
        else:
            pytest.skip(f"the forwarder is not clean at 20 Mbps on this host right now: {probe}")
        yield path
    finally:
        if old is None:
            os.environ.pop(doctor.ENV_VAR, None)
        else:
            os.environ[doctor.ENV_VAR] = old


def healthy_kernel_run(path: Path, attempts: int = 3) -> ccfair.RunResult:
    """A kernel run of ``path`` that the emulator's health rule passes, in at most ``attempts`` tries. A VM
    that stalls the emulator in every try (its hypervisor, not ccfair) cannot judge what the run measures:
    the test is skipped and says what the host did. The health rule itself is tested in test_emu.py."""
    notes = []
    for _ in range(attempts):
        r = ccfair.run(path, backend="kernel")
        if r.summary["emulator_limited"] == 0:
            return r
        notes.append(r.summary["emulator_note"])
    pytest.skip(f"no healthy kernel run of {path.name} in {attempts} tries on this host: {notes}")


def test_one_cubic_flow_gets_at_least_90_percent_of_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw: list[Any] = []

    def capture(*args: Any) -> Any:
        raw.append(to_native(*args))
        return raw[-1]

    monkeypatch.setattr(collect, "to_native", capture)
    r = healthy_kernel_run(SCENARIOS / "kernel-cubic-alone.toml")
    # The collected output has exactly the output schema's kernel columns, with its dtypes.
    assert output_schema.mismatches(raw[-1], "kernel") == []
    saved = ccfair.load_run(r.save(tmp_path / "run"))
    assert saved.summary["backend"] == "kernel"
    assert saved.timeseries["delivery_rate_bps"].notna().any()
    assert saved.flows["goodput_bps"].tolist() == r.flows["goodput_bps"].tolist()
    assert r.summary["backend"] == "kernel"
    assert r.summary["kernel_release"] == os.uname().release
    assert r.summary["kernel_hz"] in (100, 250, 300, 1000, None)
    assert r.summary["cpu_model"] == emu_run.cpu_model() != "unknown"
    assert r.summary["emulator_arrival"] == "stamp"  # the default
    # Every frame carries the kernel's arrival stamp, so the time it waited to be read is measured.
    assert 0 < r.summary["emulator_read_latency_p50_ns"] <= r.summary["emulator_read_latency_p99_ns"]
    assert 0 < r.summary["emulator_ack_read_latency_p50_ns"] <= r.summary["emulator_ack_read_latency_p99_ns"]
    # The hosts turn a segment or an ACK round within the 200 us that separate a reaction from a timer's.
    for end in ("receiver", "sender"):
        p10, p50, p90 = (r.summary[f"host_{end}_turnaround_{q}_ns"] for q in ("p10", "p50", "p90"))
        assert 0 < p10 <= p50 <= p90 and p50 < 200e3, (end, p10, p50, p90)
    assert "snd: net.ipv4.tcp_wmem=" in r.summary["sysctls"]
    assert r.flows["goodput_bps"].iloc[0] >= 0.9 * 10e6
    # Bytes count when their serialization ends: the window may hold one packet begun before it opened.
    assert 0.9 <= r.summary["utilization"] <= 1.0 + 1500 / (10e6 / 8 * 10)
    ts = r.timeseries
    assert len(ts) == 150  # one row per 100 ms interval of the 15 s run
    # Nothing is sent before the epoch: the first 100 ms deliver at most what the link carries in 100 ms
    # (a sender that started on reading `go`, 200 ms early, delivered about twice that).
    assert ts["delivered_bytes"].iloc[0] <= 10e6 / 8 * 0.1
    assert (ts["cwnd"] > 0).all()
    # The RTT the kernel sees is the base RTT plus queueing, never less (veth hops add microseconds only).
    assert ts["min_rtt_ns"].min() >= 50e6
    assert r.flows["rtt_mean_ms"].iloc[0] >= 50.0


def test_a_run_can_start_each_frames_time_at_its_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCFAIR_EMU_ARRIVAL", "read")
    r = healthy_kernel_run(SCENARIOS / "kernel-cubic-alone.toml")
    assert r.summary["emulator_arrival"] == "read"
    # The link is as busy as when frames enter at their stamp, and no frame is lost inside the emulator.
    assert 0.9 <= r.summary["utilization"] <= 1.0 + 1500 / (10e6 / 8 * 10)
    assert r.summary["emulator_rx_drops"] == 0


def test_ping_measures_each_flows_configured_rtt_within_3ms() -> None:
    sc = kernel_scenario(
        {
            "duration": "10s",
            "link": {"rate": "10Mbps", "buffer": "1bdp"},
            "flows": [{"cc": "cubic", "rtt": "20ms"}, {"cc": "reno", "rtt": "80ms", "delay": "ack"}],
        }
    )
    spec = sc.resolve()
    for flow, rtt_ns in ((0, 20e6), (1, 80e6)):
        rtts = emu_run.ping(spec, flow, 10, emulator_binary())
        assert len(rtts) == 10
        # The fastest echo measures the path plus what an idle host adds: the forwarder stamps a frame when it
        # reads it, so its wake-ups from idle (and the kernel's softirqs on the veths) lengthen each echo.
        # Measured: 0.27 to 0.51 ms at the fastest on this VM, 1.01 ms on a noisier CI host; the reply's time
        # is the kernel's receive stamp, so the ping program's own wake-up is not in it. A misplaced or
        # misrouted delay line is 10 ms or more off here; the delay lines themselves are exact to the
        # nanosecond in the shaper's unit tests.
        assert rtt_ns <= min(rtts) < rtt_ns + 3e6, (flow, rtts)


@pytest.mark.skipif("bbr" not in kernel_ccs(), reason="this kernel has no bbr")
def test_kernel_bbr_takes_the_majority_from_cubic_in_a_shallow_buffer_less_so_in_a_deep_one() -> None:
    def cubic_share(name: str) -> float:
        r = healthy_kernel_run(SCENARIOS / name)
        shares = dict(zip(r.classes["cc"], r.classes["share"], strict=True))
        return shares["cubic"]

    shallow = cubic_share("kernel-bbr-vs-cubic-shallow.toml")
    deep = cubic_share("kernel-bbr-vs-cubic-deep.toml")
    assert shallow < 0.35, f"BBR's share at 0.5 BDP is only {1 - shallow:.2f}"
    assert deep > shallow + 0.05, f"Cubic's share: {shallow:.2f} at 0.5 BDP, {deep:.2f} at 2 BDP"


RUN = [
    sys.executable,
    "-m",
    "ccfair",
    "run",
    str(SCENARIOS / "kernel-cubic-alone.toml"),
    "--backend",
    "kernel",
]


def start_run_and_wait() -> tuple[subprocess.Popen[bytes], str, list[str]]:
    """A kernel run in a subprocess, once its three programs are running: (process, name prefix, pids)."""
    victim = subprocess.Popen(
        RUN, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=default_sigint
    )
    prefix = f"ccfair-{victim.pid}-"
    deadline = time.monotonic() + 30
    pids: list[str] = []
    while time.monotonic() < deadline:
        mine = [n for n in netns.list_namespaces() if n.startswith(prefix)]
        if len(mine) == 3:
            pids = [p for n in mine for p in netns.ip("netns", "pids", n, check=False).split()]
            if len(pids) >= 3:  # emulator, sender and receiver are running
                break
        time.sleep(0.1)
    assert len(pids) >= 3, "the run did not start"
    return victim, prefix, pids


def test_ctrl_c_stops_the_run_and_removes_everything() -> None:
    victim, prefix, pids = start_run_and_wait()
    victim.send_signal(signal.SIGINT)
    assert victim.wait(timeout=30) == 130
    assert not [n for n in netns.list_namespaces() if n.startswith(prefix)]
    assert not [p for p in pids if running(p)]


def test_the_simulators_codel_marks_a_kernel_ecn_flow_through_the_emulator(tmp_path: Path) -> None:
    r = ccfair.run(
        {
            "duration": "10s",
            "measure": {"start": "3s", "end": "10s"},
            "link": {"rate": "10Mbps", "buffer": "2bdp", "aqm": {"name": "codel", "ecn": True}},
            "flows": [{"cc": "cubic", "rtt": "50ms", "ecn": "classic"}],
        },
        backend="kernel",
    )
    assert r.summary["marks"] > 0  # the kernel negotiated ECN and CoDel marked CE instead of dropping
    assert r.flows["window_queue_drops"].iloc[0] == 0
    # CoDel keeps the standing queue near its 5 ms target, far below the 100 ms the buffer allows.
    assert r.summary["queue_sojourn_p50_ns"] < 20e6
    assert r.summary["utilization"] > 0.9


def test_flows_connect_side_by_side_so_bbr_flows_probe_rtt_together() -> None:
    # Kernel BBR stamps its min-RTT filter when the connection is established (and again at any lower RTT
    # sample) and enters PROBE_RTT (cwnd 4 in the Open state) when the stamp is 10 s old. Connected one
    # after the other, 8 flows at 400 ms would carry stamps up to 2.8 s old into the run, and the first
    # flows probe from 7.2 s on; connected side by side, none probes before 10 s less the handshake and the
    # start, as the simulator's flows (all established at time 0) probe at 10 s. A flow whose data brought a
    # lower RTT sample probes that much later (in some runs every flow did, and none had probed by 15 s),
    # so the test asks only that none probed before 9 s: connected in turn, flow 0 probed at 7.05 s.
    r = ccfair.run(
        {
            "duration": "15s",
            "interval": "50ms",
            "link": {"rate": "10Mbps", "buffer": "1bdp"},
            "flows": [{"cc": "bbr", "rtt": "400ms", "count": 8}],
        },
        backend="kernel",
    )
    ts = r.timeseries
    probing = ts[(ts["cwnd"] <= 4) & (ts["ca_state"] == 0) & (ts["t_ns"] > 5e9)]
    first = probing.groupby("flow_id")["t_ns"].min()
    assert not (first < 9e9).any(), first


def test_a_later_flow_opens_its_connection_through_the_standing_queue(tmp_path: Path) -> None:
    # Cubic fills an 8-BDP FIFO (10 Mbps, 50 ms, 333 packets: up to 0.4 s of queue) and BBR starts at 3 s.
    # Opened at its start (the default), BBR's connection handshakes through Cubic's queue, and kernel BBR
    # takes its first min_rtt from that sample (bbr_init reads tcp_min_rtt); opened before the run, the
    # sample is the base RTT over the empty path. Both backends must show the same.
    def first_min_rtt_ms(connect: str, backend: str) -> float:
        doc = {
            "duration": "6s",
            "interval": "50ms",
            "link": {"rate": "10Mbps", "buffer": "333pkt"},
            "flows": [
                {"cc": "cubic", "rtt": "50ms"},
                {"cc": "bbr", "rtt": "50ms", "start": "3s", "connect": connect},
            ],
        }
        path = tmp_path / f"{connect}.toml"
        path.write_text(toml_text.dumps(doc))
        r = healthy_kernel_run(path) if backend == "kernel" else ccfair.run(path)
        ts = r.timeseries
        bbr = ts[(ts["flow_id"] == 1) & (ts["cc_min_rtt_ns"] > 0)]
        return float(bbr["cc_min_rtt_ns"].iloc[0]) / 1e6

    for backend in ("kernel", "sim"):
        late, early = first_min_rtt_ms("at_start", backend), first_min_rtt_ms("before_run", backend)
        assert late > 150, (backend, late)
        assert 50 <= early < 55, (backend, early)


def offload_run(host: dict[str, Any]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """One Cubic flow, 100 Mbps, 20 ms, 10 s, with ``host``; the result, its totals and its provenance. Run
    through ``execute`` (not ``ccfair.run``), so the rate needs no doctor measurement at 100 Mbps: these
    runs check the emulator's health themselves."""
    sc = kernel_scenario(
        {
            "duration": "10s",
            "link": {"rate": "100Mbps", "buffer": "1bdp"},
            "flows": [{"cc": "cubic", "rtt": "20ms"}],
            "host": host,
        }
    )
    output, provenance = emu_run.execute(sc.resolve(), 1, emulator_binary())
    return ccfair.RunResult.from_native(output, sc, 1), output["totals"], provenance


def test_with_tso_the_emulator_segments_bursts_and_with_gro_the_receiver_sends_stretch_acks() -> None:
    tso, totals, tso_prov = offload_run({"tso": True})
    assert "s0: gso scatter-gather tso tx-checksum" in tso_prov["offloads"]
    assert "r0: none" in tso_prov["offloads"]
    # The sender handed the veth bursts, and the emulator cut every one into wire-size packets.
    assert tso_prov["emulator_gso_frames"] > 0
    assert tso_prov["emulator_gso_segments"] > 2 * tso_prov["emulator_gso_frames"]
    assert tso_prov["emulator_oversize_frames"] == 0
    assert tso_prov["emulator_rx_drops"] == 0
    # The receiver accepted the segments (their checksums are right): the link is full. 1448 of every 1500
    # IP bytes are payload.
    payload_rate = 100e6 * 1448 / 1500
    assert tso.flows["goodput_bps"].iloc[0] >= 0.9 * payload_rate, tso_prov
    # The bottleneck serialized wire-size packets only (a burst charged whole would weigh up to 64 KB).
    assert totals["window_link_tx_bytes"] <= 1500 * totals["window_departures"]
    gro, _, gro_prov = offload_run({"tso": True, "gro": True, "gro_flush": "200us"})
    assert "r0: gro gro_flush_timeout=200000 napi_defer_hard_irqs=1" in gro_prov["offloads"]
    assert gro.flows["goodput_bps"].iloc[0] >= 0.9 * payload_rate, gro_prov
    # Delayed ACKs acknowledge every second segment (about 0.5 per segment, fewer when segments queue at the
    # receiver); with the packets of 200 us (about two at 100 Mbps) merged by GRO, one ACK covers an
    # aggregate: measured about 0.13 against 0.45.
    plain = tso_prov["emulator_acks_per_segment"]
    stretched = gro_prov["emulator_acks_per_segment"]
    assert 0.3 < plain <= 0.6
    assert stretched < 0.5 * plain, (stretched, plain)


def test_a_sigkilled_run_leaves_nothing_after_the_next_run() -> None:
    victim, prefix, pids = start_run_and_wait()
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    # Its programs die with it (parent-death signal); its namespaces stay until the next run sweeps them.
    time.sleep(1)
    alive = [p for p in pids if running(p)]
    assert not alive, f"programs outlived their run: {alive}"
    assert any(n.startswith(prefix) for n in netns.list_namespaces())
    workdirs = list(Path(tempfile.gettempdir()).glob(f"{netns.WORKDIR_PREFIX}{victim.pid}-*"))
    assert workdirs, "the killed run's working directory is there until the next run"
    rtts = emu_run.ping(
        kernel_scenario(SCENARIOS / "kernel-cubic-alone.toml").resolve(), 0, 2, emulator_binary()
    )
    assert len(rtts) == 2
    left = [n for n in netns.list_namespaces() if n.startswith(prefix)]
    assert not left, f"left behind: {left}"
    assert not [d for d in workdirs if d.exists()], "the next run removes the killed run's directory"
    assert not [n for n in netns.list_namespaces() if n.startswith(f"ccfair-{os.getpid()}-")]
    assert not [p for p in pids if running(p)]


def running(pid: str) -> bool:
    """Whether a process exists and has not exited (a zombie waiting for init to reap it has)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def test_a_failure_while_building_removes_what_was_built(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = kernel_scenario(SCENARIOS / "kernel-cubic-alone.toml").resolve()
    before = netns.list_namespaces()
    # /bin/false as the helper: the namespaces and veths exist when the per-namespace setup fails.
    with pytest.raises(netns.NetError, match="prepare"):
        emu_run.execute(spec, 1, "/bin/false")
    assert netns.list_namespaces() == before


def test_compare_prints_both_backends_and_their_difference(tmp_path: Path) -> None:
    sim_ccs = {c["name"] for c in catalog()["congestion_controls"]}
    pair = ("bbr", "cubic") if "bbr" in sim_ccs and "bbr" in kernel_ccs() else ("reno", "cubic")
    path = tmp_path / "pair.toml"
    path.write_text(
        'duration = "10s"\n[link]\nrate = "10Mbps"\nbuffer = "0.5bdp"\n'
        + "".join(f'[[flows]]\ncc = "{cc}"\nrtt = "50ms"\n' for cc in pair)
    )
    done = run_cli("compare", str(path), "--repetitions", "1", "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    rows = {r["metric"]: r for r in doc["rows"]}
    for metric in (f"share {pair[0]} 50ms", f"share {pair[1]} 50ms", "jain index", "utilization"):
        row = rows[metric]
        assert row["sim_mean"] is not None and row["kernel_mean"] is not None
        assert row["difference"] == pytest.approx(row["kernel_mean"] - row["sim_mean"])
    shares = rows[f"share {pair[0]} 50ms"]["kernel_mean"] + rows[f"share {pair[1]} 50ms"]["kernel_mean"]
    assert shares == pytest.approx(1.0)
    text = run_cli("compare", str(path), "--repetitions", "0")
    assert text.returncode == 2 and "error: --repetitions:" in text.stderr


def test_validate_kernel_writes_its_runs_with_their_machine_into_the_truth(tmp_path: Path) -> None:
    # One kernel run of one cell lands in the truth file with its health, CPU model and kernel release; the
    # other cells of the file are kept as they were, and the provenance names the runs it holds.
    from ccfair.studies.validate.truth import TRUTH_FILE, held_runs, held_values

    stored = json.loads(TRUTH_FILE.read_text())
    del stored["cells"]["reno-reno"]
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps(stored))
    out = tmp_path / "validate"
    done = run_cli(
        "validate", "--kernel", "--cells", "reno-reno", "--repetitions", "1", "--write-truth", str(truth),
        "--out", str(out), "--jobs", "1", "--quiet", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = json.loads(truth.read_text())
    first = written["cells"]["reno-reno"]["runs"]
    # A run the health rule flags is kept (excluded) and one more is made, at most twice what was asked.
    assert 1 <= len(first) <= 2 and all(r["excluded"] for r in first[:-1])
    run = first[-1]
    assert run["cpu_model"] == emu_run.cpu_model() != "unknown"
    assert run["kernel_release"] == os.uname().release
    assert run["health"]["lateness_p99_ns"] > 0 and 0 < run["metrics"]["utilization"] <= 1
    assert run["health"]["arrival"] == "stamp"  # the emulator's default mode, recorded per run
    assert {k: v for k, v in written["cells"].items() if k != "reno-reno"} == stored["cells"]
    provenance = written["provenance"]
    for key in ("cpu_model", "kernel_release"):
        assert provenance[key] == held_values(written["cells"], key, None)
    assert "stamp" in provenance["emulator_arrival"]
    assert provenance["last_run_at"] == held_runs(written["cells"])[0][-1]
    # The emulator measured its stalls (the health rule judges them; an idle VM has hiccups of a few ms).
    assert run["health"]["stall_max_ns"] > 0
    # A top-up to 2 repetitions keeps the stored run and adds only the healthy runs the cell lacks, as a new
    # round (its own run ids), numbered after it; like any kernel side, at most twice what it lacks.
    done = run_cli(
        "validate", "--kernel", "--cells", "reno-reno", "--repetitions", "2", "--write-truth", str(truth),
        "--top-up", "--out", str(out), "--jobs", "1", "--quiet", timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = json.loads(truth.read_text())["cells"]["reno-reno"]["runs"]
    assert runs[: len(first)] == first
    new = runs[len(first) :]
    assert [r["repetition"] for r in new] == [run["repetition"] + 1 + k for k in range(len(new))]
    assert all(r["run_id"] not in {f["run_id"] for f in first} for r in new)
    # Each run records its seed: repetition `repetition - round` of the plan seeded PLAN_SEED + round, the
    # round being the repetition after the highest the cell held when its measurement began (what the
    # simulator side runs again).
    rounds = [0] * len(first) + [len(first)] * len(new)
    assert [r["round"] for r in runs] == rounds
    assert [r["seed"] for r in runs] == [
        run_seed(PLAN_SEED + k, {}, r["repetition"] - k) for r, k in zip(runs, rounds, strict=True)
    ]
    lacking = 2 - sum(not r["excluded"] for r in first)
    healthy_new = sum(not r["excluded"] for r in new)
    assert 1 <= len(new) <= 2 * lacking
    assert healthy_new == lacking or len(new) == 2 * lacking


def test_compare_with_repetitions_prints_each_backends_spread(tmp_path: Path) -> None:
    path = tmp_path / "pair.toml"
    path.write_text(
        'duration = "3s"\n[host]\npreset = "ideal"\n[link]\nrate = "10Mbps"\nbuffer = "1bdp"\n'
        '[[flows]]\ncc = "reno"\nrtt = "20ms"\n[[flows]]\ncc = "cubic"\nrtt = "20ms"\n'
    )
    done = run_cli("compare", str(path), "--repetitions", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith("2 runs per backend (simulator seeds from 1)")
    jain = next(line for line in lines if line.strip().startswith("jain index"))
    sim, kernel = re.findall(r"(\d\.\d{3}) ± (\d\.\d{3})", jain)
    # The simulator with ideal hosts is deterministic: its two seeds give one run twice, and it says so.
    assert sim[1] == "0.000"
    assert "simulator: the 2 repetitions are identical" in done.stdout
    assert 0.5 <= float(kernel[0]) <= 1.0


@pytest.mark.parametrize(
    ("flow", "link_rate", "expected"),
    [
        ('cc = "kernel:vegas"', "10Mbps", "error: flows[0].cc: 'vegas' is not available in this kernel"),
        ('cc = "cubic"\ncc_params = { beta = 0.5 }', "10Mbps", "error: flows[0].cc_params:"),
        ('cc = "cubic"', "1Gbps", "error: link.rate: 1Gbps is above what the forwarder handles cleanly"),
    ],
)
def test_bad_input_fails_before_anything_is_built(
    tmp_path: Path, flow: str, link_rate: str, expected: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        f'duration = "10s"\n[link]\nrate = "{link_rate}"\nbuffer = "1bdp"\n[[flows]]\n{flow}\nrtt = "50ms"\n'
    )
    before = netns.list_namespaces()
    done = run_cli("run", str(path), "--backend", "kernel", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert expected in done.stderr
    assert netns.list_namespaces() == before
    assert not (tmp_path / "out").exists()


def test_not_root_is_a_clear_error(tmp_path: Path) -> None:
    if subprocess.run(["which", "setpriv"], capture_output=True, check=False).returncode != 0:
        pytest.skip("setpriv is not installed")
    path = tmp_path / "ok.toml"
    path.write_text(
        'duration = "10s"\n[link]\nrate = "10Mbps"\nbuffer = "1bdp"\n[[flows]]\ncc = "cubic"\nrtt = "50ms"\n'
    )
    for d in [tmp_path, *tmp_path.parents]:  # pytest's temporary directories are private to root
        if d == Path("/tmp"):
            break
        os.chmod(d, 0o755)
    unprivileged = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
    probe = subprocess.run(
        [*unprivileged, "-c", "import ccfair"], capture_output=True, timeout=60, check=False
    )
    if probe.returncode != 0:
        # e.g. a checkout under /root: an unprivileged user cannot even import the package here.
        pytest.skip("the checkout is not readable by an unprivileged user (test_emu.py checks the rule)")
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            sys.executable,
            "-m",
            "ccfair",
            "run",
            str(path),
            "--backend",
            "kernel",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "error: backend: the kernel backend needs root" in done.stderr


TINY_SUITE = suite_toml(
    name="tiny", duration="3s", measure_start="1s", repetitions=2, stagger="500ms", start_jitter="10ms"
)


def test_a_kernel_harm_study_runs_one_run_at_a_time_resumes_after_sigkill_and_writes_a_verdict(
    tmp_path: Path,
) -> None:
    """10 kernel runs of 3 s (solo 2, self and vs 2 x 2 start orders): about 45 s."""
    from ccfair.store.status import store_status

    suite = tmp_path / "tiny.toml"
    suite.write_text(TINY_SUITE)
    out = tmp_path / "results"
    study = ["harm", "reno", "--against", "cubic", "--suite", str(suite), "--out", str(out), "--figure", "-"]
    kernel = [*study, "--backend", "kernel", "--jobs", "2"]
    # Killed (with its worker) in the middle of the study; the same command then runs only what is missing.
    victim = subprocess.Popen(
        [sys.executable, "-m", "ccfair", *kernel, "--quiet"], start_new_session=True, cwd=REPO
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and victim.poll() is None:
            plans = store_status(out)["plans"] if (out / "catalog.duckdb").exists() else []
            if sum(p["done"] for p in plans) >= 3:
                break
            time.sleep(0.5)
        assert victim.poll() is None, "the study ended before it could be killed"
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
    finally:
        if victim.poll() is None:
            os.killpg(victim.pid, signal.SIGKILL)
    done_before = {r for r in ccfair.load(out).runs.query("status == 'done'")["run_id"]}
    assert 3 <= len(done_before) < 10
    done = run_cli(*kernel, "--json", timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["backend"] == "kernel" and doc["verdict"] in ("passes", "fails", "cannot tell")
    throughput = doc["scenarios"][0]["metrics"]["throughput"]
    assert throughput["samples"] == 4 and throughput["solo"] > 0.5 * 10e6
    assert "one run at a time (--jobs 2 does not apply" in done.stderr
    runs = ccfair.load(out).runs
    assert len(runs) == 10 and set(runs["status"]) == {"done"} and set(runs["backend"]) == {"kernel"}
    assert done_before <= set(runs["run_id"])  # the runs done before the kill were kept, not run again
    # One run at a time although --jobs 2 (the first runs after the restart included).
    runs = runs.sort_values("started_at")
    ends = runs["started_at"] + pd.to_timedelta(runs["task_wall_seconds"], unit="s")
    assert (runs["started_at"].iloc[1:].to_numpy() >= ends.iloc[:-1].to_numpy()).all()
    # Nothing of the killed run is left: the next run swept its namespaces.
    dead = [n for n in netns.list_namespaces() if n.startswith("ccfair-") and not running(n.split("-")[1])]
    assert not dead, f"left behind: {dead}"
    # The simulator's study of the same pair in the same directory shares no plan and no run.
    sim = run_cli(*study, "--json", timeout=300)
    assert sim.returncode == 0, sim.stderr
    assert json.loads(sim.stdout)["backend"] == "sim"
    status = store_status(out)["plans"]
    assert sorted(p["backend"] for p in status) == ["kernel"] * 3 + ["sim"] * 3
    every = ccfair.load(out).runs
    assert len(every) == 20 and every.groupby("backend").size().to_dict() == {"kernel": 10, "sim": 10}

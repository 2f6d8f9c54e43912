"""The end-host model: the ``[host]`` table (presets, overrides, errors) and what each host parameter does to
a run (see ``crates/ccfair-scenario/src/host.rs``)."""

import tomllib

import pytest

import ccfair
import ccfair.catalog
from ccfair.scenario import Host, Scenario
from conftest import assert_input_error, small


def with_host(host=None, **flow_hosts):
    """The small scenario with a scenario-level ``host`` and per-group ones (``g0={...}``)."""
    d = small()
    if host is not None:
        d["host"] = host
    for key, table in flow_hosts.items():
        d["flows"][int(key[1:])]["host"] = table
    return d


def hosts(d, *keys):
    """Each group's resolved host (None: ideal, which the spec leaves out), with only ``keys`` if given."""
    groups = [g.get("host") for g in Scenario.from_dict(d).resolve()["groups"]]
    if not keys:
        return groups
    return [None if h is None else {k: h[k] for k in keys} for h in groups]


TESTBED = {
    "noise": "exponential",
    "noise_scale_ns": 5_000,
    "pacing_slack_ns": 10_000,
    "tso": True,
    "nic_rate_bps": 10_000_000_000,
    "gro": True,
    "gro_flush_ns": 16_000,
}
HOME = {
    "noise": "exponential",
    "noise_scale_ns": 50_000,
    "pacing_slack_ns": 50_000,
    "tso": True,
    "nic_rate_bps": 1_000_000_000,
    "gro": True,
    "gro_flush_ns": 50_000,
}


# -------------------------------------------------------------------------------------------------- format


def test_no_host_table_writes_nothing_and_resolves_to_the_default_kernel_lab_hosts():
    s = Scenario.from_dict(small())
    assert s.host is None and all(g.host is None for g in s.flows)
    assert "host" not in s.to_dict() and "host" not in s.to_dict(explicit=True)
    assert all("host" not in g for g in s.to_dict()["flows"])
    kernel_lab = next(p["values"] for p in ccfair.catalog.catalog()["host_presets"] if p["default"])
    assert kernel_lab["preset"] == "kernel-lab"
    assert hosts(small()) == [kernel_lab, kernel_lab]
    assert hosts(with_host({"preset": "kernel-lab"})) == [kernel_lab, kernel_lab]


def test_an_ideal_table_resolves_to_a_spec_without_hosts():
    ideal = Scenario.from_dict(with_host({"preset": "ideal"}))
    assert hosts(ideal.to_dict()) == [None, None]
    # the document keeps what was written (so its run ids are its own)
    assert ideal.to_dict()["host"] == {"preset": "ideal"}


@pytest.mark.parametrize("preset", ["testbed", "home"])
def test_non_ideal_presets_jitter_starts_by_one_group_rtt(preset):
    d = with_host({"preset": preset})
    rtts = [g["rtt_ns"] for g in Scenario.from_dict(d).resolve()["groups"]]
    assert hosts(d, "preset", "start_jitter_ns") == [
        {"preset": preset, "start_jitter_ns": rtt} for rtt in rtts
    ]


@pytest.mark.parametrize(
    ("preset", "values", "tick_ns"), [("testbed", TESTBED, 1_000_000), ("home", HOME, 4_000_000)]
)
def test_preset_timing_values(preset, values, tick_ns):
    h = hosts(with_host({"preset": preset}))[0]
    assert {k: h[k] for k in values} == values
    assert h["delack_granularity_ns"] == tick_ns
    assert (h["hz"], h["tick_phase"]) == (1_000_000_000 // tick_ns, "random")


def test_hz_sets_the_tick_of_the_delayed_ack_timer_unless_it_is_written():
    h = hosts(with_host({"preset": "testbed", "hz": 250, "tick_phase": "zero"}))[0]
    assert (h["hz"], h["delack_granularity_ns"], h["tick_phase"]) == (250, 4_000_000, "zero")
    h = hosts(with_host({"preset": "home", "hz": 1000, "delack_granularity": "2ms"}))[0]
    assert (h["hz"], h["delack_granularity_ns"]) == (1000, 2_000_000)
    # The ideal host's timers stay exact; its clock is the one written.
    h = hosts(with_host({"preset": "ideal", "hz": 100}))[0]
    assert (h["preset"], h["hz"], h["delack_granularity_ns"], h["tick_phase"]) == ("ideal", 100, 0, "zero")
    # The default hosts' delayed-ACK timer follows a written clock too.
    h = hosts(with_host({"hz": 1000}))[0]
    assert (h["preset"], h["hz"], h["delack_granularity_ns"]) == ("kernel-lab", 1000, 1_000_000)


def test_timing_parameters_override_the_preset():
    d = with_host({"preset": "testbed", "noise": "uniform", "noise_scale": "2us", "delack_granularity": "0s"})
    h = hosts(d)[0]
    assert (h["noise"], h["noise_scale_ns"], h["delack_granularity_ns"]) == ("uniform", 2_000, 0)
    assert h["pacing_slack_ns"] == 10_000  # not written: the preset's
    # An ideal host with one parameter is no longer ideal, and only that parameter differs.
    h = hosts(with_host({"preset": "ideal", "pacing_slack": "7us"}))[0]
    assert (h["preset"], h["pacing_slack_ns"], h["noise"], h["start_jitter_ns"]) == (
        "ideal",
        7_000,
        "none",
        0,
    )


def test_offload_parameters_override_the_preset():
    d = with_host({"preset": "testbed", "tso": False, "nic_rate": 0, "gro_flush": "40us"})
    h = hosts(d)[0]
    assert (h["tso"], h["nic_rate_bps"], h["gro"], h["gro_flush_ns"]) == (False, 0, True, 40_000)
    d = with_host(
        {"preset": "ideal", "gro": True, "gro_flush": "8us", "nic_rate": "2.5Gbps"},
        g1={"gro": False, "tso": True},
    )
    assert hosts(d, "tso", "nic_rate_bps", "gro", "gro_flush_ns") == [
        {"tso": False, "nic_rate_bps": 2_500_000_000, "gro": True, "gro_flush_ns": 8_000},
        {"tso": True, "nic_rate_bps": 2_500_000_000, "gro": False, "gro_flush_ns": 8_000},
    ]


def test_group_tables_override_the_scenario_table_key_by_key():
    d = with_host({"preset": "testbed", "start_jitter": "3ms"}, g1={"preset": "home"})
    assert hosts(d, "preset", "start_jitter_ns", "noise_scale_ns") == [
        {"preset": "testbed", "start_jitter_ns": 3_000_000, "noise_scale_ns": 5_000},
        {"preset": "home", "start_jitter_ns": 3_000_000, "noise_scale_ns": 50_000},
    ]
    d = with_host(None, g0={"start_jitter": "2ms"})
    assert hosts(d, "preset", "start_jitter_ns") == [
        {"preset": "kernel-lab", "start_jitter_ns": 2_000_000},
        {"preset": "kernel-lab", "start_jitter_ns": 50_000},
    ]


def test_round_trip_with_host_tables():
    s = Scenario.from_dict(
        with_host(
            {
                "preset": "home",
                "start_jitter": "1.5ms",
                "noise": "uniform",
                "pacing_slack": "3us",
                "tso": False,
            },
            g0={"preset": "testbed", "noise_scale": "1us", "delack_granularity": "4ms", "nic_rate": "25Gbps"},
            g1={"gro": True, "gro_flush": "12us", "nic_rate": 0, "hz": 250, "tick_phase": "zero"},
        )
    )
    assert s.host == Host(
        preset="home", start_jitter_ns=1_500_000, noise="uniform", pacing_slack_ns=3_000, tso=False
    )
    assert s.flows[0].host == Host(
        preset="testbed", noise_scale_ns=1_000, delack_granularity_ns=4_000_000, nic_rate_bps=25_000_000_000
    )
    assert s.flows[1].host == Host(gro=True, gro_flush_ns=12_000, nic_rate_bps=0, hz=250, tick_phase="zero")
    assert Scenario.from_dict(tomllib.loads(s.to_toml())) == s
    explicit = Scenario.from_dict(tomllib.loads(s.to_toml(explicit=True)))
    assert explicit.resolve() == s.resolve()


def stopping_before_latest_start():
    d = with_host(None, g0={"start_jitter": "2s"})
    d["flows"][0]["stop"] = "1s"
    return d


ERRORS = [
    (with_host({"preset": "lab"}), "host.preset", "'ideal', 'testbed', 'home'"),
    (with_host(None, g1={"preset": 3}), "flows[1].host.preset", "expected a string"),
    (
        with_host({"colour": "red"}),
        "host.colour",
        "allowed keys: preset, start_jitter, start_spacing, noise, noise_scale, turnaround, pacing_slack, "
        "delack_granularity, hz, tick_phase, tso, nic_rate, gro, gro_flush",
    ),
    (with_host({"nic_rate": "-1Gbps"}), "host.nic_rate", "must not be negative"),
    (with_host(None, g1={"nic_rate": 10}), "flows[1].host.nic_rate", "missing unit"),
    (with_host({"nic_rate": "10GBps"}), "host.nic_rate", ""),
    (with_host({"tso": "on"}), "host.tso", "expected true or false"),
    (with_host(None, g0={"gro": 1}), "flows[0].host.gro", "expected true or false"),
    (with_host({"gro_flush": "-5us"}), "host.gro_flush", "must not be negative"),
    (with_host({"gro_flush": 16}), "host.gro_flush", "missing unit"),
    (with_host(None, g0={"noise": "gaussian"}), "flows[0].host.noise", "'none', 'exponential', 'uniform'"),
    (with_host({"noise_scale": "-1us"}), "host.noise_scale", ""),
    (with_host({"pacing_slack": 5}), "host.pacing_slack", ""),
    (with_host({"start_jitter": "-1ms"}), "host.start_jitter", ""),
    (with_host({"hz": 200}), "host.hz", "[100, 250, 300, 1000] (Linux's CONFIG_HZ), got 200"),
    (with_host(None, g1={"hz": "250"}), "flows[1].host.hz", "expected an integer"),
    (with_host({"tick_phase": "boot"}), "host.tick_phase", "'zero', 'random'"),
    (with_host("testbed"), "host", "expected a table"),
    (with_host(None, g0={"start_jitter": "20s"}), "flows[0].host.start_jitter", "end of the run"),
    (stopping_before_latest_start(), "flows[0].stop", "latest start"),
]


@pytest.mark.parametrize(("d", "field", "needle"), ERRORS, ids=[f"{e[1]}:{e[2]}" for e in ERRORS])
def test_host_errors_name_the_field(d, field, needle):
    assert_input_error(d, field, needle)


# ---------------------------------------------------------------------------------------------------- runs


def cubic_vs_reno(preset):
    """Four Cubic against four Reno flows through a 20 Mbit/s FIFO of one BDP."""
    return {
        "duration": "4s",
        "link": {"rate": "20Mbps", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "40ms", "count": 4}, {"cc": "reno", "rtt": "40ms", "count": 4}],
        "host": {"preset": preset},
    }


def run_bytes(d, seed):
    r = ccfair.run(d, seed=seed)
    return r.flows.to_csv().encode() + r.timeseries.to_csv().encode() + r.queue.to_csv().encode()


@pytest.mark.parametrize("preset", ["ideal", "testbed", "home"])
def test_same_seed_same_bytes(preset):
    d = cubic_vs_reno(preset)
    assert run_bytes(d, 3) == run_bytes(d, 3)


@pytest.mark.parametrize("preset", ["testbed", "home"])
def test_other_seeds_other_results_with_a_real_host(preset):
    d = cubic_vs_reno(preset)
    a, b = ccfair.run(d, seed=1), ccfair.run(d, seed=2)
    assert list(a.flows["start_ns"]) != list(b.flows["start_ns"])
    assert not a.timeseries.equals(b.timeseries)


def test_the_tick_phase_alone_makes_repetitions_differ():
    # Every other host effect off: no jitter, noise, slack, offloads or window; only where the kernel's 4 ms
    # ticks fall differs between seeds, and with it when Cubic's curve and the delayed ACKs move.
    host = {"preset": "ideal", "hz": 250, "delack_granularity": "4ms"}
    d = {**cubic_vs_reno("ideal"), "host": {**host, "tick_phase": "random"}}
    assert run_bytes(d, 1) == run_bytes(d, 1)
    assert run_bytes(d, 1) != run_bytes(d, 2)
    fixed = {**d, "host": {**host, "tick_phase": "zero"}}
    assert run_bytes(fixed, 1) == run_bytes(fixed, 2)


def test_the_ideal_host_gives_one_run_whatever_the_seed():
    # No path loss, no randomized algorithm or queue: the seed has nothing to draw.
    d = cubic_vs_reno("ideal")
    assert run_bytes(d, 1) == run_bytes(d, 2)
    starts = ccfair.run(d, seed=5).flows["start_ns"]
    assert (starts == 0).all()


def test_a_window_limited_tso_sender_keeps_its_whole_window_in_flight():
    # Two Cubic flows at 10 Mbps, 50 ms, with GSO bursts of two segments: ACKs of one flow come milliseconds
    # apart, so when the window has room for one segment only, the next ACK is not due within 1 ms and
    # Linux 6.18 sends that segment rather than wait to fill a burst ("tcp: fix tcp_tso_should_defer() vs
    # large RTT"). The kernel backend's flows in this setting show in-flight equal to cwnd in every sample;
    # the rule before that fix held one segment back in about 40 % of them.
    d = {
        "duration": "4s",
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "host": {"preset": "testbed", "gro": False, "start_jitter": "0s"},
        "flows": [{"cc": "cubic", "rtt": "50ms", "count": 2}],
    }
    t = ccfair.run(d, seed=1).timeseries
    steady = t[(t["t_ns"] > 1e9) & (t["t_ns"] < 3e9)]
    assert len(steady) >= 30
    held_back = (steady["cwnd"] > steady["inflight"]).mean()
    assert held_back < 0.05, held_back

import dataclasses
import datetime
import json
import tomllib

import pytest

from ccfair import _native
from ccfair.catalog import catalog
from ccfair.errors import InputError
from ccfair.scenario import Aqm, FlowGroup, Link, Measure, Scenario, load_scenario
from ccfair.units import Buffer
from conftest import assert_input_error, small


def resolve(d):
    return Scenario.from_dict(d).resolve()


def cc_defaults(name):
    return next(cc["defaults"] for cc in catalog()["congestion_controls"] if cc["name"] == name)


def with_link(**link):
    d = small()
    d["link"] = {**d["link"], **link}
    return d


def with_flow(i=0, **flow):
    d = small()
    d["flows"][i] = {**d["flows"][i], **flow}
    return d


# ------------------------------------------------------------------------------------------------- defaults


def test_defaults():
    s = Scenario.from_dict(small())
    assert s.interval_ns == 100_000_000
    assert s.seed is None and s.effective_seed() == 1 and s.effective_seed(7) == 7
    assert s.link.mtu_bytes == 1500 and s.link.aqm == Aqm("fifo", {}) and s.link.base_rtt_ns is None
    g = s.flows[0]
    assert (g.count, g.start_ns, g.stop_ns, g.initial_window) == (1, 0, None, 10)
    assert (g.pacing, g.loss, g.ecn, g.cc_params, g.label) == (False, 0.0, "off", {}, None)

    spec = s.resolve()
    assert spec["duration_ns"] == 10 * 10**9
    assert spec["interval_ns"] == 100_000_000
    assert spec["measure_start_ns"] == 2 * 10**9  # 20 % of the duration
    assert spec["measure_end_ns"] == 10 * 10**9
    assert spec["link"] == {"rate_bps": 10_000_000, "mtu_bytes": 1500, "aqm": spec["link"]["aqm"]}
    group = spec["groups"][0]
    assert group["stop_ns"] is None and group["initial_window"] == 10 and group["count"] == 1
    assert group["cc"] == {"name": "reno"}
    # the cc config is the canonical one, every kernel default filled in
    assert spec["groups"][1]["cc"] == {"name": "cubic", **cc_defaults("cubic")}


def test_measure_defaults_use_the_duration():
    spec = resolve(small(duration="60s"))
    assert (spec["measure_start_ns"], spec["measure_end_ns"]) == (12 * 10**9, 60 * 10**9)
    spec = resolve(small(duration="60s", measure={"end": "50s"}))
    assert (spec["measure_start_ns"], spec["measure_end_ns"]) == (12 * 10**9, 50 * 10**9)
    spec = resolve(small(duration="60s", measure={"start": "0s"}))
    assert (spec["measure_start_ns"], spec["measure_end_ns"]) == (0, 60 * 10**9)


def test_seed_in_file_and_alias():
    s = Scenario.from_dict(small(seed=42))
    assert s.seed == 42 and s.effective_seed() == 42 and s.effective_seed(5) == 5
    spec = resolve(with_flow(0, cc="newreno"))
    assert spec["groups"][0]["cc"]["name"] == "reno"


def test_group_fields_reach_the_spec():
    d = with_flow(
        1,
        count=3,
        start="1s",
        stop="8s",
        initial_window=32,
        pacing=True,
        loss=0.01,
        ecn="classic",
        cc_params={"beta": 0.5},
        label="bulk",
    )
    g = resolve(d)["groups"][1]
    assert g["count"] == 3 and g["start_ns"] == 10**9 and g["stop_ns"] == 8 * 10**9
    assert g["initial_window"] == 32 and g["pacing"] is True and g["loss"] == 0.01 and g["ecn"] == "classic"
    assert g["cc"]["beta"] == 0.5 and g["cc"]["name"] == "cubic"


# ---------------------------------------------------------------------------------------- buffer resolution


def limit_of(d):
    return resolve(d)["link"]["aqm"]["limit"]


@pytest.mark.parametrize(
    ("link", "flows_rtt", "expected"),
    [
        # 10 Mbps x 50 ms / 8 = 62 500 bytes = 41.67 packets of 1500 -> 42
        ({"buffer": "1bdp"}, ("50ms", "50ms"), {"packets": 42}),
        # half of it: 31 250 bytes = 20.83 -> 21
        ({"buffer": "0.5bdp"}, ("50ms", "50ms"), {"packets": 21}),
        # the base RTT defaults to the smallest group RTT: 10 Mbps x 20 ms / 8 = 25 000 bytes = 16.67 -> 17
        ({"buffer": "1bdp"}, ("80ms", "20ms"), {"packets": 17}),
        # an explicit base RTT wins: 10 Mbps x 100 ms / 8 = 125 000 bytes = 83.3 -> 83
        ({"buffer": "1bdp", "base_rtt": "100ms"}, ("80ms", "20ms"), {"packets": 83}),
        # a queueing delay at the link rate: 10 Mbps x 20 ms / 8 = 25 000 bytes -> 17
        ({"buffer": "20ms"}, ("50ms", "50ms"), {"packets": 17}),
        # 1.8 Mbps x 10 ms / 8 = 2 250 bytes = 1.5 packets: halves round up -> 2
        ({"rate": "1.8Mbps", "buffer": "10ms"}, ("50ms", "50ms"), {"packets": 2}),
        # a jumbo MTU: 62 500 / 9 000 = 6.94 -> 7
        ({"buffer": "1bdp", "mtu": 9000}, ("50ms", "50ms"), {"packets": 7}),
        ({"buffer": "1000pkt"}, ("50ms", "50ms"), {"packets": 1000}),
        ({"buffer": "150KB"}, ("50ms", "50ms"), {"bytes": 150_000}),
        ({"buffer": "64KiB"}, ("50ms", "50ms"), {"bytes": 65_536}),
        ({"buffer": "1500B"}, ("50ms", "50ms"), {"bytes": 1500}),
    ],
)
def test_buffer_resolution(link, flows_rtt, expected):
    d = with_link(**link)
    for f, rtt in zip(d["flows"], flows_rtt, strict=True):
        f["rtt"] = rtt
    assert limit_of(d) == expected


def test_buffer_arithmetic_matches_formula():
    for rate_mbps, rtt_ms, multiple in [(10, 50, 1), (100, 10, 0.25), (1000, 20, 2), (3, 7, 1.7)]:
        d = with_link(rate=f"{rate_mbps}Mbps", buffer=f"{multiple}bdp")
        for f in d["flows"]:
            f["rtt"] = f"{rtt_ms}ms"
        n_bytes = rate_mbps * 1e6 * rtt_ms * 1e-3 * multiple / 8
        assert limit_of(d) == {"packets": int(n_bytes / 1500 + 0.5)}


@pytest.mark.parametrize(
    ("buffer", "needle"),
    [
        ("0.01bdp", "625 bytes"),  # 62 500 x 0.01
        ("1000B", "1000 bytes"),
        ("1ms", "1250 bytes"),  # 10 Mbps x 1 ms / 8
    ],
)
def test_buffer_below_one_packet(buffer, needle):
    with pytest.raises(InputError) as info:
        resolve(with_link(buffer=buffer))
    assert info.value.field == "link.buffer"
    assert needle in info.value.message and "1500-byte packet" in info.value.message


# --------------------------------------------------------------------------------------------- round trips


def rich():
    return {
        "duration": "30s",
        "interval": "50ms",
        "seed": 9,
        "measure": {"start": "5s", "end": "25s"},
        "link": {
            "rate": "2.5Gbps",
            "buffer": "64KiB",
            "base_rtt": "12.5ms",
            "aqm": {"name": "fifo"},
            "mtu": 9000,
        },
        "flows": [
            {"cc": "cubic", "rtt": "12.5ms", "count": 4, "cc_params": {"beta": 0.6, "hystart": False}},
            {
                "cc": "reno",
                "rtt": "80ms",
                "start": "2s",
                "stop": "20s",
                "initial_window": 16,
                "pacing": True,
                "loss": 0.001,
                "ecn": "l4s",
                "label": 'bulk "quoted" é\n',
            },
        ],
    }


@pytest.mark.parametrize("make", [small, rich])
def test_round_trip(make):
    s = Scenario.from_dict(make())
    assert Scenario.from_dict(s.to_dict()) == s
    assert Scenario.from_dict(tomllib.loads(s.to_toml())) == s
    explicit = Scenario.from_dict(tomllib.loads(s.to_toml(explicit=True)))
    assert explicit.resolve() == s.resolve()
    assert explicit.to_dict(explicit=True) == s.to_dict(explicit=True)


def test_explicit_form_writes_defaults():
    d = Scenario.from_dict(small(duration="60s")).to_dict(explicit=True)
    assert d["measure"] == {"start": "12s", "end": "60s"}
    assert d["link"]["base_rtt"] == "50ms"
    assert d["flows"][1]["cc_params"]["beta"] == cc_defaults("cubic")["beta"]


def test_from_toml_and_load_scenario(tmp_path):
    path = tmp_path / "s.toml"
    s = Scenario.from_dict(rich())
    path.write_text(s.to_toml())
    assert Scenario.from_toml(path) == s
    assert load_scenario(str(path)) == s
    assert load_scenario(path) == s
    assert load_scenario(rich()) == s
    assert load_scenario(s) is s
    with pytest.raises(TypeError):
        load_scenario(42)


def test_from_toml_file_errors(tmp_path):
    with pytest.raises(InputError, match="no such file") as info:
        Scenario.from_toml(tmp_path / "missing.toml")
    assert info.value.field.endswith("missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "10s"\n[link\nrate = "1Mbps"\n')
    with pytest.raises(InputError, match=r"invalid TOML.*line 2") as info:
        Scenario.from_toml(bad)
    assert info.value.field == str(bad)
    with pytest.raises(InputError, match="directory"):
        Scenario.from_toml(tmp_path)


# ------------------------------------------------------------------------------------------------- errors


def drop(d, *path):
    target = d
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return d


ERRORS = [
    # unknown keys, with the key and the allowed keys
    (small(durration="1s"), "durration", "allowed keys: duration"),
    (with_link(rat="1Mbps"), "link.rat", "allowed keys: rate, buffer"),
    (small(measure={"begin": "1s"}), "measure.begin", "allowed keys: start, end"),
    (with_flow(1, rtt_ms=5), "flows[1].rtt_ms", "allowed keys: cc, profile, count, rtt"),
    (with_link(aqm={"name": "fifo", "target": "5ms"}), "link.aqm.target", "unknown parameter"),
    (with_link(aqm={"name": "fifo", "limit": 10}), "link.aqm.limit", "set by link.buffer"),
    # missing keys
    (drop(small(), "duration"), "duration", "is required"),
    (drop(small(), "link"), "link", "is required"),
    (drop(small(), "flows"), "flows", "is required"),
    (drop(small(), "link", "rate"), "link.rate", "is required"),
    (drop(small(), "link", "buffer"), "link.buffer", "is required"),
    (drop(with_flow(1), "flows", 1, "cc"), "flows[1].cc", "is required"),
    (drop(small(), "flows", 0, "rtt"), "flows[0].rtt", "is required"),
    (with_link(aqm={"limit": 3}), "link.aqm.name", "is required"),
    # wrong types
    (small(link="10Mbps"), "link", "expected a table"),
    (small(measure="5s"), "measure", "expected a table"),
    (small(flows={"cc": "reno", "rtt": "5ms"}), "flows", "array of tables"),
    (small(flows=["reno"]), "flows[0]", "expected a table"),
    (with_flow(0, count="2"), "flows[0].count", "expected an integer"),
    (with_flow(0, count=2.0), "flows[0].count", "expected an integer"),
    (with_flow(0, pacing=1), "flows[0].pacing", "expected true or false"),
    (with_flow(0, ecn="yes"), "flows[0].ecn", "expected one of 'off', 'classic', 'l4s'"),
    (with_flow(0, ecn=True), "flows[0].ecn", "expected a string"),
    (with_flow(0, loss="1%"), "flows[0].loss", "expected a number"),
    (with_flow(0, loss=True), "flows[0].loss", "expected a number"),
    (with_flow(0, cc=5), "flows[0].cc", "expected a string"),
    (with_flow(0, label=5), "flows[0].label", "expected a string"),
    (with_flow(1, cc_params=0.7), "flows[1].cc_params", "expected a table"),
    (with_link(mtu="1500"), "link.mtu", "expected an integer"),
    (with_link(aqm=3), "link.aqm", "expected a name or a table"),
    (small(seed="1"), "seed", "expected an integer"),
    (small(seed=-1), "seed", "at least 0"),
    (small(seed=2**64), "seed", "at most"),
    # units
    (with_link(rate="10"), "link.rate", "missing unit"),
    (with_link(rate="10MBps"), "link.rate", "bytes per second"),
    (with_flow(0, rtt=50), "flows[0].rtt", "missing unit"),
    (with_link(buffer="1bdb"), "link.buffer", "unknown unit"),
    (small(duration="10 seconds"), "duration", "unknown unit"),
    (with_link(base_rtt="fast"), "link.base_rtt", "cannot read"),
    # zero and negative
    (with_link(rate="0Mbps"), "link.rate", "must be positive"),
    (with_link(rate="-5Mbps"), "link.rate", "must not be negative"),
    (with_flow(0, rtt="0ms"), "flows[0].rtt", "must be positive"),
    (small(duration="0s"), "duration", "must be positive"),
    (with_link(base_rtt="0ms"), "link.base_rtt", "must be positive"),
    (with_flow(0, start="-1s"), "flows[0].start", "must not be negative"),
    (with_flow(0, count=0), "flows[0].count", "at least 1"),
    (with_flow(0, count=-3), "flows[0].count", "at least 1"),
    (with_flow(0, initial_window=0), "flows[0].initial_window", "at least 1"),
    # times
    (with_flow(0, start="10s"), "flows[0].start", "before the end of the run"),
    (with_flow(0, start="11s"), "flows[0].start", "before the end of the run"),
    (with_flow(0, start="2s", stop="2s"), "flows[0].stop", "after start"),
    (with_flow(0, start="2s", stop="1s"), "flows[0].stop", "after start"),
    (small(measure={"start": "5s", "end": "5s"}), "measure.start", "before measure.end"),
    (small(measure={"start": "6s", "end": "5s"}), "measure.start", "before measure.end"),
    (small(measure={"end": "1s"}), "measure.start", "default: 20 % of the duration"),
    (small(measure={"end": "11s"}), "measure.end", "at most the duration"),
    (small(interval="0ms"), "interval", "must be positive"),
    (small(interval="11s"), "interval", "at most the duration"),
    # ranges
    (with_flow(0, loss=1.0), "flows[0].loss", "[0, 1)"),
    (with_flow(0, loss=-0.1), "flows[0].loss", "[0, 1)"),
    (with_flow(0, loss=float("nan")), "flows[0].loss", "[0, 1)"),
    (with_link(mtu=575), "link.mtu", "between 576 and 9000"),
    (with_link(mtu=9001), "link.mtu", "between 576 and 9000"),
    # algorithms
    (with_flow(0, cc="vegas"), "flows[0].cc", "unknown congestion control"),
    (
        with_flow(1, cc_params={"bta": 0.5}),
        "flows[1].cc_params.bta",
        'unknown parameter "bta"; allowed: beta, c, ',
    ),
    (with_flow(1, cc_params={"betta": 0.5}), "flows[1].cc_params.betta", 'did you mean "beta"?'),
    (with_flow(1, cc_params={"beta": 2}), "flows[1].cc_params.beta", "between 0 and 1"),
    (with_flow(1, cc_params={"beta": "x"}), "flows[1].cc_params", "invalid type"),
    (
        with_flow(0, cc_params={"beta": 0.5}),
        "flows[0].cc_params.beta",
        'unknown parameter "beta"; allowed: none (reno has no parameters)',
    ),
    (with_flow(1, cc_params={"beta": datetime.date(2020, 1, 1)}), "flows[1].cc_params", "values must be"),
    (with_link(aqm="blue"), "link.aqm", 'unknown queue discipline "blue"; available: fifo, red, codel'),
    (with_link(aqm={"name": "sfq"}), "link.aqm", "unknown queue discipline"),
    # names close to a known one: the one probably meant
    (with_flow(0, cc="Cubic"), "flows[0].cc", 'did you mean "cubic"?'),
    (with_flow(0, cc="bbrv2"), "flows[0].cc", 'did you mean "bbr2"?'),
    (with_link(aqm="fq-codel"), "link.aqm", 'did you mean "fq_codel"?'),
    (with_link(aqm={"name": "pie", "targt": "5ms"}), "link.aqm.targt", "allowed: target, tupdate,"),
    (with_link(aqm={"name": "pie", "targt": "5ms"}), "link.aqm.targt", 'did you mean "target"?'),
    (small(durration="1s"), "durration", "did you mean 'duration'?"),
    (small(host={"preset": "kernel_lab"}), "host.preset", "did you mean 'kernel-lab'?"),
    (small(flows=[]), "flows", "at least one flow group"),
]


@pytest.mark.parametrize(("d", "field", "needle"), ERRORS, ids=[f"{e[1]}:{e[2]}" for e in ERRORS])
def test_errors_name_the_field(d, field, needle):
    error = assert_input_error(d, field, needle)
    assert str(error) == f"{field}: {error.message}"


def test_top_level_must_be_a_table():
    with pytest.raises(InputError, match="expected a table"):
        Scenario.from_dict(["duration"])  # type: ignore[arg-type]


def test_unknown_key_message_lists_all_allowed_keys():
    with pytest.raises(InputError) as info:
        Scenario.from_dict(with_flow(0, colour="red"))
    for key in (
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
    ):
        assert key in info.value.message
    assert "'colour'" in info.value.message


def test_dataclasses_are_checked_when_resolved():
    base = Scenario.from_dict(small())
    bad_group = dataclasses.replace(base.flows[0], count=0)
    with pytest.raises(InputError) as info:
        dataclasses.replace(base, flows=(base.flows[0], bad_group)).resolve()
    assert info.value.field == "flows[1].count"
    with pytest.raises(InputError) as info:
        dataclasses.replace(base, link=dataclasses.replace(base.link, buffer=Buffer("packets", 0))).resolve()
    assert info.value.field == "link.buffer"
    with pytest.raises(InputError) as info:
        dataclasses.replace(base, flows=()).resolve()
    assert info.value.field == "flows"
    with pytest.raises(InputError) as info:
        dataclasses.replace(base, measure=Measure(start_ns=3, end_ns=2)).validate()
    assert info.value.field == "measure.start"


def test_typed_construction():
    s = Scenario(
        duration_ns=10**10,
        link=Link(rate_bps=10**7, buffer=Buffer("bdp", 1.0)),
        flows=(FlowGroup(cc="cubic", rtt_ns=50_000_000, count=2),),
    )
    assert s.flow_count() == 2 and s.mss_bytes() == 1448
    assert s.resolve()["link"]["aqm"] == {"name": "fifo", "limit": {"packets": 42}}
    assert Scenario.from_dict(s.to_dict()) == s


def test_native_errors_carry_field_and_message():
    """The native resolution raises a structured error; the Python error takes its attributes as they are."""
    doc = Scenario.from_dict(small()).native_input()
    doc["flows"][1]["cc_params"] = {"beta": 1.5}
    with pytest.raises(_native.InputError) as info:
        _native.resolve(json.dumps(doc))
    assert info.value.field == "flows[1].cc_params.beta" and info.value.message
    with pytest.raises(InputError) as err:
        Scenario.from_dict(with_flow(1, cc_params={"beta": 1.5})).resolve()
    assert (err.value.field, err.value.message) == (info.value.field, info.value.message)


def test_the_native_run_checks_a_spec_too():
    """A spec handed to ``_native.run`` directly is checked with the same rules."""
    spec = resolve(small())
    spec["link"]["mtu_bytes"] = 100
    with pytest.raises(_native.InputError) as info:
        _native.run(json.dumps(spec), 1)
    assert info.value.field == "link.mtu" and "between 576 and 9000" in info.value.message

"""Bad input on the command line: exit code 2, the field on stderr, nothing on stdout, nothing written."""

from pathlib import Path

import pytest

from conftest import SMALL_TOML, run_cli, suite_toml

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

BAD_FILES = {
    "toml-syntax": ('duration = "10s"\n[link\nrate = "1Mbps"\n', "line 2, column"),
    "unknown-key": (SMALL_TOML.replace('duration = "10s"', 'duration = "10s"\nspeed = 3'), "speed"),
    "bad-unit": (SMALL_TOML.replace('rate = "10Mbps"', 'rate = "10mbps"'), "link.rate"),
    "missing-unit": (SMALL_TOML.replace('rate = "10Mbps"', "rate = 10"), "link.rate"),
    "tiny-buffer": (SMALL_TOML.replace('buffer = "1bdp"', 'buffer = "100B"'), "link.buffer"),
    "unknown-cc": (SMALL_TOML.replace('cc = "reno"', 'cc = "vegas"'), "flows[0].cc"),
    "bad-cc-param": (SMALL_TOML + "cc_params = { bta = 0.5 }\n", "flows[1].cc_params"),
    "unknown-aqm": (SMALL_TOML.replace('buffer = "1bdp"', 'buffer = "1bdp"\naqm = "blue"'), "link.aqm"),
    "measure": (SMALL_TOML + '[measure]\nend = "20s"\n', "measure.end"),
    "stop-before-start": (SMALL_TOML + 'start = "5s"\nstop = "4s"\n', "flows[1].stop"),
    "start-after-end": (SMALL_TOML + 'start = "10s"\n', "flows[1].start"),
    "loss": (SMALL_TOML + "loss = 1.0\n", "flows[1].loss"),
    "mtu": (SMALL_TOML.replace('buffer = "1bdp"', 'buffer = "1bdp"\nmtu = 100'), "link.mtu"),
    "count": (SMALL_TOML + "count = 0\n", "flows[1].count"),
    "no-flows": ('duration = "10s"\nflows = []\n[link]\nrate = "1Mbps"\nbuffer = "10pkt"\n', "flows"),
    "seed-in-file": (SMALL_TOML.replace("seed = 3", "seed = -3"), "seed"),
    "interval": (SMALL_TOML.replace("seed = 3", 'seed = 3\ninterval = "0ms"'), "interval"),
    "huge-bdp": (SMALL_TOML.replace('buffer = "1bdp"', 'buffer = "1e400bdp"'), "link.buffer"),
    "huge-exponent": (SMALL_TOML.replace('rtt = "50ms"', 'rtt = "1e99999999ms"', 1), "flows[0].rtt"),
    "deep-nesting": (SMALL_TOML + "x = " + "[" * 400 + "]" * 400 + "\n", "deep-nesting.toml"),
    "very-deep-nesting": ("x = " + "[" * 5000 + "]" * 5000 + "\n", "very-deep-nesting.toml"),
    "host-nic-rate": (SMALL_TOML + '[host]\nnic_rate = "-10Gbps"\n', "host.nic_rate"),
    "host-gro": (SMALL_TOML + '[host]\ngro = "yes"\n', "host.gro"),
    "host-tso": (SMALL_TOML + "[host]\ntso = 1\n", "host.tso"),
    "host-gro-flush": (SMALL_TOML + '[host]\ngro_flush = "soon"\n', "host.gro_flush"),
    "nan-cc-param": (SMALL_TOML + "cc_params = { beta = nan }\n", "flows[1].cc_params.beta"),
    # A PIE updating every nanosecond: two billion updates in 2 s, no Ctrl-C for 25 s and past --max-events.
    "pie-tupdate": (
        SMALL_TOML.replace('buffer = "1bdp"', 'buffer = "1bdp"\naqm = { name = "pie", tupdate_ns = 1 }'),
        "link.aqm.tupdate_ns",
    ),
    "dualpi2-tupdate": (
        SMALL_TOML.replace('buffer = "1bdp"', 'buffer = "1bdp"\naqm = { name = "dualpi2", tupdate_ns = 9 }'),
        "link.aqm.tupdate_ns",
    ),
    # Arabic-Indic digits ten: Python's \\d and Decimal read them, tc does not.
    "unicode-digits": (SMALL_TOML.replace('rate = "10Mbps"', 'rate = "\u0661\u0660Mbps"'), "link.rate"),
    "inf-aqm-param": (
        SMALL_TOML.replace('buffer = "1bdp"', 'buffer = "1bdp"\naqm = { name = "red", max_p = inf }'),
        "link.aqm.max_p",
    ),
}


def assert_bad_input(result, field, out: Path):
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert field in result.stderr
    assert "error: " in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_scenario_files(tmp_path, case):
    text, field = BAD_FILES[case]
    path = tmp_path / f"{case}.toml"
    path.write_text(text)
    out = tmp_path / "out"
    result = run_cli("run", str(path), "--out", str(out))
    assert_bad_input(result, field, out)
    assert result.stderr.startswith("error: ")


def test_stderr_format_is_field_then_message(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(BAD_FILES["stop-before-start"][0])
    result = run_cli("run", str(path))
    assert result.stderr == "error: flows[1].stop: must be after start (5s)\n"


@pytest.mark.parametrize(
    ("case", "line"),
    [
        ("huge-bdp", "error: link.buffer: '1e400bdp' is too large"),
        ("deep-nesting", "error: {path}: nested too deeply: more than 32 levels of tables and arrays"),
        ("very-deep-nesting", "error: {path}: nested too deeply: more than 32 levels of tables and arrays"),
        ("nan-cc-param", "error: flows[1].cc_params.beta: must be a finite number, got nan"),
        ("inf-aqm-param", "error: link.aqm.max_p: must be a finite number, got inf"),
    ],
)
def test_messages_of_values_out_of_range(tmp_path, case, line):
    path = tmp_path / f"{case}.toml"
    path.write_text(BAD_FILES[case][0])
    result = run_cli("run", str(path))
    assert result.returncode == 2
    assert result.stderr == line.format(path=path) + "\n"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('""  = 1\n' + SMALL_TOML, "error: scenario: unknown key ''; allowed keys: "),
        (
            SMALL_TOML.replace('buffer = "1bdp"', 'buffer = "1bdp"\naqm = { name = "fifo", "" = 1 }'),
            'error: link.aqm: unknown parameter ""; allowed: none',
        ),
    ],
)
def test_an_empty_key_is_named_by_its_table(tmp_path, text, line):
    path = tmp_path / "s.toml"
    path.write_text(text)
    result = run_cli("run", str(path))
    assert result.returncode == 2 and result.stderr.startswith(line), result.stderr


def test_missing_file(tmp_path):
    out = tmp_path / "out"
    result = run_cli("run", str(tmp_path / "nope.toml"), "--out", str(out))
    assert_bad_input(result, "nope.toml", out)
    assert "no such file" in result.stderr


def test_directory_instead_of_file(tmp_path):
    out = tmp_path / "out"
    assert_bad_input(run_cli("run", str(tmp_path), "--out", str(out)), str(tmp_path), out)


@pytest.mark.parametrize("seed", ["-1", "abc", str(2**64), "\u0661", "1_0", "9" * 5000])
def test_bad_seed(small_toml, tmp_path, seed):
    out = tmp_path / "out"
    assert_bad_input(run_cli("run", str(small_toml), "--seed", seed, "--out", str(out)), "--seed", out)


@pytest.mark.parametrize("events", ["\u0661e5", "1_000_000_000", "nan", "inf", "1e999", "0"])
def test_bad_events_limit(small_toml, tmp_path, events):
    out = tmp_path / "out"
    result = run_cli("run", str(small_toml), "--max-events", events, "--out", str(out))
    assert_bad_input(result, "--max-events", out)


def test_out_is_a_file(small_toml, tmp_path):
    out = tmp_path / "taken"
    out.write_text("keep me")
    result = run_cli("run", str(small_toml), "--out", str(out))
    assert result.returncode == 2 and result.stdout == "" and "--out" in result.stderr
    assert out.read_text() == "keep me"


def test_usage_errors_exit_2():
    for args in ([], ["frobnicate"], ["run"], ["run", "a.toml", "--colour"]):
        result = run_cli(*args)
        assert result.returncode == 2, args
        assert result.stdout == ""
        assert "error: " in result.stderr


# ------------------------------------------------------------------------ commands: every input answered


SUITE = {"duration": "12s", "measure_start": "3s"}

TWO_GROUPS_TOML = """\
duration = "5s"
[link]
rate = "10Mbps"
buffer = "1bdp"
[[flows]]
cc = "cubic"
rtt = "20ms"
[[flows]]
cc = "reno"
rtt = "20ms"
"""


def command_cases(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """Each a command line that once ended in a traceback, a hang, or an error naming a field the user did
    not write, with the field its error must name now."""
    deep = tmp / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    huge_flows = tmp / "flows.toml"
    huge_flows.write_text(suite_toml(**SUITE, flow_counts=[100000000]))
    bad_aqm = tmp / "aqm.toml"
    bad_aqm.write_text(suite_toml(**SUITE, aqms=["nope"]))
    two = tmp / "two.toml"
    two.write_text(TWO_GROUPS_TOML)
    out = ["--out", str(tmp / "out")]
    mix = ["advise", "--rate", "10Mbps", "--rtt", "20ms", "--dry-run", *out, "--mix"]
    harm = ["harm", "reno", "--against", "cubic", "--dry-run", *out, "--suite"]
    repro = ["reproduce", "rueth-tma19", *out, "--repetitions"]
    return {
        "superscript-count": ([*mix, "cubic:\u00b2"], "--mix"),
        "deep-truth": (["validate", "--truth", str(deep), "--dry-run", *out], "--truth"),
        "reproduce-repetitions": ([*repro, "1000000000"], "--repetitions"),
        "reproduce-huge-dry-run": ([*repro, "1000000", "--dry-run"], "--repetitions"),
        "validate-repetitions": (
            ["validate", "--dry-run", *out, "--repetitions", "1000000000"],
            "--repetitions",
        ),
        "suite-flow-count": ([*harm, str(huge_flows)], "suite.flow_counts[0]"),
        "suite-aqm": ([*harm, str(bad_aqm)], "suite.aqms[0]"),
        "harm-group-against-itself": (
            ["harm", str(two), "--new", "flows[0]", "--against", "flows[0]", "--dry-run", *out],
            "--new",
        ),
        "bench-memory-limit": (["bench", "--max-memory", "1B"], "--max-memory"),
    }


COMMAND_CASES = [
    "superscript-count",
    "deep-truth",
    "reproduce-repetitions",
    "reproduce-huge-dry-run",
    "validate-repetitions",
    "suite-flow-count",
    "suite-aqm",
    "harm-group-against-itself",
    "bench-memory-limit",
]


@pytest.mark.parametrize("case", COMMAND_CASES)
def test_commands_answer_bad_input_at_once_naming_what_was_written(tmp_path, case):
    cases = command_cases(tmp_path)
    assert sorted(cases) == sorted(COMMAND_CASES)
    args, field = cases[case]
    result = run_cli(*args, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: {field}: "), result.stderr
    assert "Traceback" not in result.stderr and "unexpected failure" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_former_name_of_input_errors_still_catches_them():
    import ccfair
    from ccfair import _native

    assert ccfair.ScenarioError is ccfair.InputError
    with pytest.raises(ccfair.ScenarioError) as e:
        ccfair.Scenario.from_dict({"duration": "1s", "link": {"rate": "fast"}, "flows": [{"cc": "reno"}]})
    assert e.value.field == "link.rate"
    with pytest.raises(_native.ScenarioError):
        _native.parse_quantity("rate", "fast", "link.rate", False)


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        (
            'cc = "cubic"',
            'cc = "Cubic"',
            'error: flows[1].cc: unknown congestion control "Cubic"; available: reno, cubic, dctcp, prague, '
            'bbr, bbr2, bbr3; did you mean "cubic"?',
        ),
        (
            'cc = "cubic"',
            'cc = "cubic"\ncc_params = { betta = 0.7 }',
            'error: flows[1].cc_params.betta: unknown parameter "betta"; allowed: beta, c, fast_convergence, '
            "tcp_friendliness, hystart, hystart_detect, hystart_low_window, hystart_ack_delta_us, "
            'initial_ssthresh; did you mean "beta"?',
        ),
        (
            'cc = "reno"',
            'cc = "reno"\ncc_params = { beta = 0.7 }',
            'error: flows[0].cc_params.beta: unknown parameter "beta"; allowed: none '
            "(reno has no parameters)",
        ),
        (
            'buffer = "1bdp"',
            'buffer = "1bdp"\naqm = "fq-codel"',
            'error: link.aqm: unknown queue discipline "fq-codel"; available: fifo, red, codel, fq_codel, '
            'pie, gsp, ppv, dualpi2, step, vdq_csaqm; did you mean "fq_codel"?',
        ),
        (
            'buffer = "1bdp"',
            'buffer = "1bdp"\naqm = { name = "codel", targett = "5ms" }',
            'error: link.aqm.targett: unknown parameter "targett"; allowed: target, interval, ecn, '
            'ce_threshold; did you mean "target"?',
        ),
    ],
)
def test_unknown_names_get_one_wording_and_the_name_probably_meant(tmp_path, old, new, line):
    path = tmp_path / "s.toml"
    path.write_text(SMALL_TOML.replace(old, new, 1))
    result = run_cli("run", str(path))
    assert result.returncode == 2
    assert result.stderr == line + "\n"

"""Golden snapshots: every canonical run of tests/snapshots/cases.toml must reproduce its stored table
(tests/snapshots/expected/<case>.txt) exactly, and still exercise what it claims. `make snapshots`
regenerates the tables after a deliberate behaviour change; the failure message says which cells moved."""

from __future__ import annotations

import dataclasses
import re
import shutil
import tomllib

import pytest

from ccfair.analysis import schema
from ccfair.catalog import catalog, output_table
from ccfair.devtools.snapshots import check_case, load_cases, stale_files
from ccfair.devtools.snapshots.__main__ import main as snapshots_main
from ccfair.devtools.snapshots.requires import failed_requirements
from ccfair.devtools.snapshots.table import Section, diff, parse, render
from ccfair.devtools.snapshots.take import NOT_PINNED, take_snapshot
from ccfair.errors import InputError
from conftest import REPO

CASES_FILE = REPO / "tests" / "snapshots" / "cases.toml"
EXPECTED = REPO / "tests" / "snapshots" / "expected"
CASES = load_cases(CASES_FILE)
BY_NAME = {c.name: c for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_case_reproduces_its_snapshot_exactly(case):
    outcome = check_case(case, EXPECTED, CASES_FILE.name)
    assert outcome.unchanged and not outcome.failed, outcome.message()


def test_every_stored_snapshot_belongs_to_a_case():
    assert stale_files(CASES, EXPECTED) == []


@pytest.mark.parametrize("name", ["path-loss-rack", "fifo-20-flows", "prague-dualpi2-cubic"])
def test_a_case_run_twice_in_one_process_gives_the_same_table(name):
    # The stored tables come from another process, so the comparison above checks determinism across
    # processes; this checks that nothing carried over between runs in one process changes a run.
    case = BY_NAME[name]
    first = render(take_snapshot(case, CASES_FILE.name))
    take_snapshot(BY_NAME["tiny-buffer-rto"], CASES_FILE.name)
    assert render(take_snapshot(case, CASES_FILE.name)) == first


def _groups():
    for case in CASES:
        for group in case.scenario["flows"]:
            yield case, group


def test_the_cases_cover_every_algorithm_queue_discipline_and_sender_option():
    canonical = {}
    for cc in catalog()["congestion_controls"]:
        for name in [cc["name"], *cc["aliases"]]:
            canonical[name] = cc["name"]
    ccs = {canonical[g["cc"]] for _, g in _groups()}
    assert ccs == {cc["name"] for cc in catalog()["congestion_controls"]}
    aqms = set()
    for case in CASES:
        aqm = case.scenario["link"].get("aqm", "fifo")
        aqms.add(aqm if isinstance(aqm, str) else aqm["name"])
    assert aqms == {q["name"] for q in catalog()["queue_disciplines"]}
    assert {g.get("ecn", "off") for _, g in _groups()} == {"off", "classic", "l4s"}
    assert {g.get("pacing", False) for _, g in _groups()} == {False, True}
    assert {g.get("initial_window", 10) for _, g in _groups()} == {10, 32}
    cubic_hystart = {g.get("cc_params", {}).get("hystart", True) for _, g in _groups() if g["cc"] == "cubic"}
    assert cubic_hystart == {False, True}
    assert any(g.get("loss", 0) > 0 for _, g in _groups())
    assert any(sum(g.get("count", 1) for g in c.scenario["flows"]) >= 20 for c in CASES)
    assert any(len({g["rtt"] for g in c.scenario["flows"]}) > 1 for c in CASES)
    assert any("stop" in g for _, g in _groups()) and any(g.get("start", "0s") != "0s" for _, g in _groups())
    assert any("start" in c.scenario.get("measure", {}) for c in CASES)


def _pinned(snapshot) -> set[str]:
    """Every name a snapshot's sections hold: column headers and row keys."""
    names: set[str] = set()
    for s in snapshot.sections:
        names.update(s.columns)
        names.update(r[0] for r in s.rows)
    return names


def test_every_native_column_and_derived_value_is_pinned():
    # One stored snapshot per table kind is enough: which columns a section holds does not depend on the case.
    snapshot = _stored("reno-fifo")
    pinned = _pinned(snapshot)
    for table in ("flows", "timeseries", "queue", "totals"):
        for c in output_table(table):
            if "sim" in c["backends"] and c["name"] not in NOT_PINNED:
                aliases = {c["name"], c["name"].removeprefix("window_").removeprefix("total_")}
                assert aliases & pinned, f"{table}.{c['name']} is pinned nowhere"
    derived = {s.name: set(s.columns) | {r[0] for r in s.rows} for s in snapshot.sections}
    assert {c.name for c in schema.flows() if not c.native and c.dtype != "str"} <= derived["derived_flows"]
    assert set(schema.CLASS_NAMES) <= derived["derived_classes"]
    assert set(schema.SUMMARY_KEYS) - NOT_PINNED - {"fness"} <= derived["derived_summary"]


def test_native_sections_come_first_and_derived_ones_are_marked():
    # A runner of the native core alone checks every section but the derived ones (see ARCHITECTURE.md).
    for case in CASES:
        names = [s.name for s in _stored(case.name).sections]
        derived = [n.startswith("derived_") for n in names]
        assert derived == sorted(derived) and any(derived) and not all(derived), case.name


def test_a_two_flow_case_pins_fness():
    two = next(c for c in CASES if sum(g.get("count", 1) for g in c.scenario["flows"]) == 2)
    assert _stored(two.name).section("derived_summary").row("fness") is not None


# ------------------------------------------------------------------------------- what a mismatch reports


def _stored(name: str):
    return parse((EXPECTED / f"{name}.txt").read_text())


def _with_cell(snapshot, section_name: str, key: str, column: str, value: str):
    sections = []
    for s in snapshot.sections:
        if s.name == section_name:
            i = s.columns.index(column)
            rows = tuple((*r[:i], value, *r[i + 1 :]) if r[0] == key else r for r in s.rows)
            s = Section(s.name, s.title, s.columns, rows)
        sections.append(s)
    return dataclasses.replace(snapshot, sections=tuple(sections))


def _bump_events(text: str, delta: int) -> tuple[str, int]:
    """``text`` with the run's event count changed by ``delta``, and the count it had."""
    m = re.search(r"^events +(\d+)$", text, flags=re.MULTILINE)
    assert m is not None
    events = int(m.group(1))
    return text[: m.start(1)] + str(events + delta) + text[m.end(1) :], events


def test_the_stored_text_parses_back_to_itself():
    for case in CASES:
        text = (EXPECTED / f"{case.name}.txt").read_text()
        assert render(parse(text)) == text


def test_a_moved_cell_is_reported_with_its_row_column_and_both_values():
    stored = _stored("reno-fifo")
    before = stored.section("window").row("0")["delivered_bytes"]
    moved = _with_cell(stored, "window", "0", "delivered_bytes", "1")
    assert diff(stored, moved) == [f"[window] flow 0, delivered_bytes: expected {before}, got 1"]
    events = stored.section("run").row("events")["value"]
    moved = _with_cell(stored, "run", "events", "value", "7")
    assert diff(stored, moved) == [f"[run] counter events, value: expected {events}, got 7"]


def test_a_moved_float_is_reported_with_the_values_its_bits_stand_for():
    stored = _stored("reno-fifo")
    before = stored.section("derived_summary").row("jain_index")["exact"]
    moved = _with_cell(stored, "derived_summary", "jain_index", "exact", "0x3fe0000000000000")
    (line,) = diff(stored, moved)
    assert line.startswith(f"[derived_summary] value jain_index, exact: expected {before} (")
    assert line.endswith("got 0x3fe0000000000000 (0.5)")


def test_a_changed_series_is_reported_as_a_changed_digest_of_its_column():
    stored = _stored("reno-fifo")
    old = stored.section("timeseries").row("cwnd")["sha256"]
    moved = _with_cell(stored, "timeseries", "cwnd", "sha256", "0123456789abcdef")
    assert diff(stored, moved) == [f"[timeseries] cwnd: digest changed ({old} -> 0123456789abcdef)"]


def test_the_failure_message_lists_what_moved_and_how_to_regenerate(tmp_path):
    case = BY_NAME["reno-fifo"]
    shutil.copy(EXPECTED / "reno-fifo.txt", tmp_path / "reno-fifo.txt")
    text, events = _bump_events((tmp_path / "reno-fifo.txt").read_text(), 1)
    (tmp_path / "reno-fifo.txt").write_text(text)
    outcome = check_case(case, tmp_path, CASES_FILE.name)
    assert not outcome.unchanged
    message = outcome.message()
    assert f"[run] counter events, value: expected {events + 1}, got {events}" in message
    assert "make snapshots" in message


# ---------------------------------------------------------------------------------------- preconditions


def test_a_requirement_that_does_not_hold_is_reported_with_its_values():
    stored = _stored("reno-fifo")
    assert failed_requirements(stored, ("run.events > 0", "series[0].ca_states has 3")) == []
    assert failed_requirements(stored, ("sum(total.rto_events) > 0",)) == [
        "sum(total.rto_events) > 0: not met (sum(total.rto_events) = 0)"
    ]
    assert len(failed_requirements(stored, ("series[0].ca_states has 4",))) == 1
    (missing,) = failed_requirements(stored, ("window[7].delivered_bytes > 0",))
    assert "no window[7].delivered_bytes" in missing


def test_every_case_states_at_least_one_precondition():
    assert [c.name for c in CASES if not c.requires] == []


# ---------------------------------------------------------------------------------------- the cases file


CASE = """\
[one]
about = "Reno alone"
requires = ["sum(total.delivered_bytes) > 0"]
[one.scenario]
duration = "1s"
seed = 1
link = { rate = "5Mbps", buffer = "1bdp" }
flows = [{ cc = "reno", rtt = "20ms" }]
"""


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("seed = 1\n", "", "one.scenario.seed"),
        ('rate = "5Mbps"', 'rate = "5mbps"', "one.scenario.link.rate"),
        ('"sum(total.delivered_bytes) > 0"', '"delivered > 0"', "one.requires[0]"),
        ('about = "Reno alone"', 'about = ""', "one.about"),
        ("[one]", "[One]", "One"),
        ("[one.scenario]", "colour = 1\n[one.scenario]", "one.colour"),
    ],
)
def test_a_bad_case_is_an_error_naming_its_field(tmp_path, old, new, field):
    path = tmp_path / "cases.toml"
    path.write_text(CASE.replace(old, new))
    with pytest.raises(InputError) as err:
        load_cases(path)
    assert err.value.field == field


def test_the_cases_file_parses_as_toml_with_one_table_per_case():
    with CASES_FILE.open("rb") as f:
        assert list(tomllib.load(f)) == [c.name for c in CASES]


# -------------------------------------------------------------------------------------------- the command


def test_the_command_writes_new_snapshots_then_reports_what_moved(tmp_path, capsys):
    cases, expected = tmp_path / "cases.toml", tmp_path / "expected"
    cases.write_text(CASE)
    args = ["--cases-file", str(cases), "--expected", str(expected)]
    assert snapshots_main(args) == 2  # nothing stored yet: not a directory
    assert "error: --expected:" in capsys.readouterr().err
    assert snapshots_main([*args, "--update"]) == 0
    assert "new        one -> " in capsys.readouterr().out
    stored = expected / "one.txt"
    text = stored.read_text()
    assert snapshots_main(args) == 0
    assert "1 cases: 1 unchanged" in capsys.readouterr().out

    tampered, events = _bump_events(text, -1)
    stored.write_text(tampered)
    assert snapshots_main(args) == 1
    out = capsys.readouterr().out
    assert (
        f"changed    one\n             [run] counter events, value: expected {events - 1}, got {events}"
        in out
    )
    assert stored.read_text() != text  # checking writes nothing
    assert snapshots_main([*args, "--update"]) == 0
    assert stored.read_text() == text


def test_the_command_never_overwrites_a_file_it_did_not_write(tmp_path, capsys):
    cases, expected = tmp_path / "cases.toml", tmp_path / "expected"
    cases.write_text(CASE)
    expected.mkdir()
    (expected / "one.txt").write_text("my notes\n")
    assert snapshots_main(["--cases-file", str(cases), "--expected", str(expected), "--update"]) == 2
    assert "is not a snapshot" in capsys.readouterr().err
    assert (expected / "one.txt").read_text() == "my notes\n"
    assert [p.name for p in expected.iterdir()] == ["one.txt"]


def test_the_command_refuses_to_store_a_case_that_fails_its_preconditions(tmp_path, capsys):
    cases, expected = tmp_path / "cases.toml", tmp_path / "expected"
    cases.write_text(CASE.replace("sum(total.delivered_bytes) > 0", "sum(total.rto_events) > 0"))
    assert snapshots_main(["--cases-file", str(cases), "--expected", str(expected), "--update"]) == 1
    out = capsys.readouterr().out
    assert "failing    one: no longer exercises what it claims" in out
    assert not (expected / "one.txt").exists()


def test_the_command_names_an_unknown_case(tmp_path, capsys):
    assert snapshots_main(["--cases-file", str(CASES_FILE), "--expected", str(EXPECTED), "nope"]) == 2
    assert "error: CASE: no case 'nope'" in capsys.readouterr().err


def test_the_diff_names_each_section_row_and_cell_that_moved():
    flows = "# case x\n\n[flows] per flow\nflow  goodput\n"
    expected = parse(flows + "0  10\n1  20\n\n[queue]\nt  sha256\nq  ab\n")
    got = parse(flows + "0  11\n2  30\n\n[links]\nlink  rate\n0  1\n")
    assert diff(expected, got) == [
        "[flows] flow 0, goodput: expected 10, got 11",
        "[flows] flow 1: the row is gone",
        "[flows] flow 2: a new row",
        "[queue]: the section is gone",
        "[links]: a new section",
    ]
    assert diff(expected, expected) == []

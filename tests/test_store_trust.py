"""A results directory is untrusted input: a crafted catalog is refused and cannot read local files, queries
are read-only, run ids never name other paths, and damage to the files (series or catalog) is found, named
and repaired by resuming."""

import hashlib
import json
import os
import pty
import shutil
import subprocess
import sys
import uuid

import duckdb
import pandas as pd
import pytest

import ccfair
from ccfair.analysis.schema import SUMMARY
from ccfair.errors import InputError
from ccfair.store import layout, reader
from ccfair.store.check import MAX_JSON_DEPTH, plan_definition
from ccfair.store.schema import ADDED_IN, FILE_COLUMNS, SCHEMA_VERSION
from ccfair.store.status import _running, store_status
from ccfair.store.writer import StoreWriter
from ccfair.sweep.driver import run_sweep
from ccfair.sweep.plan import plan_from_dict
from conftest import read_pty, run_cli
from test_sweep_support import BASE, plan_dict

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


def small_plan():
    return plan_from_dict(plan_dict(repetitions=1), default_name="small")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A finished 4-run sweep (2 buffers x 2 RTTs); tests work on copies."""
    root = tmp_path_factory.mktemp("trust") / "results"
    report = run_sweep(small_plan(), root, jobs=1)
    assert (report.done, report.failed) == (4, 0)
    return root


@pytest.fixture
def store(pristine, tmp_path):
    root = tmp_path / "results"
    shutil.copytree(pristine, root)
    return root


@pytest.fixture
def secret(tmp_path):
    """A local file whose content must never reach any output."""
    token = f"SECRET-{uuid.uuid4().hex}"
    path = tmp_path / "secret.txt"
    path.write_text(token + "\n")
    return path, token


def tamper(root, *statements):
    """Runs SQL on the catalog with DuckDB's defaults, as someone crafting a results directory would."""
    con = duckdb.connect(str(layout.catalog_path(root)))
    try:
        for sql in statements:
            con.execute(sql)
    finally:
        con.close()


def run_ids(root):
    return sorted(ccfair.load(root).runs["run_id"])


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------------ crafted catalogs

CRAFTS = {
    "runs view": [
        "ALTER TABLE runs RENAME TO runs_real",
        "CREATE VIEW runs AS SELECT * REPLACE ((SELECT content FROM read_text('{secret}')) AS error) "
        "FROM runs_real",
    ],
    "plans view": [
        "ALTER TABLE plans RENAME TO plans_real",
        "CREATE VIEW plans AS SELECT * REPLACE ((SELECT content FROM read_text('{secret}')) AS source) "
        "FROM plans_real",
    ],
    "macro": ["CREATE MACRO leak() AS TABLE SELECT content FROM read_text('{secret}')"],
    "extra table": ["CREATE TABLE notes AS SELECT 1 AS x"],
    "sequence": ["CREATE SEQUENCE counter"],
    "other schema": ["CREATE SCHEMA extra", "CREATE TABLE extra.runs (x INTEGER)"],
    "column default": ["ALTER TABLE runs ADD COLUMN note VARCHAR DEFAULT 'x'"],
    "nested column": ["ALTER TABLE runs ADD COLUMN points INTEGER[]"],
    "retyped column": ["ALTER TABLE runs ALTER jain_index TYPE VARCHAR"],
    "check constraint": [
        "DROP TABLE classes",
        "CREATE TABLE classes (run_id VARCHAR CHECK (length(run_id) = 32))",
    ],
}
CRAFT_MESSAGES = {
    "runs view": "it holds a view 'runs'",
    "plans view": "it holds a view 'plans'",
    "macro": "it holds a macro 'leak'",
    "extra table": "it holds a table 'main.notes'",
    "sequence": "it holds a sequence 'counter'",
    "other schema": "it holds a schema 'extra'",
    "column default": "runs.'note' has a default or computed value",
    "nested column": "runs.'points' has type 'INTEGER[]'",
    "retyped column": "runs.jain_index should be DOUBLE, found a VARCHAR column",
    "check constraint": "table classes has a CHECK constraint",
}


@pytest.mark.parametrize("craft", sorted(CRAFTS))
def test_a_crafted_catalog_is_refused(store, secret, craft):
    path, token = secret
    statements = [s.replace("{secret}", str(path)) for s in CRAFTS[craft]]
    try:
        tamper(store, *statements)
    except duckdb.Error as e:  # pragma: no cover - DuckDB should make every craft
        pytest.fail(f"DuckDB refuses the craft: {e}")
    for read in (
        lambda: ccfair.load(store).runs,
        lambda: ccfair.load(store).query("select * from plans"),
        lambda: store_status(store),
        lambda: StoreWriter(store),
    ):
        with pytest.raises(InputError) as err:
            read()
        assert err.value.field == str(store)
        assert "not a catalog written by ccfair" in err.value.message
        assert CRAFT_MESSAGES[craft] in err.value.message
        assert token not in str(err.value)


def test_a_view_reading_a_local_file_puts_nothing_of_it_into_any_output(store, secret, tmp_path):
    path, token = secret
    tamper(store, *(s.replace("{secret}", str(path)) for s in CRAFTS["runs view"]))
    html = tmp_path / "report.html"
    for args in (
        ["status", str(store)],
        ["status", str(store), "--verify", "--json"],
        ["query", str(store), "select error from runs"],
        ["report", str(store), "-o", str(html)],
        ["export", str(store), "--format", "csv", "--to", str(tmp_path / "export")],
    ):
        result = run_cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert "not a catalog written by ccfair (it holds a view 'runs')" in result.stderr
        assert token not in result.stdout + result.stderr
        assert "Traceback" not in result.stderr
    assert not html.exists() and not (tmp_path / "export").exists()


def test_file_access_is_off_even_for_a_catalog_that_passed_the_check(store, secret, monkeypatch):
    """The second line of defence: with the shape check skipped, DuckDB itself refuses to read the file."""
    path, token = secret
    tamper(store, *(s.replace("{secret}", str(path)) for s in CRAFTS["runs view"]))
    monkeypatch.setattr(reader, "check_catalog", lambda con, root: SCHEMA_VERSION)
    with pytest.raises(InputError) as err:
        reader.query(store, "select error from runs")
    assert "disabled by configuration" in err.value.message
    assert token not in str(err.value)


# ------------------------------------------------------------------------------------ read-only queries

STATEMENTS = [
    "COPY (SELECT 42) TO '{tmp}/copied.csv'",
    "COPY runs TO '{tmp}/copied.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{tmp}/exported'",
    "ATTACH '{tmp}/attached.duckdb' AS other",
    "CREATE TABLE made (x INTEGER)",
    "INSERT INTO runs (run_id, status) VALUES ('0123456789abcdef0123456789abcdef', 'done')",
    "DELETE FROM runs",
    "DROP TABLE flows",
    "SELECT * FROM read_text('{secret}')",
    "SELECT * FROM read_csv('{secret}')",
    "SELECT * FROM read_blob('{secret}')",
    "SELECT * FROM glob('{tmp}/*')",
    "SELECT * FROM read_parquet('{series}')",
    "SELECT * FROM read_parquet('https://example.invalid/x.parquet')",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "RESET enable_external_access",
    "SET allowed_directories = ['/']",
]


@pytest.mark.parametrize("statement", STATEMENTS)
def test_queries_are_read_only_and_reach_no_file(store, secret, tmp_path, statement):
    path, token = secret
    series = next(store.glob("series/*/*.timeseries.parquet"))
    sql = statement.format(tmp=tmp_path, secret=path, series=series)
    before = sorted(p.name for p in tmp_path.iterdir())
    catalog = sha256(layout.catalog_path(store))
    with pytest.raises(InputError) as err:
        ccfair.load(store).query(sql)
    assert err.value.field == "SQL"
    assert token not in err.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert sha256(layout.catalog_path(store)) == catalog
    assert len(ccfair.load(store).runs) == 4


def test_the_query_command_does_not_write(store, tmp_path):
    target = tmp_path / "out.csv"
    result = run_cli("query", str(store), f"COPY (SELECT 42) TO '{target}'")
    assert result.returncode == 2 and "error: SQL:" in result.stderr and "Traceback" not in result.stderr
    assert not target.exists()


# --------------------------------------------------------------------------------------------- run ids


@pytest.mark.parametrize("bad", ["xx/../../../../outside/evil", "../" * 3 + "a" * 23, "A" * 32, "a" * 31, ""])
def test_run_ids_are_checked_before_they_become_paths(store, bad):
    results = ccfair.load(store)
    for read in (results.timeseries, results.queue, results.result):
        with pytest.raises(InputError) as err:
            read(bad)
        assert err.value.field == "run_id"
        if bad == "a" * 31:  # a well-formed start of a run id that no done run has
            assert err.value.message.startswith(f"no done run with id {bad!r}")
        else:
            assert "32 lowercase hex characters" in err.value.message
    with pytest.raises(InputError):
        layout.series_path(store, "timeseries", bad)


def test_a_run_id_in_the_catalog_that_names_another_path_is_damage(store, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = run_ids(store)[0]
    # A Parquet file where the crafted id would lead: reading it would show another table's rows.
    shutil.copy(layout.series_path(store, "queue", victim), outside / "evil.queue.parquet")
    evil = "xx/../../../outside/evil"
    tamper(
        store,
        f"UPDATE runs SET run_id = '{evil}' WHERE run_id = '{victim}'",
        f"UPDATE cells SET run_id = '{evil}' WHERE run_id = '{victim}'",
    )
    with pytest.raises(InputError) as err:
        ccfair.load(store).queue(evil)
    assert err.value.field == "run_id"
    with pytest.raises(InputError) as err:
        ccfair.load(store).query("select count(*) from queue")
    assert "its run id is not 32 hex characters" in err.value.message
    status = store_status(store, verify=True)
    assert [d["run_id"] for d in status["verified"]["damaged"]] == [evil]


# -------------------------------------------------------------------------------------- series damage


def flip_byte(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x01]))


def test_store_damage_is_reported_and_resume_repairs_exactly_those_runs(store, pristine, tmp_path):
    ids = run_ids(store)
    truncated, deleted, flipped, linked = ids
    ts = layout.series_path(store, "timeseries", truncated)
    with open(ts, "r+b") as f:
        f.truncate(ts.stat().st_size // 2)
    layout.series_path(store, "queue", deleted).unlink()
    flip_byte(layout.series_path(store, "timeseries", flipped), 200)
    outside = tmp_path / "outside.parquet"
    shutil.copy(layout.series_path(store, "queue", truncated), outside)
    link = layout.series_path(store, "queue", linked)
    link.unlink()
    link.symlink_to(outside)

    result = run_cli("status", str(store), "--verify", "--json")
    assert result.returncode == 1, result.stderr
    found = {d["run_id"]: d["problems"] for d in json.loads(result.stdout)["verified"]["damaged"]}
    assert sorted(found) == ids
    assert "has" in found[truncated][0] and "were committed" in found[truncated][0]
    assert found[deleted] == [f"series/{deleted[:2]}/{deleted}.queue.parquet is missing"]
    assert "does not match its checksum" in found[flipped][0]
    assert "is a symbolic link (not followed)" in found[linked][0]
    text = run_cli("status", str(store), "--verify")
    assert text.returncode == 1 and "verified the catalog and 4 done runs: 4 damaged" in text.stdout

    # Readers name the damage instead of failing inside Arrow.
    for sql in ("select count(*) from timeseries", "select count(*) from queue"):
        query = run_cli("query", str(store), sql)
        assert query.returncode == 2 and "status --verify" in query.stderr and "Traceback" not in query.stderr
    with pytest.raises(InputError, match="does not match its checksum"):
        ccfair.load(store).timeseries(flipped)
    with pytest.raises(InputError, match="symbolic link"):
        ccfair.load(store).queue(linked)

    # Resuming checks sizes and presence: three runs are marked damaged and run again, the flipped one
    # (same size) needs --verify.
    report = run_sweep(small_plan(), store, jobs=1)
    assert (report.damaged, report.already_done, report.done) == (3, 1, 3)
    assert [d["run_id"] for d in store_status(store, verify=True)["verified"]["damaged"]] == [flipped]
    report = run_sweep(small_plan(), store, jobs=1, verify=True)
    assert (report.damaged, report.already_done, report.done) == (1, 3, 1)
    assert store_status(store, verify=True)["verified"] == {"runs": 4, "damaged": []}
    assert outside.exists()  # the link was replaced, its target untouched

    repaired, original = ccfair.load(store), ccfair.load(pristine)
    assert set(repaired.runs["status"]) == {"done"}
    assert repaired.flows.groupby("run_id").size().to_dict() == dict.fromkeys(ids, 2)
    for run_id in ids:
        for read in ("timeseries", "queue"):
            pd.testing.assert_frame_equal(getattr(repaired, read)(run_id), getattr(original, read)(run_id))


def test_damaged_runs_are_marked_until_they_run_again(store):
    victim = run_ids(store)[0]
    layout.series_path(store, "queue", victim).unlink()
    with StoreWriter(store) as writer:
        assert list(writer.damaged) == [victim]
    runs = ccfair.load(store).runs.set_index("run_id")
    assert runs.loc[victim, "status"] == "failed" and runs.loc[victim, "error_kind"] == "damaged"
    assert "queue.parquet is missing" in runs.loc[victim, "error"]
    assert pd.isna(runs.loc[victim, "jain_index"])
    assert victim not in set(ccfair.load(store).flows["run_id"])
    assert not layout.series_path(store, "timeseries", victim).exists()  # removed with the run
    assert store_status(store)["plans"][0]["failures"] == {"damaged": 1}
    # A failed run of another kind waits for --retry-failed; a damaged one is always run again.
    report = run_sweep(small_plan(), store, jobs=1)
    assert (report.skipped_failed, report.done) == (0, 1)
    assert set(ccfair.load(store).runs["status"]) == {"done"}


def test_a_directory_in_place_of_a_series_file(store):
    victim = run_ids(store)[0]
    path = layout.series_path(store, "queue", victim)
    path.unlink()
    path.mkdir()
    (path / "keep").write_text("not ours")
    damaged = store_status(store, verify=True)["verified"]["damaged"]
    assert damaged == [
        {"run_id": victim, "plans": ["small"], "problems": [f"{layout.series_name(path)} is a directory"]}
    ]
    with pytest.raises(InputError, match="is a directory where only series files belong; move it away"):
        StoreWriter(store)
    assert (path / "keep").read_text() == "not ours"


def test_the_writer_does_not_follow_a_linked_shard(store, tmp_path):
    """The writer deletes files in the series shards that no done run owns: a shard that is a link to
    another directory must be refused, not emptied."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("keep me")
    (store / layout.SERIES_DIR / "zz").symlink_to(elsewhere)
    with pytest.raises(InputError, match="series/zz is not a directory"):
        StoreWriter(store)
    assert (elsewhere / "precious.txt").read_text() == "keep me"


def test_sizes_and_checksums_are_recorded_at_commit(store):
    runs = ccfair.load(store).runs
    for row in runs.itertuples():
        for table in layout.SERIES_TABLES:
            path = layout.series_path(store, table, row.run_id)
            assert getattr(row, f"{table}_bytes") == path.stat().st_size
            assert getattr(row, f"{table}_sha256") == sha256(path)


def test_a_version_1_catalog_is_read_verified_and_upgraded(store):
    ids = run_ids(store)
    tamper(
        store,
        *(f"ALTER TABLE runs DROP COLUMN {name}" for name, _ in FILE_COLUMNS),
        "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
    )
    assert len(ccfair.load(store).timeseries(ids[0])) > 0
    layout.series_path(store, "timeseries", ids[1]).write_bytes(b"not parquet")
    damaged = store_status(store, verify=True)["verified"]["damaged"]
    assert [d["run_id"] for d in damaged] == [ids[1]] and "not readable Parquet" in damaged[0]["problems"][0]
    report = run_sweep(small_plan(), store, jobs=1, verify=True)
    assert (report.damaged, report.done) == (1, 1)
    con = duckdb.connect(str(layout.catalog_path(store)), read_only=True)
    try:
        assert con.execute("SELECT value FROM meta").fetchall() == [(str(SCHEMA_VERSION),)]
        recorded = dict(con.execute("SELECT run_id, timeseries_sha256 FROM runs").fetchall())
    finally:
        con.close()
    assert recorded[ids[1]] == sha256(layout.series_path(store, "timeseries", ids[1]))
    assert all(recorded[i] is None for i in ids if i != ids[1])  # older commits stay unrecorded


# The summary columns of a version-3 catalog, the last before a summary value declared the version that added
# its column (ccfair.analysis.schema.Column.added_in): a record of released catalogs, never edited.
VERSION_3_SUMMARY = {
    "jain_index",
    "utilization",
    "total_goodput_bps",
    "queue_sojourn_p50_ns",
    "queue_sojourn_p99_ns",
    "drops",
    "retransmissions",
    "marks",
    "marking_ratio",
    "queue_sojourn_l4s_p99_ns",
    "queue_sojourn_classic_p99_ns",
    "fness",
    "window_backlog_bytes",
    "window_short",
    "events",
    "wall_seconds",
}


def test_a_summary_value_new_since_version_3_says_which_version_added_its_column():
    # Without it, every catalog written before is refused as damaged (its runs table lacks the column).
    assert {c.name for c in SUMMARY if c.added_in <= 3} == VERSION_3_SUMMARY
    assert all(c.added_in > 3 for c in SUMMARY if c.name not in VERSION_3_SUMMARY)


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_a_catalog_of_every_earlier_version_is_read_and_upgraded(store, version):
    dropped = sorted(name for name, added in ADDED_IN.items() if added > version)
    tamper(
        store,
        *(f"ALTER TABLE runs DROP COLUMN {name}" for name in dropped),
        f"UPDATE meta SET value = '{version}' WHERE key = 'schema_version'",
    )
    assert len(ccfair.load(store).runs) == 4
    assert store_status(store, verify=True)["verified"]["damaged"] == []
    StoreWriter(store).close()
    con = duckdb.connect(str(layout.catalog_path(store)), read_only=True)
    try:
        assert con.execute("SELECT value FROM meta").fetchall() == [(str(SCHEMA_VERSION),)]
        have = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns").fetchall()}
    finally:
        con.close()
    assert set(dropped) <= have


# ------------------------------------------------------------------------------------- catalog damage


def truncate_half(path):
    # DuckDB reads only the blocks a statement needs, and a catalog written in several sessions keeps
    # free blocks at its end: cut to a third, into the blocks of the tables themselves.
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 3)


@pytest.mark.parametrize(
    "damage",
    [
        truncate_half,
        lambda path: flip_byte(path, 8192 + 100),  # a metadata block: DuckDB's checksum fails on opening
        lambda path: path.write_bytes(b""),
        lambda path: (path.unlink(), path.mkdir()),
    ],
    ids=["truncated", "bit-flip", "empty", "directory"],
)
def test_a_damaged_catalog_is_a_clear_error(store, tmp_path, damage):
    damage(layout.catalog_path(store))
    directory = layout.catalog_path(store).is_dir()
    expected = "catalog.duckdb is not a regular file" if directory else "the catalog is damaged ("
    for args in (
        ["status", str(store)],
        ["status", str(store), "--verify"],
        ["query", str(store), "select count(*) from runs"],
        ["report", str(store), "-o", str(tmp_path / "r.html")],
    ):
        result = run_cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert f"error: {store}: {expected}" in result.stderr and "Traceback" not in result.stderr
    with pytest.raises(InputError, match="catalog"):
        run_sweep(small_plan(), store, jobs=1)


# ------------------------------------------------------------------------------------ crafted content


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("'abc'", "meta.schema_version is 'abc', expected a whole number"),
        ("'1e3'", "meta.schema_version is '1e3', expected a whole number"),
        ("'0'", "meta.schema_version is 0"),
        ("'99'", "written by a newer ccfair (catalog schema 99); upgrade ccfair"),
        ("NULL", "meta.schema_version is 'None'"),
    ],
)
def test_a_malformed_schema_version(store, value, message):
    tamper(store, f"UPDATE meta SET value = {value} WHERE key = 'schema_version'")
    for read in (lambda: ccfair.load(store).runs, lambda: StoreWriter(store)):
        with pytest.raises(InputError) as err:
            read()
        assert message in err.value.message


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"axes": 5}', "plans.definition of 'small'.axes: expected list"),
        ('{"axes": [{"paths": 5, "points": []}]}', "axes[0].paths: expected a non-empty list of paths"),
        (
            '{"axes": [{"paths": ["link.buffer"], "points": [[1, 2]]}]}',
            "expected a list of lists of 1 values",
        ),
        ('{"repetitions": "many"}', "repetitions: expected int"),
        ('{"scenario": ' * 100_000 + "1" + "}" * 100_000, f"nested more than {MAX_JSON_DEPTH} levels"),
        ('{"scenario": {"a": ' + "[" * 60 + "]" * 60 + "}}", f"nested more than {MAX_JSON_DEPTH} levels"),
    ],
)
def test_a_crafted_plan_definition_is_a_clear_error(store, tmp_path, definition, message):
    tamper(store, "UPDATE plans SET definition = ?".replace("?", "'" + definition.replace("'", "''") + "'"))
    with pytest.raises(InputError) as err:
        from ccfair.plots.data import load_sweep

        load_sweep(store)
    assert message in str(err.value)


def test_a_crafted_plan_definition_in_the_report_command(store, tmp_path):
    tamper(store, "UPDATE plans SET definition = '" + "[" * 5000 + "]" * 5000 + "'")
    result = run_cli("report", str(store), "-o", str(tmp_path / "r.html"))
    assert result.returncode == 2 and "nested more than" in result.stderr and "Traceback" not in result.stderr


def test_plan_definitions_written_by_plans_pass_the_check():
    definition = plan_definition(small_plan().to_json(), "definition")
    assert [a["paths"] for a in definition["axes"]] == [["link.buffer"], ["flows[0].rtt"]]


def test_crafted_scenario_and_summary_json(store):
    victim = run_ids(store)[0]
    tamper(store, f"UPDATE runs SET scenario_json = '{'[' * 10_000}' WHERE run_id = '{victim}'")
    with pytest.raises(InputError, match="scenario_json: nested more than"):
        ccfair.load(store).result(victim)


def test_infinite_and_nan_metrics(store, tmp_path):
    ids = run_ids(store)
    tamper(
        store,
        f"UPDATE runs SET jain_index = 'inf'::DOUBLE, utilization = 'nan'::DOUBLE WHERE run_id = '{ids[0]}'",
        f"UPDATE flows SET goodput_bps = '-inf'::DOUBLE WHERE run_id = '{ids[1]}'",
    )
    html = tmp_path / "r.html"
    result = run_cli("report", str(store), "-o", str(html), "--quiet")
    assert result.returncode == 0, result.stderr
    assert html.stat().st_size > 0
    result = run_cli(
        "query", str(store), f"select jain_index, utilization from runs where run_id = '{ids[0]}'", "--json"
    )
    assert result.returncode == 0 and json.loads(result.stdout) == [{"jain_index": None, "utilization": None}]


def test_the_running_sweeps_status_file_is_read_with_care(tmp_path):
    (tmp_path / layout.STATUS_FILE).write_text(
        json.dumps({"plan": "p", "done": 3, "secret": "x", "nested": [1]})
    )
    assert _running(tmp_path) == {"plan": "p", "done": 3}
    (tmp_path / layout.STATUS_FILE).write_text("[" * 100_000)
    assert _running(tmp_path) == {}
    (tmp_path / layout.STATUS_FILE).unlink()
    (tmp_path / "target.json").write_text(json.dumps({"plan": "linked"}))
    os.symlink(tmp_path / "target.json", tmp_path / layout.STATUS_FILE)
    assert _running(tmp_path) == {}


def test_a_damaged_page_inside_a_series_file_is_named_by_queries(store):
    """Same size, intact footer, broken page headers: found only while DuckDB scans the file."""
    path = layout.series_path(store, "timeseries", run_ids(store)[0])
    for offset in range(30, 3000, 40):
        flip_byte(path, offset)
    result = run_cli("query", str(store), "select sum(cwnd) from timeseries")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"error: {store}: a timeseries file is damaged (" in result.stderr
    assert "status --verify" in result.stderr
    assert run_cli("query", str(store), "select count(*) from runs").returncode == 0


def test_a_linked_series_directory_is_not_followed(store, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (store / layout.SERIES_DIR).rename(elsewhere)
    (store / layout.SERIES_DIR).symlink_to(elsewhere)
    victim = run_ids(store)[0]
    with pytest.raises(InputError, match="series is a symbolic link, not a directory"):
        ccfair.load(store).timeseries(victim)
    with pytest.raises(InputError, match="series is a symbolic link, not a directory"):
        ccfair.load(store).query("select count(*) from queue")
    with pytest.raises(InputError, match="series is not a directory"):
        StoreWriter(store)
    assert len(list(elsewhere.glob("*/*.parquet"))) == 8


def test_verify_exits_cleanly_every_time(tmp_path):
    """Reading the series files must leave no worker thread behind at exit: Parquet read with Arrow's
    thread pool in a process that has loaded DuckDB aborted at exit (SIGABRT) about one run in three."""
    root = tmp_path / "results"
    plan = plan_from_dict(plan_dict(repetitions=4, scenario={**BASE, "duration": "10s"}), default_name="v")
    assert run_sweep(plan, root, jobs=2).done == 16
    for _ in range(10):
        done = run_cli("status", str(root), "--verify")
        assert done.returncode == 0, (done.returncode, done.stderr)


# ------------------------------------------------------------------------------------- terminal escapes

HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J\u202ereversed\n"


def test_strings_from_a_results_directory_reach_the_terminal_escaped(store, tmp_path):
    """A plan name that would set the terminal's title, clear its screen and reverse the text after it is
    shown with its control characters escaped, by status, query (table and CSV to a terminal) and the
    error lines alike; a CSV for a program (not a terminal) keeps the value as stored."""
    tamper(
        store,
        f"UPDATE plans SET plan = '{HOSTILE}'",
        f"UPDATE cells SET plan = '{HOSTILE}'",
        f"UPDATE runs SET status = 'failed', error_kind = '{HOSTILE}', error = '{HOSTILE}' "
        f"WHERE run_id = '{run_ids(store)[0]}'",
    )
    shown = "evil\\x1b]0;pwned\\x07\\x1b[2J\\u202ereversed\\n"
    outputs = {
        "status": run_cli("status", str(store)),
        "status --verify": run_cli("status", str(store), "--verify"),
        "query": run_cli("query", str(store), "select plan, cell from cells"),
        "query errors": run_cli("query", str(store), "select error_kind, error from runs"),
        "query error line": run_cli("query", str(store), "select * from nope_" + HOSTILE.strip()),
    }
    for what, done in outputs.items():
        text = done.stdout + done.stderr
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, what
    assert shown in outputs["status"].stdout and shown in outputs["query"].stdout
    assert "evil\\x1b" in outputs["query errors"].stdout
    error_line = outputs["query error line"]
    assert error_line.returncode == 2 and "nope_evil\\x1b" in error_line.stderr
    csv = run_cli("query", str(store), "select distinct plan from cells", "--csv")
    assert HOSTILE.strip() in csv.stdout  # a pipe: the value as stored, for the program reading it


def test_query_csv_to_a_terminal_is_escaped(store):
    tamper(store, f"UPDATE plans SET plan = '{HOSTILE}'")
    master, slave = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ccfair", "query", str(store), "select plan from plans", "--csv"],
            stdout=slave,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
        os.close(slave)
        slave = -1
        text = read_pty(master, 0.5)
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in text and b"evil\\x1b]0;pwned" in text

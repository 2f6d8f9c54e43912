"""A results directory for analysis in notebooks: flows and classes carry the plan coordinates, unit axes
have numeric companions that sort as numbers, runs are named by a prefix of their id, a plan becomes an
xarray grid, results show as escaped HTML; and the build that made each run is recorded, so resuming a
plan with another build is refused unless allowed."""

from __future__ import annotations

import itertools
import json
import subprocess
from html.parser import HTMLParser

import duckdb
import numpy as np
import pandas as pd
import pytest

import ccfair
from ccfair.errors import InputError
from ccfair.store import layout
from ccfair.store.export import export
from ccfair.store.reader import query
from ccfair.sweep.driver import run_sweep
from ccfair.sweep.plan import plan_from_dict
from ccfair.sweep.task import git_revision, native_build
from conftest import run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

BASE = {
    "duration": "1s",
    "link": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [
        {"cc": "reno", "rtt": "20ms", "loss": 0.001, "label": "<b>reno</b> & co"},
        {"cc": "cubic", "rtt": "20ms", "loss": 0.001},
    ],
}
BUFFERS = ["0.5bdp", "10bdp", "2bdp"]  # as text, "10bdp" sorts before "2bdp"


def plan(buffers=BUFFERS, name="grid"):
    return plan_from_dict(
        {
            "name": name,
            "repetitions": 2,
            "scenario": BASE,
            "grid": {"link.buffer": buffers, "link.rate": ["10Mbps", "20Mbps"]},
        },
        name,
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("analysis") / "results"
    report = run_sweep(plan(), root, jobs=2)
    assert report.done == 12
    return root


def test_flows_and_classes_carry_the_plan_coordinates(store):
    res = ccfair.load(store)
    flows = res.flows
    assert list(flows.columns[:9]) == [
        "run_id", "plan", "cell", "repetition", "flipped", "link_buffer", "link_buffer_bdp", "link_rate",
        "link_rate_bps",
    ]  # fmt: skip
    runs = res.runs.set_index("run_id")
    for row in flows.itertuples():
        assert row.link_buffer == runs.loc[row.run_id, "link_buffer"]
        assert (
            row.cell == runs.loc[row.run_id, "cell"] and row.repetition == runs.loc[row.run_id, "repetition"]
        )
        assert row.link_buffer_bdp == float(row.link_buffer.removesuffix("bdp"))
    assert len(flows) == 24 and list(flows["cell"]) == sorted(flows["cell"])  # plan order
    assert set(res.classes["link_buffer_bdp"]) == {0.5, 2.0, 10.0}
    # The numeric companion sorts as numbers where the text does not.
    by_number = res.runs.sort_values("link_buffer_bdp")["link_buffer"].drop_duplicates().tolist()
    assert by_number == ["0.5bdp", "2bdp", "10bdp"]
    assert sorted(BUFFERS) == ["0.5bdp", "10bdp", "2bdp"]
    # link.rate's companion is the resolved scenario's own column, not a second one.
    assert (res.runs["link_rate_bps"] == res.runs["link_rate"].map({"10Mbps": 10e6, "20Mbps": 20e6})).all()


def test_a_run_is_named_by_a_unique_prefix_of_its_id(store):
    res = ccfair.load(store)
    ids = sorted(res.runs["run_id"])
    run_id = ids[0]
    unique = next(run_id[:n] for n in range(1, 33) if sum(i.startswith(run_id[:n]) for i in ids) == 1)
    assert res.timeseries(unique).equals(res.timeseries(run_id))
    assert res.result(unique).name.startswith("plan grid, cell ")
    # Two of the 12 ids share a first hex digit (the ids are fixed by the plan; 16 digits for 12 runs).
    shared = next(a[:1] for a, b in itertools.pairwise(ids) if b.startswith(a[:1]))
    with pytest.raises(InputError, match=f"done runs start with '{shared}'"):
        res.timeseries(shared)
    with pytest.raises(InputError, match="no done run with id"):
        res.queue("f" * 32 if not any(i.startswith("f" * 32) for i in ids) else "0" * 32)


def test_a_plan_as_an_xarray_grid(store):
    res = ccfair.load(store)
    grid = res.to_xarray("jain_index")
    assert grid.dims == ("link_buffer", "link_rate", "repetition")
    assert list(grid["link_buffer"].values) == BUFFERS  # the plan's order
    assert list(grid["link_buffer_bdp"].values) == [0.5, 10.0, 2.0]
    runs = res.runs
    for row in runs.itertuples():
        value = grid.sel(link_buffer=row.link_buffer, link_rate=row.link_rate, repetition=row.repetition)
        assert float(value) == pytest.approx(row.jain_index)
    assert not np.isnan(grid.values).any()
    with pytest.raises(InputError, match="no metric 'nope'"):
        res.to_xarray("nope")


def _html_tables(page: str) -> list[list[list[str]]]:
    """The text of each table of ``page``, row by row."""

    class Tables(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tables: list[list[list[str]]] = []
            self.in_cell = False

        def handle_starttag(self, tag: str, attrs: object) -> None:
            if tag == "table":
                self.tables.append([])
            elif tag == "tr":
                self.tables[-1].append([])
            elif tag in ("td", "th"):
                self.tables[-1][-1].append("")
                self.in_cell = True

        def handle_endtag(self, tag: str) -> None:
            if tag in ("td", "th"):
                self.in_cell = False

        def handle_data(self, data: str) -> None:
            if self.in_cell:
                self.tables[-1][-1][-1] += data

    parser = Tables()
    parser.feed(page)
    return parser.tables


def test_results_and_runs_show_as_escaped_html(store):
    res = ccfair.load(store)
    page = res._repr_html_()
    tables = _html_tables(page)
    assert tables[0] == [["plan", "runs", "done", "failed", "not run"], ["grid", "12", "12", "0", "0"]]
    runs = tables[1]
    assert runs[0][:6] == ["run_id", "plan", "cell", "repetition", "link_buffer", "link_rate"]
    assert len(runs) == 1 + 12 and {r[4] for r in runs[1:]} == set(BUFFERS)
    assert "runs from" not in page  # one build made every run
    result = res.result(res.runs["run_id"].iloc[0])
    html = result._repr_html_()
    assert "&lt;b&gt;reno&lt;/b&gt; &amp; co" in html and "<b>reno</b>" not in html
    assert "Summary" in html and "Flows" in html and "Classes" in html


def test_each_run_records_the_build_and_another_build_must_be_allowed(store):
    res = ccfair.load(store)
    assert set(res.runs["native_build"]) == {native_build()} and len(native_build()) == 16
    assert set(res.runs["git_revision"]) == {git_revision()}
    # The done runs now claim another build: resuming the plan with one more buffer is refused.
    con = duckdb.connect(str(layout.catalog_path(store)))
    try:
        con.execute("UPDATE runs SET git_revision = 'deadbeefcafe0000', native_build = '00112233aabbccdd'")
    finally:
        con.close()
    bigger = plan([*BUFFERS, "4bdp"])
    with pytest.raises(InputError) as err:
        run_sweep(bigger, store, jobs=1)
    assert err.value.field == "--allow-mixed"
    assert (
        "12 by ccfair" in err.value.message
        and "git deadbeefcafe, native 00112233aabbccdd" in err.value.message
    )
    assert f"native {native_build()}" in err.value.message  # and this build
    assert len(ccfair.load(store).runs) == 12  # nothing ran
    report = run_sweep(bigger, store, jobs=1, allow_mixed=True)
    assert report.done == 4 and report.already_done == 12
    from ccfair.plots.data import load_sweep
    from ccfair.plots.sweep_report import plan_section

    section = plan_section(load_sweep(ccfair.load(store), "grid"))
    (warning,) = section.warnings
    assert (
        "2 different builds" in warning and "12 runs by ccfair" in warning and "4 runs by ccfair" in warning
    )


def test_the_git_revision_follows_the_sources_only(tmp_path):
    """A checkout's revision is its commit, marked dirty by changes to the package or the crates (each set of
    changes its own digest), not by docs; a package git does not track has no revision."""

    def git(*args: str) -> str:
        proc = subprocess.run(
            ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return proc.stdout.strip()

    package = tmp_path / "python" / "ccfair"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    (tmp_path / "crates").mkdir()
    (tmp_path / "crates" / "lib.rs").write_text("fn f() {}\n")
    (tmp_path / "README.md").write_text("docs\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "c")
    commit = git("rev-parse", "HEAD")

    def revision() -> str | None:
        git_revision.cache_clear()
        return git_revision(package)

    assert revision() == commit
    (tmp_path / "README.md").write_text("more docs\n")
    assert revision() == commit
    (tmp_path / "crates" / "lib.rs").write_text("fn g() {}\n")
    crates = revision()
    assert crates is not None and crates.startswith(commit + "+dirty.")
    git("checkout", "-q", "--", "crates")
    (package / "__init__.py").write_text("x = 2\n")
    changed = revision()
    assert changed is not None and changed.startswith(commit + "+dirty.") and changed != crates
    other = tmp_path / "vendor" / "ccfair"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("x = 1\n")
    git_revision.cache_clear()
    assert git_revision(other) is None
    git_revision.cache_clear()


def test_sql_orders_unit_axes_by_their_numeric_companions(store):
    # In the catalog itself, not only in ccfair.load: "10bdp" sorts before "2bdp" as text.
    rows = query(store, "select distinct link_buffer, link_buffer_bdp from runs order by link_buffer_bdp")
    written = rows["link_buffer"].tolist()
    assert {"0.5bdp", "2bdp", "10bdp"} <= set(written)
    assert written == sorted(written, key=lambda b: float(b.removesuffix("bdp")))
    assert rows["link_buffer_bdp"].tolist() == [float(b.removesuffix("bdp")) for b in written]
    assert "link_rate_bps" in query(store, "select * from runs limit 0").columns  # the scenario's column
    # ccfair.load places the catalog's companion beside its axis, as before.
    columns = list(ccfair.load(store).runs.columns)
    assert columns[columns.index("link_buffer") + 1] == "link_buffer_bdp"


def test_exported_flows_carry_the_plan_coordinates(store, tmp_path):
    export(store, "parquet", tmp_path / "export")
    flows = pd.read_parquet(tmp_path / "export" / "flows.parquet")
    loaded = ccfair.load(store).flows
    assert list(flows.columns[:7]) == [
        "run_id", "plan", "cell", "repetition", "flipped", "link_buffer", "link_buffer_bdp",
    ]  # fmt: skip
    assert flows[["run_id", "cell", "link_buffer", "flow_id"]].values.tolist() == (
        loaded[["run_id", "cell", "link_buffer", "flow_id"]].values.tolist()
    )
    classes = pd.read_parquet(tmp_path / "export" / "classes.parquet")
    assert "link_rate" in classes.columns and len(classes) == len(ccfair.load(store).classes)


def test_select_star_on_runs_keeps_the_scenario_json_off_the_terminal(store):
    shown = run_cli("query", str(store), "select * from runs order by run_id limit 1")
    assert shown.returncode == 0, shown.stderr
    assert "cut to 64 characters: " in shown.stdout and "scenario_json" in shown.stdout
    done = run_cli("query", str(store), "select scenario_json from runs order by run_id limit 1", "--json")
    scenario_json = json.loads(done.stdout)[0]["scenario_json"]
    assert len(scenario_json) > 600 and scenario_json not in shown.stdout
    assert scenario_json[:63] + "…" in shown.stdout


def test_axes_of_tables_and_numbers_get_no_companion(tmp_path):
    table_axis = plan_from_dict(
        {
            "name": "tables",
            "scenario": {**BASE, "duration": "300ms"},
            "grid": {"link.aqm": ["fifo", {"name": "codel", "target": "5ms"}], "flows[0].count": [1, 2]},
        }
    )
    report = run_sweep(table_axis, tmp_path / "results", jobs=1)
    assert report.done == 4
    columns = set(query(tmp_path / "results", "select * from runs limit 0").columns)
    assert {"link_aqm", "flows0_count"} <= columns
    assert not {c for c in columns if c.startswith(("link_aqm_", "flows0_count_"))}

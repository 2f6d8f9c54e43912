"""What faceted figures must not hide or distort, on a small sweep with a ``[[zip]]`` group (two flows' RTTs
varied together) beside a grid of queue disciplines: panels comparing one quantity share their axes, the
paths zipped with a facet axis are named with their values (panel titles, box labels, the compare table, the
report's figure titles), fness of a pair of one CCA names its two ends apart, and a box of many runs draws
only its outliers as dots."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

import ccfair
from ccfair.plots import box, compare_table, fness, relgoodput, share, tput_delay
from ccfair.plots.data import load_sweep
from ccfair.plots.distribution_plot import MAX_BOX_DOTS, outliers
from ccfair.plots.fness_plot import side_names
from ccfair.plots.sweep_report import figure_jobs
from conftest import run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

matplotlib.use("Agg")

PLAN = """\
name = "zipped"
repetitions = 2

[scenario]
duration = "2s"
[scenario.link]
rate = "10Mbps"
buffer = "1bdp"
[[scenario.flows]]
cc = "cubic"
rtt = "20ms"
label = "near"
[[scenario.flows]]
cc = "cubic"
rtt = "20ms"
label = "far"

[grid]
"link.aqm" = ["fifo", "codel"]

[[zip]]
"flows[0].rtt" = ["10ms", "40ms"]
"flows[1].rtt" = ["40ms", "10ms"]
"""
PARTNER = {"10ms": "40ms", "40ms": "10ms"}  # flows[1].rtt for each flows[0].rtt


@pytest.fixture(scope="module")
def zipped(tmp_path_factory: pytest.TempPathFactory) -> ccfair.Results:
    """8 runs: 2 queue disciplines x 2 zipped RTT pairs x 2 repetitions."""
    tmp = tmp_path_factory.mktemp("zipped")
    plan = tmp / "zipped.toml"
    plan.write_text(PLAN)
    out = tmp / "results"
    proc = run_cli("sweep", str(plan), "--out", str(out), "--jobs", "2", "--quiet", timeout=600)
    assert proc.returncode == 0, proc.stderr
    return ccfair.load(out)


def _panels(fig) -> list:
    return [ax for ax in fig.axes if ax.get_title()]


@pytest.mark.parametrize("draw", [tput_delay, relgoodput, share], ids=["tput-delay", "relgoodput", "share"])
def test_panels_of_one_quantity_share_their_axes(zipped, draw):
    fig = draw(zipped)
    panels = _panels(fig)
    assert len(panels) >= 2
    assert len({ax.get_xlim() for ax in panels}) == 1
    assert len({ax.get_ylim() for ax in panels}) == 1
    # A panel with none below it (the last row, or over a removed cell) carries its column's tick labels.
    cols = min(len(panels), 3)
    for ax in panels[-cols:]:
        assert ax.xaxis.get_tick_params()["labelbottom"], ax.get_title()


def test_the_delay_panels_span_every_panels_points(zipped):
    """FIFO and CoDel side by side: each panel's range holds every panel's points, not only its own."""
    fig = tput_delay(zipped)
    points = [
        line.get_xydata()[0]
        for ax in _panels(fig)
        for line in ax.get_lines()
        if str(line.get_gid()).startswith("tput-delay:")
    ]
    assert len(points) == 4
    for ax in _panels(fig):
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        assert all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in points)


def test_panel_titles_name_every_zipped_path_with_its_value(zipped):
    fig = tput_delay(zipped)
    titles = [ax.get_title() for ax in _panels(fig)]
    assert titles == [
        f"link.aqm = {aqm}\nflows[0].rtt = {rtt}, flows[1].rtt = {PARTNER[rtt]}"
        for aqm in ("fifo", "codel")
        for rtt in ("10ms", "40ms")
    ]
    # Each panel holds its cell's runs: the flows' own base RTTs are the panel's values.
    flows = zipped.flows
    for ax in _panels(fig):
        aqm = ax.get_title().split("\n")[0].split(" = ")[1]
        rtt0 = ax.get_title().split("flows[0].rtt = ")[1].split(",")[0]
        own = flows[(flows["link_aqm"] == aqm) & (flows["flows0_rtt"] == rtt0)]
        assert set(own.loc[own["flow_id"] == 1, "flows1_rtt"]) == {PARTNER[rtt0]}
    fness_titles = [ax.get_title() for ax in _panels(fness(zipped))]
    assert all("flows[1].rtt = " in t for t in fness_titles)


def test_cell_labels_and_tables_name_every_zipped_path(zipped):
    fig = box(zipped, by="cell")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == [
        f"link.aqm = {aqm}, flows[0].rtt = {rtt}, flows[1].rtt = {PARTNER[rtt]}"
        for aqm in ("fifo", "codel")
        for rtt in ("10ms", "40ms")
    ]
    table = compare_table(zipped, zipped)
    assert table.attrs["axes"] == ["link.aqm", "flows[0].rtt", "flows[1].rtt"]
    assert [PARTNER[r] for r in table["flows[0].rtt"]] == list(table["flows[1].rtt"])
    titles = [job.title for job in figure_jobs(load_sweep(zipped))]
    assert any("one panel per flows[0].rtt with flows[1].rtt" in t for t in titles), titles


def test_cli_compare_results_prints_the_zipped_partner(zipped, tmp_path):
    out = tmp_path / "compare.png"
    done = run_cli("compare-results", str(zipped.directory), str(zipped.directory), "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()[1:]
    assert header.split()[:3] == ["link.aqm", "flows[0].rtt", "flows[1].rtt"]
    assert [row.split()[1:3] for row in rows] == [[r, PARTNER[r]] for _ in range(2) for r in ("10ms", "40ms")]


def test_fness_of_one_cca_against_itself_names_the_two_flows(zipped):
    fig = fness(zipped)
    labels = {ax.get_xlabel() for ax in _panels(fig)}
    # The scenario labels its two cubic flows "near" and "far": the axis ends say which is which.
    assert labels == {"fness (-1: flow 0 (near) takes all, +1: flow 1 (far) takes all)"}
    same = pd.DataFrame({"cc0": ["cubic"], "cc1": ["cubic"], "label0": [None], "label1": [None]})
    assert side_names(same) == ("flow 0", "flow 1")
    alike = same.assign(label0=["bulk"], label1=["bulk"])
    assert side_names(alike) == ("flow 0", "flow 1")
    assert side_names(same.assign(cc1=["reno"])) == ("cubic", "reno")


def test_a_box_of_many_runs_draws_only_its_outliers(tmp_path: Path):
    rng = np.random.default_rng(1)
    many = np.concatenate([rng.uniform(0.8, 0.9, 118), [0.2, 0.3]])  # two far below the quartiles
    few = rng.uniform(0.5, 0.6, 10)
    runs = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(130)],
            "cell": [0] * 120 + [1] * 10,
            "link_aqm": ["fifo"] * 120 + ["codel"] * 10,
            "jain_index": np.concatenate([many, few]),
        }
    )
    assert 120 > MAX_BOX_DOTS >= 10
    fig = box(runs, metric="jain_index", by="link.aqm")
    dots = {c.get_gid(): c.get_offsets() for c in fig.axes[0].collections}
    assert sorted(dots) == ["outliers:link.aqm = fifo", "runs:link.aqm = codel"]
    np.testing.assert_allclose(sorted(dots["outliers:link.aqm = fifo"][:, 1]), [0.2, 0.3])
    np.testing.assert_allclose(sorted(dots["runs:link.aqm = codel"][:, 1]), sorted(few))
    assert sorted(outliers(many)) == [0.2, 0.3]
    assert "only the outliers" in fig._suptitle.get_text()


def test_a_zipped_axis_on_x_shows_its_partners_values_under_each_tick(zipped):
    fig = relgoodput(zipped, x="flows[0].rtt")
    for ax in _panels(fig):
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert ticks == [f"{r.removesuffix('ms')}\n{PARTNER[r]}" for r in ("10ms", "40ms")]
        assert ax.get_xlabel().endswith("\nunder each: flows[1].rtt")

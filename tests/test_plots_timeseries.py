"""The time-series figure of one run, the style registry, figure files, and the plot command on a saved run
(figure data checked against the run's own tables)."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest

import ccfair
from ccfair.plots import save_figure, timeseries
from ccfair.plots.style import AQM_STYLES, CC_STYLES, aqm_style, bbr_mode_name, cc_style, shades
from ccfair.plots.timeseries_plot import MAX_FLOW_LINES, mode_spans
from conftest import run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

matplotlib.use("Agg")

SCENARIO = {
    "duration": "4s",
    "interval": "100ms",
    "link": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [
        {"cc": "cubic", "rtt": "20ms", "count": 2},
        {"cc": "reno", "rtt": "40ms", "start": "0.5s"},
    ],
}


@pytest.fixture(scope="module")
def result() -> ccfair.RunResult:
    return ccfair.run(SCENARIO, seed=1)


@pytest.fixture(scope="module")
def run_dir(result: ccfair.RunResult, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return result.save(tmp_path_factory.mktemp("run") / "run")


def _lines(fig, prefix: str) -> dict[str, object]:
    return {
        line.get_gid(): line
        for ax in fig.axes
        for line in ax.get_lines()
        if (line.get_gid() or "").startswith(prefix)
    }


def test_goodput_cwnd_and_rtt_lines_hold_each_flows_series(result):
    fig = timeseries(result)
    ts = result.timeseries
    for panel, column, scale in (
        ("goodput", "goodput_bps", 1e-6),
        ("cwnd", "cwnd", 1.0),
        ("srtt", "srtt_ns", 1e-6),
    ):
        lines = _lines(fig, panel + ":")
        assert sorted(lines) == [f"{panel}:{f}" for f in range(3)]
        for flow_id in range(3):
            own = ts[ts["flow_id"] == flow_id].sort_values("t_ns")
            line = lines[f"{panel}:{flow_id}"]
            x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            shown = ~np.isnan(y)
            np.testing.assert_allclose(x[shown], own["t_ns"].to_numpy() / 1e9)
            np.testing.assert_allclose(y[shown], own[column].to_numpy(dtype=float) * scale)
    # The late Reno flow has no samples before it starts.
    reno_x = np.asarray(_lines(fig, "goodput:2")["goodput:2"].get_xdata(), float)
    reno_y = np.asarray(_lines(fig, "goodput:2")["goodput:2"].get_ydata(), float)
    assert np.isnan(reno_y[reno_x < 0.5]).all()


def test_stacked_goodput_tops_at_the_total_and_queue_panels_hold_the_queue(result):
    fig = timeseries(result)
    stacked = next(ax for ax in fig.axes if ax.get_ylabel().startswith("goodput, stacked"))
    top = max(stacked.collections, key=lambda c: c.get_paths()[0].vertices[:, 1].max())
    per_t = result.timeseries.groupby("t_ns")["goodput_bps"].sum() / 1e6
    assert top.get_paths()[0].vertices[:, 1].max() == pytest.approx(per_t.max())
    q = result.queue
    backlog = _lines(fig, "backlog")["backlog"]
    np.testing.assert_allclose(
        np.asarray(backlog.get_ydata(), float), q["backlog_packets"].to_numpy(dtype=float)
    )
    p99 = _lines(fig, "sojourn_p99")["sojourn_p99"]
    np.testing.assert_allclose(np.asarray(p99.get_ydata(), float), q["sojourn_p99_ns"].to_numpy() / 1e6)
    drops_ax = next(ax for ax in fig.axes if ax.get_ylabel().startswith("per interval"))
    heights = [p.get_height() for c in drops_ax.containers if c.get_label() == "drops" for p in c]
    np.testing.assert_array_equal(heights, q["drops"].to_numpy())
    assert sum(heights) > 0


def test_each_cca_keeps_its_registry_colour_and_the_legend_names_the_flows(result):
    fig = timeseries(result)
    lines = _lines(fig, "goodput:")
    reno = matplotlib.colors.to_hex(lines["goodput:2"].get_color())
    assert reno == cc_style("reno").color.lower()
    cubic = [matplotlib.colors.to_hex(lines[f"goodput:{f}"].get_color()) for f in (0, 1)]
    assert cubic == [c.lower() for c in shades(cc_style("cubic").color, 2)] and cubic[0] != cubic[1]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["0: cubic, 20 ms", "1: cubic, 20 ms", "2: reno, 40 ms"]


def test_many_flows_are_drawn_per_class():
    many = {
        **SCENARIO,
        "duration": "2s",
        "flows": [{"cc": "cubic", "rtt": "20ms", "count": MAX_FLOW_LINES + 1}],
    }
    res = ccfair.run(many, seed=1)
    fig = timeseries(res)
    lines = _lines(fig, "goodput:")
    assert list(lines) == [f"goodput:cubic ({MAX_FLOW_LINES + 1} flows)"]
    mean = res.timeseries.groupby("t_ns")["goodput_bps"].mean().to_numpy() / 1e6
    np.testing.assert_allclose(np.asarray(next(iter(lines.values())).get_ydata(), float), mean)


def test_style_registry_is_stable_and_covers_unknown_names():
    assert cc_style("newreno") == cc_style("reno")
    assert cc_style("bbr1") == cc_style("bbr")
    assert len({s.color for s in CC_STYLES.values()}) == len(CC_STYLES)
    assert len({s.color for s in AQM_STYLES.values()}) == len(AQM_STYLES)
    assert cc_style("mystery") == cc_style("mystery")
    assert aqm_style("fifo") == AQM_STYLES["fifo"]
    assert bbr_mode_name(2) == "PROBE_BW" and bbr_mode_name(9) == "9"


def test_mode_spans_merge_equal_consecutive_intervals():
    t = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    modes = np.array([0, 0, 1, 2, 2, -1])
    assert mode_spans(t, modes, 0.1) == [
        (0, pytest.approx(0.0), pytest.approx(0.2)),
        (1, pytest.approx(0.2), pytest.approx(0.1)),
        (2, pytest.approx(0.3), pytest.approx(0.2)),
    ]


def test_bbr_flows_get_a_state_band():
    from ccfair.catalog import catalog

    if "bbr" not in {a["name"] for a in catalog()["congestion_controls"]}:
        pytest.skip("this build has no BBR")
    res = ccfair.run(
        {**SCENARIO, "flows": [{"cc": "bbr", "rtt": "20ms"}, {"cc": "cubic", "rtt": "20ms"}]}, seed=1
    )
    fig = timeseries(res)
    band = next(ax for ax in fig.axes if ax.get_ylabel() == "BBR state")
    modes = {
        int(g.split(":")[2]) for g in (c.get_gid() for c in band.collections) if g and g.startswith("bbr:0:")
    }
    seen = set(res.timeseries.loc[res.timeseries["flow_id"] == 0, "cc_mode"].dropna().astype(int))
    assert modes == seen and 0 in modes  # every mode of the run, starting with STARTUP
    assert [t.get_text() for t in band.get_yticklabels()] == ["flow 0 (bbr)"]


@pytest.mark.parametrize(("suffix", "magic"), [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_writes_each_format(run_dir, tmp_path, suffix, magic):
    out = tmp_path / f"ts.{suffix}"
    proc = run_cli("plot", str(run_dir), "--kind", "timeseries", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(magic)
    assert f"wrote {out}" in proc.stderr


def test_the_same_run_gives_the_same_file(result, tmp_path):
    a, b = (
        save_figure(timeseries(result), tmp_path / "a.svg"),
        save_figure(timeseries(result), tmp_path / "b.svg"),
    )
    assert a.read_bytes() == b.read_bytes()


LATEX_LIKE = r"cost $\notacommand{x}$"


def test_labels_are_drawn_as_text_not_math(tmp_path):
    """Matplotlib reads "$...$" as mathematical notation and fails on an unknown command; a flow label is
    text and comes out letter for letter, through the figure, the plot command and the report."""
    scenario = {**SCENARIO, "duration": "1s", "flows": [{"cc": "reno", "rtt": "20ms", "label": LATEX_LIKE}]}
    result = ccfair.run(scenario, seed=1)
    fig = timeseries(result)
    legend = next(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)
    shown = [t._preprocess_math(t.get_text()) for t in legend.get_texts()]
    assert shown[0] == (f"0: {LATEX_LIKE}", False)  # literal text, not math
    svg = save_figure(fig, tmp_path / "a.svg").read_text()
    assert f"0: {LATEX_LIKE}" in svg

    run_dir = result.save(tmp_path / "run")
    for args in (
        ["plot", str(run_dir), "--kind", "timeseries", "-o", str(tmp_path / "a.png")],
        ["report", str(run_dir), "-o", str(tmp_path / "r.html")],
    ):
        proc = run_cli(*args, "--quiet")
        assert proc.returncode == 0, proc.stderr
    assert LATEX_LIKE in (tmp_path / "r.html").read_text()


def test_the_title_names_the_run(result, run_dir, tmp_path):
    assert timeseries(ccfair.load_run(run_dir))._suptitle.get_text().startswith("run: time series")
    path = tmp_path / "two-cubics.toml"
    path.write_text(
        'duration = "1s"\n[link]\nrate = "10Mbps"\nbuffer = "1bdp"\n[[flows]]\ncc = "cubic"\nrtt = "20ms"\n'
    )
    assert timeseries(ccfair.run(path))._suptitle.get_text().startswith("two-cubics.toml: time series")
    assert timeseries(result, title="cell 3")._suptitle.get_text().startswith("cell 3: time series")


def test_flows_of_one_cca_differ_in_shade_and_line_style(result):
    fig = timeseries(result)
    cubic = [_lines(fig, "goodput:")[f"goodput:{i}"] for i in (0, 1)]
    assert cubic[0].get_color() != cubic[1].get_color()
    assert cubic[0].get_linestyle() != cubic[1].get_linestyle()


def test_queue_percentiles_are_neutral_and_marks_appear_only_where_there_are_some(result):
    fig = timeseries(result)
    registry = {s.color.lower() for s in CC_STYLES.values()}
    sojourn = _lines(fig, "sojourn_")
    assert sorted(sojourn) == ["sojourn_p50", "sojourn_p99"]
    assert not {matplotlib.colors.to_hex(line.get_color()) for line in sojourn.values()} & registry
    labels = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert result.queue["marks"].sum() == 0 and "CE marks" not in labels and "drops" in labels
    marked = ccfair.run(Path(__file__).resolve().parents[1] / "scenarios" / "aqm-step-dctcp.toml")
    assert marked.queue["marks"].sum() > 0
    fig = timeseries(marked)
    labels = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert "CE marks" in labels

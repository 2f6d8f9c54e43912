"""Sweep figures made from a small real sweep run in the test, checked on the figures' data: the heatmap has
one cell per grid point holding the stored mean, relative goodput and share lines hold the class means per
axis value, the fness plot has one point per two-flow run; and bad requests through the CLI."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

import ccfair
from ccfair.plots import fness, heatmap, relgoodput, share
from ccfair.sweep.paths import column_name
from conftest import CUBIC_20MS, RENO_20MS, plan_toml, run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

matplotlib.use("Agg")

PLAN = plan_toml(
    {
        "link.buffer": ["0.5bdp", "1bdp", "2bdp"],
        "flows[1].cc": ["cubic", "reno"],
        "link.rate": ["10Mbps", "20Mbps"],
    },
    [RENO_20MS, {**CUBIC_20MS, "start": "0.5s"}],
    duration="3s",
    name="figs",
    repetitions=2,
    flip_start_order=True,
)
# A second plan whose second cell is invalid (a zero RTT): recorded as failed runs with --skip-invalid.
BROKEN = plan_toml({"flows[0].rtt": ["20ms", "0ms"]}, [RENO_20MS, CUBIC_20MS], name="broken")
AXES = ("link.buffer", "flows[1].cc", "link.rate")


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """48 runs of the figs plan (12 cells x 2 repetitions x 2 start orders) and the broken plan."""
    tmp = tmp_path_factory.mktemp("sweep")
    out = tmp / "results"
    for name, text, extra in (("figs", PLAN, ()), ("broken", BROKEN, ("--skip-invalid",))):
        plan = tmp / f"{name}.toml"
        plan.write_text(text)
        proc = run_cli("sweep", str(plan), "--out", str(out), "--jobs", "2", "--quiet", *extra, timeout=600)
        assert proc.returncode in (0, 1), proc.stderr
    return out


@pytest.fixture(scope="session")
def figs(results_dir: Path) -> ccfair.Results:
    return ccfair.load(results_dir)


def _done(results: ccfair.Results, plan: str = "figs") -> pd.DataFrame:
    ids = set(results.cells.loc[results.cells["plan"] == plan, "run_id"])
    runs = results.runs
    return runs[runs["run_id"].isin(ids) & (runs["status"] == "done")]


def _meshes(fig) -> list:
    return [c for ax in fig.axes for c in ax.collections if c.get_gid() == "heatmap"]


def test_heatmap_has_one_cell_per_grid_point_with_the_stored_mean(figs):
    done = _done(figs)
    assert len(done) == 48
    fig = heatmap(figs, metric="jain_index", x="link.buffer", y="flows[1].cc", facet="link.rate", plan="figs")
    meshes = _meshes(fig)
    assert len(meshes) == 2  # one panel per rate
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["link.rate = 10Mbps", "link.rate = 20Mbps"]
    for mesh, rate in zip(meshes, ("10Mbps", "20Mbps"), strict=True):
        shown = np.ma.getdata(mesh.get_array()).reshape(
            2, 3
        )  # rows: flows[1].cc (cubic, reno); cols: buffers
        part = done[done["link_rate"] == rate]
        for i, cc in enumerate(("cubic", "reno")):
            for j, buffer in enumerate(("0.5bdp", "1bdp", "2bdp")):
                cell = part[(part["flows1_cc"] == cc) & (part["link_buffer"] == buffer)]
                assert len(cell) == 4
                assert shown[i, j] == pytest.approx(cell["jain_index"].mean())
    texts = [t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == "cell"]
    assert len(texts) == 12
    best = done.groupby(["link_rate", "link_buffer", "flows1_cc"])["jain_index"].mean().max()
    assert f"{best:.3g}" in {t.split(chr(10))[0] for t in texts}


def test_heatmap_from_a_runs_dataframe_matches(figs):
    runs = _done(figs)
    fig = heatmap(runs[runs["link_rate"] == "10Mbps"], metric="utilization", x="link.buffer", y="flows[1].cc")
    (mesh,) = _meshes(fig)
    expected = runs[runs["link_rate"] == "10Mbps"].groupby(["flows1_cc", "link_buffer"])["utilization"].mean()
    np.testing.assert_allclose(np.ma.getdata(mesh.get_array()).ravel(), expected.to_numpy())


def test_relgoodput_lines_hold_the_class_means_on_a_log_buffer_axis(figs):
    fig = relgoodput(figs, x="link.buffer", facet="flows[1].cc", plan="figs", average=["link.rate"])
    assert "mean over link.rate (2 values)" in fig._suptitle.get_text()
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["flows[1].cc = cubic", "flows[1].cc = reno"]
    assert panels[0].get_xscale() == "log"
    assert panels[0].get_xlabel() == "link.buffer: buffer (BDP)"
    classes = figs.classes[figs.classes["plan"] == "figs"]  # the classes carry their run's coordinates
    lines = {
        line.get_gid(): line for line in panels[0].get_lines() if (line.get_gid() or "").startswith("relg")
    }
    assert sorted(lines) == ["relgoodput:cubic", "relgoodput:reno"]
    for cc, line in (("cubic", lines["relgoodput:cubic"]), ("reno", lines["relgoodput:reno"])):
        own = classes[(classes["flows1_cc"] == "cubic") & (classes["cc"] == cc)]
        expected = own.groupby("link_buffer")["relative_goodput"].mean().loc[["0.5bdp", "1bdp", "2bdp"]]
        np.testing.assert_allclose(line.get_xdata(), [0.5, 1.0, 2.0])
        np.testing.assert_allclose(line.get_ydata(), expected.to_numpy())
    # Reno against Reno: one class, both flows.
    reno_only = [
        line.get_gid() for line in panels[1].get_lines() if (line.get_gid() or "").startswith("relg")
    ]
    assert reno_only == ["relgoodput:reno"]


def test_share_of_one_cca_and_its_equal_share(figs):
    fig = share(figs, x="link.rate", cc="cubic", plan="figs", average=["link.buffer", "flows[1].cc"])
    ax = fig.axes[0]
    line = next(x for x in ax.get_lines() if x.get_gid() == "share:cubic")
    fair = next(x for x in ax.get_lines() if x.get_gid() == "fair:cubic")
    done = _done(figs)
    cubic = figs.classes[(figs.classes["cc"] == "cubic") & figs.classes["run_id"].isin(done["run_id"])]
    expected = cubic.groupby("link_rate")["share"].mean().loc[["10Mbps", "20Mbps"]]
    np.testing.assert_allclose(line.get_xdata(), [10.0, 20.0])
    np.testing.assert_allclose(line.get_ydata(), expected.to_numpy())
    np.testing.assert_allclose(fair.get_ydata(), [0.5, 0.5])  # one Cubic flow of two
    assert not any((x.get_gid() or "") == "share:reno" for x in ax.get_lines())


def test_fness_has_one_point_per_two_flow_run_per_pair_and_start_order(figs):
    fig = fness(figs, plan="figs", average=["link.buffer", "link.rate", "flows[1].cc"])
    done = _done(figs)
    points = {c.get_gid(): c.get_offsets()[:, 0] for ax in fig.axes for c in ax.collections if c.get_gid()}
    assert sum(len(v) for v in points.values()) == len(done) == 48
    flows = figs.flows
    # The flow that starts later in each run (the hosts' start jitter moves both a little).
    late = flows.sort_values("start_ns").groupby("run_id")["flow_id"].last()
    for pair_cc in ("cubic", "reno"):
        for first in (0, 1):
            runs = done[(done["flows1_cc"] == pair_cc) & (done["run_id"].map(late) == 1 - first)]
            order = f"flow {first} ({'reno' if first == 0 else pair_cc}) starts first"
            shown = points[f"fness:reno vs {pair_cc}:{order}"]
            np.testing.assert_allclose(np.sort(shown), np.sort(runs["fness"].to_numpy()))
    kdes = [
        line.get_gid()
        for ax in fig.axes
        for line in ax.get_lines()
        if (line.get_gid() or "").startswith("kde")
    ]
    assert len(kdes) == 4


# ----------------------------------------------------------------------------------------------- the CLI


def _error(*args: str) -> str:
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    return proc.stderr.strip().splitlines()[-1]


def test_cli_heatmap_svg_writes_each_cell_value(results_dir, tmp_path):
    out = tmp_path / "hm.svg"
    proc = run_cli(
        "plot", str(results_dir), "--plan", "figs", "--kind", "heatmap", "--metric", "utilization",
        "--x", "link.buffer", "--y", "link.rate", "--average", "flows[1].cc", "-o", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    svg = out.read_text()
    done = _done(ccfair.load(results_dir))
    for value in done.groupby(["link_rate", "link_buffer"])["utilization"].mean():
        assert f"{value:.3g}" in svg


def test_cli_axis_the_sweep_did_not_vary(results_dir, tmp_path):
    line = _error("plot", str(results_dir), "--plan", "figs", "--kind", "heatmap", "--x", "link.mtu")
    assert line == "error: --x: 'link.mtu' is not an axis of this sweep; its axes: " + ", ".join(AXES)
    line = _error("plot", str(results_dir), "--plan", "broken", "--kind", "relgoodput", "--x", "flows[0].rtt")
    assert line.startswith("error: --x: 'flows[0].rtt' did not vary among the done runs (values: 20ms)")
    assert not list(tmp_path.iterdir())


def test_cli_metric_that_does_not_exist(results_dir):
    line = _error("plot", str(results_dir), "--plan", "figs", "--kind", "heatmap", "--metric", "happiness")
    assert line.startswith("error: --metric: no metric 'happiness'; metrics: jain_index, utilization")
    assert "link_buffer" not in line and "seed" not in line


def test_heatmap_of_a_metric_without_values(figs):
    runs = _done(figs).assign(fness=np.nan)
    with pytest.raises(ccfair.InputError, match="fness has no value in any done run of this sweep"):
        heatmap(runs, metric="fness", x="link.buffer", y="link.rate")


def test_cli_needs_a_plan_when_there_are_several(results_dir):
    line = _error("plot", str(results_dir), "--kind", "fness")
    assert line == "error: --plan: the results directory holds several plans; name one of: broken, figs"


def test_cli_heatmap_needs_two_varied_axes(results_dir):
    line = _error("plot", str(results_dir), "--plan", "broken", "--kind", "heatmap")
    assert line.startswith("error: --x: the heatmap figure needs 2 varied axes (--x, --y)")


def test_cli_share_of_a_cca_that_is_not_there(results_dir):
    line = _error("plot", str(results_dir), "--plan", "figs", "--kind", "share", "--cc", "vegas")
    assert line == "error: --cc: no flows of 'vegas' in this sweep; congestion controls: cubic, reno"


def test_cli_timeseries_of_one_run_of_the_sweep(results_dir, tmp_path):
    line = _error("plot", str(results_dir), "--plan", "figs", "--kind", "timeseries")
    assert line.startswith(f"error: --run: {results_dir} is a results directory; name one done run: ")
    run_id = line.split(": ")[-1].split(",")[0]
    out = tmp_path / "ts.png"
    proc = run_cli(
        "plot",
        str(results_dir),
        "--plan",
        "figs",
        "--kind",
        "timeseries",
        "--run",
        run_id[:10],
        "-o",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(b"\x89PNG")


def test_axes_are_named_by_their_store_columns():
    assert [column_name(a) for a in AXES] == ["link_buffer", "flows1_cc", "link_rate"]


def test_cca_axes_carry_the_registry_colours(figs):
    from matplotlib.colors import to_hex

    from ccfair.plots.style import cc_style

    fig = relgoodput(figs, x="link.rate", facet="flows[1].cc", plan="figs", average="link.buffer")
    titled = [ax for ax in fig.axes if ax.get_title()]
    assert [to_hex(ax.title.get_color()) for ax in titled] == [
        cc_style("cubic").color.lower(),
        cc_style("reno").color.lower(),
    ]
    fig = heatmap(figs, metric="jain_index", x="flows[1].cc", y="link.buffer", facet="link.rate", plan="figs")
    ticks = {t.get_text(): to_hex(t.get_color()) for t in fig.axes[0].get_xticklabels()}
    assert ticks == {"cubic": cc_style("cubic").color.lower(), "reno": cc_style("reno").color.lower()}


def test_zipped_paths_are_one_dimension():
    from ccfair.plots.data import Sweep, default_axes, pooled_note
    from ccfair.plots.sweep_report import varied_axes

    runs = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(8)],
            "status": "done",
            "flows0_count": [1, 2, 4, 8] * 2,
            "flows1_count": [8, 4, 2, 1] * 2,
            "link_buffer": ["1bdp"] * 4 + ["2bdp"] * 4,
            "jain_index": np.linspace(0.5, 1.0, 8),
        }
    )
    axes = ("flows[0].count", "flows[1].count", "link.buffer")
    sweep = Sweep(runs, None, None, axes, linked=(("flows[0].count", "flows[1].count"),))
    assert default_axes(sweep, ("--x", "--y"), (None, None), "heatmap") == ["flows[0].count", "link.buffer"]
    assert pooled_note(sweep, ["flows[1].count"]) == "mean over link.buffer (2 values)"
    assert varied_axes(sweep) == ["flows[0].count", "link.buffer"]
    alone = Sweep(runs, None, None, axes)
    assert (
        pooled_note(alone, ["flows[1].count"])
        == "mean over flows[0].count (4 values), link.buffer (2 values)"
    )


def test_categorical_axes_show_points_apart_without_joining_lines(figs):
    fig = share(figs, x="flows[1].cc", plan="figs")
    lines = {x.get_gid(): x for x in fig.axes[0].get_lines() if (x.get_gid() or "").startswith("share:")}
    assert sorted(lines) == ["share:cubic", "share:reno"]
    assert all(line.get_linestyle() == "None" for line in lines.values())
    cubic_x, reno_x = lines["share:cubic"].get_xdata(), lines["share:reno"].get_xdata()
    assert list(cubic_x) == [pytest.approx(-0.04)]  # only in the cubic category, left of it
    assert list(reno_x) == [pytest.approx(-0.04 + 0.08), pytest.approx(1.04)]


def test_plan_values_with_dollars_are_drawn_as_text(tmp_path):
    """Values of a grid axis reach tick labels, panel titles and legends: "$...$" in them stays text (an
    unknown command would make matplotlib fail)."""
    from ccfair.plots.output import figure_bytes
    from ccfair.sweep.driver import run_sweep
    from ccfair.sweep.plan import plan_from_dict

    labels = [r"cost $\notacommand{x}$", "$5 per Mbit"]
    base = {
        "duration": "1s",
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "flows": [{"cc": "reno", "rtt": "20ms"}, {"cc": "cubic", "rtt": "20ms"}],
    }
    plan = plan_from_dict(
        {"scenario": base, "grid": {"flows[0].label": labels, "link.rate": ["10Mbps", "20Mbps"]}}, "dollars"
    )
    run_sweep(plan, tmp_path / "results", jobs=1)
    res = ccfair.load(tmp_path / "results")
    figures = [
        heatmap(res, x="flows[0].label", y="link.rate"),
        heatmap(res, x="link.rate", y="flows[0].label"),
        relgoodput(res, x="link.rate", facet="flows[0].label"),
        share(res, x="flows[0].label"),
    ]
    for fig in figures:
        assert figure_bytes(fig, "png").startswith(b"\x89PNG")
        texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_text()]
        assert not any(t._preprocess_math(t.get_text())[1] for t in texts)  # nothing read as math
        shown = " ".join(t._preprocess_math(t.get_text())[0] for t in texts)
        assert all(label in shown for label in labels)

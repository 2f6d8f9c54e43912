"""What a reviewer checks in the sweep figures, asserted on the figures' data: nothing is averaged but
repetitions unless asked, few runs are drawn as runs, bounded quantities stay in their bounds, colour
scales follow the data, categories keep the plan's order, the fair-share line sits at the payload fraction,
and the new kinds (goodput against delay, CDFs, box plots, two result sets side by side) hold the numbers
of the runs. The sweep is the one of ``test_plots_sweep`` (run once per session)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ccfair
from ccfair.plots import (
    box,
    cdf,
    compare,
    compare_table,
    fness,
    heatmap,
    relgoodput,
    share,
    timeseries,
    tput_delay,
)
from ccfair.plots.data import Sweep
from ccfair.plots.style import CC_STYLES
from conftest import run_cli
from test_plots_sweep import _done, figs, results_dir  # noqa: F401  (session fixtures)

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

matplotlib.use("Agg")


def _panels(fig) -> list:
    return [ax for ax in fig.axes if ax.get_title()]


def _line(ax, gid: str):
    return next(line for line in ax.get_lines() if line.get_gid() == gid)


def test_every_axis_not_drawn_gets_panels_and_each_holds_its_own_runs(figs):  # noqa: F811
    """relgoodput over buffer on a buffer x cc x rate plan: one panel per (cc, rate), nothing pooled."""
    fig = relgoodput(figs, x="link.buffer", plan="figs")
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == [
        "flows[1].cc = cubic\nlink.rate = 10Mbps",
        "flows[1].cc = cubic\nlink.rate = 20Mbps",
        "flows[1].cc = reno\nlink.rate = 10Mbps",
        "flows[1].cc = reno\nlink.rate = 20Mbps",
    ]
    assert "mean over" not in fig._suptitle.get_text()
    classes = figs.classes[figs.classes["plan"] == "figs"]
    cells = [(c, r) for c in ("cubic", "reno") for r in ("10Mbps", "20Mbps")]
    for ax, (cc1, rate) in zip(panels, cells, strict=True):
        own = classes[
            (classes["flows1_cc"] == cc1) & (classes["link_rate"] == rate) & (classes["cc"] == "reno")
        ]
        expected = own.groupby("link_buffer_bdp")["relative_goodput"].mean()
        np.testing.assert_allclose(_line(ax, "relgoodput:reno").get_ydata(), expected.to_numpy())


def test_a_few_runs_are_drawn_as_dots_with_their_range(figs):  # noqa: F811
    fig = share(figs, x="link.buffer", cc="cubic", plan="figs")
    ax = _panels(fig)[0]  # flows[1].cc = cubic, link.rate = 10Mbps: 4 runs per buffer
    dots = next(c for c in ax.collections if c.get_gid() == "share:cubic:runs")
    runs = figs.classes[
        (figs.classes["plan"] == "figs")
        & (figs.classes["cc"] == "cubic")
        & (figs.classes["flows1_cc"] == "cubic")
        & (figs.classes["link_rate"] == "10Mbps")
    ]
    per_run = runs.groupby(["run_id", "link_buffer_bdp"])["share"].sum().reset_index()
    shown = sorted(map(tuple, np.round(dots.get_offsets(), 9)))
    assert shown == sorted(zip(per_run["link_buffer_bdp"].round(9), per_run["share"].round(9), strict=True))
    # The bars span the runs' range, not a t interval 12.7 times their spread.
    bars = next(c for c in ax.collections if c.get_gid() is None and hasattr(c, "get_segments"))
    for segment in bars.get_segments():
        x = segment[0][0]
        values = per_run.loc[np.isclose(per_run["link_buffer_bdp"], x), "share"]
        if values.nunique() > 1:
            assert sorted(segment[:, 1]) == pytest.approx([values.min(), values.max()])
    assert "min-max of the runs" in fig._suptitle.get_text()


def test_averaging_is_asked_for_and_named(figs):  # noqa: F811
    fig = relgoodput(figs, x="link.buffer", plan="figs", average=["link.rate", "flows[1].cc"])
    assert len(_panels(fig)) == 0 and len(fig.axes) == 1
    assert "mean over flows[1].cc (2 values), link.rate (2 values)" in fig._suptitle.get_text()
    with pytest.raises(ccfair.InputError) as err:
        relgoodput(figs, x="link.buffer", plan="figs", average=["link.buffer"])
    assert err.value.field == "--average"


def test_the_fair_share_line_sits_at_the_payload_fraction(figs):  # noqa: F811
    fig = relgoodput(figs, x="link.rate", plan="figs", average=["link.buffer"])
    fair = _line(fig.axes[0], "fair:1500")
    assert fair.get_ydata()[0] == pytest.approx(1448 / 1500)
    assert "1448/1500 = 0.965" in fair.get_label() and "headers" in fair.get_label()
    # A perfectly shared Reno-Reno link does sit there: the reno-reno cells at 2 BDP.
    classes = figs.classes[(figs.classes["flows1_cc"] == "reno") & (figs.classes["link_buffer"] == "2bdp")]
    assert classes["relative_goodput"].mean() == pytest.approx(1448 / 1500, abs=0.01)


def test_heatmap_colours_span_the_data_or_the_given_range(figs):  # noqa: F811
    done = _done(figs)
    fig = heatmap(figs, metric="utilization", x="link.buffer", y="flows[1].cc", plan="figs")
    means = done.groupby(["link_rate", "flows1_cc", "link_buffer"])["utilization"].mean()
    mesh = next(c for c in fig.axes[0].collections if c.get_gid() == "heatmap")
    assert mesh.norm.vmin == pytest.approx(means.min()) and mesh.norm.vmax == pytest.approx(means.max())
    assert means.min() > 0.9  # so a 0-to-1 scale would be one colour
    assert "colour scaled to data" in fig.axes[-1].get_ylabel()
    fixed = heatmap(figs, metric="utilization", x="link.buffer", y="flows[1].cc", plan="figs", vmin=0, vmax=1)
    mesh = next(c for c in fixed.axes[0].collections if c.get_gid() == "heatmap")
    assert (mesh.norm.vmin, mesh.norm.vmax) == (0, 1) and "fixed at 0 to 1" in fixed.axes[-1].get_ylabel()


def test_fness_heatmap_says_which_flow_is_which(figs):  # noqa: F811
    fig = heatmap(figs, metric="fness", x="link.buffer", y="link.rate", plan="figs")
    label = fig.axes[-1].get_ylabel()
    assert label.startswith("fness (+1: flow 1 takes all, -1: flow 0 (reno))")  # flow 1 is cubic or reno
    mesh = next(c for c in fig.axes[0].collections if c.get_gid() == "heatmap")
    assert mesh.norm.vmin == pytest.approx(-mesh.norm.vmax)  # centred at 0


def test_fness_keeps_cells_apart_and_refuses_nothing(figs, results_dir):  # noqa: F811
    fig = fness(figs, plan="figs")
    points = {
        c.get_gid(): c for ax in fig.axes for c in ax.collections if (c.get_gid() or "").startswith("fness")
    }
    assert len(points) == 12 * 2  # a panel per cell (3 buffers x 2 cc x 2 rates), a row per start order
    assert all(len(c.get_offsets()) == 2 for c in points.values())  # two repetitions each
    assert "pooled" not in fig._suptitle.get_text()
    pooled = fness(figs, plan="figs", average=["link.buffer"])
    assert "runs pooled over link.buffer (3 values)" in pooled._suptitle.get_text()  # a density, not a mean
    assert all(
        len(c.get_offsets()) == 3 * 2
        for ax in pooled.axes
        for c in ax.collections
        if (c.get_gid() or "").startswith("fness")
    )
    out = results_dir.parent / "fness-facet.png"
    proc = run_cli(
        "plot", str(results_dir), "--plan", "figs", "--kind", "fness", "--facet", "link.rate",
        "--average", "link.buffer", "-o", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_categories_keep_the_plans_order():
    runs = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(6)],
            "status": "done",
            "link_aqm": ["fifo", "codel", "fq_codel"] * 2,
            "link_rate": ["10Mbps"] * 3 + ["20Mbps"] * 3,
            "jain_index": np.linspace(0.5, 1.0, 6),
            "flow_count": 2,
        }
    )
    definition = {
        "axes": [
            {"paths": ["link.aqm"], "points": [["fq_codel"], ["fifo"], ["codel"]]},
            {"paths": ["link.rate"], "points": [["10Mbps"], ["20Mbps"]]},
        ]
    }
    sweep = Sweep(runs, None, None, ("link.aqm", "link.rate"), definition=definition)
    fig = heatmap(sweep, x="link.aqm", y="link.rate")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["fq_codel", "fifo", "codel"]


def test_intervals_of_counts_stop_at_zero():
    """Drops in six runs per cell, one of them a burst: the t interval reaches below zero, the one shown
    stops at 0 (in the figures' tables, the heatmap's cells and the report)."""
    cells = [(rate, buffer) for rate in ("10Mbps", "20Mbps") for buffer in ("1bdp", "2bdp")]
    runs = pd.DataFrame(
        [
            {"run_id": f"{rate}-{buffer}-{k}", "link_rate": rate, "link_buffer": buffer, "drops": drops}
            for rate, buffer in cells
            for k, drops in enumerate([0, 0, 0, 0, 0, 60])
        ]
    ).assign(status="done", flow_count=2)
    sweep = Sweep(runs, None, None, ("link.rate", "link.buffer"))
    t_low = 10.0 - stats.t.ppf(0.975, 5) * np.std([0, 0, 0, 0, 0, 60], ddof=1) / np.sqrt(6)
    assert t_low < -10
    table = compare_table(sweep, sweep, "drops")
    assert (table["n_a"] == 6).all() and table["mean_a"].to_numpy() == pytest.approx(10.0)
    assert (table["low_a"] == 0.0).all()
    fig = heatmap(sweep, metric="drops", x="link.buffer", y="link.rate")
    texts = [t.get_text() for t in fig.axes[0].texts if t.get_gid() == "cell"]
    high = 10.0 + (10.0 - t_low)
    assert texts == [f"10\n0 to {high:.0f}"] * 4  # 10 with its interval clipped at 0, not from -16


def test_tput_delay_points_are_the_run_means(figs):  # noqa: F811
    fig = tput_delay(figs, delay="queueing", plan="figs", average=["link.buffer", "link.rate"])
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == ["flows[1].cc = cubic", "flows[1].cc = reno"]
    flows = figs.flows[(figs.flows["plan"] == "figs") & (figs.flows["flows1_cc"] == "cubic")]
    own = flows[flows["cc"] == "cubic"]
    per_run = own.assign(q=own["rtt_mean_ms"] - own["rtt_ns"] / 1e6).groupby("run_id")
    point = _line(panels[0], "tput-delay:cubic")
    assert point.get_xdata()[0] == pytest.approx(per_run["q"].mean().mean())
    assert point.get_ydata()[0] == pytest.approx((per_run["goodput_bps"].mean() / 1e6).mean())
    assert panels[0].xaxis_inverted()  # less delay to the right
    assert "runs pooled over link.buffer (3 values), link.rate (2 values)" in fig._suptitle.get_text()


def test_tput_delay_of_one_run_has_a_point_per_flow():
    result = ccfair.run(
        {
            "duration": "2s",
            "link": {"rate": "10Mbps", "buffer": "1bdp"},
            "flows": [{"cc": "cubic", "rtt": "20ms", "count": 2}, {"cc": "reno", "rtt": "40ms"}],
        }
    )
    fig = tput_delay(result, by="flow")
    gids = sorted(line.get_gid() for line in fig.axes[0].get_lines() if line.get_gid())
    assert gids == ["tput-delay:flow 0 (cubic)", "tput-delay:flow 1 (cubic)", "tput-delay:flow 2 (reno)"]


def test_tput_delay_legend_numbers_flows_as_numbers_with_their_labels():
    # Twelve Cubic flows: flow 10 after flow 9, not after flow 1; a finite flow that completed before the
    # window has no delay sample there, so no point and no legend entry.
    result = ccfair.run(
        {
            "duration": "3s",
            "measure": {"start": "2s"},
            "link": {"rate": "10Mbps", "buffer": "1bdp"},
            "flows": [
                {"cc": "cubic", "rtt": "20ms", "count": 11, "label": "bulk"},
                {"cc": "cubic", "rtt": "20ms", "size": "10KB", "label": "mouse"},
            ],
        }
    )
    assert not result.flows.loc[11, "in_window"]
    fig = tput_delay(result, by="flow")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == [f"flow {i} (bulk)" for i in range(11)]


def test_cdf_and_box_hold_every_run(figs):  # noqa: F811
    done = _done(figs)
    fig = cdf(figs, metric="jain_index", by="link.buffer", plans=["figs"])
    for buffer in ("0.5bdp", "1bdp", "2bdp"):
        line = _line(fig.axes[0], f"cdf:link.buffer = {buffer}")
        expected = np.sort(done.loc[done["link_buffer"] == buffer, "jain_index"])
        np.testing.assert_allclose(line.get_xdata(), expected)
        assert line.get_ydata()[-1] == 1.0
    fig = box(figs, metric="utilization")  # several plans: one box per plan
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["broken (1 runs)", "figs (48 runs)"]
    dots = next(c for c in fig.axes[0].collections if c.get_gid() == "runs:figs (48 runs)")
    np.testing.assert_allclose(np.sort(dots.get_offsets()[:, 1]), np.sort(done["utilization"]))


def test_two_result_sets_are_aligned_by_their_cells(figs, results_dir, tmp_path):  # noqa: F811
    table = compare_table(figs, figs, "jain_index", "figs", "figs")
    assert len(table) == 12 and (table["difference"] == 0).all() and (table["n_a"] == 4).all()
    assert list(table.columns[:3]) == ["link.buffer", "flows[1].cc", "link.rate"]
    # B: the same plan, one buffer left out and its runs' Jain index changed by hand.
    done = _done(figs)
    b = done[done["link_buffer"] != "2bdp"].assign(jain_index=lambda f: f["jain_index"] - 0.1)
    changed = compare_table(figs, b, "jain_index", "figs")
    assert len(changed) == 12
    kept = changed[changed["link.buffer"] != "2bdp"]
    assert kept["difference"].to_numpy() == pytest.approx(-0.1)
    assert changed.loc[changed["link.buffer"] == "2bdp", "n_b"].eq(0).all()
    fig = compare(figs, figs, plan_a="figs", plan_b="figs")
    a_line, b_line = _line(fig.axes[0], "compare:a"), _line(fig.axes[0], "compare:b")
    np.testing.assert_allclose(a_line.get_xdata(), table["mean_a"])
    np.testing.assert_allclose(b_line.get_xdata(), table["mean_b"])
    other = pd.DataFrame(
        {"run_id": ["x", "y"], "status": "done", "link_mtu": [1500, 9000], "jain_index": 1.0}
    )
    with pytest.raises(ccfair.InputError, match="vary no axis in common"):
        compare_table(figs, other, "jain_index", "figs")
    out = tmp_path / "cmp.png"
    proc = run_cli(
        "compare-results", str(results_dir), str(results_dir), "--plan", "figs", "--plan-b", "figs",
        "-o", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "link.buffer" in proc.stdout and "+0" in proc.stdout and out.read_bytes().startswith(b"\x89PNG")


def test_figures_are_not_kept_by_pyplot(figs):  # noqa: F811
    import matplotlib.pyplot as plt

    plt.close("all")
    run_id = _done(figs)["run_id"].iloc[0]
    made = [
        heatmap(figs, plan="figs"),
        relgoodput(figs, plan="figs"),
        share(figs, plan="figs", cc="cubic"),
        fness(figs, plan="figs"),
        tput_delay(figs, plan="figs"),
        cdf(figs, plans=["figs"]),
        box(figs),
        compare(figs, figs, plan_a="figs", plan_b="figs"),
        timeseries(figs.result(run_id)),
    ]
    assert all(isinstance(f, matplotlib.figure.Figure) and f.axes for f in made)
    assert plt.get_fignums() == []  # a notebook shows a returned figure once, not again from pyplot


def test_registry_colours_are_not_used_for_queue_percentiles():
    from ccfair.plots.timeseries_plot import SOJOURN_STYLES

    registry = {s.color.lower() for s in CC_STYLES.values()}
    assert not {str(s["color"]).lower() for s in SOJOURN_STYLES.values()} & registry

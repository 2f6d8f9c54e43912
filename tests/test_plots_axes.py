"""Grid axes as figures read them (numbers with a unit, log scale when geometric, categories in the plan's
order otherwise) and the statistics drawn (:mod:`ccfair.analysis.stats`: the runs and their range for few
runs, a Student-t 95 % interval for more, clipped to a quantity's bounds; kernel densities, bounded for
fness)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from ccfair.analysis.stats import SMALL_N, aggregate, bounded_kde, gaussian_kde, summarize, t_quantile
from ccfair.errors import InputError
from ccfair.plots.axes import is_geometric, make_axis
from ccfair.plots.data import Sweep, facet_axes, pooled_note
from ccfair.plots.labels import path_label


def test_buffers_in_bdp_are_numbers_in_bdp_on_a_log_scale():
    axis = make_axis("link.buffer", ["2bdp", "0.5bdp", "1bdp", "2bdp", None])
    assert axis.values == ("0.5bdp", "1bdp", "2bdp")
    assert axis.positions == (0.5, 1.0, 2.0)
    assert axis.numeric and axis.log
    assert axis.label == "link.buffer: buffer (BDP)"
    assert axis.tick_labels() == ["0.5", "1", "2"]


def test_rates_durations_counts_and_packets():
    rates = make_axis("link.rate", ["100Mbps", "1Gbps", "10Mbps"])
    assert rates.positions == (10.0, 100.0, 1000.0) and rates.unit == "Mbit/s" and rates.log
    rtts = make_axis("flows[0].rtt", ["30ms", "10ms", "20ms"])
    assert rtts.positions == (10.0, 20.0, 30.0) and rtts.unit == "ms" and not rtts.log
    counts = make_axis("flows[0].count", [1, 4, 2, 8, 16])
    assert (
        counts.positions == (1.0, 2.0, 4.0, 8.0, 16.0)
        and counts.log
        and counts.label == "flows[0].count: flows"
    )
    packets = make_axis("link.buffer", ["100pkt", "50pkt"])
    assert packets.positions == (50.0, 100.0) and packets.unit == "packets"


def test_mixed_units_and_names_are_categories():
    mixed = make_axis("link.buffer", ["1bdp", "100pkt"])
    assert not mixed.numeric and mixed.values == ("100pkt", "1bdp") and mixed.positions == (0.0, 1.0)
    aqms = make_axis("link.aqm", ["fq_codel", "fifo", "pie"])
    assert aqms.values == ("fifo", "fq_codel", "pie") and not aqms.log and aqms.unit == ""


def test_categories_keep_the_plans_order():
    order = ["pie", "fq_codel", "codel", "fifo"]
    aqms = make_axis("link.aqm", ["fifo", "pie", "fq_codel", "fifo"], order=order)
    assert aqms.values == ("pie", "fq_codel", "fifo") and aqms.positions == (0.0, 1.0, 2.0)
    extra = make_axis("link.aqm", ["red", "fifo"], order=["fifo"])  # a value the plan lacks comes after
    assert extra.values == ("fifo", "red")


@pytest.mark.parametrize(
    ("values", "geometric"),
    [
        ([1, 2, 4, 8], True),
        ([10, 100, 1000], True),
        ([1, 2, 3], False),
        ([1, 2], False),
        ([0, 1, 2, 4], False),
    ],
)
def test_geometric_values(values, geometric):
    assert is_geometric(values) is geometric


def test_path_labels_name_the_parameter():
    assert path_label("link.rate", "Mbit/s") == "link.rate: link rate (Mbit/s)"
    assert path_label("flows[1].cc_params.beta") == "flows[1].cc_params.beta"


def test_t_quantiles_come_from_scipy_for_any_degrees_of_freedom():
    assert t_quantile(1) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile(4) == pytest.approx(2.776, abs=1e-3)
    assert t_quantile(40) == pytest.approx(2.021, abs=1e-3)  # not the normal 1.96 past a table's end
    with pytest.raises(ValueError):
        t_quantile(0)


def test_few_runs_are_their_range_not_a_t_interval():
    s = summarize([0.5, 0.9, float("nan")])
    assert (s.n, s.kind, s.mean, s.low, s.high) == (2, "range", pytest.approx(0.7), 0.5, 0.9)
    assert s.small and s.text(3) == "0.700 (2 runs: 0.500 to 0.900)"
    one = summarize([5.0])
    assert (one.kind, one.low, one.high, one.text(1)) == ("single", 5.0, 5.0, "5.0")
    assert summarize([]).kind == "none" and summarize([]).text() == "-"


def test_identical_runs_say_so_instead_of_a_rounding_error():
    s = summarize([0.1 + 0.2, 0.3, 0.3])  # differ in the last bit
    assert s.kind == "identical" and s.low == s.high == s.mean
    assert s.text(3) == "0.300 ±0 (3 identical runs)" and s.short_text() == "0.3\n±0"


def test_more_runs_get_a_t_interval_clipped_to_the_bounds():
    values = np.array([0.2, 0.4, 0.5, 0.6, 0.7, 0.9])
    s = summarize(values, (0.0, 1.0))
    half = t_quantile(5) * values.std(ddof=1) / math.sqrt(6)
    assert len(values) > SMALL_N and s.kind == "ci95"
    assert s.low == pytest.approx(0.55 - half) and s.high == pytest.approx(0.55 + half)
    assert s.ci95 == pytest.approx(half)
    assert s.text(3) == f"0.550 ± {half:.3f}" and not s.clipped
    near_one = summarize([1.0, 1.0, 0.99, 0.9, 1.0, 0.95, 1.0], (0.0, 1.0))
    assert near_one.high == 1.0 and near_one.mean + near_one.ci95 > 1.0 and near_one.clipped
    assert near_one.text(3).endswith("to 1.000)") and "95 % CI" in near_one.text(3)


def test_aggregate_groups():
    import pandas as pd

    frame = pd.DataFrame({"x": ["a", "a", "b"], "v": [1.0, 3.0, 5.0]})
    out = aggregate(frame, ["x"], "v").set_index("x")
    assert out.loc["a", "mean"] == 2.0 and out.loc["a", "n"] == 2 and out.loc["b", "n"] == 1
    assert out.loc["a", "kind"] == "range" and list(out.loc["a", "values"]) == [1.0, 3.0]


def test_kernel_density_integrates_to_one_and_needs_spread():
    grid = np.linspace(-5, 5, 2001)
    density = gaussian_kde([-0.5, 0.0, 0.2, 0.4], grid)
    assert density is not None
    assert np.trapezoid(density, grid) == pytest.approx(1.0, abs=1e-3)
    assert grid[np.argmax(density)] == pytest.approx(0.05, abs=0.2)
    assert gaussian_kde([0.3, 0.3], grid) is None and gaussian_kde([0.1], grid) is None


def test_fness_density_stays_in_its_bounds():
    grid = np.linspace(-1.0, 1.0, 4001)
    values = [0.85, 0.9, 0.95, 0.97, 1.0, 1.0]  # piled up at the bound
    bounded = bounded_kde(values, grid, -1.0, 1.0)
    plain = gaussian_kde(values, grid)
    assert bounded is not None and plain is not None
    assert np.trapezoid(bounded, grid) == pytest.approx(1.0, abs=2e-3)  # all the mass inside [-1, 1]
    assert np.trapezoid(plain, grid) < 0.8  # an unbounded density leaks past +1
    assert bounded[-1] >= bounded[-200]  # no dip at the bound where the values are
    assert bounded_kde([1.0, 1.0], grid, -1.0, 1.0) is None


def test_the_advise_front_colours_utilization_on_a_scale_that_ends_at_1():
    from ccfair.studies.advise import AdviceResult, Config
    from ccfair.studies.figures import front_figure

    def config(name: str, jain: float, delay_ms: float, utilization: float) -> Config:
        return Config(name, {"name": "fifo"}, "1bdp", jain, 0.5, delay_ms, utilization, 1)

    front = [config("a", 0.6, 18.0, 0.999864), config("b", 1.0, 22.0, 0.999988)]
    result = AdviceResult(front, front, front[1], None, 0.9, None, None)
    fig = front_figure(result, "t")
    (bar,) = [ax for ax in fig.axes if ax.get_ylabel() == "utilization (worst RTT)"]
    low, high = bar.get_ylim()
    # Full links differ in the fifth decimal; the scale neither leaves [0, 1] nor stretches that difference.
    assert high == 1.0 and low == pytest.approx(0.9)
    front = [config("c", 0.6, 18.0, 0.42), *front]
    fig = front_figure(AdviceResult(front, front, None, None, None, None, None), "t")
    (bar,) = [ax for ax in fig.axes if ax.get_ylabel() == "utilization (worst RTT)"]
    assert bar.get_ylim() == pytest.approx((0.42, 1.0))


def buffer_sizing_sweep() -> Sweep:
    """The shape of plans/buffer-sizing.toml's grid: 2 rates x 6 buffers x 3 queue disciplines x 4 Cubic
    counts x 2 Reno counts, one done run per cell."""
    grid = list(
        itertools.product(
            ["10Mbps", "100Mbps"],
            ["0.25bdp", "0.5bdp", "1bdp", "2bdp", "4bdp", "8bdp"],
            ["fifo", "codel", "fq_codel"],
            [1, 2, 4, 8],
            [1, 2],
        )
    )
    columns = ["link_rate", "link_buffer", "link_aqm", "flows0_count", "flows1_count"]
    runs = pd.DataFrame(grid, columns=columns).assign(
        status="done", run_id=[f"r{i}" for i in range(len(grid))]
    )
    axes = ("link.rate", "link.buffer", "link.aqm", "flows[0].count", "flows[1].count")
    return Sweep(runs, None, None, axes)


def test_more_combinations_than_panels_pool_the_last_axes_and_say_so():
    sweep = buffer_sizing_sweep()
    # The README's three figures: relgoodput by buffer per aqm, share by Reno count, tput-delay.
    facets = facet_axes(sweep, ["link.buffer"], "link.aqm")
    assert facets == ["link.aqm", "link.rate", "flows[0].count"]  # 24 panels; flows[1].count pooled
    assert pooled_note(sweep, ["link.buffer", *facets]) == "mean over flows[1].count (2 values)"
    facets = facet_axes(sweep, ["flows[1].count"])
    assert facets == ["link.rate", "link.buffer", "link.aqm"]  # 36 panels
    assert pooled_note(sweep, ["flows[1].count", *facets]) == "mean over flows[0].count (4 values)"
    facets = facet_axes(sweep, [])
    assert facets == ["link.rate", "link.buffer", "link.aqm"]
    assert pooled_note(sweep, facets, "runs pooled over") == (
        "runs pooled over flows[0].count (4 values), flows[1].count (2 values)"
    )
    # Facets asked for are kept, or refused when they alone make too many panels.
    assert facet_axes(sweep, [], ["flows[0].count", "link.buffer"])[:2] == ["flows[0].count", "link.buffer"]
    with pytest.raises(InputError) as info:
        facet_axes(sweep, [], ["link.buffer", "link.aqm", "flows[0].count"])
    assert (
        info.value.field == "--facet"
        and "link.buffer, link.aqm, flows[0].count makes 72" in info.value.message
    )

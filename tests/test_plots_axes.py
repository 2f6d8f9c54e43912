"""Grid axes as figures read them (numbers with a unit, log scale when geometric, categories otherwise) and
the statistics drawn (mean with a Student-t 95 % interval, kernel density)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ccfair.plots.axes import is_geometric, make_axis
from ccfair.plots.labels import path_label
from ccfair.plots.stats import aggregate, gaussian_kde, mean_ci, t_quantile_975


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


def test_mean_and_confidence_interval():
    m = mean_ci([1.0, 2.0, 3.0, float("nan")])
    assert m.n == 3 and m.mean == pytest.approx(2.0)
    assert m.ci95 == pytest.approx(4.303 * 1.0 / math.sqrt(3))
    one = mean_ci([5.0])
    assert one.mean == 5.0 and math.isnan(one.ci95)
    assert mean_ci([]).n == 0
    assert t_quantile_975(1) == pytest.approx(12.706) and t_quantile_975(100) == pytest.approx(1.96)


def test_aggregate_groups():
    import pandas as pd

    frame = pd.DataFrame({"x": ["a", "a", "b"], "v": [1.0, 3.0, 5.0]})
    out = aggregate(frame, ["x"], "v").set_index("x")
    assert out.loc["a", "mean"] == 2.0 and out.loc["a", "n"] == 2 and out.loc["b", "n"] == 1


def test_kernel_density_integrates_to_one_and_needs_spread():
    grid = np.linspace(-5, 5, 2001)
    density = gaussian_kde([-0.5, 0.0, 0.2, 0.4], grid)
    assert density is not None
    assert np.trapezoid(density, grid) == pytest.approx(1.0, abs=1e-3)
    assert grid[np.argmax(density)] == pytest.approx(0.05, abs=0.2)
    assert gaussian_kde([0.3, 0.3], grid) is None and gaussian_kde([0.1], grid) is None

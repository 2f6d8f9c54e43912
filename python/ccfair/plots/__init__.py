"""Figures of runs and sweeps, as matplotlib figures, and the self-contained HTML report.

One run::

    fig = ccfair.plots.timeseries(ccfair.load_run("runs/my"))

A sweep (``ccfair.load(dir)``, a results directory, or for the heatmap a ``runs`` DataFrame)::

    res = ccfair.load("results/")
    ccfair.plots.heatmap(res, metric="jain_index", x="link.buffer", y="flows[0].count", facet="link.aqm")
    ccfair.plots.relgoodput(res, x="link.buffer", facet="link.aqm")
    ccfair.plots.fness(res)
    ccfair.plots.share(res, x="flows[1].count", cc="cubic")
    ccfair.plots.save_figure(fig, "fig.pdf")   # .png, .svg or .pdf

Every figure uses the style registry of :mod:`ccfair.plots.style` (a colour and marker per CCA and AQM).
Modules: one per figure kind (``<kind>_plot``), :mod:`.data` (reading a sweep, resolving axes and metrics),
:mod:`.axes` (grid axes as numbers or categories, log scales), :mod:`.output` (files and data URIs),
:mod:`.html_report` and :mod:`.sweep_report` (``ccfair report``'s pages). The statistics they draw (means and
95 % CIs, kernel densities) come from :mod:`ccfair.analysis.stats`.
"""

from __future__ import annotations

from ccfair.plots.compare_plot import compare, compare_table
from ccfair.plots.distribution_plot import box, cdf
from ccfair.plots.fness_plot import fness
from ccfair.plots.heatmap_plot import heatmap
from ccfair.plots.output import save_figure
from ccfair.plots.relgoodput_plot import relgoodput
from ccfair.plots.share_plot import share
from ccfair.plots.timeseries_plot import timeseries
from ccfair.plots.tput_delay_plot import tput_delay

__all__ = [
    "box",
    "cdf",
    "compare",
    "compare_table",
    "fness",
    "heatmap",
    "relgoodput",
    "save_figure",
    "share",
    "timeseries",
    "tput_delay",
]

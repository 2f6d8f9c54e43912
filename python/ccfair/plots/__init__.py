"""Figures of runs, as matplotlib figures, and the self-contained HTML report.

One run::

    fig = ccfair.plots.timeseries(ccfair.load_run("runs/my"))
    ccfair.plots.save_figure(fig, "fig.pdf")   # .png, .svg or .pdf

Every figure uses the style registry of :mod:`ccfair.plots.style` (a colour and marker per CCA and AQM).
Modules: one per figure kind (``<kind>_plot``), :mod:`.axes` (grid axes as numbers or categories, log
scales), :mod:`.stats` (mean and 95 % CI, kernel density), :mod:`.output` (files and data URIs),
:mod:`.html_report` (``ccfair report``).
"""

from __future__ import annotations

from ccfair.plots.output import save_figure
from ccfair.plots.timeseries_plot import timeseries

__all__ = ["save_figure", "timeseries"]

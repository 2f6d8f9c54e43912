"""Figures that show themselves in a notebook: Jupyter (and VS Code's notebooks) draw a returned figure from
its rich representation, which a matplotlib figure made outside pyplot lacks until ``%matplotlib inline``
has registered one for every figure. :class:`ShownFigure` is a :class:`matplotlib.figure.Figure` with a PNG
representation of its own, drawn as :func:`ccfair.plots.output.figure_bytes` draws the report's figures, so
a cell ending in ``plots.timeseries(r)`` shows the image and not ``<Figure size 700x1175 with 7 Axes>``.
Everything else is the Figure's (``savefig``, ``axes``, ...); where ``%matplotlib inline`` registered its
own printer for figures, IPython uses that one, so a figure still shows once.

This module imports matplotlib: it is loaded when the first figure is made (:func:`.panels.new_figure`)."""

from __future__ import annotations

from matplotlib.figure import Figure

from ccfair.plots.output import SCREEN_DPI, figure_bytes


class ShownFigure(Figure):
    """A Figure that a notebook shows as a PNG (trimmed, at :data:`~ccfair.plots.output.SCREEN_DPI`)."""

    def _repr_png_(self) -> bytes:
        return figure_bytes(self, "png", SCREEN_DPI)

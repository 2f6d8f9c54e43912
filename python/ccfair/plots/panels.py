"""Facets: a grid of panels, one per value (combination) of the facet axes, or a single panel.

Figures are made as :class:`matplotlib.figure.Figure` objects, never through pyplot: a notebook shows a
returned figure once (pyplot would register it and show it a second time), and nothing accumulates in
pyplot's list of open figures. They show themselves in a notebook without ``%matplotlib inline``
(:mod:`.shown`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ccfair.plots.axes import value_text
from ccfair.plots.labels import plain
from ccfair.plots.style import value_style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_COLUMNS = 3


def new_figure(
    width_in: float, height_in: float, layout: Literal["constrained", "tight"] | None = "constrained"
) -> Figure:
    """An empty figure (constrained layout unless ``layout`` says otherwise), outside pyplot, that a
    notebook shows as an image (:class:`ccfair.plots.shown.ShownFigure`)."""
    from ccfair.plots.shown import ShownFigure  # matplotlib: only when a figure is drawn

    return ShownFigure(figsize=(width_in, height_in), layout=layout)


def panel_grid(n: int, panel_size_in: tuple[float, float], **kwargs: Any) -> tuple[Figure, list[Axes]]:
    """``n`` panels in rows of at most :data:`MAX_COLUMNS`; unused cells of the last row are removed.
    Panels that compare one quantity share their axes (``sharex=True``, ``sharey=True``): side by side,
    panels with their own ranges read alike where their values are far apart. Shared axes are labelled
    on the outer panels only: the bottom one of each column (a panel over a removed cell included) and the
    left one of each row (:func:`outer_labels` clears the others' labels once they are drawn)."""
    cols = min(n, MAX_COLUMNS)
    rows = -(-n // cols)
    width, height = panel_size_in
    fig = new_figure(width * cols + 1.2, height * rows + 0.8)
    grid = fig.subplots(rows, cols, squeeze=False, **kwargs)
    axes = [a for row in grid for a in row]
    for extra in axes[n:]:
        extra.remove()
    if kwargs.get("sharex"):
        for ax in axes[max(0, n - cols) : n]:  # nothing under them: they carry their column's ticks
            ax.xaxis.set_tick_params(which="both", labelbottom=True)
            ax.xaxis.offsetText.set_visible(True)
    return fig, axes[:n]


def _cell(ax: Axes) -> tuple[int, int]:
    spec = ax.get_subplotspec()
    assert spec is not None  # every panel of panel_grid is a grid cell
    return spec.rowspan.start, spec.colspan.start


def outer_labels(axes: list[Axes]) -> None:
    """On panels of shared axes, the axis labels of the outer panels only: no x label where a panel sits
    below in the same column, no y label where one sits to the left in the same row."""
    cells = [_cell(ax) for ax in axes]
    for ax, (row, col) in zip(axes, cells, strict=True):
        if any(c == col and r > row for r, c in cells):
            ax.set_xlabel("")
        if any(r == row and c < col for r, c in cells):
            ax.set_ylabel("")


def set_panel_title(ax: Axes, groups: tuple[tuple[tuple[str, Any], ...], ...]) -> None:
    """``path = value`` over a panel, one line per facet axis (a zipped axis: every path of its group on
    its line, ``flows[0].rtt = 10ms, flows[1].rtt = 40ms``); one CCA or AQM value in its registry colour."""
    if len(groups) == 1 and len(groups[0]) == 1:
        set_facet_title(ax, *groups[0][0])
    elif groups:
        lines = (", ".join(f"{p} = {value_text(v)}" for p, v in group) for group in groups)
        ax.set_title(plain("\n".join(lines)))


def set_facet_title(ax: Axes, path: str | None, value: Any) -> None:
    """``path = value`` over a panel, in the registry colour of a CCA or AQM value."""
    if path is None or value is None:
        return
    style = value_style(path, value)
    ax.set_title(plain(f"{path} = {value_text(value)}"))
    if style is not None:
        ax.title.set_color(style.color)


def figure_legend(fig: Figure, axes: list[Axes], title: str | None = None) -> None:
    """One legend for all panels, outside them on the right: every label once, first panel first."""
    seen: dict[str, Any] = {}
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        for handle, label in zip(handles, labels, strict=True):
            seen.setdefault(label, handle)
    if seen:
        fig.legend(list(seen.values()), list(seen.keys()), title=title, loc="outside right center")

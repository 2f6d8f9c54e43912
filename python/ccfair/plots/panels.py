"""Facets: a grid of panels, one per value (combination) of the facet axes, or a single panel.

Figures are made as :class:`matplotlib.figure.Figure` objects, never through pyplot: a notebook shows a
returned figure once (pyplot would register it and show it a second time), and nothing accumulates in
pyplot's list of open figures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ccfair.plots.axes import value_text
from ccfair.plots.labels import plain
from ccfair.plots.style import value_style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_COLUMNS = 3


def new_figure(width_in: float, height_in: float) -> Figure:
    """An empty figure with constrained layout, outside pyplot."""
    from matplotlib.figure import Figure  # only when a figure is drawn

    return Figure(figsize=(width_in, height_in), layout="constrained")


def panel_grid(n: int, panel_size_in: tuple[float, float], **kwargs: Any) -> tuple[Figure, list[Axes]]:
    """``n`` panels in rows of at most :data:`MAX_COLUMNS`; unused cells of the last row are removed."""
    cols = min(n, MAX_COLUMNS)
    rows = -(-n // cols)
    width, height = panel_size_in
    fig = new_figure(width * cols + 1.2, height * rows + 0.8)
    grid = fig.subplots(rows, cols, squeeze=False, **kwargs)
    axes = [a for row in grid for a in row]
    for extra in axes[n:]:
        extra.remove()
    return fig, axes[:n]


def set_panel_title(ax: Axes, values: tuple[tuple[str, Any], ...]) -> None:
    """``path = value`` over a panel, one line per facet axis; one CCA or AQM value in its registry
    colour."""
    if len(values) == 1:
        set_facet_title(ax, *values[0])
    elif values:
        ax.set_title(plain("\n".join(f"{p} = {value_text(v)}" for p, v in values)))


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

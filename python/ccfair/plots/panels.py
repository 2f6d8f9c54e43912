"""Facets: a grid of panels, one per value of the facet axis (or a single panel)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ccfair.plots.axes import value_text
from ccfair.plots.labels import plain
from ccfair.plots.style import value_style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_COLUMNS = 3


def panel_grid(n: int, panel_size_in: tuple[float, float], **kwargs: Any) -> tuple[Figure, list[Axes]]:
    """``n`` panels in rows of at most :data:`MAX_COLUMNS`; unused cells of the last row are removed."""
    import matplotlib.pyplot as plt

    cols = min(n, MAX_COLUMNS)
    rows = -(-n // cols)
    width, height = panel_size_in
    fig, grid = plt.subplots(
        rows,
        cols,
        figsize=(width * cols + 1.2, height * rows + 0.8),
        squeeze=False,
        layout="constrained",
        **kwargs,
    )
    axes = [a for row in grid for a in row]
    for extra in axes[n:]:
        extra.remove()
    return fig, axes[:n]


def set_facet_title(ax: Axes, path: str | None, value: Any) -> None:
    """``path = value`` over a panel, in the registry colour of a CCA or AQM value."""
    if path is None or value is None:
        return
    style = value_style(path, value)
    ax.set_title(plain(f"{path} = {value_text(value)}"))
    if style is not None:
        ax.title.set_color(style.color)

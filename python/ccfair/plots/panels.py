"""Facets: a grid of panels, one per value of the facet axis (or a single panel)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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


def facet_title(path: str | None, text: str) -> str:
    return f"{path} = {text}" if path else ""

"""Writing figures: PNG, SVG or PDF chosen by the file suffix, written atomically (a failed write leaves no
file); and as ``data:`` URIs for the self-contained HTML report."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ccfair.errors import ScenarioError
from ccfair.plots.style import paper_style

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = ("png", "svg", "pdf")


def figure_format(path: str | Path, option: str = "-o") -> str:
    """The format named by the suffix of ``path``; a ScenarioError on ``option`` for anything else."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        shown = f".{suffix}" if suffix else "no suffix"
        raise ScenarioError(option, f"{path}: {shown} is not a figure format; use .png, .svg or .pdf")
    return suffix


PAPER_DPI = 200  # PNG files
SCREEN_DPI = 110  # PNG in the HTML report


def figure_bytes(fig: Figure, fmt: str, dpi: int = PAPER_DPI) -> bytes:
    """The figure as ``fmt`` bytes, trimmed to its content, at ``dpi`` for PNG."""
    buffer = io.BytesIO()
    # No date or software version: the same figure gives the same bytes.
    metadata = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    with paper_style():
        fig.savefig(buffer, format=fmt, metadata=metadata, dpi=dpi)
    return buffer.getvalue()


def save_figure(fig: Figure, path: str | Path, option: str = "-o") -> Path:
    """Writes ``fig`` to ``path`` in the format its suffix names; returns the path."""
    target = Path(path)
    fmt = figure_format(target, option)
    if target.is_dir():
        raise ScenarioError(option, f"{target} is a directory; give a file name ending in .png, .svg or .pdf")
    if not target.parent.is_dir():
        raise ScenarioError(option, f"{target.parent} does not exist")
    data = figure_bytes(fig, fmt)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def data_uri(fig: Figure, fmt: str = "png", dpi: int = SCREEN_DPI) -> str:
    """The figure as a ``data:image/...;base64,`` URI."""
    mime = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}[fmt]
    return f"data:{mime};base64," + base64.b64encode(figure_bytes(fig, fmt, dpi)).decode("ascii")

"""Writing figures: PNG, SVG or PDF chosen by the file suffix, written atomically (a failed write leaves no
file); and as ``data:`` URIs for the self-contained HTML report.

Every figure carries ccfair's signature in its metadata (PNG ``Software``, SVG and PDF ``Creator``: the
word ``ccfair``, no version, so the same figure still gives the same bytes). An existing file is replaced
only if it carries the signature, i.e. only a figure ccfair wrote (see :mod:`ccfair.fsio`)."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ccfair import fsio
from ccfair.errors import InputError
from ccfair.plots.style import paper_style

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = ("png", "svg", "pdf")


def figure_format(path: str | Path, option: str = "-o") -> str:
    """The format named by the suffix of ``path``; an InputError on ``option`` for anything else."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        shown = f".{suffix}" if suffix else "no suffix"
        raise InputError(option, f"{path}: {shown} is not a figure format; use .png, .svg or .pdf")
    return suffix


SIGNATURE = "ccfair"
# How each format shows the signature; PDF keeps its metadata near the end of the file.
_SIGNATURES = (
    re.compile(rb"tEXtSoftware\x00ccfair"),
    re.compile(rb"<dc:creator>\s*<cc:Agent>\s*<dc:title>ccfair</dc:title>"),
    re.compile(rb"/Creator \(ccfair\)"),
)
MAX_RECOGNISED_BYTES = 256 * 2**20  # a larger file is no figure of ccfair's


def is_ccfair_figure(path: Path) -> bool:
    """Whether the file at ``path`` is a figure ccfair wrote (it carries the signature)."""
    try:
        if path.stat().st_size > MAX_RECOGNISED_BYTES:
            return False
        data = path.read_bytes()
    except OSError:
        return False
    return any(signature.search(data) for signature in _SIGNATURES)


def check_figure_path(path: str | Path, option: str = "-o") -> Path:
    """Checks, before drawing, that a figure may be written to ``path``: a figure suffix, an existing
    directory, and no file there that ccfair did not write. Returns the path resolved."""
    figure_format(path, option)
    return fsio.check_file(path, option, is_ccfair_figure, "figures")


PAPER_DPI = 200  # PNG files
SCREEN_DPI = 110  # PNG in the HTML report


def figure_bytes(fig: Figure, fmt: str, dpi: int = PAPER_DPI) -> bytes:
    """The figure as ``fmt`` bytes, trimmed to its content, at ``dpi`` for PNG."""
    buffer = io.BytesIO()
    # No date or software version: the same figure gives the same bytes.
    metadata = {
        "png": {"Software": SIGNATURE},
        "svg": {"Date": None, "Creator": SIGNATURE},
        "pdf": {"CreationDate": None, "Creator": SIGNATURE},
    }[fmt]
    with paper_style():
        fig.savefig(buffer, format=fmt, metadata=metadata, dpi=dpi)
    return buffer.getvalue()


def save_figure(fig: Figure, path: str | Path, option: str = "-o") -> Path:
    """Writes ``fig`` to ``path`` in the format its suffix names; returns the path. An existing file that
    is not a figure ccfair wrote is refused (an InputError on ``option``)."""
    fmt = figure_format(path, option)
    check_figure_path(path, option)
    data = figure_bytes(fig, fmt)
    fsio.write_file(path, data, option, is_ccfair_figure, "figures")
    return Path(path)


def data_uri(fig: Figure, fmt: str = "png", dpi: int = SCREEN_DPI) -> str:
    """The figure as a ``data:image/...;base64,`` URI."""
    mime = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}[fmt]
    return f"data:{mime};base64," + base64.b64encode(figure_bytes(fig, fmt, dpi)).decode("ascii")

"""The one style registry every figure uses: a colour and a marker per congestion control and per queue
discipline, the names of BBR's modes for the state band, and the paper-ready matplotlib settings.

Names that are not in the tables (a new algorithm, a typo in old data) still get a stable style: a colour
and marker picked from the fallback cycle by a hash of the name, so a figure never fails on a new name and
the same name always looks the same.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType


@dataclass(frozen=True)
class Style:
    """How one congestion control or queue discipline is drawn."""

    color: str
    marker: str


# Colour-blind-safe (Okabe & Ito 2008, Tol 2021) and distinct in greyscale by marker.
CC_STYLES: dict[str, Style] = {
    "reno": Style("#0072B2", "o"),
    "cubic": Style("#D55E00", "s"),
    "bbr": Style("#009E73", "^"),
    "bbr2": Style("#56B4E9", "v"),
    "bbr3": Style("#117733", "D"),
    "dctcp": Style("#CC79A7", "P"),
    "prague": Style("#E69F00", "X"),
}
AQM_STYLES: dict[str, Style] = {
    "fifo": Style("#4D4D4D", "o"),
    "red": Style("#CC3311", "s"),
    "codel": Style("#0077BB", "^"),
    "fq_codel": Style("#33BBEE", "v"),
    "pie": Style("#009988", "D"),
    "dualpi2": Style("#EE7733", "P"),
    "gsp": Style("#AA3377", "X"),
    "ppv": Style("#BBBBBB", "*"),
    "step": Style("#882255", "h"),
    "vdq_csaqm": Style("#44AA99", "d"),
}
CC_ALIASES: dict[str, str] = {"newreno": "reno", "bbr1": "bbr"}
FALLBACK_COLORS = ("#332288", "#88CCEE", "#44AA99", "#999933", "#DDCC77", "#661100", "#6699CC", "#AA4499")
FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")

# BBR's `enum bbr_mode` (crates/ccfair-cc/src/bbr/mod.rs), the values of the time series' cc_mode column.
BBR_MODE_NAMES: dict[int, str] = {0: "STARTUP", 1: "DRAIN", 2: "PROBE_BW", 3: "PROBE_RTT"}
BBR_MODE_COLORS: dict[int, str] = {0: "#E69F00", 1: "#56B4E9", 2: "#009E73", 3: "#CC79A7"}
BBR_CCS = ("bbr", "bbr2", "bbr3")

# Paper-ready defaults, applied only while a figure is drawn (a notebook's own settings are left alone).
RC_PARAMS: dict[RcKeyType, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "legend.frameon": False,
    "svg.fonttype": "none",
    "svg.hashsalt": "ccfair",  # stable element ids: the same figure gives the same SVG
    "pdf.fonttype": 42,
    "text.parse_math": True,  # so that the escapes of labels.plain always mean a literal "$"
}


def _fallback(name: str) -> Style:
    h = zlib.crc32(name.encode())
    return Style(
        FALLBACK_COLORS[h % len(FALLBACK_COLORS)], FALLBACK_MARKERS[(h // 7) % len(FALLBACK_MARKERS)]
    )


def cc_style(cc: str) -> Style:
    """The style of a congestion control (aliases map to their algorithm)."""
    name = CC_ALIASES.get(cc, cc)
    return CC_STYLES.get(name) or _fallback(name)


def aqm_style(aqm: str) -> Style:
    """The style of a queue discipline."""
    return AQM_STYLES.get(aqm) or _fallback(aqm)


def bbr_mode_name(mode: int) -> str:
    """``2`` -> ``"PROBE_BW"``; a mode not in the table is shown as its number."""
    return BBR_MODE_NAMES.get(mode, str(mode))


def bbr_mode_color(mode: int) -> str:
    return BBR_MODE_COLORS.get(mode) or FALLBACK_COLORS[mode % len(FALLBACK_COLORS)]


def is_bbr(cc: str) -> bool:
    return CC_ALIASES.get(cc, cc) in BBR_CCS


@contextmanager
def paper_style() -> Iterator[None]:
    """The figures' matplotlib settings, for the duration of the block."""
    import matplotlib as mpl  # only when a figure is drawn

    with mpl.rc_context(RC_PARAMS):
        yield


def shades(color: str, n: int) -> list[str]:
    """``n`` variants of ``color`` from darker to lighter (``[color]`` for one), for flows of one CCA."""
    if n <= 1:
        return [color]
    from matplotlib.colors import to_hex, to_rgb  # only when a figure is drawn

    base = to_rgb(color)
    out = []
    for i in range(n):
        t = -0.35 + 0.7 * i / (n - 1)  # < 0 mixes with black, > 0 with white
        target = 1.0 if t > 0 else 0.0
        r, g, b = (c + (target - c) * abs(t) for c in base)
        out.append(to_hex((r, g, b)))
    return out


def value_style(path: str | None, value: object) -> Style | None:
    """The registry style of a grid value when the path names a congestion control (``flows[1].cc``) or a
    queue discipline (``link.aqm``), so facets and ticks of those axes carry the same colours as lines."""
    if path is None or not isinstance(value, str):
        return None
    leaf = path.rsplit(".", 1)[-1]
    if leaf == "cc":
        return cc_style(value)
    if leaf == "aqm":
        return aqm_style(value)
    return None

"""A progress bar with an ETA for a terminal's stderr (no dependencies). Redraws at most ``max_rate_hz``
times per second; :meth:`ProgressBar.close` erases it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO


def format_clock(seconds: float) -> str:
    """``75.2`` -> ``"1:15"``, ``3725`` -> ``"1:02:05"``."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class ProgressBar:
    """Call with the fraction done (0..1). Draws ``label [#####.....]  45%  0:05 elapsed  ETA 0:06``."""

    def __init__(
        self,
        stream: TextIO,
        label: str = "",
        width: int = 30,
        max_rate_hz: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._label = label
        self._width = width
        self._min_interval = 1.0 / max_rate_hz
        self._clock = clock
        self._start = clock()
        self._last_draw: float | None = None
        self._drawn_len = 0
        self.draws = 0

    def __call__(self, fraction: float) -> None:
        now = self._clock()
        fraction = min(1.0, max(0.0, fraction))
        if self._last_draw is not None and now - self._last_draw < self._min_interval and fraction < 1.0:
            return
        self._last_draw = now
        elapsed = now - self._start
        filled = int(fraction * self._width)
        bar = "#" * filled + "." * (self._width - filled)
        eta = format_clock(elapsed / fraction * (1.0 - fraction)) if fraction > 0 else "?"
        prefix = f"{self._label} " if self._label else ""
        line = f"{prefix}[{bar}] {fraction * 100:3.0f}%  {format_clock(elapsed)} elapsed  ETA {eta}"
        pad = " " * max(0, self._drawn_len - len(line))
        self._stream.write("\r" + line + pad)
        self._stream.flush()
        self._drawn_len = len(line)
        self.draws += 1

    def close(self) -> None:
        """Erases the bar (if drawn) and leaves the cursor at the start of the line."""
        if self._drawn_len:
            self._stream.write("\r" + " " * self._drawn_len + "\r")
            self._stream.flush()
            self._drawn_len = 0

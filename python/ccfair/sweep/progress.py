"""Progress of a sweep on stderr: a rich bar (done / failed / total, elapsed, ETA) on a terminal, a plain
line every half minute otherwise (batch jobs, logs), nothing when quiet."""

from __future__ import annotations

import sys
import time
from typing import Protocol

from ccfair.progress import format_clock

LINE_INTERVAL_S = 30.0


class SweepDisplay(Protocol):
    def update(self, done: int, failed: int) -> None: ...

    def close(self) -> None: ...


class _Silent:
    def update(self, done: int, failed: int) -> None:
        pass

    def close(self) -> None:
        pass


class _Lines:
    """``sweep NAME: 120/200 (118 done, 2 failed), 1:05 elapsed, ETA 0:43`` at most every 30 s."""

    def __init__(self, label: str, total: int) -> None:
        self._label, self._total = label, total
        self._start = time.monotonic()
        self._last = self._start

    def update(self, done: int, failed: int) -> None:
        now = time.monotonic()
        finished = done + failed
        if now - self._last < LINE_INTERVAL_S and finished < self._total:
            return
        self._last = now
        elapsed = now - self._start
        eta = format_clock(elapsed / finished * (self._total - finished)) if finished else "?"
        print(
            f"{self._label}: {finished}/{self._total} ({done} done, {failed} failed), "
            f"{format_clock(elapsed)} elapsed, ETA {eta}",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        pass


class _Bar:
    def __init__(self, label: str, total: int) -> None:
        # rich only when a sweep shows its bar on a terminal
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[green]{task.fields[done]} done[/] [red]{task.fields[failed]} failed[/]"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._progress.add_task(label, total=total, done=0, failed=0)
        self._progress.start()

    def update(self, done: int, failed: int) -> None:
        self._progress.update(self._task, completed=done + failed, done=done, failed=failed)

    def close(self) -> None:
        self._progress.stop()


def sweep_display(label: str, total: int, quiet: bool) -> SweepDisplay:
    if quiet or total == 0:
        return _Silent()
    if sys.stderr.isatty():
        return _Bar(label, total)
    return _Lines(label, total)

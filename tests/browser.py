"""Pages opened in headless Chromium: Debian's, driven by Playwright, which must not download a browser of
its own (`make browser` installs Chromium as root). Without it the browser tests skip with the reason.
Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

ARTIFACTS = REPO / "test-artifacts"


@dataclass
class OpenedPage:
    page: Any
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@contextmanager
def open_page(path: Path) -> Iterator[OpenedPage]:
    """``path`` loaded in a fresh headless Chromium, with its console errors, page errors and every URL it
    requested recorded."""
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (`make test` installs it as root: apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory(prefix="ccfair-chromium-") as profile:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            page = context.new_page()
            opened = OpenedPage(page)
            page.on("console", lambda m: opened.console_errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: opened.page_errors.append(str(e)))
            page.on("request", lambda r: opened.requests.append(r.url))
            page.goto(path.resolve().as_uri(), wait_until="load")
            yield opened
        finally:
            context.close()


def images(page: Any) -> list[dict[str, Any]]:
    """Every ``<img>``: whether it loaded (complete with a natural width) and its size."""
    return page.evaluate(
        "Array.from(document.images).map(i => ({id: i.closest('figure') ? i.closest('figure').id : '', "
        "loaded: i.complete && i.naturalWidth > 0, width: i.naturalWidth, src: i.src.slice(0, 22)}))"
    )


def table_rows(page: Any, table_id: str) -> list[list[str]]:
    """The body rows of a table, as cell texts."""
    return page.evaluate(
        "id => Array.from(document.getElementById(id).tBodies[0].rows).map(r => Array.from(r.cells).map(c => "
        "c.textContent.trim()))",
        table_id,
    )


def screenshot(page: Any, name: str) -> Path:
    """A full-page screenshot under ``test-artifacts/``; prints where."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path

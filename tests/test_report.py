"""``ccfair report``, opened in headless Chromium (Debian's, driven by Playwright): every figure image
loads, the tables hold the expected rows, no console errors, nothing fetched from outside the file; a
screenshot of each page is saved under ``test-artifacts/``. Without Chromium the browser tests skip with the
reason (``make test`` installs it when run as root)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import ccfair
from conftest import REPO, run_cli

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


# ------------------------------------------------------------------------------------------------ one run

SCENARIO = {
    "duration": "3s",
    "link": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [{"cc": "cubic", "rtt": "20ms", "count": 2}, {"cc": "reno", "rtt": "40ms"}],
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ccfair.RunResult]:
    tmp = tmp_path_factory.mktemp("report")
    result = ccfair.run(SCENARIO, seed=2)
    run_dir = result.save(tmp / "run")
    out = tmp / "run.html"
    proc = run_cli("report", str(run_dir), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stderr
    return out, result


def test_the_page_is_self_contained(report):
    out, _ = report
    page = out.read_text()
    assert page.count('src="data:image/png;base64,') == 1
    for outside in ("http://", "https://", "<script", "<link"):
        assert outside not in page.replace("http://www.w3.org", "")


def test_report_opens_in_chromium_with_its_figure_and_tables(report):
    out, result = report
    with open_page(out) as opened:
        shown = images(opened.page)
        assert [i["id"] for i in shown] == ["timeseries"]
        assert all(i["loaded"] and i["width"] > 300 for i in shown), shown
        flows = table_rows(opened.page, "flows")
        assert [r[0] for r in flows] == [str(f) for f in result.flows["flow_id"]]
        assert [r[2] for r in flows] == list(result.flows["cc"])
        classes = table_rows(opened.page, "classes")
        assert sorted(r[0] for r in classes) == sorted(result.classes["cc"])
        summary = dict((r[0], r[1]) for r in table_rows(opened.page, "summary"))
        assert summary["jain index"] == f"{result.summary['jain_index']:.3f}"
        assert opened.console_errors == [] and opened.page_errors == []
        assert all(u.startswith(("file:", "data:")) for u in opened.requests), opened.requests
        screenshot(opened.page, "report-run.png")

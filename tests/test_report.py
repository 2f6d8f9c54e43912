"""``ccfair report``, opened in headless Chromium (Debian's, driven by Playwright): every figure image
loads, the tables hold the expected rows, no console errors, nothing fetched from outside the file; a
screenshot of each page is saved under ``test-artifacts/``. Without Chromium the browser tests skip with the
reason (``make test`` installs it when run as root)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ccfair
from browser import images, open_page, screenshot, table_rows
from conftest import run_cli
from test_plots_sweep import figs, results_dir  # noqa: F401  (session fixtures: the sweep is run once)

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


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
    for outside in ("http://", "https://", "<script src", "<link", "fetch(", "XMLHttpRequest", "import("):
        assert outside not in page.replace("http://www.w3.org", "")
    assert page.count("<script>") == 1  # the inline table sorter, nothing loaded


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


# -------------------------------------------------------------------------------------- a results directory

FIGS_FIGURES = [
    "heatmap-jain_index-figs",
    "heatmap-utilization-figs",
    "relgoodput-0-figs",
    "share-0-figs",
    "relgoodput-1-figs",
    "share-1-figs",
    "relgoodput-2-figs",
    "share-2-figs",
    "tput-delay-figs",
    "box-jain_index-figs",
    "fness-figs",
    "timeseries-figs",
]


@pytest.fixture(scope="module")
def sweep_report(results_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    out = tmp_path_factory.mktemp("report") / "results.html"
    proc = run_cli("report", str(results_dir), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    print(proc.stderr.strip())
    return out


def test_sweep_report_opens_in_chromium_with_every_figure_and_table(sweep_report, figs, results_dir):  # noqa: F811
    with open_page(sweep_report) as opened:
        shown = images(opened.page)
        assert [i["id"] for i in shown] == [
            "tput-delay-broken",
            "box-jain_index-broken",
            "fness-broken",
            "timeseries-broken",
            *FIGS_FIGURES,
        ]  # plans by name
        assert all(i["loaded"] and i["width"] > 300 and i["src"].startswith("data:image/png") for i in shown)
        cells = table_rows(opened.page, "cells-figs")
        assert len(cells) == 12
        headers = opened.page.evaluate(
            "Array.from(document.querySelectorAll('#cells-figs th')).map(h => h.textContent)"
        )
        assert headers[:6] == ["cell", "link.buffer", "flows[1].cc", "link.rate", "done", "failed"]
        assert {(r[4], r[5]) for r in cells} == {("4", "0")}
        jain = headers.index("jain")
        runs = figs.runs[figs.runs["plan"] == "figs"]
        first = runs[runs["cell"] == 0]["jain_index"]
        assert cells[0][jain].split(" ")[0] == f"{first.mean():.3f}"
        # Four runs per cell: their range, or "±0" when all four agree, never a t interval.
        assert all((" runs: " in r[jain] or "identical runs" in r[jain]) for r in cells), cells
        shares = [h for h in headers if h.startswith("share ")]
        assert shares == ["share cubic", "share reno"]
        # Nothing failed in this plan: no failed-runs section at all.
        assert opened.page.evaluate("document.getElementById('failures-figs')") is None
        title = opened.page.title()
        assert title == f"ccfair results: {results_dir.name}"
        broken = table_rows(opened.page, "cells-broken")
        assert [(r[0], r[2], r[3]) for r in broken] == [("0", "1", "0"), ("1", "0", "1")]
        (failed,) = table_rows(opened.page, "failed-broken")
        assert failed[3] == "flows[0].rtt = 0ms" and "rtt" in failed[5]
        facts = opened.page.evaluate(
            "Array.from(document.querySelectorAll('#plan-figs dt')).map(d => [d.textContent, "
            "d.nextElementSibling.textContent])"
        )
        facts = dict(facts)
        assert facts["axis link.buffer"] == "0.5bdp, 1bdp, 2bdp"
        assert facts["runs"] == "48 planned: 48 done, 0 failed, 0 not run"
        assert facts["ccfair version"] == ccfair.__version__
        assert opened.console_errors == [] and opened.page_errors == []
        assert all(u.startswith(("file:", "data:")) for u in opened.requests)
        screenshot(opened.page, "report-sweep.png")


def test_report_progress_reaches_the_end(results_dir):  # noqa: F811
    from ccfair.studies.report import build_report

    seen: list[float] = []
    page = build_report(ccfair.load(results_dir), "results", "broken", seen.append)
    assert seen == [0.25, 0.5, 0.75, 1.0]  # goodput against delay, box, fness, the example time series
    assert page.count("data:image/png;base64,") == 4


def _first_number(text: str) -> float:
    return float(text.split(" ")[0])


def test_clicking_a_column_header_sorts_the_table(sweep_report):
    with open_page(sweep_report) as opened:
        page = opened.page
        headers = page.evaluate(
            "Array.from(document.querySelectorAll('#cells-figs th')).map(h => h.textContent)"
        )
        jain = headers.index("jain")
        before = table_rows(page, "cells-figs")
        assert [r[0] for r in before] == [str(i) for i in range(12)]  # plan order to start with
        header = page.locator("#cells-figs th").nth(jain)
        header.click()
        rows = table_rows(page, "cells-figs")
        values = [_first_number(r[jain]) for r in rows]
        assert values == sorted(values) and values != [_first_number(r[jain]) for r in before]
        assert header.get_attribute("aria-sort") == "ascending"
        header.click()
        values = [_first_number(r[jain]) for r in table_rows(page, "cells-figs")]
        assert values == sorted(values, reverse=True)
        assert header.get_attribute("aria-sort") == "descending"
        # A text column sorts as text, numbers within it by value ("0.5bdp" < "1bdp" < "2bdp").
        page.locator("#cells-figs th").nth(headers.index("link.buffer")).click()
        buffers = [r[headers.index("link.buffer")] for r in table_rows(page, "cells-figs")]
        assert buffers == sorted(buffers, key=lambda b: float(b.removesuffix("bdp")))
        # Sorting moves rows whole: each row still has its own cell's coordinates.
        assert sorted(map(tuple, table_rows(page, "cells-figs"))) == sorted(map(tuple, before))
        assert opened.console_errors == [] and opened.page_errors == []
        screenshot(page, "report-sorted.png")

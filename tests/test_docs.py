"""The documentation site (docs/, built by MkDocs with the Material theme, `make docs-site`):

- it builds in strict mode (a broken link or anchor, or a page left out of the navigation, fails);
- its generated sections (scenario keys, command line, algorithms, scorecards, output columns) are what the
  code gives today (`make docs` rewrites them);
- every runnable block of every page runs as written (tests/docs_runner.py), and together the README's and
  the pages' blocks exercise every subcommand a user starts with and every figure kind;
- the built site opens in headless Chromium (Debian's, driven by Playwright): the home page and the scenario
  reference render, nothing is fetched from outside the site, and the search finds the host presets.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browser import open_page, screenshot
from ccfair.devtools import docs
from conftest import REPO
from docs_runner import blocks, run_page, runnable, workdir

DOCS = REPO / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
RUNNABLE = [p for p in PAGES if runnable((DOCS / p).read_text())]


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("mkdocs is not installed (the dev extra of pyproject.toml: make setup-dev)")
    out = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # the theme's notice about MkDocs 2.0
    )
    assert done.returncode == 0, done.stderr
    print(f"mkdocs build --strict: {time.monotonic() - started:.1f} s, {len(PAGES)} pages")
    return out


@pytest.mark.slow
def test_the_site_builds_in_strict_mode(site):
    for page in PAGES:
        assert (site / page.replace(".md", ".html")).is_file(), page
    assert (site / "search" / "search_index.js").is_file(), "the offline plugin's search index"


def test_the_generated_sections_are_current():
    stale = docs.stale_pages()
    assert not stale, f"stale: {', '.join(str(p) for p in stale)}; run `make docs`"


def test_every_code_block_says_what_it_is():
    """A block is runnable (shell, python), shown (console, text, toml, ...) or a file: never unlabelled, so
    that whether an example runs is a choice made when it is written."""
    for page in [*PAGES, "../README.md"]:
        for block in blocks((DOCS / page).read_text()):
            assert block.lang, f"{page}: the code block at line {block.start} has no language"


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE)
def test_every_runnable_block_runs(page, tmp_path):
    run = run_page((DOCS / page).read_text(), workdir(tmp_path))
    assert not run.failures, "\n\n".join(run.failures)
    assert run.ran or run.skipped


def test_the_runnable_blocks_cover_the_commands_a_user_starts_with():
    texts = [(REPO / "README.md").read_text()] + [(DOCS / p).read_text() for p in PAGES]
    commands = [c for t in texts for c in runnable(t)]
    run = [c.args for c in commands if not c.skipped and c.args[0] == "ccfair"]
    firsts = {args[1] for args in run}
    assert {"run", "init", "list", "bench", "sweep", "status", "query", "export", "plot", "report"} <= firsts
    assert {"reproduce", "advise", "harm", "validate", "compare-results"} <= firsts
    kinds = {args[args.index("--kind") + 1] for args in run if args[1] == "plot" and "--kind" in args}
    assert kinds == {"timeseries", "heatmap", "relgoodput", "fness", "share", "tput-delay", "cdf", "box"}
    assert any("doctor" in c.line for c in commands if c.skipped)
    # Each tutorial is something a reader runs.
    for page in PAGES:
        if page.startswith("tutorials/") and not page.endswith("index.md"):
            assert page in RUNNABLE, f"{page} has no runnable block"


def test_the_figures_are_made_from_the_plans_the_pages_show():
    """The first-sweep tutorial's heatmap (docs/assets, `make docs-figures`) is made from the plan the
    tutorial writes, and the figures the pages show exist."""
    page = blocks((DOCS / "tutorials/first-sweep.md").read_text())
    tutorial = next(b for b in page if b.title == "my-sweep.toml")
    assert "\n".join(tutorial.lines) + "\n" == (DOCS / "assets/first-sweep.toml").read_text()
    for figure in ("bbr-vs-cubic-buffers.png", "first-sweep-heatmap.png"):
        assert (DOCS / "assets" / figure).stat().st_size > 10_000, figure


@pytest.mark.slow
def test_the_site_opens_in_chromium_and_its_search_works(site):
    with open_page(site / "index.html") as opened:
        page = opened.page
        assert "ccfair" in page.title()
        assert page.locator("nav.md-tabs").count() == 1, "the section tabs"
        assert page.locator("article h1").first.inner_text().strip()
        screenshot(page, "docs-home.png")
        # Search, as a reader types it (the offline plugin's index and the vendored worker shim work from the
        # file system): the scenario reference's section on the host presets comes first.
        page.locator("input.md-search__input").click()
        page.keyboard.type("host presets", delay=20)
        page.wait_for_selector(".md-search-result__item", timeout=15_000)
        found = page.locator(".md-search-result__item a").evaluate_all("els => els.map(e => e.href)")
        assert "reference/scenario.html" in found[0], found
        assert any("#the-host-presets" in href for href in found), found
        screenshot(page, "docs-search.png")
        outside = [u for u in opened.requests if not u.startswith(("file://", "data:", "blob:"))]
        assert not outside, f"fetched from outside the site: {outside}"
        assert not opened.page_errors, opened.page_errors
    with open_page(site / "reference" / "scenario.html") as opened:
        page = opened.page
        keys = page.locator("article table tbody tr td:first-child code").all_inner_texts()
        assert {"link.rate", "flows[].cc", "host.preset"} <= set(keys)
        assert page.locator("article table").first.is_visible()
        screenshot(opened.page, "docs-scenario-reference.png")
        assert not opened.page_errors, opened.page_errors

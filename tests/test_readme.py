"""The README is a short front page whose every `ccfair` command runs as written on what ships.

Its runnable blocks (```` ```shell ````) run in order in a fresh directory with copies of the shipped
scenarios and plans, and its output blocks must match a fresh run (see tests/docs_runner.py, which the
documentation site's pages share: tests/test_docs.py). Each shipped plan is checked whole by a dry run.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from docs_runner import blocks, run_page, runnable, workdir

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

README = REPO / "README.md"
# The front page stays a front page: the facts live in docs/.
MAX_LINES = 300


def test_the_readme_is_a_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_LINES, f"README.md has {len(text.splitlines())} lines"
    # The two commands a checkout is set up and checked with.
    shell = "\n".join(line for b in blocks(text) if b.lang in ("shell", "console") for line in b.lines)
    assert "make demo" in shell and "make test" in shell
    assert any(b.is_output for b in blocks(text)), "the first experiment shows its output"


def test_every_readme_command_runs_on_what_ships(tmp_path):
    text = README.read_text()
    assert len([c for c in runnable(text) if not c.skipped]) >= 2
    run = run_page(text, workdir(tmp_path))
    assert not run.failures, "\n\n".join(run.failures)


@pytest.mark.parametrize("plan", sorted((REPO / "plans").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_plans_are_valid_as_shipped(plan):
    result = subprocess.run(
        [sys.executable, "-m", "ccfair", "sweep", str(plan), "--dry-run", "--out", "unused"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=plan.parent,
    )
    assert result.returncode == 0, result.stderr
    assert "to run" in result.stdout

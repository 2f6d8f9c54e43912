"""Bad requests to ``ccfair plot`` and ``ccfair report`` on saved runs: exit code 2, ``error: <field>:
<message>`` naming what is missing and what exists, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

import ccfair
from conftest import run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

SCENARIO = {
    "duration": "2s",
    "link": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [{"cc": "reno", "rtt": "20ms"}],
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ccfair.run(SCENARIO, seed=1).save(tmp_path_factory.mktemp("run") / "run")


def _fails(tmp_path: Path, *args: str) -> str:
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []  # nothing half-written
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ")
    return lines[-1]


def test_missing_directory(tmp_path):
    line = _fails(
        tmp_path, "plot", str(tmp_path / "nope"), "--kind", "timeseries", "-o", str(tmp_path / "a.png")
    )
    assert line == f"error: DIR: {tmp_path / 'nope'} does not exist"


def test_directory_that_is_neither_a_run_nor_results(tmp_path):
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "notes.txt").write_text("x")
    proc = run_cli("report", str(odd), "-o", str(tmp_path / "r.html"))
    assert proc.returncode == 2
    assert "neither a saved run (no summary.json) nor a results directory (no catalog.duckdb)" in proc.stderr
    assert "it holds: notes.txt" in proc.stderr
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("kind", ["heatmap", "relgoodput", "fness", "share", "cdf", "box"])
def test_sweep_figures_need_a_results_directory(run_dir, tmp_path, kind):
    line = _fails(tmp_path, "plot", str(run_dir), "--kind", kind, "-o", str(tmp_path / "a.png"))
    assert line.startswith(f"error: --kind: {kind} needs a results directory")
    assert line.endswith("which makes: timeseries, tput-delay")


def test_unknown_figure_format(run_dir, tmp_path):
    line = _fails(tmp_path, "plot", str(run_dir), "--kind", "timeseries", "-o", str(tmp_path / "a.jpg"))
    assert "error: -o:" in line and ".jpg is not a figure format; use .png, .svg or .pdf" in line


def test_output_in_a_missing_directory(run_dir, tmp_path):
    line = _fails(
        tmp_path, "plot", str(run_dir), "--kind", "timeseries", "-o", str(tmp_path / "no" / "a.png")
    )
    assert line == f"error: -o: {tmp_path / 'no'} does not exist"


def test_option_that_does_not_apply_to_the_kind(run_dir, tmp_path):
    line = _fails(
        tmp_path,
        "plot",
        str(run_dir),
        "--kind",
        "timeseries",
        "--metric",
        "jain_index",
        "-o",
        str(tmp_path / "a.png"),
    )
    assert line == "error: --metric: does not apply to --kind timeseries (it takes --run, --plan)"


def test_unknown_kind_is_a_usage_error(run_dir, tmp_path):
    proc = run_cli("plot", str(run_dir), "--kind", "pie")
    assert proc.returncode == 2
    assert "invalid choice: 'pie'" in proc.stderr and "timeseries" in proc.stderr


def test_report_must_be_html(run_dir, tmp_path):
    line = _fails(tmp_path, "report", str(run_dir), "-o", str(tmp_path / "r.pdf"))
    assert line.startswith("error: -o:") and "give a name ending in .html" in line


def test_plan_of_a_single_run(run_dir, tmp_path):
    line = _fails(tmp_path, "report", str(run_dir), "--plan", "x", "-o", str(tmp_path / "r.html"))
    assert line == f"error: --plan: {run_dir} is a single saved run, not a results directory"

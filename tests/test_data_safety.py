"""Output never destroys what ccfair did not write: every writer (``run --out``, ``sweep --out``, ``export
--to``, ``plot -o``, ``report -o``) refuses a target holding someone else's data with exit code 2, naming the
option and what is there, and leaves every byte of it as it was; it replaces its own output; and what a
killed write leaves behind is cleaned up by the next write."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

import ccfair
from ccfair import fsio, owner
from ccfair.cli import main
from ccfair.result import RUN_FILES
from ccfair.store.layout import RESULTS_KIND
from ccfair.store.writer import StoreWriter
from conftest import SMALL_TOML, run_cli, small
from test_sweep_support import write_plan

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (hidden ones included): files by SHA-256 of their bytes, directories as
    ``dir``, symbolic links by their target."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                out[key] = "-> " + os.readlink(path)
            elif path.is_dir():
                out[key] = "dir"
            else:
                out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def refused(result: subprocess.CompletedProcess[str], option: str, *words: str) -> str:
    """The one error line of a refusal with exit code 2 on ``option`` that mentions ``words``."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    line = result.stderr.strip()
    assert line.startswith(f"error: {option}: "), line
    for word in words:
        assert word in line, line
    return line


@pytest.fixture(scope="module")
def saved_run() -> ccfair.RunResult:
    return ccfair.run(small(duration="2s"), seed=1)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user's directory: a scenario file, a thesis, and a subdirectory with notes."""
    (tmp_path / "s.toml").write_text(SMALL_TOML.replace('duration = "10s"', 'duration = "2s"'))
    (tmp_path / "thesis").mkdir()
    (tmp_path / "thesis" / "thesis.tex").write_text("\\documentclass{book}\n% years of work\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "data.csv").write_text("x,y\n1,2\n")
    return tmp_path


# ------------------------------------------------------------------------------------------- run --out


def test_out_dot_is_refused_and_the_scenario_file_stays(home):
    before = tree(home)
    line = refused(cli("run", "s.toml", "--out", ".", "--quiet", cwd=home), "--out", "current directory")
    assert line == "error: --out: . is the current directory; give a new directory's name"
    assert tree(home) == before


def test_out_dir_holding_a_thesis_is_refused(home):
    before = tree(home)
    line = refused(cli("run", "s.toml", "--out", "thesis", "--quiet", cwd=home), "--out", "thesis.tex")
    assert "is not a saved run" in line
    assert tree(home) == before


def test_out_path_with_dotdot_is_resolved_before_anything(home):
    before = tree(home)
    line = refused(
        cli("run", "s.toml", "--out", "a/b/../../a", "--quiet", cwd=home), "--out", "data.csv", "b/"
    )
    assert "a/b/../../a exists and is not a saved run" in line
    assert tree(home) == before  # no hidden .a.old-* or .a.tmp-* left either


def test_out_dotdot_is_refused(home):
    work = home / "thesis"
    before = tree(home)
    refused(
        cli("run", "../s.toml", "--out", "..", "--quiet", cwd=work), "--out", "contains the current directory"
    )
    assert tree(home) == before


def test_out_under_proc_is_refused(home):
    before = tree(home)
    refused(
        cli("run", "s.toml", "--out", "/proc/x", "--quiet", cwd=home), "--out", "/proc", "pseudo-filesystem"
    )
    assert tree(home) == before


def test_out_through_a_symbolic_link_to_a_users_directory_is_refused(home):
    (home / "link").symlink_to(home / "thesis")
    before = tree(home)
    refused(cli("run", "s.toml", "--out", "link", "--quiet", cwd=home), "--out", "thesis.tex")
    assert tree(home) == before


def test_saving_over_a_saved_run_replaces_it(home, saved_run):
    first = saved_run.save(home / "runs" / "one")
    assert {p.name for p in first.iterdir()} == RUN_FILES | {fsio.MARKER_FILE}
    assert fsio.read_marker(first)["kind"] == "run"
    (first / "stale.txt").write_text("from the earlier run")  # inside ccfair's own directory
    result = cli("run", "s.toml", "--seed", "9", "--out", "runs/one", "--quiet", cwd=home)
    assert result.returncode == 0, result.stderr
    assert ccfair.load_run(first).seed == 9
    assert not (first / "stale.txt").exists()
    assert sorted(p.name for p in first.parent.iterdir()) == ["one"]  # no temporary left beside it


def test_a_run_saved_before_markers_is_still_replaced(tmp_path, saved_run):
    out = saved_run.save(tmp_path / "old")
    (out / fsio.MARKER_FILE).unlink()  # as written by an earlier ccfair
    saved_run.save(out)
    assert fsio.read_marker(out)["kind"] == "run"
    (out / fsio.MARKER_FILE).unlink()
    (out / "notes.md").write_text("mine")  # no longer exactly a run's files: someone else's now
    with pytest.raises(ccfair.InputError, match=r"notes\.md"):
        saved_run.save(out)
    assert (out / "notes.md").read_text() == "mine"


def test_an_empty_directory_is_used(tmp_path, saved_run):
    (tmp_path / "empty").mkdir()
    saved_run.save(tmp_path / "empty")
    assert ccfair.load_run(tmp_path / "empty").seed == 1


def test_a_results_directory_is_not_replaced_by_a_run(tmp_path, saved_run):
    StoreWriter(tmp_path / "results").close()
    before = tree(tmp_path)
    with pytest.raises(ccfair.InputError, match="is a ccfair results directory, not a saved run"):
        saved_run.save(tmp_path / "results")
    assert tree(tmp_path) == before


# --------------------------------------------------------------------------------------- temporaries


def dead_owner() -> tuple[int, int]:
    """The pid and start ticks of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        for _ in range(100):
            ticks = owner.start_ticks(child.pid)
            if ticks is not None:
                break
            time.sleep(0.01)
    finally:
        child.kill()
        child.wait()
    assert ticks is not None and not owner.alive(child.pid, ticks)
    return child.pid, ticks


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="owners are told apart through /proc")
def test_the_next_write_removes_stale_temporaries_of_dead_owners_only(tmp_path, saved_run):
    pid, ticks = dead_owner()
    dead_tmp = tmp_path / f".run.tmp-{pid}-{ticks}-0123abcd"
    dead_tmp.mkdir()
    (dead_tmp / "flows.parquet").write_bytes(b"half")
    dead_file = tmp_path / f".fig.png.tmp-{pid}-{ticks}-89abcdef"
    dead_file.write_bytes(b"half a figure")
    live_tmp = tmp_path / f".run.tmp-{owner.token()}-fedcba98"  # a write of a live process (this one)
    live_tmp.mkdir()
    reused_pid = tmp_path / f".run.tmp-{os.getpid()}-{ticks}-00000000"  # our pid, another start time
    reused_pid.mkdir()
    lookalikes = [tmp_path / ".run.tmp-not-ours", tmp_path / f"run.tmp-{pid}-{ticks}-0123abcd"]
    for path in lookalikes:
        path.mkdir()

    saved_run.save(tmp_path / "other")  # any write into the same parent
    assert not dead_tmp.exists() and not dead_file.exists() and not reused_pid.exists()
    assert live_tmp.is_dir()
    assert all(path.is_dir() for path in lookalikes)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="owners are told apart through /proc")
def test_a_replaced_run_moved_aside_by_a_dead_writer_is_moved_back(tmp_path, saved_run):
    pid, ticks = dead_owner()
    aside = saved_run.save(tmp_path / "run").rename(tmp_path / f".run.old-{pid}-{ticks}-00c0ffee")
    fsio.remove_stale(tmp_path)
    assert not aside.exists()
    assert ccfair.load_run(tmp_path / "run").seed == 1


KILLED_SAVE = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, "tests")
    import ccfair
    from ccfair import fsio
    from conftest import small

    result = ccfair.run(small(duration="2s"), seed=1)

    def stop(directory, kind):  # every file of the run is written; the marker and the rename are next
        print("ready", flush=True)
        time.sleep(60)

    fsio.write_marker = stop
    result.save(sys.argv[1])
    """
)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="owners are told apart through /proc")
def test_a_save_killed_with_sigkill_leaves_nothing_past_the_next_write(tmp_path, saved_run):
    out = tmp_path / "runs" / "killed"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_SAVE, str(out)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    left = [p.name for p in out.parent.iterdir()]
    assert len(left) == 1 and left[0].startswith(".killed.tmp-")  # what SIGKILL leaves
    assert not out.exists()
    saved_run.save(out.parent / "next")
    assert [p.name for p in out.parent.iterdir()] == ["next"]


# ------------------------------------------------------------------------------------ sweep and export


def test_sweep_out_into_a_users_directory_writes_nothing(home):
    plan = write_plan(home / "plan.toml", repetitions=1)
    before = tree(home)
    refused(cli("sweep", str(plan), "--out", "thesis", "--quiet", cwd=home), "--out", "thesis.tex")
    assert tree(home) == before


def test_a_results_directory_from_before_markers_is_accepted(tmp_path):
    root = tmp_path / "results"
    StoreWriter(root).close()
    (root / fsio.MARKER_FILE).unlink()  # an earlier ccfair wrote only the catalog
    fsio.check_dir(root, RESULTS_KIND, "--out", replace=False)
    StoreWriter(root).close()
    assert fsio.read_marker(root)["kind"] == "results"


def test_export_refuses_a_users_directory_and_replaces_its_own(tmp_path, home):
    root = tmp_path / "results"
    StoreWriter(root).close()
    before = tree(home)
    refused(
        cli("export", str(root), "--format", "csv", "--to", "thesis", "--quiet", cwd=home),
        "--to",
        "thesis.tex",
    )
    refused(cli("export", str(root), "--format", "csv", "--to", ".", "--quiet", cwd=home), "--to", "current")
    assert tree(home) == before
    for _ in range(2):  # the second export replaces the first
        result = cli("export", str(root), "--format", "csv", "--quiet", cwd=home)
        assert result.returncode == 0, result.stderr
    assert fsio.read_marker(root / "export-csv")["kind"] == "export"


def test_a_full_disk_during_a_sweep_is_a_message_and_the_sweep_resumes(tmp_path, monkeypatch, capsys):
    """DuckDB reports a full disk at COMMIT as a TransactionException; the sweep says what happened, exits
    1, keeps the runs committed before, and the same command finishes the plan afterwards."""
    plan = write_plan(tmp_path / "plan.toml", repetitions=1)
    out = tmp_path / "results"
    insert = StoreWriter._insert_rows
    calls = {"n": 0}

    def full_after_one(self, rows):
        calls["n"] += 1
        if calls["n"] > 1:
            raise duckdb.TransactionException(
                'TransactionException: Failed to commit: could not write to file "catalog.duckdb.wal": '
                "No space left on device"
            )
        insert(self, rows)

    monkeypatch.setattr(StoreWriter, "_insert_rows", full_after_one)
    argv = ["sweep", str(plan), "--out", str(out), "--jobs", "1", "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip() == (
        f"error: --out: {out}: no space left on device (the runs committed so far are kept; run the sweep "
        "again to resume)"
    )
    kept = ccfair.load(out).runs
    assert 1 <= len(kept) < 4 and set(kept["status"]) == {"done"}

    monkeypatch.undo()
    assert main(argv) == 0
    runs = ccfair.load(out).runs
    assert len(runs) == 4 and set(runs["status"]) == {"done"}
    assert set(kept["run_id"]) <= set(runs["run_id"])


# --------------------------------------------------------------------------------------- single files


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, saved_run) -> Path:
    return saved_run.save(tmp_path_factory.mktemp("plots") / "run")


def test_plot_refuses_a_file_it_did_not_write(tmp_path, run_dir):
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.5 the paper\n")
    before = tree(tmp_path)
    line = refused(
        cli("plot", str(run_dir), "--kind", "timeseries", "-o", "paper.pdf", cwd=tmp_path),
        "-o",
        "paper.pdf exists and was not written by ccfair",
    )
    assert "ccfair replaces only figures it wrote" in line
    assert tree(tmp_path) == before


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_figures_replace_only_figures_ccfair_wrote(tmp_path, saved_run, fmt):
    from ccfair.plots import save_figure, timeseries

    fig = timeseries(saved_run)
    user_file = tmp_path / f"photo.{fmt}"
    user_file.write_bytes(b"someone else's picture")
    with pytest.raises(ccfair.InputError, match="was not written by ccfair"):
        save_figure(fig, user_file)
    assert user_file.read_bytes() == b"someone else's picture"
    ours = tmp_path / f"fig.{fmt}"
    save_figure(fig, ours)
    save_figure(fig, ours)  # its own figure is replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([ours.name, user_file.name])


def test_report_replaces_only_its_own_report(tmp_path, run_dir):
    from ccfair.plots.html_report import write_report

    (tmp_path / "index.html").write_text("<html><body>my home page</body></html>\n")
    before = tree(tmp_path)
    refused(cli("report", str(run_dir), "-o", "index.html", "--quiet", cwd=tmp_path), "-o", "index.html")
    assert tree(tmp_path) == before
    result = cli("report", str(run_dir), "-o", "report.html", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "report.html").read_text()
    assert '<meta name="generator" content="ccfair">' in page
    write_report(page.replace("</body>", "<p>again</p></body>"), tmp_path / "report.html")
    assert "<p>again</p>" in (tmp_path / "report.html").read_text()

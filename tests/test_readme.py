"""Every `ccfair` command of the README runs as written on what ships.

The README's shell blocks are read in order; each line that starts with ``ccfair`` runs in a temporary
directory holding copies of the shipped scenarios and plans, so later commands see what earlier ones wrote
(`runs/my`, `results/`). Left out, with the reason: kernel commands (they start with sudo and need root and a
measured host: tests/test_emu_kernel.py runs them) and `--cluster` ones (they need a Dask scheduler:
tests/test_sweep_dask.py). To keep the suite short, the copied plans run one repetition of 4 simulated
seconds (measuring from 1 s) over the first two values of each axis instead of their own grid; every axis,
path and value they keep is as shipped, and each shipped plan is checked whole by a dry run.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ccfair.toml_text import dumps
from conftest import REPO

README = REPO / "README.md"
FENCE = re.compile(r"^```(?P<lang>\w*)\s*$")
SHORT_DURATION, SHORT_START = "4s", "1s"
SHORT_VALUES = 2


def shell_lines(text: str) -> list[str]:
    """The lines of the README's unlabelled code blocks (its shell blocks), in order."""
    lines, inside = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if m is not None:
            inside = None if inside is not None else m["lang"]
            continue
        if inside == "":
            lines.append(line)
    return lines


def commands(text: str) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """(the runnable ccfair commands as argument lists, the skipped ones with their reason)."""
    run, skipped = [], []
    for line in shell_lines(text):
        if not line.startswith(("ccfair ", "sudo ")):
            continue  # other tools (make, openssl, dask), and the blocks that show output
        args = shlex.split(line, comments=True)
        if args[0] == "sudo":
            skipped.append((line, "kernel backend: needs root and a measured host (test_emu_kernel.py)"))
        elif args[0] == "ccfair" and "--cluster" in args:
            skipped.append((line, "needs a Dask scheduler (tests/test_sweep_dask.py)"))
        elif args[0] == "ccfair":
            run.append(args)
    return run, skipped


def shorten(plan: Path) -> None:
    data = tomllib.loads(plan.read_text())
    data["repetitions"] = 1
    scenario = data["scenario"]
    assert isinstance(scenario, dict), f"{plan.name}: the README's plans carry their scenario inline"
    scenario["duration"] = SHORT_DURATION
    scenario.setdefault("measure", {})["start"] = SHORT_START
    for group in scenario.get("flows", []):
        if "start" in group and group["start"] != "0s":
            group["start"] = "0.5s"  # a later start stays later, within the shorter run
    for path, values in data.get("grid", {}).items():
        data["grid"][path] = values[:SHORT_VALUES]
    plan.write_text(dumps(data))


def test_the_readme_lists_what_it_should():
    run, skipped = commands(README.read_text())
    firsts = {args[1] for args in run}
    # Every subcommand the README teaches is exercised here, not just some.
    assert {"run", "init", "list", "bench", "sweep", "status", "query", "export", "plot", "report"} <= firsts
    assert {args[args.index("--kind") + 1] for args in run if args[1] == "plot"} == {
        "timeseries",
        "heatmap",
        "relgoodput",
        "fness",
        "share",
        "tput-delay",
        "cdf",
        "box",
    }
    assert any("doctor" in line for line, _ in skipped)


def test_every_readme_command_runs_on_what_ships(tmp_path):
    run, _ = commands(README.read_text())
    for name in ("scenarios", "plans"):
        shutil.copytree(REPO / name, tmp_path / name)  # the files, not the links
    for plan in (tmp_path / "plans").glob("*.toml"):
        shorten(plan)
    for args in run:
        stdout = subprocess.DEVNULL
        if ">" in args:
            target = tmp_path / args[args.index(">") + 1]
            args = args[: args.index(">")]
            stdout = target.open("w")
        done = subprocess.run(
            [sys.executable, "-m", "ccfair", *args[1:]],
            cwd=tmp_path,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,
            check=False,
        )
        if stdout is not subprocess.DEVNULL:
            stdout.close()
        assert done.returncode == 0, f"`{shlex.join(args)}` exited with {done.returncode}:\n{done.stderr}"
    # What the commands were meant to leave behind.
    for produced in ("my-study/scenario.toml", "runs/my/summary.json", "result.json", "report.html"):
        assert (tmp_path / produced).is_file(), produced
    figures = ("timeseries.png", "heatmap-jain_index.png", "relgoodput.png", "fness.png", "share.png")
    for figure in (*figures, "tput-delay.png", "cdf.png", "box.png"):
        assert (tmp_path / figure).stat().st_size > 10_000, figure


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

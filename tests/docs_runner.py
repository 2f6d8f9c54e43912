"""Running the documentation's examples as a reader would: the README's and every docs page's runnable
blocks, in order, in a fresh directory.

What a page holds, and what runs:

- A ```` ```shell ```` block is runnable: each line that starts with ``ccfair`` runs (``\\`` continues a
  line, ``> FILE`` sends its output to FILE), in a temporary directory holding copies of the shipped
  scenarios and plans, so later commands see what earlier ones wrote (``runs/first``, ``results/``).
  Left out, with the reason: lines starting with ``sudo`` (the kernel backend needs root and a measured
  host: tests/test_emu_kernel.py runs them) and ``--cluster`` ones (they need a Dask scheduler:
  tests/test_sweep_dask.py). Other tools' lines (``make``, ``openssl``, ``dask``) are not run.
- A ```` ```python ```` block runs too, as a script in the same directory (figures drawn off screen).
- Any other code block is shown only (```` ```console ```` for commands not meant to run here), except:
  a block with a title (```` ```toml title="first.toml" ````, ```` ```python title="driver.py" ````) is
  written to that path instead, so the commands after it read the file the page shows; and a
  ```` ```text ```` block right after the line ``<!-- output -->`` is the output of the last command
  before it, which must match (lines with wall times or speeds aside).

To keep the suite short, the copied plans run one repetition of 4 simulated seconds (measuring from 1 s)
over the first two values of each axis instead of their own grid; every axis, path and value they keep is as
shipped, and each shipped plan is checked whole by a dry run (tests/test_readme.py). Plans a page writes
itself run as written.

``python tests/docs_runner.py --update PAGE ...`` rewrites the output blocks of the pages from a fresh run.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ccfair.cli import main
from ccfair.toml_text import dumps

REPO = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^(?P<indent> *)```(?P<info>.*)$")
TITLE = re.compile(r'title="(?P<title>[^"]+)"')
OUTPUT_MARK = "<!-- output -->"
# Output lines that differ from run to run: wall times and speeds.
VOLATILE = re.compile(r"wall time|wall s\b|events/s|wall_seconds|\bETA\b")
SHORT_DURATION, SHORT_START = "4s", "1s"
SHORT_VALUES = 2


@dataclass
class Block:
    """A fenced code block: its language, title, lines, and whether it is marked as the output above."""

    lang: str
    title: str | None
    lines: list[str]
    start: int  # index of its first line in the page
    end: int  # index of its closing fence
    is_output: bool = False


def blocks(text: str) -> list[Block]:
    """Every fenced code block of ``text``, in order."""
    out: list[Block] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, info = m["indent"], m["info"].strip()
        lang = info.split()[0] if info else ""
        title = TITLE.search(info)
        body, j = [], i + 1
        while j < len(lines) and lines[j].rstrip() != indent + "```":
            body.append(lines[j][len(indent) :])
            j += 1
        marked = i > 0 and lines[i - 1].strip() == OUTPUT_MARK
        out.append(Block(lang, title["title"] if title else None, body, i + 1, j, marked and lang == "text"))
        i = j + 1
    return out


@dataclass
class Command:
    line: str
    args: list[str]
    skipped: str = ""  # why it is not run


def commands(block: Block) -> list[Command]:
    """The ``ccfair`` and ``sudo`` lines of a runnable block (continuations joined)."""
    out: list[Command] = []
    joined: list[str] = []
    for raw in block.lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + raw.strip()
        else:
            joined.append(raw.strip())
    for line in joined:
        if not line.startswith(("ccfair ", "sudo ")):
            continue  # other tools (make, openssl, dask)
        args = shlex.split(line, comments=True)
        if args[0] == "sudo":
            out.append(
                Command(line, args, "kernel backend: needs root and a measured host (test_emu_kernel.py)")
            )
        elif "--cluster" in args:
            out.append(Command(line, args, "needs a Dask scheduler (tests/test_sweep_dask.py)"))
        else:
            out.append(Command(line, args))
    return out


def runnable(text: str) -> list[Command]:
    """Every command of the page's runnable blocks, skipped ones included (a Python block counts as one)."""
    out = []
    for b in blocks(text):
        if b.lang == "shell":
            out += commands(b)
        elif b.lang == "python" and b.title is None:
            out.append(Command(f"python block at line {b.start}", ["python"]))
    return out


def shorten(plan: Path) -> None:
    data = tomllib.loads(plan.read_text())
    data["repetitions"] = 1
    scenario = data["scenario"]
    assert isinstance(scenario, dict), f"{plan.name}: the shipped plans carry their scenario inline"
    scenario["duration"] = SHORT_DURATION
    scenario.setdefault("measure", {})["start"] = SHORT_START
    for group in scenario.get("flows", []):
        if "start" in group and group["start"] != "0s":
            group["start"] = "0.5s"  # a later start stays later, within the shorter run
    for path, values in data.get("grid", {}).items():
        data["grid"][path] = values[:SHORT_VALUES]
    plan.write_text(dumps(data))


def workdir(into: Path) -> Path:
    """``into`` with copies of the shipped scenarios and plans (the plans shortened)."""
    for name in ("scenarios", "plans"):
        shutil.copytree(REPO / name, into / name)  # the files, not the links
    for plan in (into / "plans").glob("*.toml"):
        shorten(plan)
    return into


def masked(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").split("\n") if not VOLATILE.search(line)]


@dataclass
class PageRun:
    """What running a page did: the commands run, those skipped, each output block's fresh text, failures."""

    ran: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    outputs: dict[int, str] = field(default_factory=dict)  # output block's start line -> fresh output
    failures: list[str] = field(default_factory=list)


def run_ccfair(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """``ccfair ARGS`` in ``cwd``: its exit code, stdout and stderr. It runs in this process
    (``ccfair.cli.main``, what the ``ccfair`` command calls), which spares each command the interpreter's
    start and its imports. Argparse's usage errors and ``--help`` give their exit code as the command's."""
    stdout, stderr = io.StringIO(), io.StringIO()
    before = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(args)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    finally:
        os.chdir(before)
    return code, stdout.getvalue(), stderr.getvalue()


def run_page(text: str, cwd: Path, timeout: float = 600) -> PageRun:
    """Runs the page's blocks in order in ``cwd`` (see the module docstring)."""
    result = PageRun()
    last_stdout = ""
    for block in blocks(text):
        if block.lang == "python" and block.title is None:
            done = subprocess.run(
                [sys.executable, "-c", "\n".join(block.lines)],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env={**os.environ, "MPLBACKEND": "Agg"},
            )
            result.ran.append(f"python block at line {block.start}")
            last_stdout = done.stdout
            if done.returncode != 0:
                result.failures.append(f"the python block at line {block.start} failed:\n{done.stderr}")
                return result
            continue
        if block.title is not None and block.lang != "shell":
            target = (cwd / block.title).resolve()
            assert target.is_relative_to(cwd.resolve()), f"{block.title}: outside the working directory"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(block.lines) + "\n")
        if block.is_output:
            result.outputs[block.start] = last_stdout
            if masked(last_stdout) != masked("\n".join(block.lines)):
                result.failures.append(
                    f"the output block at line {block.start} differs from a fresh run; now:\n{last_stdout}"
                )
        if block.lang != "shell":
            continue
        for command in commands(block):
            if command.skipped:
                result.skipped.append((command.line, command.skipped))
                continue
            args, target = command.args, None
            if ">" in args:
                target = cwd / args[args.index(">") + 1]
                args = args[: args.index(">")]
            code, stdout, stderr = run_ccfair(args[1:], cwd)
            result.ran.append(command.line)
            last_stdout = stdout
            if target is not None:
                target.write_text(stdout)
            if code != 0:
                result.failures.append(f"`{command.line}` exited with {code}:\n{stderr}")
                return result
    return result


def update(page: Path) -> bool:
    """Rewrites the page's output blocks from a fresh run; True if it changed."""
    text = page.read_text()
    with tempfile.TemporaryDirectory(prefix="ccfair-docs-") as tmp:
        run = run_page(text, workdir(Path(tmp)))
    if any(not f.startswith("the output block") for f in run.failures):
        raise SystemExit("\n".join(run.failures))
    lines = text.split("\n")
    for block in sorted((b for b in blocks(text) if b.is_output), key=lambda b: -b.start):
        fresh = run.outputs[block.start].rstrip("\n").split("\n")
        if masked("\n".join(fresh)) != masked("\n".join(block.lines)):
            lines[block.start : block.end] = fresh
    new = "\n".join(lines)
    if new != text:
        page.write_text(new)
    return new != text


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "--update" or len(args) < 2:
        raise SystemExit("usage: python tests/docs_runner.py --update PAGE ...")
    for name in args[1:]:
        print(f"{name}: {'updated' if update(Path(name)) else 'current'}")

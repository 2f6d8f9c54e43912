"""Checks a built wheel as a user gets it: ``python -m ccfair.devtools.wheel_check DIR [--python PY]``.

The wheel in DIR (exactly one) must be tagged manylinux and abi3, and ``auditwheel show`` must find every ELF
file in it (the extension and the emulator binary) consistent with that tag. It is installed into a fresh
virtualenv in a temporary directory (its dependencies from PyPI, no extras); the installed package must hold
:data:`TYPING_FILES` (a type checker reads the package's annotations and the extension's types only with
them), and :data:`SMOKE_COMMANDS` run there from a directory outside the checkout, each with a check of
what it printed. A failure prints the
command, its exit code and its output, and exits with 1.

:data:`SMOKE_COMMANDS` is the one list of what an installed ccfair must do; a new user-facing command adds
its line there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TAG = re.compile(r"-cp311-abi3-manylinux_(?P<major>\d+)_(?P<minor>\d+)_x86_64\.whl$")
COMMAND_TIMEOUT_S = 300
# PEP 561's marker that the package is typed, and the stub of the extension module (which has no source).
TYPING_FILES = ("py.typed", "_native.pyi")


@dataclass(frozen=True)
class Smoke:
    """One command (``ccfair`` is the installed console script) with the exit codes it may end with and a
    check of its output; ``check`` returns what is wrong, or None."""

    args: tuple[str, ...]
    check: Callable[[subprocess.CompletedProcess[str], Path], str | None] = lambda done, venv: None
    exit_codes: tuple[int, ...] = (0,)


def _has(*needles: str) -> Callable[[subprocess.CompletedProcess[str], Path], str | None]:
    def check(done: subprocess.CompletedProcess[str], venv: Path) -> str | None:
        missing = [n for n in needles if n not in done.stdout + done.stderr]
        return f"missing from the output: {missing}" if missing else None

    return check


def _run_json(done: subprocess.CompletedProcess[str], venv: Path) -> str | None:
    summary = json.loads(done.stdout)["summary"]
    return None if 0 < summary["jain_index"] <= 1 else f"jain_index out of range: {summary['jain_index']}"


def _doctor(done: subprocess.CompletedProcess[str], venv: Path) -> str | None:
    """The checks print without root (a failing check may make the exit code 1); the emulator binary is the
    one inside the installed package."""
    report = json.loads(done.stdout)
    checks = {c["what"]: c for c in report["checks"]}
    binary = checks.get("emulator binary")
    if binary is None or not binary["ok"]:
        return f"the emulator binary was not found: {binary}"
    if not Path(binary["detail"]).resolve().is_relative_to(venv.resolve()):
        return f"the emulator binary {binary['detail']} is not the one inside the installed package ({venv})"
    all_ok = all(c["ok"] for c in report["checks"])
    if report["ok"] != all_ok or done.returncode != (0 if all_ok else 1):
        return f"exit code {done.returncode} does not match the checks (ok: {report['ok']})"
    return None


def _figure(done: subprocess.CompletedProcess[str], venv: Path) -> str | None:
    return None if Path("first.png").stat().st_size > 10_000 else "first.png is not a figure"


# What an installed ccfair must do, in order, in an empty directory. (`ccfair reproduce --list` belongs here
# once that command exists.)
SMOKE_COMMANDS: tuple[Smoke, ...] = (
    Smoke(("ccfair", "--version"), _has("ccfair ")),
    Smoke(("ccfair", "init", "study"), _has("study/scenario.toml", "study/plan.toml")),
    Smoke(("ccfair", "run", "study/scenario.toml", "--json"), _run_json),
    Smoke(("ccfair", "run", "study/scenario.toml", "--out", "runs/first", "--quiet"), _has("Summary")),
    Smoke(("ccfair", "plot", "runs/first", "--kind", "timeseries", "-o", "first.png", "--quiet"), _figure),
    Smoke(("ccfair", "sweep", "study/plan.toml", "--dry-run"), _has("plan my-study: 16 cells, 32 runs")),
    Smoke(("ccfair", "list"), _has("cubic", "fq_codel")),
    Smoke(("ccfair", "reproduce", "--list"), _has("rueth-tma19", "philip-imc21", "estimate")),
    Smoke(("ccfair", "doctor", "--no-measure", "--json"), _doctor, exit_codes=(0, 1)),
    # The kernel truth ships inside the package: one cell compared with it.
    Smoke(
        ("ccfair", "validate", "--cells", "reno-cubic", "--out", "validate", "--quiet"), _has("grid summary")
    ),
    # The core install has no Dask: --cluster says how to get it, and writes nothing.
    Smoke(
        ("ccfair", "sweep", "study/plan.toml", "--out", "cluster-results", "--cluster", "tcp://127.0.0.1:9"),
        _has("pip install 'ccfair[dask]'"),
        exit_codes=(2,),
    ),
)


def find_wheel(directory: Path) -> Path:
    wheels = sorted(directory.glob("ccfair-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"error: expected one ccfair wheel in {directory}, found {len(wheels)}")
    return wheels[0]


def check_tag(wheel: Path, auditwheel: str | None) -> list[str]:
    """What is wrong with the wheel's platform tag (and, with auditwheel, its ELF files' symbol versions)."""
    m = TAG.search(wheel.name)
    if m is None:
        return [f"{wheel.name}: not tagged cp311-abi3-manylinux_X_Y_x86_64"]
    tag = f"manylinux_{m['major']}_{m['minor']}_x86_64"
    if auditwheel is None:
        print("note: auditwheel not found; the ELF files' symbol versions are not checked", file=sys.stderr)
        return []
    shown = subprocess.run([auditwheel, "show", str(wheel)], capture_output=True, text=True, check=False)
    text = " ".join(shown.stdout.split())
    if f'consistent with the following platform tag: "{tag}"' not in text:
        return [f"auditwheel does not find {wheel.name} consistent with {tag}: {text}"]
    return []


def check_typing_files(venv: Path, work: Path, env: dict[str, str]) -> list[str]:
    """What of :data:`TYPING_FILES` the package installed in ``venv`` lacks."""
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import ccfair, os; print(os.path.dirname(ccfair.__file__))"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if where.returncode != 0:
        return [f"the installed package does not import: {where.stderr}"]
    package = Path(where.stdout.strip())
    missing = [name for name in TYPING_FILES if not (package / name).is_file()]
    return [f"the installed package ({package}) lacks {', '.join(missing)}"] if missing else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ccfair.devtools.wheel_check", description=__doc__)
    parser.add_argument("dir", type=Path, help="the directory holding the wheel")
    parser.add_argument("--python", default="python3", help="the interpreter of the fresh virtualenv")
    args = parser.parse_args(argv)
    wheel = find_wheel(args.dir).resolve()
    auditwheel = shutil.which("auditwheel") or _beside_python("auditwheel")
    problems = check_tag(wheel, auditwheel)
    with tempfile.TemporaryDirectory(prefix="ccfair-wheel-check-") as tmp:
        venv, work = Path(tmp) / "venv", Path(tmp) / "work"
        work.mkdir()
        t0 = time.monotonic()
        subprocess.run([args.python, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", str(wheel)],
            check=True,
        )
        print(f"installed {wheel.name} into a fresh virtualenv ({time.monotonic() - t0:.0f} s)")
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "CCFAIR_EMU")}
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["CCFAIR_DOCTOR_FILE"] = str(Path(tmp) / "doctor.json")
        typing_problems = check_typing_files(venv, work, env)
        print(f"  {'ok ' if not typing_problems else 'FAIL'} {', '.join(TYPING_FILES)} installed")
        problems += typing_problems
        for smoke in SMOKE_COMMANDS:
            problem = _run(smoke, venv, work, env)
            print(f"  {'ok ' if problem is None else 'FAIL'} {' '.join(smoke.args)}")
            if problem is not None:
                problems.append(problem)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    checks = len(SMOKE_COMMANDS) + 2  # the tag, the typing files, the commands
    print(f"wheel-check: {checks - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


def _beside_python(name: str) -> str | None:
    path = Path(sys.executable).parent / name
    return str(path) if path.is_file() else None


def _run(smoke: Smoke, venv: Path, work: Path, env: dict[str, str]) -> str | None:
    done = subprocess.run(
        list(smoke.args), cwd=work, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
    )
    shown = f"`{' '.join(smoke.args)}` exited with {done.returncode}"
    if done.returncode not in smoke.exit_codes:
        return f"{shown}\n{done.stdout}{done.stderr}"
    old = os.getcwd()
    os.chdir(work)
    try:
        problem = smoke.check(done, venv)
    except (ValueError, KeyError, OSError) as e:
        problem = f"{type(e).__name__}: {e}"
    finally:
        os.chdir(old)
    return None if problem is None else f"{shown}: {problem}\n{done.stdout}{done.stderr}"


if __name__ == "__main__":
    sys.exit(main())

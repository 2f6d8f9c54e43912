"""First steps: `ccfair init`, the help of every subcommand, the version checks of `make`, and where the
emulator binary is found."""

from __future__ import annotations

import argparse
import os
import re
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

import ccfair
from ccfair.analysis.schema import SUMMARY_KEYS
from ccfair.catalog import catalog
from ccfair.cli import build_parser
from ccfair.emu import binary
from ccfair.examples import STARTER_FILES, starter_files
from ccfair.scenario import Scenario
from ccfair.sweep.driver import plan_runs
from conftest import REPO, run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


def test_init_writes_files_that_run_as_written(tmp_path):
    result = run_cli("init", str(tmp_path / "study"))
    assert result.returncode == 0, result.stderr
    for name in STARTER_FILES:
        assert (tmp_path / "study" / name).read_bytes() == starter_files()[name]
    scenario = Scenario.from_toml(tmp_path / "study" / "scenario.toml")
    res = ccfair.run(scenario)
    assert len(res.flows) == 12 and 0 < res.summary["jain_index"] <= 1
    assert res.dynamic is not None and res.dynamic["flows_completed"] > 0
    # With seed 7 five short transfers complete before the 10 s window opens: they take no part in its
    # fairness (Jain's index over the seven that do), and the report gives the index among the flows active
    # at each moment beside it.
    res = ccfair.run(scenario, seed=7)
    flows = res.flows
    finished_early = flows["start_ns"] + flows["completion_ns"] < scenario.measure_window_ns()[0]
    assert finished_early.sum() == 5 and not flows.loc[finished_early, "in_window"].any()
    assert flows.loc[~finished_early, "in_window"].all() and flows["active"].all()
    part = flows.loc[flows["in_window"], "goodput_bps"].to_numpy()
    assert res.summary["jain_index"] == pytest.approx(part.sum() ** 2 / (len(part) * (part**2).sum()))
    text = run_cli("run", str(tmp_path / "study" / "scenario.toml"), "--seed", "7").stdout
    jain_line = next(line for line in text.splitlines() if line.strip().startswith("jain index"))
    assert f"{res.dynamic['active_jain_mean']:.3f} among the flows active at each moment" in jain_line
    plan, runs = plan_runs(tmp_path / "study" / "plan.toml")
    assert plan.name == "my-study" and len(runs) == 32 and all(r.invalid is None for r in runs)
    # Its results go beside it, not into the results/ the shipped plans write to by default.
    assert plan.out == tmp_path / "study" / "results"


def test_init_annotates_every_key_it_writes():
    """Every key of the starting files has a comment on its line, and the scenario uses every key a scenario
    can have, so the file explains them all."""
    for name in STARTER_FILES:
        for line in starter_files()[name].decode().splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                assert "#" in line, f"{name}: no comment on {line!r}"
    text = starter_files()["scenario.toml"].decode()
    # The scenario's keys (the top level, the measurement window, the link, a flow group's), from the
    # scenario crate's description of its document; the kernel backend's own keys aside.
    keys = []
    for k in catalog()["scenario_keys"]:
        for prefix in ("", "measure.", "link.", "flows[]."):
            rest = k["path"].removeprefix(prefix) if k["path"].startswith(prefix) else ""
            if rest and "." not in rest and "sim" in k["backends"]:
                keys.append(rest.removesuffix("[]"))
    assert {"duration", "start", "rate", "cc", "arrivals"} <= set(keys)
    for key in keys:
        assert re.search(rf"^(\s*{key}\s*=|\[+{key}\]+)", text, re.MULTILINE), key


def test_the_examples_in_the_starting_files_comments_are_valid():
    """A key written in a comment of the starting file (the queue discipline with a parameter) resolves as
    written when it replaces the key above it."""
    text = starter_files()["scenario.toml"].decode()
    examples = re.findall(r"#.*?\b(aqm = \{[^}]*\})", text)
    assert examples, "the scenario's comment shows a queue discipline with a parameter"
    for example in examples:
        data = tomllib.loads(text)
        data["link"]["aqm"] = tomllib.loads(example)["aqm"]
        Scenario.from_dict(data).resolve()


def test_init_never_overwrites(tmp_path):
    (tmp_path / "plan.toml").write_text("mine")
    result = run_cli("init", str(tmp_path))
    assert result.returncode == 2
    assert "error: DIR:" in result.stderr and "plan.toml" in result.stderr
    assert (tmp_path / "plan.toml").read_text() == "mine"
    assert not (tmp_path / "scenario.toml").exists()  # nothing written, not even the other one
    (tmp_path / "file").write_text("x")
    assert run_cli("init", str(tmp_path / "file")).returncode == 2


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_subcommand_explains_itself_with_examples(name):
    parser = subcommands()[name]
    assert parser.description and len(parser.description) > 40, f"{name}: no description"
    help_text = parser.format_help()
    assert "\nexamples:\n" in help_text
    example_lines = help_text.split("\nexamples:\n", 1)[1].splitlines()
    assert any("ccfair" in line and name in line.split() for line in example_lines), f"{name}: no example"


def test_plot_help_lists_the_metrics():
    help_text = " ".join(subcommands()["plot"].format_help().split())
    for metric in SUMMARY_KEYS:
        assert metric in help_text


def fake_python(path: Path, version: str) -> Path:
    """A script that answers the version checks like Python ``version`` would."""
    major, minor = version.split(".")
    path.write_text(
        "#!/bin/sh\n"
        f'case "$*" in *--version*) echo "Python {version}.0";; *"%d.%d"*) echo "{version}";;\n'
        f"  *sys.exit*) [ {minor} -ge 11 ] && [ {major} -ge 3 ];; *) exit 0;; esac\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_make_checks_the_python_version_first(tmp_path):
    old = fake_python(tmp_path / "python3.10", "3.10")
    done = subprocess.run(
        [str(REPO / "tools" / "check-versions.sh"), str(old), str(tmp_path / "venv")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "is Python 3.10; ccfair needs Python >= 3.11" in done.stdout and "make PYTHON=" in done.stdout


def test_make_remakes_a_venv_of_an_old_python(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("version = 3.10.0\n")
    fake_python(venv / "bin" / "python", "3.10")
    kept = tmp_path / "kept"
    (kept / "bin").mkdir(parents=True)
    (kept / "pyvenv.cfg").write_text("version = 3.11.7\n")
    fake_python(kept / "bin" / "python", "3.11")
    script = str(REPO / "tools" / "check-versions.sh")
    done = subprocess.run([script, "python3", str(venv)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout
    assert "was made by Python 3.10.0; making it anew" in done.stdout and not venv.exists()
    done = subprocess.run([script, "python3", str(kept)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout == "" and kept.exists()
    not_a_venv = tmp_path / "mine"
    (not_a_venv / "bin").mkdir(parents=True)
    fake_python(not_a_venv / "bin" / "python", "3.10")
    subprocess.run([script, "python3", str(not_a_venv)], capture_output=True, check=False)
    assert not_a_venv.exists()  # no pyvenv.cfg: not a virtualenv, never removed


def test_the_emulator_inside_the_package_comes_first(tmp_path, monkeypatch):
    packaged = tmp_path / "ccfair" / "bin" / "ccfair-emu"
    packaged.parent.mkdir(parents=True)
    packaged.write_text("#!/bin/sh\n")
    packaged.chmod(0o755)
    monkeypatch.setattr(binary, "PACKAGED", packaged)
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    assert binary.emulator_binary() == str(packaged)
    monkeypatch.setenv(binary.ENV_VAR, "/bin/true")
    assert binary.emulator_binary() == "/bin/true"  # an explicit choice still wins
    monkeypatch.delenv(binary.ENV_VAR)
    packaged.unlink()
    monkeypatch.setattr(binary, "candidates", lambda: [packaged])
    with pytest.raises(ccfair.InputError) as e:
        binary.emulator_binary()
    assert "the wheels carry it" in e.value.message and "make setup" in e.value.message


def test_the_package_holds_the_examples():
    from ccfair.examples import PLANS, SCENARIOS

    assert (SCENARIOS / "default.toml").is_file() and (PLANS / "buffer-sizing.toml").is_file()
    # A checkout's scenarios/ and plans/ are the package's, not copies.
    assert os.path.samefile(REPO / "scenarios", SCENARIOS) and os.path.samefile(REPO / "plans", PLANS)

"""Comparing a case's fresh snapshot with the stored one, and storing it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ccfair.devtools.snapshots.cases import Case
from ccfair.devtools.snapshots.requires import failed_requirements
from ccfair.devtools.snapshots.table import diff, parse, render
from ccfair.devtools.snapshots.take import take_snapshot
from ccfair.errors import InputError

HEADER_MARK = "# ccfair snapshot: "
REGENERATE = "make snapshots"


@dataclass(frozen=True)
class Outcome:
    """A case run now: its snapshot text, the stored text (None if there is none), the requirements it
    failed."""

    case: Case
    path: Path
    text: str
    stored: str | None
    failed: tuple[str, ...]

    @property
    def unchanged(self) -> bool:
        return self.text == self.stored

    def changes(self) -> list[str]:
        """What moved since the stored snapshot, one line each."""
        if self.stored is None:
            return [f"no stored snapshot at {self.path}"]
        if self.unchanged:
            return []
        try:
            moved = diff(parse(self.stored), parse(self.text))
        except ValueError as e:
            return [f"the stored snapshot cannot be read ({e})"]
        return moved or ["the text differs only in layout (spacing or blank lines)"]

    def message(self) -> str:
        """For a test failure: what moved, or which precondition failed, and what to do."""
        lines = []
        if self.failed:
            lines.append(f"case {self.case.name} no longer exercises what it claims:")
            lines += [f"  {f}" for f in self.failed]
            lines.append("Change the case in the cases file so that it does, then regenerate.")
        if not self.unchanged:
            lines.append(f"snapshot {self.case.name} changed ({self.path}):")
            lines += [f"  {c}" for c in self.changes()]
            lines.append(
                f"If the behaviour change is deliberate, regenerate with `{REGENERATE}` and explain it in "
                "the commit; otherwise the change broke behaviour the snapshot pins."
            )
        return "\n".join(lines)


def snapshot_path(expected_dir: Path, case: Case) -> Path:
    return expected_dir / f"{case.name}.txt"


def check_case(case: Case, expected_dir: Path, source: str) -> Outcome:
    """Runs ``case`` and compares it with its stored snapshot in ``expected_dir``."""
    snapshot = take_snapshot(case, source)
    path = snapshot_path(expected_dir, case)
    stored = path.read_text() if path.exists() else None
    failed = tuple(failed_requirements(snapshot, case.requires))
    return Outcome(case=case, path=path, text=render(snapshot), stored=stored, failed=failed)


def stale_files(cases: Iterable[Case], expected_dir: Path) -> list[Path]:
    """Stored snapshots that belong to no case (left behind by a renamed or removed case)."""
    names = {snapshot_path(expected_dir, c).name for c in cases}
    return sorted(p for p in expected_dir.glob("*.txt") if p.name not in names)


def store(outcome: Outcome) -> None:
    """Writes the outcome's snapshot, atomically; refuses to replace a file that is not a snapshot."""
    path = outcome.path
    if outcome.stored is not None and not outcome.stored.startswith(HEADER_MARK):
        raise InputError(str(path), f"exists and is not a snapshot (it does not start {HEADER_MARK!r})")
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(outcome.text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

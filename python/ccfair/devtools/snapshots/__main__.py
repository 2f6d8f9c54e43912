"""``python -m ccfair.devtools.snapshots [--update] [CASE ...]``: compare (or regenerate) the snapshots.

Run from the repository root (``make snapshots`` runs it with ``--update``). Prints one line per case
(unchanged, changed with what moved, new) and exits 0 when everything matches (or was written), 1 when a
snapshot differs, a case fails its preconditions (its snapshot is then not written) or a stored snapshot has
no case, 2 on bad input, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ccfair.devtools.snapshots.cases import Case, load_cases
from ccfair.devtools.snapshots.check import Outcome, check_case, stale_files, store
from ccfair.errors import InputError

DEFAULT_CASES = Path("tests/snapshots/cases.toml")
DEFAULT_EXPECTED = Path("tests/snapshots/expected")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ccfair.devtools.snapshots",
        description="Compare the canonical runs with their stored snapshot tables, or regenerate them.",
    )
    p.add_argument("cases", nargs="*", metavar="CASE", help="only these cases (default: all)")
    p.add_argument("--update", action="store_true", help="write the snapshots that changed or are new")
    p.add_argument("--cases-file", type=Path, default=DEFAULT_CASES, help=f"default {DEFAULT_CASES}")
    p.add_argument("--expected", type=Path, default=DEFAULT_EXPECTED, help=f"default {DEFAULT_EXPECTED}")
    return p


def select(cases: list[Case], names: Sequence[str]) -> list[Case]:
    known = {c.name for c in cases}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError("CASE", f"no case {unknown[0]!r}; cases: {', '.join(sorted(known))}")
    return [c for c in cases if c.name in names] if names else cases


def run(args: argparse.Namespace) -> int:
    all_cases = load_cases(args.cases_file)
    cases = select(all_cases, args.cases)
    if not args.expected.is_dir():
        if not args.update:
            raise InputError("--expected", f"{args.expected} is not a directory")
        args.expected.mkdir(parents=True)
    counts = {"unchanged": 0, "changed": 0, "new": 0, "failing": 0}
    for case in cases:
        outcome = check_case(case, args.expected, args.cases_file.name)
        kind = "unchanged" if outcome.unchanged else "new" if outcome.stored is None else "changed"
        write = args.update and kind != "unchanged" and not outcome.failed
        if write:
            store(outcome)
        counts["failing" if outcome.failed else kind] += 1
        _report(outcome, kind, write)
    stale = stale_files(all_cases, args.expected)
    for path in stale:
        print(f"stale      {path}: no case of that name (remove it if the case is gone)")
    verb = "written" if args.update else "to regenerate"
    summary = f"{len(cases)} cases: {counts['unchanged']} unchanged, {counts['changed']} changed, "
    summary += f"{counts['new']} new" + (f" ({verb})" if counts["changed"] + counts["new"] else "")
    if counts["failing"]:
        summary += f", {counts['failing']} failing their requirements (not written)"
    print(summary)
    if counts["failing"] or stale:
        return 1
    return 0 if args.update or counts["changed"] + counts["new"] == 0 else 1


def _report(outcome: Outcome, kind: str, written: bool) -> None:
    name = outcome.case.name
    if outcome.failed:
        print(f"failing    {name}: no longer exercises what it claims")
        for f in outcome.failed:
            print(f"             {f}")
    if kind == "unchanged":
        if not outcome.failed:
            print(f"unchanged  {name}")
    else:
        print(f"{kind:<10} {name}" + (f" -> {outcome.path}" if written else ""))
        if kind == "changed":
            for c in outcome.changes():
                print(f"             {c}")
    sys.stdout.flush()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(build_parser().parse_args(argv))
    except InputError as e:
        print(f"error: {e.field}: {e.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""``python -m ccfair.devtools.docs``: see the package docstring."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ccfair.devtools import docs, output_schema
from ccfair.devtools.docs import scorecards


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ccfair.devtools.docs", description=docs.__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite every generated section of docs/")
    mode.add_argument("--check", action="store_true", help="exit 1 if a generated section is stale")
    mode.add_argument(
        "--scorecards", nargs="+", type=Path, metavar="DIR", help="store the scorecards of reproduce outputs"
    )
    args = parser.parse_args(argv)
    if args.scorecards:
        for path in scorecards.store(args.scorecards):
            print(f"stored {path}")
        return 0
    stale = docs.stale_pages()
    if args.check:
        for path in stale:
            print(f"{path}: generated sections are stale; run `make docs`", file=sys.stderr)
        schema = output_schema.main(["--check"])
        return 1 if stale or schema else 0
    for path, text in stale.items():
        path.write_text(text, encoding="utf-8")
        print(f"{path}: generated sections updated")
    return output_schema.main(["--write"])


if __name__ == "__main__":
    sys.exit(main())

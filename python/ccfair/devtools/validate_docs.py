"""After a deliberate change of the simulator's behaviour (or a new truth): the validation tables of the
documentation (``docs/explanation/validation.md``) and the test's list of missed targets, from a
``validate.json`` that ``ccfair validate`` wrote.

    ccfair validate --out validate --quiet
    python -m ccfair.devtools.validate_docs validate/validate.json --write   # the page's tables
    python -m ccfair.devtools.validate_docs validate/validate.json   # prints the test's KNOWN_MISSES

The prose around the tables (what agrees, what looks like a model error) is written by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ccfair.studies.validate.grid import SIDES
from ccfair.studies.validate.report import TABLE_END, TABLE_START, markdown_table, summary_markdown

PAGE = Path(__file__).resolve().parents[3] / "docs" / "explanation" / "validation.md"
SUMMARY_HEAD = "| grid summary | target |"


def page_text(page: str, document: dict[str, Any]) -> str:
    """``page`` with its gap table and grid summary replaced by those of ``document``."""
    before, rest = page.split(TABLE_START, 1)
    _, after = rest.split(TABLE_END, 1)
    text = f"{before}{TABLE_START}\n{markdown_table(document)}\n{TABLE_END}{after}"
    start = text.index(SUMMARY_HEAD, text.index(TABLE_END))
    end = text.index("\n\n", start)
    return text[:start] + summary_markdown(document) + text[end:]


def _reason(target: str, gap: float | None) -> str:
    if target == "spread":
        if gap == 0:
            return "ideal hosts repeat the run exactly"
        return "spread ratio " + ("infinite: the kernel's is zero" if gap is None else f"{gap:.2f}")
    if gap is None:
        return f"{target} gap unknown"
    if target == "sojourn":
        return f"sojourn p50 {gap * 100:+.0f} %"
    if target == "share":
        return f"share gap {gap:.3f}"
    return f"{target} gap {gap:+.3f}"


def known_misses(document: dict[str, Any]) -> str:
    """The test's ``KNOWN_MISSES`` and ``KNOWN_GRID_MISSES`` as Python source."""
    lines = ["KNOWN_MISSES: dict[tuple[str, str, str], str] = {"]
    for cell in document["cells"]:
        for preset in SIDES:
            side = cell["presets"][preset]
            for target, ok in side["ok"].items():
                if ok is False:
                    reason = _reason(target, side["gaps"][target])
                    lines.append(f'    ("{preset}", "{cell["cell"]}", "{target}"): "{reason}",')
    lines += ["}", "KNOWN_GRID_MISSES: dict[str, str] = {"]
    for preset in SIDES:
        s = document["summary"][preset]
        if s["share_grid_ok"] is False:
            lines.append(
                f'    "{preset}": "mean |share gap| {s["share_gap_mean"]:.3f}, max {s["share_gap_max"]:.3f}",'
            )
    return "\n".join([*lines, "}"]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ccfair.devtools.validate_docs", description=__doc__)
    parser.add_argument("document", type=Path, help="a validate.json written by ccfair validate")
    parser.add_argument("--write", action="store_true", help="rewrite the page's tables")
    args = parser.parse_args(argv)
    document = json.loads(args.document.read_text())
    if args.write:
        PAGE.write_text(page_text(PAGE.read_text(encoding="utf-8"), document), encoding="utf-8")
        print(f"updated {PAGE}")
    else:
        sys.stdout.write(known_misses(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

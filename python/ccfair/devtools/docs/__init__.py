"""The documentation site's generated parts (``make docs``): the reference pages that are read from the code
so they cannot drift, written into ``docs/``, and checked by ``tests/test_docs.py``.

    python -m ccfair.devtools.docs --write    # rewrite every generated section
    python -m ccfair.devtools.docs --check    # exit 1 if one is stale
    python -m ccfair.devtools.docs --scorecards repro/rueth-tma19 ...   # store reproduce outputs' scorecards
                                                                        # (by the scale each was run at)

A generated section sits in its page between ``<!-- generated:NAME (make docs) -->`` and
``<!-- generated:NAME end -->``; the prose around it is written by hand. The output-column tables are
``ccfair.devtools.output_schema``'s and the validation gap table ``ccfair.devtools.validate_docs``'s (from a
``validate.json``, checked by ``tests/test_validate.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ccfair.devtools.docs import catalog_reference, cli_reference, plan_keys, scenario_pages, scorecards

DOCS = Path(__file__).resolve().parents[4] / "docs"

# name -> (page, what renders it)
SECTIONS: dict[str, tuple[str, Callable[[], str]]] = {
    "scenario-keys": ("reference/scenario.md", scenario_pages.render_keys),
    "host-presets": ("reference/scenario.md", scenario_pages.render_host_presets),
    "flow-profiles": ("how-to/provider-profiles.md", scenario_pages.render_flow_profiles),
    "plan-keys": ("reference/plans.md", plan_keys.render),
    "cli": ("reference/cli.md", cli_reference.render),
    "congestion-controls": ("reference/algorithms.md", catalog_reference.render_congestion_controls),
    "queue-disciplines": ("reference/algorithms.md", catalog_reference.render_queue_disciplines),
    "scorecards-summary": ("explanation/reproductions.md", scorecards.render_summary),
    "scorecards-standard": ("explanation/reproductions.md", scorecards.render_standard),
    "scorecards": ("explanation/reproductions.md", scorecards.render),
}


def stale_pages() -> dict[Path, str]:
    """Every page some of whose generated sections differ from a fresh rendering: path -> its fresh text."""
    from ccfair.devtools.docs.markdown import sections, with_sections

    bodies_by_page: dict[str, dict[str, str]] = {}
    for name, (page, render) in SECTIONS.items():
        bodies_by_page.setdefault(page, {})[name] = render()
    out: dict[Path, str] = {}
    for page, bodies in bodies_by_page.items():
        path = DOCS / page
        text = path.read_text(encoding="utf-8")
        missing = sorted(set(bodies) - set(sections(text)))
        if missing:
            raise ValueError(f"{path}: no generated section {', '.join(missing)} (add its markers)")
        fresh = with_sections(text, bodies)
        if fresh != text:
            out[path] = fresh
    return out

"""What ``ccfair reproduce`` writes beside the store: the figures (``fig-<name>.png``), ``scorecard.json``
and ``scorecard.html``. Each is replaced only if ccfair wrote it (figures by their signature, the page by
its generator tag, the JSON by its ``generator`` field); the paths are checked before any run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ccfair import fsio
from ccfair.cli_support import note
from ccfair.plots.html_report import is_ccfair_report, write_report
from ccfair.plots.output import check_figure_path, save_figure
from ccfair.studies.reproduce.base import Part, Study, load_study_data
from ccfair.studies.reproduce.scorecard import (
    HTML_NAME,
    JSON_NAME,
    html_page,
    is_scorecard_json,
    scorecard,
    to_json,
)
from ccfair.sweep.plan import Plan

OPTION = "--out"


def check_outputs(out: Path) -> None:
    """Refuses, before anything runs, a scorecard file in ``out`` that ccfair did not write."""
    if not out.exists():
        return
    fsio.check_file(out / JSON_NAME, OPTION, is_scorecard_json, "scorecards")
    fsio.check_file(out / HTML_NAME, OPTION, is_ccfair_report, "reports")
    for figure in out.glob("fig-*.png"):
        check_figure_path(figure, OPTION)


def write_outputs(
    study: Study, scale: str, repetitions: int, parts: Sequence[tuple[Part, Plan]], out: Path, quiet: bool
) -> dict[str, Any]:
    """Scores the study from the store in ``out`` and writes its figures and scorecard; returns the
    scorecard document."""
    import matplotlib.pyplot as plt  # only when figures are drawn

    data = load_study_data(out, parts)
    rows = scorecard(study, data)
    names = {part.name: plan.name for part, plan in parts}
    document = to_json(study, scale, repetitions, rows, list(names.values()))
    figures = study.figures(data, names) if not data.runs.empty else []
    try:
        for stem, _, fig in figures:
            save_figure(fig, out / f"fig-{stem}.png", OPTION)
        document["figures"] = [f"fig-{stem}.png" for stem, _, _ in figures]
        text = json.dumps(document, indent=2, allow_nan=False) + "\n"
        fsio.write_file(out / JSON_NAME, text.encode(), OPTION, is_scorecard_json, "scorecards")
        write_report(html_page(document, figures), out / HTML_NAME, OPTION)
    finally:
        for _, _, fig in figures:
            plt.close(fig)
    note(f"scorecard: {out / HTML_NAME}, {out / JSON_NAME}; figures: {len(figures)} in {out}", quiet)
    return document

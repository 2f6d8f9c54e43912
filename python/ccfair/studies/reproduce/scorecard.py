"""The scorecard of a reproduced study: one row per stated finding, with the paper's statement and value,
the setup, ccfair's measured value (mean, spread and n over the samples), the tolerance and a verdict.

Verdict of a finding from its samples: the interval is the mean ± the 95 % Student-t half width (n ≥ 2);
**agrees** if that interval lies inside the tolerance interval, **disagrees** if it lies wholly outside it,
**cannot tell** otherwise, with fewer than two samples, or when the paper states no value to score.
Nothing is tuned to make a finding agree: the value is what the runs gave.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ccfair import __version__, fsio
from ccfair.analysis.stats import summarize

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.studies.reproduce.base import Finding, Study, StudyData

AGREES, DISAGREES, UNSURE = "agrees", "disagrees", "cannot tell"
VERDICTS = (AGREES, DISAGREES, UNSURE)
GENERATOR = "ccfair reproduce"
JSON_NAME, HTML_NAME = "scorecard.json", "scorecard.html"


@dataclass(frozen=True)
class Row:
    key: str
    statement: str
    paper_value: str
    setup: str
    tolerance: str
    mean: float | None
    sd: float | None
    ci95: float | None
    minimum: float | None
    maximum: float | None
    n: int
    per: str
    unit: str
    verdict: str
    note: str
    reconstruction: str = (
        ""  # what the value rests on that is a reconstruction (stored scorecards may lack it)
    )


def verdict(samples: list[float], finding: Finding) -> tuple[str, str]:
    """The verdict of the samples against the finding's tolerance, and a note on why when unsure."""
    stats = summarize(samples)
    if finding.expect is None:
        return UNSURE, "the paper states no value to score against"
    if stats.n < 2:
        return UNSURE, f"{stats.n} sample(s): no spread to judge with; run more repetitions"
    half = stats.ci95 if math.isfinite(stats.ci95) else 0.0
    lo, hi = stats.mean - half, stats.mean + half
    if finding.expect.contains(lo, hi):
        return AGREES, ""
    if finding.expect.disjoint(lo, hi):
        return DISAGREES, ""
    return UNSURE, "the 95 % interval of the mean straddles the tolerance's edge"


def _number(x: float) -> float | None:
    return x if math.isfinite(x) else None


def score(finding: Finding, data: StudyData) -> Row:
    base = {
        "key": finding.key,
        "statement": finding.statement,
        "paper_value": finding.paper_value,
        "setup": finding.setup,
        "tolerance": finding.expect.text if finding.expect is not None else "none stated",
        "unit": finding.unit,
    }
    measured = finding.measure(data)
    stats = summarize(measured.samples)
    finite = [s for s in measured.samples if math.isfinite(s)]
    sd = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
    v, why = verdict(measured.samples, finding)
    note = "; ".join(x for x in (measured.note, why) if x)
    return Row(
        **base,
        mean=_number(stats.mean),
        sd=_number(sd),
        ci95=_number(stats.ci95),
        minimum=_number(stats.minimum),
        maximum=_number(stats.maximum),
        n=stats.n,
        per=measured.per,
        verdict=v,
        note=note,
        reconstruction=finding.reconstruction,
    )


def scorecard(study: Study, data: StudyData) -> list[Row]:
    return [score(f, data) for f in study.findings]


def to_json(study: Study, scale: str, repetitions: int, rows: list[Row], plans: list[str]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    return {
        "generator": GENERATOR,
        "ccfair_version": __version__,
        "study": study.name,
        "title": study.title,
        "citation": study.citation,
        "scale": scale,
        "setup": study.scales[scale].setup,
        "repetitions": repetitions,
        "kernel": study.scales[scale].kernel,
        "plans": plans,
        "counts": counts,
        "findings": [asdict(r) for r in rows],
    }


def is_scorecard_json(path: Path) -> bool:
    """Whether ``path`` is a scorecard this command wrote (its ``generator`` field)."""
    return fsio.json_generated_by(path, GENERATOR)


def value_text(row: Row) -> str:
    if row.mean is None:
        return "-"
    text = f"{row.mean:.4g}"
    if row.ci95 is not None:
        text += f" ± {row.ci95:.2g} (95 %)"
    if row.sd is not None:
        text += f", sd {row.sd:.2g}"
    return text + f", n = {row.n} ({row.per}s)"


def row_note(row: Row) -> str:
    """A row's note, with what its value rests on that is a reconstruction first."""
    parts = [f"rests on a reconstruction: {row.reconstruction}"] if row.reconstruction else []
    return "; ".join([*parts, row.note] if row.note else parts)


def html_page(document: dict[str, Any], figures: list[tuple[str, str, Figure]]) -> str:
    # jinja2 and matplotlib load only when the HTML page is written.
    from ccfair.plots.html_report import FigureItem, Section, Table, render_page
    from ccfair.plots.output import data_uri

    rows = [Row(**r) for r in document["findings"]]
    table = Table(
        id="scorecard",
        title="findings",
        headers=[
            "finding",
            "paper's statement",
            "paper",
            "setup",
            "ccfair measured",
            "tolerance",
            "verdict",
            "note",
        ],
        rows=[
            [r.key, r.statement, r.paper_value, r.setup, value_text(r), r.tolerance, r.verdict, row_note(r)]
            for r in rows
        ],
        numeric=[False] * 8,
    )
    counts = ", ".join(f"{v}: {n}" for v, n in document["counts"].items())
    section = Section(
        id="scorecard",
        title=f"{document['title']} ({document['scale']} scale)",
        facts=[
            ("paper", document["citation"]),
            ("setup", document["setup"]),
            ("repetitions", str(document["repetitions"])),
            ("kernel backend", document["kernel"]),
            ("verdicts", counts),
            ("plans", ", ".join(document["plans"])),
        ],
        tables=[table],
        figures=[
            FigureItem(f"figure-{stem}", title, "", data_uri(fig, "png")) for stem, title, fig in figures
        ],
        notes=[
            "agrees: the 95 % interval of the mean lies inside the tolerance; disagrees: wholly outside it; "
            "cannot tell: it straddles an edge, fewer than two samples, or no stated value",
        ],
    )
    return render_page(f"ccfair reproduce: {document['study']}", [section])

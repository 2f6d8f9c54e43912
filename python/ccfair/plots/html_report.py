"""The HTML reports' pages: self-contained (figures embedded as PNG data URIs, styles and a small inline
script that sorts tables by a clicked column; nothing fetched), built from :class:`Section` parts with facts,
tables and figures. This module holds the parts, a saved run's section (its scenario and provenance, the
summary, flows and classes tables, the time-series figure), rendering a page and writing it; the sections of
a results directory's plans are :mod:`.sweep_report`'s, and ``ccfair report``'s whole page is assembled in
:mod:`ccfair.studies.report`, above both. ``ccfair reproduce``'s scorecard is a page of the same parts.

The page's head names ccfair as its generator (:data:`GENERATOR_TAG`); ``-o`` replaces an existing file
only if it is such a report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair import __version__, fsio
from ccfair.columns import class_table_columns, flow_table_columns, shows_ecn, summary_pairs
from ccfair.errors import InputError
from ccfair.plots.output import data_uri
from ccfair.plots.timeseries_plot import timeseries
from ccfair.result import RunResult
from ccfair.tables import Column
from ccfair.units import format_duration, format_rate

if TYPE_CHECKING:
    from matplotlib.figure import Figure


TEMPLATE = "report.html.j2"
GENERATOR_TAG = '<meta name="generator" content="ccfair">'  # in the template's head
REPORT_HEAD_BYTES = 4096
Progress = Callable[[float], None]


@dataclass(frozen=True)
class Table:
    """An HTML table: ``id`` for the page's anchors (and tests), formatted cells."""

    id: str
    title: str
    headers: list[str]
    rows: list[list[str]]
    numeric: list[bool]


@dataclass(frozen=True)
class FigureItem:
    id: str
    title: str
    caption: str
    uri: str


@dataclass
class Section:
    """A part of the page: facts (label, value), a code block, tables, figures, notes."""

    id: str
    title: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    code: str | None = None
    tables: list[Table] = field(default_factory=list)
    figures: list[FigureItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown first, prominently


@dataclass(frozen=True)
class FigureJob:
    """A figure to draw: ``make`` returns it; an InputError means it does not apply and is noted."""

    id: str
    title: str
    caption: str
    make: Callable[[], Figure]


def table_from_columns(
    id: str, title: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]
) -> Table:
    """A table with the command line's column definitions (:mod:`ccfair.columns`)."""
    return Table(
        id=id,
        title=title,
        headers=[c.header for c in columns],
        rows=[[c.fmt(row.get(c.key)) for c in columns] for row in rows],
        numeric=[c.align == "right" for c in columns],
    )


def draw(jobs: Sequence[FigureJob], progress: Progress | None) -> tuple[list[FigureItem], list[str]]:
    """Draws each job into a data URI; returns the figures and the notes about
    those that did not apply."""
    figures, notes = [], []
    for i, job in enumerate(jobs):
        try:
            fig = job.make()
        except InputError as e:
            notes.append(f"{job.title}: not drawn ({e.message})")
        else:
            figures.append(FigureItem(job.id, job.title, job.caption, data_uri(fig, "png")))
        if progress is not None:
            progress((i + 1) / len(jobs))
    return figures, notes


# --------------------------------------------------------------------------------------------- one run


def run_section(result: RunResult, source: str, progress: Progress | None = None) -> Section:
    sc = result.scenario
    start_ns, end_ns = sc.measure_window_ns()
    flows = result.flows
    facts = [
        ("directory", source),
        ("link", f"{format_rate(sc.link.rate_bps)}, buffer {sc.link.buffer}, {sc.link.aqm.name}"),
        ("flows", str(sc.flow_count())),
        ("simulated", format_duration(sc.duration_ns)),
        ("measurement window", f"{format_duration(start_ns)} to {format_duration(end_ns)}"),
        ("seed", str(result.seed)),
    ]
    ecn = shows_ecn(sc, result.summary)
    summary = [{"name": k, "value": v} for k, v in summary_pairs(result.summary, ecn)]
    tables = [
        table_from_columns(
            "summary", "Summary", summary, [Column("metric", "name", align="left"), Column("value", "value")]
        ),
        table_from_columns("flows", "Flows", flows.to_dict("records"), flow_table_columns(flows, ecn)),
        table_from_columns(
            "classes",
            "Classes (the flows in the window by cc and RTT)",
            result.classes.to_dict("records"),
            class_table_columns(ecn),
        ),
    ]
    job = FigureJob(
        "timeseries",
        "Time series",
        "Per-flow goodput (per flow and stacked; dashed: link rate), congestion window, smoothed RTT, the "
        "bottleneck queue's length and sojourn time, drops and CE marks per interval; BBR flows' state as a "
        "band. Dotted: the measurement window.",
        lambda: timeseries(result),
    )
    figures, notes = draw([job], progress)
    toml = sc.to_toml(explicit=True)
    return Section("run", "Run", facts, toml, tables, figures, notes)


# ------------------------------------------------------------------------------------------------- page


def render_page(title: str, sections: Sequence[Section]) -> str:
    from jinja2 import Environment, FileSystemLoader, select_autoescape  # only for a report

    env = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template(TEMPLATE).render(title=title, sections=sections, version=__version__)


def is_ccfair_report(path: Path) -> bool:
    """Whether the file at ``path`` is a report ccfair wrote: its head names ccfair as the generator."""
    try:
        with open(path, "rb") as f:
            head = f.read(REPORT_HEAD_BYTES)
    except OSError:
        return False
    return GENERATOR_TAG.encode() in head


def check_report_path(out: str | Path, option: str = "-o") -> Path:
    """Checks, before the report is built, that it may be written to ``out``: an HTML name, an existing
    directory, and no file there but a report ccfair wrote. Returns the path resolved."""
    if Path(out).suffix.lower() not in (".html", ".htm"):
        raise InputError(option, f"{out}: the report is an HTML file; give a name ending in .html")
    return fsio.check_file(out, option, is_ccfair_report, "reports")


def write_report(html_text: str, out: str | Path, option: str = "-o") -> Path:
    """Writes the page atomically; an existing file is replaced only if it is a report ccfair wrote."""
    check_report_path(out, option)
    fsio.write_file(out, html_text.encode("utf-8"), option, is_ccfair_report, "reports")
    return Path(out)

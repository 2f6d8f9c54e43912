"""``ccfair report``: one self-contained HTML file (figures embedded as PNG data URIs, styles and a small
inline script that sorts tables by a clicked column; nothing fetched) for a saved run or a results
directory.

- a saved run: its scenario and provenance, the summary, flows and classes tables, the time-series figure
- a results directory, per plan: the plan and provenance, a summary table per cell (mean and 95 %
  confidence half width over its done runs), every figure that applies (heatmaps over the first two varied
  axes faceted by the third, relative goodput and shares against each varied axis, fness for two-flow runs,
  the time series of one example run) and, when some failed, the failed runs with their errors; a plan
  whose runs come from different builds of ccfair says so at the top of its section

The page's head names ccfair as its generator (:data:`GENERATOR_TAG`); ``-o`` replaces an existing file
only if it is such a report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair import __version__, fsio
from ccfair.errors import ScenarioError
from ccfair.plots.data import load_sweep, plan_names
from ccfair.plots.output import data_uri
from ccfair.plots.timeseries_plot import timeseries
from ccfair.report import CLASS_COLUMNS, flow_table_columns, summary_pairs
from ccfair.result import RunResult
from ccfair.tables import Column
from ccfair.units import format_duration, format_rate

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.store import Results

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
    """A figure to draw: ``make`` returns it; a ScenarioError means it does not apply and is noted."""

    id: str
    title: str
    caption: str
    make: Callable[[], Figure]


def table_from_columns(
    id: str, title: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]
) -> Table:
    """A table with the command line's column definitions (:mod:`ccfair.report`)."""
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
        except ScenarioError as e:
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
    summary = [{"name": k, "value": v} for k, v in summary_pairs(result.summary)]
    tables = [
        table_from_columns(
            "summary", "Summary", summary, [Column("metric", "name", align="left"), Column("value", "value")]
        ),
        table_from_columns(
            "flows", "Flows", flows.to_dict("records"), flow_table_columns(bool(flows["label"].notna().any()))
        ),
        table_from_columns(
            "classes",
            "Classes (active flows by cc and RTT)",
            result.classes.to_dict("records"),
            CLASS_COLUMNS,
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


def build_report(source: RunResult | Results, label: str, plan: str | None, progress: Progress | None) -> str:
    """The whole page for a saved run or a results directory (one section per plan, or only ``plan``)."""
    if isinstance(source, RunResult):
        return render_page(f"ccfair run: {_name(label)}", [run_section(source, label, progress)])
    # Imported here: both build their sections from this module's FigureJob and Section.
    from ccfair.plots.sweep_report import sweep_sections
    from ccfair.studies.report import study_sections

    names = [plan] if plan is not None else plan_names(source)
    if not names:
        raise ScenarioError("DIR", f"{label} holds no plan yet")
    sections: list[Section] = []
    for i, name in enumerate(names):
        sweep = load_sweep(source, name)

        def part(fraction: float, i: int = i) -> None:
            if progress is not None:
                progress((i + fraction) / len(names))

        sections += sweep_sections(sweep, part)
    sections += study_sections(source, names)  # harm studies and advise searches among the plans
    return render_page(f"ccfair results: {_name(label)}", sections)


def _name(label: str) -> str:
    """The directory's own name (``results`` of ``runs/results/``), for the page title."""
    return Path(label).name or label


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
        raise ScenarioError(option, f"{out}: the report is an HTML file; give a name ending in .html")
    return fsio.check_file(out, option, is_ccfair_report, "reports")


def write_report(html_text: str, out: str | Path, option: str = "-o") -> Path:
    """Writes the page atomically; an existing file is replaced only if it is a report ccfair wrote."""
    check_report_path(out, option)
    fsio.write_file(out, html_text.encode("utf-8"), option, is_ccfair_report, "reports")
    return Path(out)

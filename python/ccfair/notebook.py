"""How results show in Jupyter: ``RunResult._repr_html_`` and ``Results._repr_html_`` build a short page (a
summary and small tables) instead of a screen of DataFrames. Every value is HTML-escaped: results
directories are exchanged, and a flow label or plan value could hold markup.

The pages read what they show through :class:`ShownRun` and :class:`ShownResults`, the parts of a
``RunResult`` and a ``Results`` they need, so this module stands below both (they call it) and imports
neither."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ccfair.columns import class_table_columns, flow_table_columns, shows_ecn, summary_pairs
from ccfair.tables import Column
from ccfair.units import format_duration, format_rate

if TYPE_CHECKING:
    import pandas as pd

    from ccfair.scenario import Scenario


class ShownRun(Protocol):
    """What a run's page reads: a :class:`ccfair.result.RunResult`."""

    scenario: Scenario
    seed: int
    summary: dict[str, Any]
    name: str | None

    @property
    def flows(self) -> pd.DataFrame: ...

    @property
    def classes(self) -> pd.DataFrame: ...


class ShownResults(Protocol):
    """What a results directory's page reads: a :class:`ccfair.store.Results`."""

    directory: Path

    @property
    def runs(self) -> pd.DataFrame: ...

    @property
    def cells(self) -> pd.DataFrame: ...

    @property
    def axis_columns(self) -> list[str]: ...


MAX_ROWS = 12
STYLE = "border-collapse:collapse;font-size:12px;margin:0.3em 0 0.8em"
CELL = "padding:1px 8px;border-bottom:1px solid #ddd"


def _table(rows: Sequence[Sequence[str]], headers: Sequence[str], right: Sequence[bool]) -> str:
    def cell(tag: str, text: str, i: int) -> str:
        align = "right" if right[i] else "left"
        return f'<{tag} style="{CELL};text-align:{align}">{html.escape(text)}</{tag}>'

    head = "".join(cell("th", h, i) for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(cell("td", c, i) for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f'<table style="{STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _columns_table(records: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    shown = records[:MAX_ROWS]
    rows = [[c.fmt(r.get(c.key)) for c in columns] for r in shown]
    more = len(records) - len(shown)
    tail = f"<p style='font-size:12px;color:#666'>… and {more} more rows</p>" if more > 0 else ""
    return _table(rows, [c.header for c in columns], [c.align == "right" for c in columns]) + tail


def _heading(text: str) -> str:
    return f"<h4 style='margin:0.6em 0 0.2em'>{html.escape(text)}</h4>"


def run_html(result: ShownRun) -> str:
    """A run: what it is, its summary, its flows and classes (at most :data:`MAX_ROWS` rows each)."""
    sc = result.scenario
    start_ns, end_ns = sc.measure_window_ns()
    title = f"ccfair run {result.name}" if result.name else "ccfair run"
    facts = (
        f"{format_rate(sc.link.rate_bps)}, buffer {sc.link.buffer}, {sc.link.aqm.name}; "
        f"{sc.flow_count()} flows; {format_duration(sc.duration_ns)} simulated, window "
        f"{format_duration(start_ns)} to {format_duration(end_ns)}; seed {result.seed}"
    )
    ecn = shows_ecn(sc, result.summary)
    pairs = summary_pairs(result.summary, ecn)
    flows = result.flows
    return "".join(
        [
            f"<div><strong>{html.escape(title)}</strong><br><span style='font-size:12px'>"
            f"{html.escape(facts)}</span>",
            _heading("Summary"),
            _table([list(p) for p in pairs], ["metric", "value"], [False, True]),
            _heading("Flows"),
            _columns_table(flows.to_dict("records"), flow_table_columns(flows, ecn)),
            _heading("Classes"),
            _columns_table(result.classes.to_dict("records"), class_table_columns(ecn)),
            "<p style='font-size:12px;color:#666'>.flows, .classes, .timeseries, .queue: DataFrames; "
            ".summary: dict; ccfair.plots.timeseries(result): the figure</p></div>",
        ]
    )


def results_html(results: ShownResults) -> str:
    """A results directory: per plan its runs (done, failed, planned), the builds that made them, and the
    first rows of ``runs`` with the plan coordinates and the main metrics."""
    runs, cells = results.runs, results.cells
    plans = list(dict.fromkeys(cells["plan"])) if "plan" in cells else []
    rows = []
    for plan in plans:
        ids = set(cells.loc[cells["plan"] == plan, "run_id"])
        own = runs[runs["run_id"].isin(ids)] if "run_id" in runs else runs.iloc[:0]
        done = int((own["status"] == "done").sum()) if "status" in own else 0
        failed = len(own) - done
        rows.append([str(plan), str(len(ids)), str(done), str(failed), str(len(ids) - done - failed)])
    parts = [
        f"<div><strong>ccfair results {html.escape(str(results.directory))}</strong>",
        _heading("Plans"),
        _table(rows, ["plan", "runs", "done", "failed", "not run"], [False, True, True, True, True]),
    ]
    builds = sorted({str(b) for b in _build_labels(runs)})
    if len(builds) > 1:
        parts.append(
            "<p style='color:#b00;font-weight:bold'>runs from "
            f"{len(builds)} builds: {html.escape('; '.join(builds))}</p>"
        )
    axes = [c for c in results.axis_columns if c in runs.columns]
    metrics = [c for c in ("jain_index", "utilization", "total_goodput_bps", "fness") if c in runs.columns]
    shown = ["run_id", "plan", "cell", "repetition", *axes, "status", *metrics]
    head = runs[[c for c in shown if c in runs.columns]].head(MAX_ROWS)
    body = [[_cell(v) for v in row] for row in head.itertuples(index=False)]
    parts += [
        _heading(f"Runs (first {len(head)} of {len(runs)})"),
        _table(body, list(head.columns), [False] * len(head.columns)),
        "<p style='font-size:12px;color:#666'>.runs, .flows, .classes: DataFrames with the plan "
        "coordinates; .timeseries(run_id prefix), .result(...), .query(sql), .to_xarray(metric)</p></div>",
    ]
    return "".join(parts)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str) and len(value) == 32:
        return value[:12]
    return str(value)


def _build_labels(runs: Any) -> list[str]:
    if "git_revision" not in runs or "status" not in runs:
        return []
    done = runs[runs["status"] == "done"]
    native = done["native_build"] if "native_build" in done else [None] * len(done)
    return [
        f"ccfair {v}, git {g}, native {n}"
        for v, g, n in zip(done["ccfair_version"], done["git_revision"], native, strict=True)
    ]

"""Figures and the HTML report.

- ``ccfair plot DIR --kind timeseries|heatmap|relgoodput|fness|share [--metric M] [--x PATH] [--y PATH]
  [--facet PATH] [--cc CC] [--plan NAME] [--run RUN_ID] [-o FILE.png|svg|pdf]``: one figure of a saved
  run (``timeseries``) or of a results directory (every kind; ``timeseries`` of the run ``--run``)
- ``ccfair report DIR [-o report.html] [--plan NAME]``: one self-contained HTML file
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair.cli_support import EXIT_OK, note, progress_bar
from ccfair.errors import ScenarioError
from ccfair.result import RunResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.store import Results

KINDS = ("timeseries", "heatmap", "relgoodput", "fness", "share")
SWEEP_KINDS = KINDS[1:]
# The options each kind takes (besides DIR, --kind, -o, --quiet).
KIND_OPTIONS: dict[str, tuple[str, ...]] = {
    "timeseries": ("run", "plan"),
    "heatmap": ("metric", "x", "y", "facet", "plan"),
    "relgoodput": ("x", "facet", "plan"),
    "fness": ("plan",),
    "share": ("x", "cc", "facet", "plan"),
}
OPTION_FLAGS = {
    "metric": "--metric",
    "x": "--x",
    "y": "--y",
    "facet": "--facet",
    "cc": "--cc",
    "plan": "--plan",
    "run": "--run",
}
LISTED_RUNS = 5


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = commands.add_parser(
        "plot",
        help="draw one figure of a saved run or a results directory",
        description="Draw one figure. A saved run (ccfair run --out) makes the time series; a results "
        "directory (ccfair sweep --out) makes every kind. Axes are dotted scenario paths the plan varied, "
        "such as link.buffer or flows[0].count.",
    )
    p.add_argument("dir", metavar="DIR", help="a saved run or a results directory")
    p.add_argument("--kind", required=True, choices=KINDS, help="the figure")
    p.add_argument("--metric", help="heatmap: a run metric such as jain_index (default), utilization, fness")
    p.add_argument("--x", metavar="PATH", help="grid axis on x (default: the plan's first varied axis)")
    p.add_argument("--y", metavar="PATH", help="heatmap: grid axis on y (default: the next varied axis)")
    p.add_argument("--facet", metavar="PATH", help="one panel per value of this grid axis")
    p.add_argument("--cc", help="share: only this congestion control (default: each one)")
    p.add_argument("--plan", metavar="NAME", help="the plan, when the results directory holds several")
    p.add_argument("--run", metavar="RUN_ID", help="timeseries of a results directory: the run to draw")
    p.add_argument("-o", "--out", metavar="FILE", help="output file, .png, .svg or .pdf (default: KIND.png)")
    p.add_argument("--quiet", action="store_true", help="no notes on stderr")
    p.set_defaults(handler=cmd_plot)

    p = commands.add_parser(
        "report",
        help="write a self-contained HTML report of a saved run or a results directory",
        description="One HTML file with every figure embedded: the plan and provenance, a summary table per "
        "cell, the figures, and the failed runs with their errors. Opens without network access.",
    )
    p.add_argument("dir", metavar="DIR", help="a saved run or a results directory")
    p.add_argument(
        "-o", "--out", metavar="FILE", default="report.html", help="output file (default: report.html)"
    )
    p.add_argument("--plan", metavar="NAME", help="only this plan (default: every plan in DIR)")
    p.add_argument("--quiet", action="store_true", help="no progress or notes on stderr")
    p.set_defaults(handler=cmd_report)


# ------------------------------------------------------------------------------------------------------ plot


def _check_options(args: argparse.Namespace) -> None:
    allowed = KIND_OPTIONS[args.kind]
    for name, flag in OPTION_FLAGS.items():
        if getattr(args, name) is not None and name not in allowed:
            takes = ", ".join(OPTION_FLAGS[o] for o in allowed) or "no options"
            raise ScenarioError(flag, f"does not apply to --kind {args.kind} (it takes {takes})")


def _out_path(args: argparse.Namespace) -> Path:
    from ccfair.plots.output import check_figure_path

    default = (
        f"{args.kind}-{args.metric}.png" if args.kind == "heatmap" and args.metric else f"{args.kind}.png"
    )
    out = Path(args.out if args.out is not None else default)
    check_figure_path(out, "-o")
    return out


def _sweep_run(results: Results, run_id: str | None, plan: str | None) -> RunResult:
    from ccfair.plots.data import load_sweep

    sweep = load_sweep(results, plan)
    done = sweep.done.sort_values(["cell", "repetition"])
    listed = ", ".join(done["run_id"].head(LISTED_RUNS)) + (" ..." if len(done) > LISTED_RUNS else "")
    if run_id is None:
        raise ScenarioError(
            "--run", f"{results.directory} is a results directory; name one done run: {listed}"
        )
    matches = [r for r in done["run_id"] if r.startswith(run_id)]
    if len(matches) != 1:
        what = "no done run" if not matches else f"{len(matches)} done runs"
        raise ScenarioError(
            "--run", f"{what} with id {run_id!r} in plan {sweep.plan}; done runs: {listed or 'none'}"
        )
    return results.result(matches[0])


def make_figure(source: RunResult | Results, args: argparse.Namespace) -> Figure:
    """The figure ``args`` ask for, from ``source``."""
    if isinstance(source, RunResult):
        if args.kind != "timeseries":
            raise ScenarioError(
                "--kind",
                f"{args.kind} needs a results directory (ccfair sweep --out); {args.dir} is a single saved "
                "run, "
                "which makes: timeseries",
            )
        if args.run is not None or args.plan is not None:
            raise ScenarioError(
                "--run" if args.run is not None else "--plan", f"{args.dir} is a single saved run"
            )
        from ccfair.plots.timeseries_plot import timeseries

        return timeseries(source)
    from ccfair.plots.data import load_sweep

    if args.kind == "timeseries":
        from ccfair.plots.timeseries_plot import timeseries

        return timeseries(_sweep_run(source, args.run, args.plan))
    sweep = load_sweep(source, args.plan)
    if args.kind == "heatmap":
        from ccfair.plots.heatmap_plot import heatmap

        return heatmap(sweep, args.metric or "jain_index", args.x, args.y, args.facet)
    if args.kind == "relgoodput":
        from ccfair.plots.relgoodput_plot import relgoodput

        return relgoodput(sweep, args.x, args.facet)
    if args.kind == "share":
        from ccfair.plots.share_plot import share

        return share(sweep, args.x, args.cc, args.facet)
    from ccfair.plots.fness_plot import fness

    return fness(sweep)


def cmd_plot(args: argparse.Namespace) -> int:
    from ccfair.plots.output import save_figure
    from ccfair.plots.source import open_source

    _check_options(args)
    out = _out_path(args)
    source = open_source(args.dir)
    t0 = time.perf_counter()
    fig = make_figure(source, args)
    save_figure(fig, out, "-o")
    note(f"wrote {out} ({time.perf_counter() - t0:.1f} s)", args.quiet)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------------- report


def cmd_report(args: argparse.Namespace) -> int:
    from ccfair.plots.html_report import build_report, check_report_path, write_report
    from ccfair.plots.source import open_source

    out = Path(args.out)
    check_report_path(out, "-o")
    source = open_source(args.dir)
    if isinstance(source, RunResult) and args.plan is not None:
        raise ScenarioError("--plan", f"{args.dir} is a single saved run, not a results directory")
    t0 = time.perf_counter()
    bar = progress_bar(f"report {args.dir}", args.quiet)
    try:
        page = build_report(source, str(args.dir), args.plan, bar)
    finally:
        if bar is not None:
            bar.close()
    write_report(page, out, "-o")
    note(f"wrote {out} ({len(page) / 1e6:.1f} MB, {time.perf_counter() - t0:.1f} s)", args.quiet)
    return EXIT_OK

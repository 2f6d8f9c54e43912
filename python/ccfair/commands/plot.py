"""Figures and the HTML report.

- ``ccfair plot DIR --kind timeseries|heatmap|relgoodput|fness|share|tput-delay|cdf|box [--metric M]
  [--x PATH] [--y PATH] [--facet PATH ...] [--average PATH ...] [--vmin V] [--vmax V] [--cc CC]
  [--delay D] [--by B] [--plan NAME] [--run RUN_ID] [-o FILE.png|svg|pdf]``: one figure of a saved run
  (``timeseries``, ``tput-delay``) or of a results directory (every kind; ``timeseries`` of the run
  ``--run``)
- ``ccfair compare-results A B [--metric M] [--plan NAME] [--plan-b NAME] [-o FILE]``: two result sets'
  cells aligned by their coordinates, a table on stdout and a figure
- ``ccfair report DIR [-o report.html] [--plan NAME]``: one self-contained HTML file
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair.analysis.schema import SUMMARY_KEYS
from ccfair.cli_support import EXIT_OK, add_command, add_output_options, finite_float, note, showing_progress
from ccfair.errors import InputError
from ccfair.tables import Column, is_missing, render, text
from ccfair.terminal import printable

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.result import RunResult
    from ccfair.store import Results

KINDS = ("timeseries", "heatmap", "relgoodput", "fness", "share", "tput-delay", "cdf", "box")
RUN_KINDS = ("timeseries", "tput-delay")  # what a single saved run makes
# The options each kind takes (besides DIR, --kind, -o, --quiet).
KIND_OPTIONS: dict[str, tuple[str, ...]] = {
    "timeseries": ("run", "plan"),
    "heatmap": ("metric", "x", "y", "facet", "average", "vmin", "vmax", "plan"),
    "relgoodput": ("x", "facet", "average", "plan"),
    "fness": ("facet", "average", "plan"),
    "share": ("x", "cc", "facet", "average", "plan"),
    "tput-delay": ("delay", "by", "facet", "average", "plan"),
    "cdf": ("metric", "by", "plan"),
    "box": ("metric", "by", "plan"),
}
OPTION_FLAGS = {
    "metric": "--metric",
    "x": "--x",
    "y": "--y",
    "facet": "--facet",
    "average": "--average",
    "vmin": "--vmin",
    "vmax": "--vmax",
    "cc": "--cc",
    "delay": "--delay",
    "by": "--by",
    "plan": "--plan",
    "run": "--run",
}
LISTED_RUNS = 5


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "plot", cmd_plot, metrics=", ".join(SUMMARY_KEYS))
    p.add_argument("dir", metavar="DIR", help="a saved run or a results directory")
    p.add_argument("--kind", required=True, choices=KINDS, help="the figure")
    p.add_argument("--metric", help="heatmap, cdf, box: a run metric (below; default jain_index)")
    p.add_argument("--x", metavar="PATH", help="grid axis on x (default: the plan's first varied axis)")
    p.add_argument("--y", metavar="PATH", help="heatmap: grid axis on y (default: the next varied axis)")
    p.add_argument(
        "--facet",
        metavar="PATH",
        action="append",
        help="one panel per value of this grid axis (repeat for several; every other varied axis not "
        "given to --average gets panels too)",
    )
    p.add_argument(
        "--average",
        metavar="PATH",
        action="append",
        help="pool the runs over this grid axis instead of drawing a panel per value (repeatable; by "
        "default figures average only over repetitions)",
    )
    p.add_argument(
        "--vmin", type=finite_float, help="heatmap: lower end of the colour scale (default: the data's)"
    )
    p.add_argument(
        "--vmax", type=finite_float, help="heatmap: upper end of the colour scale (default: the data's)"
    )
    p.add_argument("--cc", help="share: only this congestion control (default: each one)")
    p.add_argument(
        "--delay",
        choices=("rtt_mean", "rtt_p99", "queueing"),
        help="tput-delay: the delay on x (default: rtt_mean; queueing = mean RTT - base RTT)",
    )
    p.add_argument(
        "--by",
        metavar="GROUP",
        help="tput-delay: cc (default), class or flow; cdf, box: a grid axis PATH, plan or cell (default: "
        "plan when DIR holds several, else the first varied axis)",
    )
    p.add_argument("--plan", metavar="NAME", help="the plan, when the results directory holds several")
    p.add_argument("--run", metavar="RUN_ID", help="timeseries of a results directory: the run to draw")
    p.add_argument("-o", "--out", metavar="FILE", help="output file, .png, .svg or .pdf (default: KIND.png)")
    add_output_options(p, json=None, quiet="no notes on stderr")

    p = add_command(commands, "compare-results", cmd_compare_results)
    p.add_argument("a", metavar="A", help="a results directory")
    p.add_argument("b", metavar="B", help="another results directory (or A again with --plan-b)")
    p.add_argument("--metric", default="jain_index", help="a run metric (default: jain_index)")
    p.add_argument("--plan", metavar="NAME", help="the plan of A, when A holds several")
    p.add_argument("--plan-b", metavar="NAME", help="the plan of B, when B holds several")
    p.add_argument(
        "-o", "--out", metavar="FILE", help="figure file, .png, .svg or .pdf (default: compare.png)"
    )
    add_output_options(p, json=None, quiet="no notes on stderr")

    p = add_command(commands, "report", cmd_report)
    p.add_argument("dir", metavar="DIR", help="a saved run or a results directory")
    p.add_argument(
        "-o", "--out", metavar="FILE", default="report.html", help="output file (default: report.html)"
    )
    p.add_argument("--plan", metavar="NAME", help="only this plan (default: every plan in DIR)")
    add_output_options(p, json=None, quiet="no progress or notes on stderr")


# ------------------------------------------------------------------------------------------------------ plot


def _check_options(args: argparse.Namespace) -> None:
    allowed = KIND_OPTIONS[args.kind]
    for name, flag in OPTION_FLAGS.items():
        if getattr(args, name) is not None and name not in allowed:
            takes = ", ".join(OPTION_FLAGS[o] for o in allowed) or "no options"
            raise InputError(flag, f"does not apply to --kind {args.kind} (it takes {takes})")


def _out_path(args: argparse.Namespace) -> Path:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.plots.output import check_figure_path

    default = (
        f"{args.kind}-{args.metric}.png" if args.kind == "heatmap" and args.metric else f"{args.kind}.png"
    )
    out = Path(args.out if args.out is not None else default)
    check_figure_path(out, "-o")
    return out


def _sweep_run(results: Results, run_id: str | None, plan: str | None) -> RunResult:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.plots.data import load_sweep

    if run_id is None:
        sweep = load_sweep(results, plan)
        done = sweep.done.sort_values(["cell", "repetition"])
        listed = ", ".join(done["run_id"].head(LISTED_RUNS)) + (" ..." if len(done) > LISTED_RUNS else "")
        raise InputError("--run", f"{results.directory} is a results directory; name one done run: {listed}")
    full = results.run_id(run_id, "--run")
    if plan is not None:
        sweep = load_sweep(results, plan)
        if full not in set(sweep.done["run_id"]):
            raise InputError("--run", f"run {full} is not a done run of plan {plan}")
    return results.result(full)


def make_figure(source: RunResult | Results, args: argparse.Namespace) -> Figure:
    """The figure ``args`` ask for, from ``source``."""
    # The figures load pandas and DuckDB, and matplotlib as they draw: imported only when one is made.
    from ccfair.plots import box, cdf, fness, heatmap, relgoodput, share, timeseries, tput_delay
    from ccfair.plots.data import load_sweep
    from ccfair.result import RunResult

    if isinstance(source, RunResult):
        if args.kind not in RUN_KINDS:
            raise InputError(
                "--kind",
                f"{args.kind} needs a results directory (ccfair sweep --out); {args.dir} is a single saved "
                f"run, which makes: {', '.join(RUN_KINDS)}",
            )
        for name in ("run", "plan", "facet", "average"):
            if getattr(args, name) is not None:
                raise InputError(OPTION_FLAGS[name], f"{args.dir} is a single saved run")
        if args.kind == "tput-delay":
            return tput_delay(source, args.delay or "rtt_mean", args.by or "flow")
        return timeseries(source)
    if args.kind == "timeseries":
        return timeseries(_sweep_run(source, args.run, args.plan))
    if args.kind in ("cdf", "box"):
        draw = cdf if args.kind == "cdf" else box
        return draw(source, args.metric or "jain_index", args.by, [args.plan] if args.plan else None)
    sweep = load_sweep(source, args.plan)
    if args.kind == "heatmap":
        return heatmap(
            sweep, args.metric or "jain_index", args.x, args.y, args.facet, None, args.average, args.vmin,
            args.vmax,
        )  # fmt: skip
    if args.kind == "relgoodput":
        return relgoodput(sweep, args.x, args.facet, average=args.average)
    if args.kind == "share":
        return share(sweep, args.x, args.cc, args.facet, average=args.average)
    if args.kind == "tput-delay":
        return tput_delay(sweep, args.delay or "rtt_mean", args.by or "cc", None, args.facet, args.average)
    return fness(sweep, facet=args.facet, average=args.average)


def cmd_plot(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
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


def cmd_compare_results(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.plots.compare_plot import compare, compare_table
    from ccfair.plots.output import check_figure_path, save_figure

    out = Path(args.out if args.out is not None else "compare.png")
    check_figure_path(out, "-o")
    a = _results(args.a, "A")
    b = _results(args.b, "B")
    table = compare_table(a, b, args.metric, args.plan, args.plan_b)
    labels = (f"A: {table.attrs['a']}", f"B: {table.attrs['b']}")
    columns = [Column(p, p, text, "left") for p in table.attrs["axes"]]
    columns += [
        Column(labels[0], "text_a", text, "left"),
        Column(labels[1], "text_b", text, "left"),
        Column("B - A", "difference", lambda v: "-" if is_missing(v) else f"{v:+.4g}"),
    ]
    print(printable(f"{table.attrs['metric']} per cell"))
    print(render(table.to_dict("records"), columns))
    if table.attrs["pooled"]:
        pooled = printable(", ".join(table.attrs["pooled"]))  # axes of results directories
        note(f"pooled on one side (varied by only one): {pooled}", args.quiet)
    fig = compare(a, b, args.metric, args.plan, args.plan_b)
    save_figure(fig, out, "-o")
    note(f"wrote {out}", args.quiet)
    return EXIT_OK


def _results(directory: str, argument: str) -> Results:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.plots.source import open_source
    from ccfair.result import RunResult

    source = open_source(directory, argument)
    if isinstance(source, RunResult):
        raise InputError(
            argument, f"{directory} is a single saved run; compare-results takes results directories"
        )
    return source


# ---------------------------------------------------------------------------------------------------- report


def cmd_report(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.plots.html_report import check_report_path, write_report
    from ccfair.plots.source import open_source
    from ccfair.result import RunResult
    from ccfair.studies.report import build_report

    out = Path(args.out)
    check_report_path(out, "-o")
    source = open_source(args.dir)
    if isinstance(source, RunResult) and args.plan is not None:
        raise InputError("--plan", f"{args.dir} is a single saved run, not a results directory")
    t0 = time.perf_counter()
    with showing_progress(f"report {args.dir}", args.quiet) as bar:
        page = build_report(source, str(args.dir), args.plan, bar)
    write_report(page, out, "-o")
    note(f"wrote {out} ({len(page) / 1e6:.1f} MB, {time.perf_counter() - t0:.1f} s)", args.quiet)
    return EXIT_OK

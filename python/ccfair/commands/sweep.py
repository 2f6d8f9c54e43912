"""Sweeps and their results directory.

- ``ccfair sweep PLAN [--out DIR] [--backend sim|kernel] [--jobs N | --cluster ADDRESS [--cluster-timeout
  DURATION] [--tls-ca-file F --tls-cert F [--tls-key F]]] [--time-limit DURATION] [--retry-failed]
  [--allow-mixed] [--skip-invalid] [--verify] [--dry-run] [--quiet] [--max-memory SIZE] [--max-events N]``:
  run every run of a plan that DIR does not have yet (and those whose files are damaged); exit 0 when every
  run of the plan is done, 1 when some failed (their errors are in the store); ``--dry-run`` also shows the
  runs' estimated memory and events (on the kernel backend, their wall time one after the other)
- ``ccfair status DIR [--verify] [--json]``: done / failed / missing runs per plan, and the cells whose
  repetitions came out identical (a deterministic scenario); ``--verify`` also checks
  the catalog and every done run's files and lists the damaged runs (exit 1 if any)
- ``ccfair query DIR SQL [--json | --csv]``: one SQL statement over the catalog and the time series
- ``ccfair export DIR --format parquet|csv [--to OUT] [--tables T,...]``: one file per table
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair.cli_plans import note_kernel_jobs
from ccfair.cli_support import (
    EXIT_FAILURE,
    EXIT_OK,
    add_backend_option,
    add_command,
    add_limit_options,
    add_output_options,
    check_out_dir,
    note,
    positive_int,
    print_json,
    showing_progress,
)
from ccfair.errors import InputError
from ccfair.progress import format_clock
from ccfair.sweep.identity import SIMULATOR
from ccfair.tables import MISSING, Column, integer, is_missing, render, text
from ccfair.terminal import printable, printable_lines
from ccfair.units import parse_duration_ns

DEFAULT_OUT = "results"
"""Where a sweep writes when neither --out nor the plan's ``out`` says."""

if TYPE_CHECKING:
    from ccfair.resources import Limits
    from ccfair.sweep.expand import Layout
    from ccfair.sweep.plan import Plan


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "sweep", cmd_sweep)
    p.add_argument("plan", metavar="PLAN", help="plan TOML file")
    p.add_argument(
        "--out",
        metavar="DIR",
        help=f"results directory (default: the plan's out, relative to the plan file, else {DEFAULT_OUT}): "
        "new, empty, or a results directory to add to; any other directory is refused",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--jobs", type=positive_int, metavar="N", help="local worker processes (default: all cores)"
    )
    where.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run on the Dask scheduler at ADDRESS (tls://host:8786 with the --tls-* files, or "
        "tcp://host:8786 on a private network: anyone who can join the cluster can run code in the sweep)",
    )
    p.add_argument(
        "--cluster-timeout",
        metavar="DURATION",
        help="how long to wait for the --cluster scheduler before giving up (default 5s)",
    )
    p.add_argument("--tls-ca-file", metavar="FILE", help="tls:// cluster: the CA certificate (PEM)")
    p.add_argument("--tls-cert", metavar="FILE", help="tls:// cluster: this client's certificate (PEM)")
    p.add_argument(
        "--tls-key", metavar="FILE", help="tls:// cluster: this client's private key (unless in --tls-cert)"
    )
    add_backend_option(
        p,
        "run every run on the simulator (sim) or on this machine's Linux TCP (kernel: root, one run "
        "at a time, rates up to the clean rate ccfair doctor measured); default: the plan's backend key, "
        "else sim",
        default=None,
    )
    p.add_argument("--time-limit", metavar="DURATION", help="per-run wall-time limit, e.g. 90s or 10min")
    p.add_argument("--retry-failed", action="store_true", help="run again the runs that failed before")
    p.add_argument(
        "--allow-mixed",
        action="store_true",
        help="resume a plan whose done runs another build of ccfair made (default: refuse, naming both "
        "builds, since the plan's results would mix them)",
    )
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="record cells whose scenario is invalid as failed runs and run the others "
        "(default: refuse the plan)",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="check the checksums of every done run's files before resuming (default: their presence and "
        "size); damaged runs are run again",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="check the plan and count the runs to do; run nothing"
    )
    add_output_options(p, json=None, quiet="no progress or notes on stderr")
    add_limit_options(p)

    p = add_command(commands, "status", cmd_status)
    p.add_argument("dir", metavar="DIR", help="results directory")
    p.add_argument("--verify", action="store_true", help="check the catalog and every done run's files")
    add_output_options(p, json="print one JSON document", quiet=None)

    p = add_command(commands, "query", cmd_query)
    p.add_argument("dir", metavar="DIR", help="results directory")
    p.add_argument(
        "sql", metavar="SQL", help='e.g. "select link_buffer, avg(jain_index) from runs group by 1"'
    )
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the rows as a JSON array")
    form.add_argument("--csv", action="store_true", help="print the rows as CSV")

    p = add_command(commands, "export", cmd_export)
    p.add_argument("dir", metavar="DIR", help="results directory")
    p.add_argument("--format", required=True, choices=("parquet", "csv"), help="file format")
    p.add_argument(
        "--to",
        metavar="OUT",
        help="output directory (default: DIR/export-FORMAT): new, empty, or an earlier export (replaced "
        "atomically); any other directory is refused",
    )
    p.add_argument("--tables", metavar="T,...", help="only these tables (default: all)")
    add_output_options(p, json=None, quiet="no notes on stderr")


# ------------------------------------------------------------------------------------------------------ sweep


def _time_limit_s(value: str | None) -> float | None:
    if value is None:
        return None
    return parse_duration_ns(value, "--time-limit") / 1e9


def cmd_sweep(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.store.layout import RESULTS_KIND
    from ccfair.store.repetitions import plan_repetitions
    from ccfair.sweep.driver import backend_jobs, run_sweep, sweep_limits
    from ccfair.sweep.expand import layout
    from ccfair.sweep.plan import load_plan

    time_limit_s = _time_limit_s(args.time_limit)
    connect_timeout_s = _connect_timeout_s(args)
    plan = with_backend(load_plan(args.plan), args.backend)
    out_arg = args.out if args.out is not None else str(plan.out or DEFAULT_OUT)
    out = check_out_dir(out_arg, RESULTS_KIND, replace=False)
    security = _cluster_security(args)
    jobs = backend_jobs(plan, args.jobs, args.cluster)
    note_kernel_jobs(plan, args.jobs, args.quiet)
    limits = sweep_limits(args.max_memory, args.max_events, jobs=jobs, cluster=args.cluster)
    if args.dry_run:
        lay = layout(plan, skip_invalid=args.skip_invalid, limits=limits)
        return _dry_run(lay, out, limits, jobs if args.cluster is None else None)
    try:
        report = run_sweep(
            plan,
            out,
            jobs=jobs,
            cluster=args.cluster,
            security=security,
            retry_failed=args.retry_failed,
            time_limit_s=time_limit_s,
            skip_invalid=args.skip_invalid,
            verify=args.verify,
            allow_mixed=args.allow_mixed,
            quiet=args.quiet,
            connect_timeout_s=connect_timeout_s,
            limits=limits,
        )
    except KeyboardInterrupt:
        note(f"every finished run is kept in {out}; run the same command again to resume", args.quiet)
        raise
    failures = ", ".join(f"{n} {kind}" for kind, n in sorted(report.failures.items()))
    lines = [
        f"sweep {report.plan}: {report.runs} runs; "
        + (
            f"{report.damaged} done runs found damaged (now failed, kind damaged; this plan's run again), "
            if report.damaged
            else ""
        )
        + f"{report.already_done} done before, "
        + (
            f"{report.skipped_failed} failed before (--retry-failed runs them), "
            if report.skipped_failed
            else ""
        )
        + f"{report.to_run} run now: {report.done} done, {report.failed} failed"
        + (f" ({failures})" if failures else "")
        + f", {format_clock(report.wall_seconds)}; results in {report.out}"
    ]
    if report.failed or report.skipped_failed:
        lines.append(
            f"failed runs and their errors: ccfair query {out_arg} "
            '"select run_id, error_kind, error from runs '
            "where status = 'failed'\""
        )
    identical = plan_repetitions(report.out, report.plan).note()
    if identical is not None:
        lines.append(identical)
    note(printable_lines("\n".join(lines)), args.quiet)  # error kinds come from the workers
    return EXIT_OK if report.failed + report.skipped_failed == 0 else EXIT_FAILURE


def with_backend(plan: Plan, backend: str | None) -> Plan:
    """``plan`` on ``backend`` (``--backend``, which wins over the plan's own key), or as it is (None)."""
    return plan if backend is None else dataclasses.replace(plan, backend=backend)


def _connect_timeout_s(args: argparse.Namespace) -> float:
    from ccfair.sweep.execute_dask import CONNECT_TIMEOUT_S  # pandas: only with --cluster

    if args.cluster_timeout is None:
        return CONNECT_TIMEOUT_S
    if args.cluster is None:
        raise InputError("--cluster-timeout", "applies to --cluster only")
    return parse_duration_ns(args.cluster_timeout, "--cluster-timeout") / 1e9


def _cluster_security(args: argparse.Namespace) -> Any:
    """The TLS settings for ``--cluster`` (None for plain TCP or local workers)."""
    tls = (args.tls_ca_file, args.tls_cert, args.tls_key)
    if args.cluster is None:
        for option, value in zip(("--tls-ca-file", "--tls-cert", "--tls-key"), tls, strict=True):
            if value is not None:
                raise InputError(option, "applies to a tls:// --cluster address only")
        return None
    from ccfair.sweep.execute_dask import cluster_security  # pandas: only with --cluster

    return cluster_security(args.cluster, *tls)


def _dry_run(lay: Layout, out: Path, limits: Limits, jobs: int | None) -> int:
    """The plan's size, what ``out`` has of it, and the estimates of the rest: counted one id at a time
    from its layout, without building every run."""
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.store.layout import catalog_path
    from ccfair.store.reader import query
    from ccfair.sweep.expand import estimate_lines

    plan = lay.plan
    states: dict[str, str] = {}
    if catalog_path(out).is_file():
        frame = query(out, "SELECT run_id, status FROM runs")
        states = dict(zip(frame["run_id"], frame["status"], strict=True))
    ids: dict[str, tuple[int, int]] = {}
    for run_id, cell, k in lay.identities():
        ids.setdefault(run_id, (cell, k))
    done = sum(states.get(i) == "done" for i in ids)
    failed = sum(states.get(i) == "failed" for i in ids)
    cells = len(lay.cells)
    invalid = sum(any(v.invalid is not None for _, v in variants) for variants in lay.variants)
    print(
        f"plan {plan.name}"
        + (" (kernel backend)" if plan.backend != SIMULATOR else "")
        + f": {cells} cells, {len(ids)} runs"
        + (f" ({invalid} invalid cells, recorded as failed)" if invalid else "")
        + f"; in {out}: {done} done, {failed} failed, {len(ids) - done - failed} to run"
    )
    todo = Counter(
        where
        for i, where in ids.items()
        if states.get(i) != "done" and lay.variants[where[0]][where[1]][1].spec is not None
    )
    groups = [(lay.run(0, 0, cell, k), n) for (cell, k), n in todo.items()]
    for line in estimate_lines(groups, limits, jobs, plan.backend):
        print(line)
    return EXIT_OK


# ----------------------------------------------------------------------------------------------------- status


def cmd_status(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.store.repetitions import identical_note
    from ccfair.store.status import store_status

    with showing_progress(f"verifying {args.dir}", quiet=args.json or not args.verify) as bar:
        status = store_status(args.dir, verify=args.verify, progress=bar)
    verified = status.get("verified")
    code = EXIT_FAILURE if verified is not None and verified["damaged"] else EXIT_OK
    if args.json:
        print_json(status)
        return code
    running = status["running"]
    if running is not None:
        if "pid" in running:
            line = f"{args.dir}: a sweep is writing (PID {running['pid']})"
        else:  # no progress published yet: the sweep is creating the directory or checking its plan
            line = f"{args.dir}: a sweep is starting here (no progress written yet)"
        if running.get("plan") is not None:
            line += (
                f"; plan {running['plan']}: {running.get('done')} of {running.get('runs')} runs done, "
                f"{running.get('failed')} failed, {running.get('to_run')} to run in this sweep "
                f"(updated {running.get('updated_at')})"
            )
        say(line)
        if not status["plans"]:
            return EXIT_OK
    if not status["plans"]:
        say(f"{args.dir}: no plans yet")
        return code
    columns = [
        Column("plan", "plan", text, "left"),
        Column("backend", "backend", text, "left"),
        Column("runs", "runs", integer),
        Column("done", "done", integer),
        Column("failed", "failed", integer),
        Column("missing", "missing", integer),
        Column("failures", "failure_text", text, "left"),
    ]
    rows = [
        {**p, "failure_text": ", ".join(f"{n} {kind}" for kind, n in p["failures"].items()) or MISSING}
        for p in status["plans"]
    ]
    print(render(rows, columns, indent=""))
    for p in status["plans"]:
        identical = identical_note(
            p["plan"], p["cells_repeated"], [(c["cell"], c["flipped"]) for c in p["cells_identical"]]
        )
        if identical is not None:
            say(identical)
    if verified is not None:
        _print_verified(args.dir, verified)
    return code


def say(text: str) -> None:
    """Prints a line (or lines) made of what a results directory holds (plan names, errors, the running
    sweep's report), its control characters escaped (:func:`ccfair.terminal.printable`)."""
    print(printable_lines(text))


def _print_verified(directory: str, verified: dict[str, Any]) -> None:
    damaged = verified["damaged"]
    say(f"\nverified the catalog and {verified['runs']} done runs: {len(damaged)} damaged")
    if not damaged:
        return
    for run in damaged:
        plans = ", ".join(run["plans"]) or "no plan"
        say(f"  {run['run_id']} ({plans}): {'; '.join(run['problems'])}")
    again = f"ccfair sweep PLAN --out {directory} --verify"
    say(f"running the sweep of each plan again ({again}) runs them again")


# ------------------------------------------------------------------------------------------------------ query


def _cell(x: Any) -> str:
    if is_missing(x):
        return MISSING
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


MAX_CELL_CHARS = 64
"""A query's table on the terminal cuts longer cells (the runs' scenario_json is thousands of characters, a
table row of it unreadable; a SHA-256 in hex fits); --csv and --json give them whole."""


def _short_cell(x: Any) -> str:
    text = _cell(x)
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def _json_value(x: Any) -> Any:
    """A query value as plain JSON, floats at full precision; NULL and NaN become null."""
    import numpy as np
    import pandas as pd  # only for query results

    if is_missing(x) or x is pd.NaT:
        return None
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return float(x) if np.isfinite(x) else None
    if isinstance(x, str | list | dict):
        return x
    if hasattr(x, "isoformat"):
        return x.isoformat()
    return str(x)


def cmd_query(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.store.reader import query

    frame = query(args.dir, args.sql)
    if args.json:
        print_json(
            [{str(k): _json_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
        )
    elif args.csv:
        # For a person (a terminal), escaped as a table's cells; for a program, the values as stored.
        if sys.stdout.isatty():
            frame = frame.map(lambda v: printable(v) if isinstance(v, str) else v)
        frame.to_csv(sys.stdout, index=False)
    else:
        columns = [Column(str(name), str(name), _short_cell) for name in frame.columns]
        records = [
            dict(zip(map(str, frame.columns), row, strict=True)) for row in frame.itertuples(index=False)
        ]
        cut = [c.key for c in columns if any(len(_cell(r[c.key])) > MAX_CELL_CHARS for r in records)]
        print(render(records, columns, indent=""))
        print(f"({len(frame)} rows)")
        if cut:
            say(  # column names come from the results directory
                f"(cut to {MAX_CELL_CHARS} characters: {', '.join(cut)}; --json or --csv show them whole, "
                "or leave them out: select * exclude (scenario_json, summary_json) from runs)"
            )
    sys.stdout.flush()
    return EXIT_OK


# ----------------------------------------------------------------------------------------------------- export


def cmd_export(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.store.export import EXPORT_TABLES, default_target, export

    tables = (
        EXPORT_TABLES
        if args.tables is None
        else tuple(t.strip() for t in args.tables.split(",") if t.strip())
    )
    if not tables:
        raise InputError("--tables", f"give at least one of {', '.join(EXPORT_TABLES)}")
    target = Path(args.to) if args.to is not None else default_target(Path(args.dir), args.format)
    written = export(
        args.dir,
        args.format,
        target,
        tables,
        progress=lambda table, rows: note(f"{table}: {rows:,} rows", args.quiet),
        progress_bar=not args.quiet and sys.stdout.isatty(),
    )
    note(f"exported {len(written)} tables to {target}", args.quiet)
    return EXIT_OK

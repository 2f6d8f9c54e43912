"""The sweep benchmark (``make bench-sweep``, ``python -m ccfair.sweep.bench [PLAN] [--jobs 1,2] [--json]``).

Runs a plan (default ``plans/bench-sweep.toml``: 80 short runs) three ways and reports:

- ``baseline``: the same runs with ``ccfair.run`` one after the other in this process, nothing stored: the
  cost of the simulations themselves
- one sweep per ``--jobs`` value into a fresh results directory: runs per minute, speed-up over one worker
- the store's cost per run: the writer's commit (Parquet files fsynced and renamed, one DuckDB transaction)
  in wall and CPU time, and the worker's encoding of the tables, as a share of a 1 s run; and the whole
  sweep machinery's extra wall time per run over the baseline with one worker (worker start, transfer,
  encoding, commit)

On a machine shared with other work the wall-clock figures vary from run to run; the load average before
the benchmark is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ccfair.cli_support import EXIT_BAD_INPUT
from ccfair.errors import InputError
from ccfair.runner import run
from ccfair.scenario import Scenario
from ccfair.store.reader import query
from ccfair.sweep.driver import plan_runs, run_sweep
from ccfair.sweep.execute_local import default_jobs
from ccfair.tables import Column, fixed, render, text

DEFAULT_PLAN = Path("plans/bench-sweep.toml")


def baseline_seconds(plan_path: Path) -> tuple[int, float]:
    """(runs, wall seconds) of running every run of the plan in this process without a store."""
    _, runs = plan_runs(plan_path)
    t0 = time.perf_counter()
    for r in runs:
        run(Scenario.from_dict(r.scenario), seed=r.seed)
    return len(runs), time.perf_counter() - t0


def sweep_figures(plan_path: Path, jobs: int, quiet: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ccfair-bench-") as tmp:
        out = Path(tmp) / "results"
        t0 = time.perf_counter()
        report = run_sweep(plan_path, out, jobs=jobs, quiet=quiet)
        wall = time.perf_counter() - t0
        encode = query(out, "SELECT avg(encode_seconds) AS s FROM runs WHERE status = 'done'")["s"].iloc[0]
    return {
        "jobs": jobs,
        "runs": report.done,
        "failed": report.failed,
        "wall_seconds": wall,
        "runs_per_minute": report.done / wall * 60,
        "commit_ms_per_run": report.commit_seconds / max(1, report.done) * 1e3,
        "commit_cpu_ms_per_run": report.commit_cpu_seconds / max(1, report.done) * 1e3,
        "encode_ms_per_run": float(encode) * 1e3,
    }


def bench(plan_path: Path, jobs: list[int], quiet: bool = True) -> dict[str, Any]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    n, base_s = baseline_seconds(plan_path)
    sweeps = [sweep_figures(plan_path, j, quiet) for j in jobs]
    one = next((s for s in sweeps if s["jobs"] == 1), None)
    for s in sweeps:
        s["speedup"] = s["runs_per_minute"] / one["runs_per_minute"] if one else float("nan")
        s["store_share_of_1s_run"] = (s["commit_ms_per_run"] + s["encode_ms_per_run"]) / 1e3
    return {
        "plan": str(plan_path),
        "runs": n,
        "cpus": default_jobs(),
        "load_average_before": load,
        "baseline": {
            "wall_seconds": base_s,
            "runs_per_minute": n / base_s * 60,
            "mean_run_seconds": base_s / n,
        },
        "sweeps": sweeps,
        "sweep_overhead_ms_per_run": (one["wall_seconds"] - base_s) / n * 1e3 if one else None,
    }


def report_text(result: dict[str, Any]) -> str:
    base = result["baseline"]
    rows = [
        {"what": "baseline (ccfair.run in a loop, no store)", "runs_per_minute": base["runs_per_minute"]},
        *(
            {
                "what": f"sweep, {s['jobs']} worker{'s' if s['jobs'] > 1 else ''}",
                "runs_per_minute": s["runs_per_minute"],
                "speedup": s["speedup"],
                "commit": s["commit_ms_per_run"],
                "commit_cpu": s["commit_cpu_ms_per_run"],
                "encode": s["encode_ms_per_run"],
                "share": s["store_share_of_1s_run"] * 100,
            }
            for s in result["sweeps"]
        ),
    ]
    columns = [
        Column("", "what", text, "left"),
        Column("runs/min", "runs_per_minute", fixed(0)),
        Column("vs 1 worker", "speedup", fixed(2)),
        Column("commit ms/run", "commit", fixed(1)),
        Column("(CPU ms)", "commit_cpu", fixed(1)),
        Column("encode ms/run", "encode", fixed(1)),
        Column("store % of a 1 s run", "share", fixed(1)),
    ]
    lines = [
        f"{result['plan']}: {result['runs']} runs, "
        f"mean {base['mean_run_seconds'] * 1e3:.0f} ms of simulation each; {result['cpus']} CPUs, "
        f"load average {result['load_average_before'] or 0:.1f} before",
        render(rows, columns),
    ]
    if result["sweep_overhead_ms_per_run"] is not None:
        lines.append(
            f"  sweep machinery with 1 worker (start, transfer, encoding, commit): "
            f"{result['sweep_overhead_ms_per_run']:.0f} ms per run over the baseline"
        )
    return "\n".join(lines) + "\n"


def _jobs_list(value: str) -> list[int]:
    try:
        jobs = [int(j) for j in value.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected worker counts such as 1,2, got {value!r}") from None
    if not jobs or min(jobs) < 1:
        raise argparse.ArgumentTypeError(f"worker counts must be at least 1, got {value!r}")
    return jobs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ccfair.sweep.bench", description=__doc__.splitlines()[0])
    parser.add_argument("plan", nargs="?", type=Path, default=DEFAULT_PLAN, help="plan TOML file")
    parser.add_argument(
        "--jobs",
        type=_jobs_list,
        default=[1, 2],
        help="worker counts to measure, comma-separated (default 1,2)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    try:
        result = bench(args.plan, args.jobs, quiet=args.quiet)
    except InputError as e:
        print(f"error: {e.field}: {e.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        sys.stdout.write(report_text(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

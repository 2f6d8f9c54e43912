"""``ccfair reproduce``: a published fairness study run end to end and scored against its findings.

- ``ccfair reproduce --list [--json]``: the studies, their scales, runs and estimated wall time
- ``ccfair reproduce STUDY [--scale quick|full] [--out DIR] [--jobs N | --cluster ADDRESS] [--repetitions N]
  [--backend sim|kernel] [--retry-failed] [--time-limit D] [--dry-run] [--json] [--quiet] [limits]``

The study's plans and runs go into the results directory like a sweep's (``status``, ``query``, ``plot``,
``report`` read them; the same command resumes); its figures (``fig-*.png``), ``scorecard.json`` and
``scorecard.html`` are written beside them. The studies are :mod:`ccfair.studies.reproduce`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ccfair.cli_support import EXIT_FAILURE, EXIT_OK, examples, note, positive_int, print_json
from ccfair.commands.harm import add_sweep_options
from ccfair.errors import ScenarioError

SCALES = ("quick", "full")
BACKENDS = ("sim", "kernel")


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = commands.add_parser(
        "reproduce",
        help="run a published fairness study end to end and score its findings",
        description="Run the experiments of a published fairness study, draw its figures in the paper's "
        "style and write a scorecard (scorecard.json, scorecard.html): one row per stated finding with the "
        "paper's statement, the setup, the value ccfair measured (mean, spread, n over repetitions), the "
        "tolerance and a verdict (agrees, disagrees, cannot tell, or not measured when this build lacks a "
        "feature the finding needs). The runs go into the results directory as sweep plans, so status, "
        "query, plot and report work on it; Ctrl-C keeps the finished runs and the same command resumes.",
        epilog=examples(
            "ccfair reproduce --list                                  # studies, scales, estimated time",
            "ccfair reproduce rueth-tma19 --out repro/rueth           # the quick scale",
            "ccfair reproduce philip-imc21 --scale full --cluster tcp://scheduler:8786",
            "ccfair reproduce sasaki-cloudnet18 --dry-run             # runs and estimates, nothing run",
        ),
    )
    p.add_argument("study", metavar="STUDY", nargs="?", help="the study (see --list)")
    p.add_argument("--list", action="store_true", help="list the studies with their scales and estimates")
    p.add_argument("--scale", choices=SCALES, default="quick", help="quick (default) or full (the paper's)")
    p.add_argument(
        "--repetitions", type=positive_int, metavar="N", help="repetitions per setting (default: the scale's)"
    )
    p.add_argument(
        "--backend", choices=BACKENDS, default="sim", help="sim (default) or kernel (where the study fits)"
    )
    p.add_argument("--retry-failed", action="store_true", help="run again the runs that failed before")
    add_sweep_options(p, out_default=None)
    p.set_defaults(handler=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from ccfair.studies.reproduce import get_study, study_names

    if args.list:
        if args.study is not None:
            raise ScenarioError("--list", "lists every study; give either --list or STUDY")
        return list_studies(args)
    if args.study is None:
        raise ScenarioError("STUDY", f"give a study ({', '.join(study_names())}) or --list")
    study = get_study(args.study)
    if args.backend == "kernel":
        raise ScenarioError(
            "--backend",
            "the sweep layer of this build runs only the simulator, so a study cannot run on the kernel yet; "
            f"allowed now: sim. Where {study.name} would fit the kernel: "
            + "; ".join(f"{s}: {info.kernel}" for s, info in study.scales.items()),
        )
    repetitions = args.repetitions or study.scales[args.scale].repetitions
    return reproduce(study, args.scale, repetitions, args)


def reproduce(study: Any, scale: str, repetitions: int, args: argparse.Namespace) -> int:
    from ccfair.cli_support import check_out_dir
    from ccfair.store.layout import RESULTS_KIND
    from ccfair.studies.reproduce.outputs import check_outputs, write_outputs
    from ccfair.studies.run import dry_run, run_plans

    parts = study.plans(scale, repetitions)
    plans = [plan for _, plan in parts]
    out = check_out_dir(args.out or f"repro/{study.name}", RESULTS_KIND, replace=False)
    if args.dry_run:
        return dry_run(plans, out, args)
    check_outputs(out)
    reports = run_plans(plans, out, args)
    document = write_outputs(study, scale, repetitions, parts, out, args.quiet)
    failed = sum(r.failed + r.skipped_failed for r in reports)
    if args.json:
        print_json(document)
    else:
        sys.stdout.write(scorecard_text(document))
        sys.stdout.flush()
    if failed:
        note(f"{failed} runs failed (ccfair status {out}; --retry-failed runs them again)", args.quiet)
        return EXIT_FAILURE
    return EXIT_OK


def scorecard_text(document: dict[str, Any]) -> str:
    from ccfair.studies.reproduce.scorecard import Row, value_text
    from ccfair.tables import Column, render, text

    rows = []
    for r in (Row(**f) for f in document["findings"]):
        rows.append(
            {
                "key": r.key,
                "paper": r.paper_value,
                "value": value_text(r),
                "tolerance": r.tolerance,
                "verdict": r.verdict,
            }
        )
    columns = [
        Column("finding", "key", text, "left"),
        Column("paper", "paper", text, "left"),
        Column("ccfair", "value", text, "left"),
        Column("tolerance", "tolerance", text, "left"),
        Column("verdict", "verdict", text, "left"),
    ]
    counts = ", ".join(f"{n} {v}" for v, n in document["counts"].items())
    return (
        f"{document['title']}, {document['scale']} scale, {document['repetitions']} repetitions\n\n"
        + render(rows, columns, indent="")
        + f"\n\n{counts}\n"
    )


def list_studies(args: argparse.Namespace) -> int:
    from ccfair.studies.reproduce import get_study, study_names
    from ccfair.studies.reproduce.estimate import scale_estimate
    from ccfair.tables import Column, render, text

    rows = []
    for name in study_names():
        study = get_study(name)
        for scale, info in study.scales.items():
            rows.append(
                {
                    "study": name,
                    "scale": scale,
                    **scale_estimate(study, scale, info.repetitions, args.jobs),
                    "kernel": info.kernel,
                }
            )
    if args.json:
        print_json({"studies": rows})
        return EXIT_OK
    columns = [
        Column("study", "study", text, "left"),
        Column("scale", "scale", text, "left"),
        Column("repetitions", "repetitions", text),
        Column("runs", "runs", text),
        Column("events (estimate)", "events_text", text),
        Column("wall time (estimate)", "wall_text", text, "left"),
        Column("kernel backend", "kernel", text, "left"),
    ]
    from ccfair.resources import NOMINAL_EVENTS_PER_SECOND

    sys.stdout.write(
        render(rows, columns, indent="")
        + "\n\nwall times are estimates: the simulator's event estimate of every run at "
        f"{NOMINAL_EVENTS_PER_SECOND / 1e6:.0f} M events/s per core (ccfair bench measures this machine), "
        "divided among the local workers; storing and analysis add a little\n"
    )
    return EXIT_OK

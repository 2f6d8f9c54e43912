"""``ccfair reproduce``: a published fairness study run end to end and scored against its findings.

- ``ccfair reproduce --list [--json]``: the studies, their scales, runs and estimated wall time
- ``ccfair reproduce STUDY [--scale quick|standard|full] [--out DIR] [--jobs N | --cluster ADDRESS]
  [--repetitions N] [--backend sim|kernel] [--retry-failed] [--time-limit D] [--dry-run] [--json] [--quiet]
  [limits]``

The study's plans and runs go into the results directory like a sweep's (``status``, ``query``, ``plot``,
``report`` read them; the same command resumes); its figures (``fig-*.png``), ``scorecard.json`` and
``scorecard.html`` are written beside them. The studies are :mod:`ccfair.studies.reproduce`.

``--backend kernel`` runs the study's plans on the sweep layer's kernel backend (plans of their own, named
``repro-STUDY-kernel-...``, one run at a time). Every plan is checked before anything runs, by the sweep
layer's own rules: a scale whose link rate is above the clean rate ``ccfair doctor`` measured, or that needs
what the kernel backend cannot run (L4S ECN, a congestion control this kernel lacks), is refused with exit
code 2 and nothing written.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ccfair.cli_plans import add_sweep_options, note_kernel_jobs
from ccfair.cli_support import (
    EXIT_FAILURE,
    EXIT_OK,
    add_backend_option,
    add_command,
    check_out_dir,
    note,
    options_named,
    positive_int,
    print_json,
)
from ccfair.errors import InputError
from ccfair.speed import available_cores, host_speed
from ccfair.studies.reproduce.scales import DEFAULT_SCALE, SCALES
from ccfair.sweep.identity import SIMULATOR
from ccfair.tables import Column, render, text


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "reproduce", cmd_reproduce)
    p.add_argument("study", metavar="STUDY", nargs="?", help="the study (see --list)")
    p.add_argument("--list", action="store_true", help="list the studies with their scales and estimates")
    p.add_argument(
        "--scale",
        choices=SCALES,
        default=DEFAULT_SCALE,
        help="quick (default: the paper's structure in a minute or two), standard (the full scale's points "
        "with fewer repetitions: the published reference results) or full (the paper's)",
    )
    p.add_argument(
        "--repetitions", type=positive_int, metavar="N", help="repetitions per setting (default: the scale's)"
    )
    add_backend_option(
        p,
        "sim (default) or kernel (real Linux TCP, root, one run at a time; a scale above the clean rate "
        "ccfair doctor measured is refused)",
    )
    add_sweep_options(p, out_default=None, retry_failed=True)


def cmd_reproduce(args: argparse.Namespace) -> int:
    # The studies (pandas, the store, the figures) load in the handlers only: the parser imports this module.
    from ccfair.studies.reproduce import get_study, study_names

    if args.list:
        if args.study is not None:
            raise InputError("--list", "lists every study; give either --list or STUDY")
        return list_studies(args)
    if args.study is None:
        raise InputError("STUDY", f"give a study ({', '.join(study_names())}) or --list")
    study = get_study(args.study)
    repetitions = args.repetitions or study.scales[args.scale].repetitions
    with options_named({"repetitions": "--repetitions"}):
        return reproduce(study, args.scale, repetitions, args)


def reproduce(study: Any, scale: str, repetitions: int, args: argparse.Namespace) -> int:
    from ccfair.store.layout import RESULTS_KIND  # DuckDB
    from ccfair.studies.reproduce.outputs import check_outputs, write_outputs
    from ccfair.studies.run import check_size, dry_run, run_plans

    parts = study.plans(scale, repetitions, args.backend)
    plans = [plan for _, plan in parts]
    check_size(plans)
    check_plans(study, scale, plans, args)
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


def check_plans(study: Any, scale: str, plans: list[Any], args: argparse.Namespace) -> None:
    """Expands every plan before anything runs or is written, so a scale the backend cannot run (on the
    kernel: a rate above the clean rate, L4S ECN, a missing congestion control) is refused up front, by the
    sweep layer's own checks, with the scale's kernel note. A dry run's simulator plans are left to the dry
    run, which expands them itself and refuses the same cells."""
    # The sweep layer (pandas, DuckDB): in the handler only, like the studies.
    from ccfair.sweep.driver import backend_jobs, plan_runs

    for plan in plans:
        backend_jobs(plan, args.jobs, args.cluster)  # the kernel backend refuses --cluster
        if args.dry_run and plan.backend == SIMULATOR:
            continue
        try:
            plan_runs(plan, quiet=True, limits=None)
        except InputError as e:
            if plan.backend == SIMULATOR:
                raise
            raise InputError(
                e.field,
                f"{study.name} at the {scale} scale cannot run on the {plan.backend} backend: {e.message} "
                f"[plan {plan.name}; {study.scales[scale].kernel}]",
            ) from None
    if plans:
        note_kernel_jobs(plans[0], args.jobs, args.quiet)


def scorecard_text(document: dict[str, Any]) -> str:
    from ccfair.studies.reproduce.scorecard import Row, value_text  # NumPy and the plots' statistics

    rows = []
    for r in (Row(**f) for f in document["findings"]):
        rows.append(
            {
                "key": r.key,
                "paper": r.paper_value,
                "value": value_text(r),
                "tolerance": r.tolerance,
                # A value that rests on a reconstruction says so beside its verdict.
                "verdict": f"{r.verdict} (reconstruction)" if r.reconstruction else r.verdict,
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

    sys.stdout.write(
        render(rows, columns, indent="")
        + "\n\ntimes are estimates: the simulator's event estimate of every run at "
        f"{host_speed().text()}, and the wall time on the local workers at the load now "
        f"({available_cores():.1f} cores free); storing and analysis add a little\n"
    )
    return EXIT_OK

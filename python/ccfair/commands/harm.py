"""``ccfair harm``: is a newcomer congestion control safe to deploy next to an incumbent?

- ``ccfair harm NEWCOMER --against INCUMBENT [--suite quick|standard|FILE] [--backend sim|kernel] [--out DIR]
  [--jobs N | --cluster ADDRESS] [--tolerance H] [--figure FILE] [--json] [--dry-run] [--quiet]
  [--time-limit D] [limits]``
- ``ccfair harm SCENARIO.toml --new "flows[1]" --against "flows[0]" ...``: the two groups of a scenario file

The runs go into the results directory as three plans (:mod:`ccfair.studies.harm_plan`); the analysis is
:mod:`ccfair.studies.harm`. With ``--backend kernel`` every run of the study runs on this machine's Linux TCP,
one at a time; a suite whose rate is above the clean rate ``ccfair doctor`` measured is refused before
anything runs (every scenario of a suite shares its rate).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ccfair.cli_plans import add_figure_option, add_sweep_options, check_figure, note_kernel_jobs
from ccfair.cli_support import (
    EXIT_OK,
    add_backend_option,
    add_command,
    check_out_dir,
    finite_float,
    note,
    options_named,
    print_json,
)
from ccfair.errors import InputError
from ccfair.sweep.identity import SIMULATOR
from ccfair.units import parse_rate_bps


def _tolerance(value: str) -> float:
    x = finite_float(value)
    if not 0.0 <= x < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {value}")
    return x


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "harm", cmd_harm)
    p.add_argument(
        "newcomer", metavar="NEWCOMER", help="a congestion control (ccfair list) or a scenario file"
    )
    p.add_argument(
        "--against",
        required=True,
        metavar="INCUMBENT",
        help="the incumbent: a congestion control, or flows[N] of the scenario file",
    )
    p.add_argument("--new", metavar="flows[N]", help="with a scenario file: the newcomer's flow group")
    p.add_argument("--suite", default="standard", help="quick, standard (default) or a suite TOML file")
    add_backend_option(
        p,
        "where every run of the study runs: sim (default) or kernel (this machine's Linux TCP, root, "
        "one run at a time; a kernel-only newcomer is written kernel:NAME)",
    )
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        default=None,
        help="harm the newcomer may do beyond the incumbent's own before it fails the bar (default 0.05)",
    )
    add_figure_option(p, "the summary figure: each scenario's harm, numbered, with a key")
    add_sweep_options(p)


def _groups(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    # The study modules load when a study runs, not when the parser imports this module.
    from ccfair.studies.harm_plan import group_from_cc, group_from_file, same_group

    source = args.newcomer
    if _from_file(args):
        if args.new is None:
            raise InputError(
                "--new", 'with a scenario file give the newcomer\'s group, e.g. --new "flows[1]"'
            )
        incumbent = group_from_file(source, args.against, "--against", args.backend)
        newcomer = group_from_file(source, args.new, "--new", args.backend)
        if same_group(args.new, args.against):
            raise InputError(
                "--new",
                f"{args.new} is the group --against names: the newcomer is another group of the scenario "
                "(a copy of the incumbent's, to measure its harm to itself, is a group of its own)",
            )
        return incumbent, newcomer
    if args.new is not None:
        raise InputError("--new", "applies to a scenario file; NEWCOMER here is a congestion control")
    return group_from_cc(args.against, "--against", args.backend), group_from_cc(
        source, "NEWCOMER", args.backend
    )


def _from_file(args: argparse.Namespace) -> bool:
    """Whether NEWCOMER names a scenario file (and --against, --new its groups)."""
    source = args.newcomer
    return bool(source.endswith(".toml") or Path(source).is_file())


def check_suite_rate(suite: Any, backend: str) -> None:
    """On the kernel backend, the suite's rate (every scenario's) against the clean rate ``ccfair doctor``
    measured here; an InputError on ``suite.rate`` naming both."""
    if backend == SIMULATOR:
        return
    from ccfair.emu.doctor import check_rate  # the kernel backend loads for kernel studies only

    try:
        check_rate(parse_rate_bps(suite.rate, "suite.rate"))
    except InputError as e:
        raise InputError("suite.rate", f"suite {suite.name}: {e.message}") from None


def study_title(newcomer: str, incumbent: str, suite: str, backend: str) -> str:
    """``harm of bbr to cubic, suite quick`` (and ``, kernel backend`` for a kernel study)."""
    where = "" if backend == SIMULATOR else f", {backend} backend"
    return f"harm of {newcomer} to {incumbent}, suite {suite}{where}"


def cmd_harm(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.store.layout import RESULTS_KIND
    from ccfair.studies.harm import DEFAULT_TOLERANCE, analyse, harm_text, to_json
    from ccfair.studies.harm_plan import harm_plans, suite_error, suite_scenarios
    from ccfair.studies.run import dry_run, run_plans
    from ccfair.studies.suites import load_suite
    from ccfair.sweep.expand import CellError

    incumbent, newcomer = _groups(args)
    suite = load_suite(args.suite)
    check_suite_rate(suite, args.backend)
    tolerance = DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance
    plans = harm_plans(suite, incumbent, newcomer, args.backend)
    out = check_out_dir(args.out, RESULTS_KIND, replace=False)
    figure = check_figure(args.figure, out, plans.vs.name)
    ordered = [plans.solo, plans.self_, plans.vs]
    note_kernel_jobs(plans.vs, args.jobs, args.quiet)
    options = {"incumbent": "--against", "newcomer": "--new" if _from_file(args) else "NEWCOMER"}
    try:
        with options_named({"repetitions": "suite.repetitions"}):
            if args.dry_run:
                return dry_run(ordered, out, args)
            run_plans(ordered, out, args)
    except CellError as e:
        raise suite_error(e, plans, options) from None
    result = analyse(
        out,
        {role: plan.name for role, plan in plans.by_role().items()},
        suite_scenarios(suite),
        suite.repetitions,
        suite.measure_start,
        tolerance,
    )
    title = study_title(newcomer["cc"], incumbent["cc"], suite.name, args.backend)
    if figure is not None:
        from ccfair.plots.output import save_figure
        from ccfair.studies.figures import harm_figure

        save_figure(harm_figure(result, title), figure, "--figure")
        note(f"figure: {figure}", args.quiet)
    if args.json:
        print_json(
            {
                "newcomer": newcomer,
                "incumbent": incumbent,
                "suite": suite.name,
                "backend": args.backend,
                **to_json(result),
            }
        )
        return EXIT_OK
    sys.stdout.write(harm_text(result, title, suite.repetitions))
    sys.stdout.flush()
    return EXIT_OK

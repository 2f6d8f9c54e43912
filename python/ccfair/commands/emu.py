"""The kernel backend's commands.

- ``ccfair doctor [--max-rate RATE] [--rates R,R,...] [--seconds N] [--no-measure] [--json]``: this host's
  support for kernel runs (root, namespaces, veth, the emulator, the kernel's congestion controls) and the
  forwarder's clean rate, which it keeps for later runs (a new measurement replaces the earlier one's
  probes at the rates it measured, and those it contradicts); exit code 1 when a check fails or no rate is
  clean
- ``ccfair compare FILE [--repetitions N] [--seed N] [--json] [--quiet]``: the scenario N times in the
  simulator and N times on the kernel; per-class shares, Jain's index, utilization and queue delay side by
  side with their spread (mean ± sd over the repetitions of each backend), the difference, and whether the
  simulator's repetitions were identical (a deterministic scenario)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ccfair.cli_support import (
    EXIT_FAILURE,
    EXIT_OK,
    add_command,
    add_output_options,
    note,
    positive_int,
    print_json,
    seed_arg,
    showing_progress,
)
from ccfair.errors import InputError
from ccfair.scenario import check_seed
from ccfair.units import format_rate, parse_rate_bps


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "doctor", cmd_doctor)
    p.add_argument("--max-rate", metavar="RATE", help="measure up to this rate (default 2Gbps)")
    p.add_argument("--rates", metavar="R,R,...", help="exactly these rates (e.g. 100Mbps,1Gbps)")
    p.add_argument("--seconds", type=positive_int, default=None, help="seconds per rate (default 4)")
    p.add_argument("--no-measure", action="store_true", help="only the checks; keep the saved measurement")
    add_output_options(p, json="print one JSON document", quiet=None)

    p = add_command(commands, "compare", cmd_compare)
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument(
        "--repetitions", type=positive_int, default=3, metavar="N", help="runs per backend (default 3)"
    )
    p.add_argument("--seed", type=seed_arg, help="first simulator seed (default: the scenario's, else 1)")
    add_output_options(p, json="print one JSON document instead of a table", quiet="no progress on stderr")


def _rates(args: argparse.Namespace) -> list[int]:
    # The kernel backend (subprocesses, sockets) loads for its commands only: the parser imports this module.
    from ccfair.emu import probe

    if args.rates:
        return [parse_rate_bps(r.strip(), "--rates") for r in args.rates.split(",") if r.strip()]
    top = parse_rate_bps(args.max_rate, "--max-rate") if args.max_rate else max(probe.DEFAULT_RATES_BPS)
    ladder = [r for r in probe.DEFAULT_RATES_BPS if r <= top]
    if not ladder or ladder[-1] != top:
        ladder.append(top)
    return ladder


def cmd_doctor(args: argparse.Namespace) -> int:
    # The kernel backend (subprocesses, sockets) loads for its commands only: the parser imports this module.
    from ccfair.emu import doctor, probe

    if args.seconds is not None and not 2 <= args.seconds <= 60:
        raise InputError("--seconds", f"must be between 2 and 60, got {args.seconds}")
    rates = _rates(args)
    if not args.no_measure:
        doctor.check_writable()
    checks = doctor.checks()
    ok = all(c[1] for c in checks)
    if not args.json:
        for what, good, detail in checks:
            print(f"  {'ok ' if good else 'NO '} {what}: {detail}")
        sys.stdout.flush()
    measurement = doctor.load_measurement()
    if not args.no_measure:
        if not ok:
            failed = ", ".join(c[0] for c in checks if not c[1])
            if args.json:
                _print_doctor_json(checks, measurement, ok=False)
            print(
                f"error: doctor: cannot measure the forwarder: {failed} not available (see above)",
                file=sys.stderr,
            )
            return EXIT_FAILURE

        def report(result: dict[str, Any]) -> None:
            if not args.json:
                print(_probe_line(result))
                sys.stdout.flush()

        if not args.json:
            print(
                "Forwarder (full-size frames at 105 % of the rate; lateness = send time - ideal departure):"
            )
        measurement = probe.measure(rates, args.seconds or probe.PROBE_SECONDS, report)
        path = doctor.save_measurement(measurement)
        note(f"saved to {path}", args.json)
    clean = None if measurement is None else measurement["clean_rate_bps"]
    ok = ok and clean != 0
    if args.json:
        _print_doctor_json(checks, measurement, ok=ok)
    elif clean is not None:
        if clean:
            print(f"Clean rate: {format_rate(clean)}")
        else:
            print(
                f"Clean rate: none ({doctor.no_clean_rate_reason(measurement or {})}): kernel runs are "
                f"refused until a rate measures clean; {doctor.no_clean_rate_advice(measurement or {})}"
            )
    return EXIT_OK if ok else EXIT_FAILURE


def _print_doctor_json(
    checks: list[tuple[str, bool, str]], measurement: dict[str, Any] | None, *, ok: bool
) -> None:
    print_json(
        {
            "ok": ok,
            "checks": [{"what": w, "ok": g, "detail": d} for w, g, d in checks],
            "measurement": measurement,
        }
    )


def _probe_line(p: dict[str, Any]) -> str:
    def us(x: Any) -> str:
        return "-" if x is None else f"{x / 1e3:.1f} us"

    lost = p["frames_lost_in_emulator"]
    verdict = (
        "clean" if p["clean"] else "NOT clean" + (f" ({lost} frames lost in the emulator)" if lost else "")
    )
    late = f"p50 {us(p['lateness_p50_ns'])}, p99 {us(p['lateness_p99_ns'])}, max {us(p['lateness_max_ns'])}"
    rate = format_rate(p["rate_bps"])
    return f"  {rate:>9}: utilization {p['utilization'] * 100:5.1f} %, lateness {late}: {verdict}"


def cmd_compare(args: argparse.Namespace) -> int:
    # The kernel backend (subprocesses, sockets) loads for its commands only: the parser imports this module.
    from ccfair.analysis.stats import identical  # pandas and SciPy
    from ccfair.emu import compare
    from ccfair.emu.run import preflight, run_kernel
    from ccfair.runner import run
    from ccfair.scenario import kernel_scenario

    if not 1 <= args.repetitions <= 100:
        raise InputError("--repetitions", f"must be between 1 and 100, got {args.repetitions}")
    sc = kernel_scenario(args.file)
    try:  # both backends must accept it before anything runs
        sim_sc = sc.simulator_scenario()
    except InputError as e:
        raise InputError(e.field, f"the simulator cannot run this scenario: {e.message}") from None
    preflight(sc.resolve())
    first = check_seed(sc.effective_seed(args.seed))
    names = compare.class_names(sc)
    sim, kernel = [], []
    sim_outcomes, kernel_outcomes = [], []
    loops: list[float] = []
    for i in range(args.repetitions):
        for backend in ("sim", "kernel"):
            with showing_progress(f"{backend} {i + 1}/{args.repetitions}", args.quiet) as bar:
                if backend == "sim":
                    result = run(sim_sc, seed=first + i, progress=bar)
                    sim.append(compare.metrics_of(result, names))
                    sim_outcomes.append(compare.outcome_of(result))
                else:
                    result = run_kernel(sc, seed=first + i, progress=bar)
                    if result.summary.get("emulator_limited"):
                        note(f"warning: kernel run {i + 1}: {result.summary['emulator_note']}", args.quiet)
                    kernel.append(compare.metrics_of(result, names))
                    kernel_outcomes.append(compare.outcome_of(result))
                    loops.append(compare.kernel_loop_ns(result.summary))
    rows = compare.compare_table(sim, kernel)
    sim_identical = identical(sim_outcomes)
    if args.json:
        document = {
            "repetitions": args.repetitions,
            "rows": rows,
            "simulator_identical": sim_identical,
            "kernel_identical": identical(kernel_outcomes),
            "kernel_loop_ns": loops,
            "simulator_runs": sim,
            "kernel_runs": kernel,
        }
        print_json(document)
    else:
        print(f"{args.file}: {args.repetitions} runs per backend (simulator seeds from {first})")
        print(compare.render_table(rows))
        print(compare.identical_line(args.repetitions, sim_identical))
        line = compare.loop_line(loops)
        if line is not None:
            print(line)
    return EXIT_OK

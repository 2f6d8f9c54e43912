import json
import math
from dataclasses import replace

import pandas.testing
import pytest

from ccfair.bench import (
    BENCH_SEED,
    BenchResult,
    all_cases,
    bench_json,
    bench_report,
    benchmarks,
    cases_report,
    check_memory_probe,
    combine,
    corescale,
    first_half,
    many_flows,
    memory_json,
    memory_probe,
    memory_probe_bytes,
    memory_report,
    run_in_child,
    select,
    steady_json,
    steady_report,
    steady_state,
)
from ccfair.cli import main
from ccfair.cli_support import print_json
from ccfair.errors import InputError
from ccfair.resources import Limits
from ccfair.runner import run


def test_benchmark_scenarios():
    full = benchmarks()
    assert [b.name for b in full] == ["A", "B", "C", "D", "E", "F"]
    assert [b.name for b in benchmarks(quick=True)] == ["A", "B"]
    a, b, c, d = (m.scenario for m in full[:4])
    assert (a.link.rate_bps, a.flow_count(), a.duration_ns) == (10**7, 2, 60 * 10**9)
    assert [g.cc for g in a.flows] == ["reno", "cubic"] and a.base_rtt_ns() == 50_000_000
    assert (b.link.rate_bps, b.flow_count(), b.duration_ns, b.base_rtt_ns()) == (10**9, 10, 30 * 10**9, 10**7)
    assert b.buffer_limit() == {"packets": round(10**9 * 0.01 * 0.5 / 8 / 1500)}
    assert (c.link.rate_bps, c.flow_count(), c.duration_ns, c.base_rtt_ns()) == (
        10**10,
        1000,
        10**10,
        2 * 10**7,
    )
    # D is B with five of the ten flows BBRv1.
    assert (d.link.rate_bps, d.flow_count(), d.duration_ns, d.base_rtt_ns()) == (10**9, 10, 30 * 10**9, 10**7)
    assert d.buffer_limit() == b.buffer_limit()
    assert sorted((g.cc, g.count) for g in d.flows) == [("bbr", 5), ("cubic", 5)]
    for m in full:
        m.scenario.validate()


def test_bench_output():
    r = BenchResult("A", "desc", 60.0, 1_000_000, 0.5, 2e6, 0.5 / 60, cpu_seconds=0.25, flows=2)
    assert bench_json([r]) == {
        "benchmarks": [
            {
                "name": "A",
                "description": "desc",
                "sim_seconds": 60.0,
                "events": 1_000_000,
                "wall_seconds": 0.5,
                "events_per_second": 2e6,
                "wall_seconds_per_sim_second": 0.5 / 60,
                "cpu_seconds": 0.25,
                "flows": 2,
                "events_per_cpu_second": 4e6,
            }
        ]
    }
    text = bench_report([r])
    assert "M ev/s" in text and "2.00" in text and "1,000,000" in text
    # The CPU figures beside the wall's: on a machine the run shared, events per CPU second still compare.
    assert "M ev/CPU-s" in text and "4.00" in text and "0.25" in text


def test_scaled_cases_are_opt_in_and_match_their_settings():
    assert [b.name for b in benchmarks()] == ["A", "B", "C", "D", "E", "F"]  # not run by default
    assert [b.name for b in all_cases()][6:] == ["corescale", "flows100k"]
    core = corescale().scenario
    # CoreScale of Philip et al.: 10 Gbps, 375 MB drop-tail, 5000 flows, 100 ms, starts spread.
    assert (core.link.rate_bps, core.flow_count(), core.base_rtt_ns()) == (10**10, 5000, 10**8)
    assert core.buffer_limit() == {"bytes": 375_000_000}
    assert core.link.aqm.name == "fifo" and [g.cc for g in core.flows] == ["cubic"]
    assert core.flows[0].arrivals is not None and core.duration_ns == 20 * 10**9
    many = many_flows().scenario
    assert (many.flow_count(), many.link.rate_bps) == (100_000, 10**10)
    assert many_flows().measure_memory and not corescale().measure_memory
    for b in all_cases():
        b.scenario.validate()
    assert "only with --case" in cases_report(all_cases())


def test_select_applies_overrides_to_scalable_cases_only():
    small = select(["corescale", "FLOWS100K"], flows=50, duration="1s")
    assert [(b.name, b.scenario.flow_count(), b.scenario.duration_ns) for b in small] == [
        ("corescale", 50, 10**9),
        ("flows100k", 50, 10**9),
    ]
    with pytest.raises(InputError) as e:
        select(["B", "corescale"], flows=50)
    assert e.value.field == "--flows" and "B" in e.value.message
    with pytest.raises(InputError) as e:
        select(["G"])
    assert e.value.field == "--case" and "corescale" in e.value.message


def test_preset_puts_every_chosen_case_on_that_host():
    plain = select(["C", "corescale"])
    hosted = select(["C", "corescale"], preset="testbed")
    for p, h in zip(plain, hosted, strict=True):
        assert h.description == f"{p.description}, testbed host"
        assert (h.scenario.flow_count(), h.scenario.duration_ns) == (
            p.scenario.flow_count(),
            p.scenario.duration_ns,
        )
        groups = json.loads(h.scenario.resolution().spec_json)["groups"]
        assert all(g["host"]["preset"] == "testbed" and g["host"]["tso"] for g in groups)
        assert all("host" not in g for g in json.loads(p.scenario.resolution().spec_json)["groups"])
    with pytest.raises(InputError) as e:
        select(["A"], preset="lab")
    assert e.value.field == "--preset" and "'testbed'" in e.value.message


@pytest.mark.slow
def test_memory_case_reports_its_peak_and_refuses_what_cannot_fit():
    mark = select(["flows100k"], flows=200, duration="500ms")[0]
    r = run_in_child(mark, quiet=True, limits=Limits(None, None))
    assert r.memory is not None and r.memory.flows == 200 and r.events > 0
    # The run's own process grew beyond the interpreter's peak before it.
    assert r.memory.max_rss_bytes > r.memory.baseline_rss_bytes > 0
    assert 0 < r.memory.flow_estimate_bytes < r.memory.estimate_bytes
    d = bench_json([r])["benchmarks"][0]["memory"]
    assert d["rss_bytes_per_flow"] == r.memory.run_rss_bytes / 200
    assert "RSS B/flow" in bench_report([r])
    # A limit below the estimate is refused before a child starts, naming the field that drives it.
    with pytest.raises(InputError) as e:
        run_in_child(mark, limits=Limits(10**6, None, "--max-memory"))
    assert "--max-memory" in e.value.message


def test_cli_runs_a_named_case_and_refuses_bad_overrides(capsys):
    assert (
        main(["bench", "--case", "corescale", "--flows", "5", "--duration", "200ms", "--quiet", "--json"])
        == 0
    )
    out = capsys.readouterr().out
    assert '"name": "corescale"' in out and '"events_per_second"' in out and '"memory"' not in out
    assert main(["bench", "--quick", "--flows", "5"]) == 2
    assert "--flows" in capsys.readouterr().err
    assert main(["bench", "--case", "flows100k", "--max-memory", "1MB", "--quiet"]) == 2
    assert "more than the limit" in capsys.readouterr().err


@pytest.fixture
def small_probe(monkeypatch):
    """The memory probe at two small working sets, so that it takes milliseconds."""
    monkeypatch.setattr("ccfair.bench.MEMORY_WORKING_SETS", (64 * 1024, 256 * 1024))
    monkeypatch.setattr("ccfair.bench.MEMORY_ACCESSES", 10_000)


def test_memory_probe_measures_each_working_set(small_probe):
    seen = []
    costs = memory_probe(progress=seen.append)
    assert [c.working_set_bytes for c in costs] == [64 * 1024, 256 * 1024]
    assert seen == [0.5, 1.0]
    for c in costs:
        assert c.accesses == 10_000
        assert 0 < c.dependent_ns < 1e5 and 0 < c.overlapped_ns < 1e5 and 0 < c.prefetched_ns < 1e5
    d = memory_json(costs)
    assert d[1]["prefetched_lines_per_second"] == pytest.approx(1e9 / costs[1].prefetched_ns)
    assert "prefetched ns" in memory_report(costs)
    # The working set and the indices that build it (4 bytes per 64-byte line).
    assert memory_probe_bytes() == 256 * 1024 + 256 * 1024 // 16


def test_memory_probe_is_refused_up_front_where_it_cannot_fit():
    with pytest.raises(InputError) as e:
        check_memory_probe(Limits(100 * 2**20, None, "--max-memory"))
    assert e.value.field == "--memory" and "--max-memory" in e.value.message
    check_memory_probe(Limits(None, None))
    check_memory_probe(Limits(memory_probe_bytes(), None))


def test_cli_memory_alone_runs_no_case_and_refuses_case_options(small_probe, capsys):
    assert main(["bench", "--memory", "--quiet", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["benchmarks"] == [] and len(document["memory_probe"]) == 2
    assert main(["bench", "--memory", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "M lines/s" in out and "M ev/s" not in out
    for option, value in (("--flows", "5"), ("--duration", "1s"), ("--preset", "testbed")):
        assert main(["bench", "--memory", option, value]) == 2
        assert option in capsys.readouterr().err
    assert main(["bench", "--memory", "--max-memory", "100KB"]) == 2
    assert "--memory" in capsys.readouterr().err


def test_repeated_runs_give_the_median_and_every_wall():
    walls = (1.0, 3.0, 2.0)
    runs = [BenchResult("B", "desc", 30.0, 6_000_000, wall, 6e6 / wall, wall / 30) for wall in walls]
    r = combine(runs)
    assert (r.wall_seconds, r.events_per_second, r.wall_seconds_runs) == (2.0, 3e6, (1.0, 3.0, 2.0))
    assert r.wall_seconds_per_sim_second == 2.0 / 30
    assert combine(runs[:1]) == runs[0]
    assert bench_json([r])["benchmarks"][0]["wall_seconds_runs"] == [1.0, 3.0, 2.0]
    assert "1.00 3.00 2.00" in bench_report([r])
    # The simulator is deterministic: runs of one case with different event counts are an error.
    with pytest.raises(RuntimeError, match="different event counts"):
        combine([runs[0], BenchResult("B", "desc", 30.0, 5, 1.0, 5.0, 1 / 30)])


def test_cli_repeat_interleaves_and_checks_each_case_repeats_its_events(capsys):
    argv = ["bench", "--case", "corescale", "--flows", "5", "--duration", "200ms", "--repeat", "3"]
    assert main([*argv, "--quiet", "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["benchmarks"]
    assert len(result["wall_seconds_runs"]) == 3 and result["events"] > 0
    assert result["wall_seconds"] == sorted(result["wall_seconds_runs"])[1]
    assert main(["bench", "--memory", "--repeat", "2"]) == 2
    assert "--repeat" in capsys.readouterr().err


@pytest.mark.slow
def test_first_half_is_the_whole_runs_prefix():
    mark = select(["corescale"], flows=8, duration="2s")[0]
    half = first_half(mark)
    assert half.scenario.duration_ns == mark.scenario.duration_ns // 2
    # Starts and interval stay those of the whole run, so its rows up to the half are the half's rows.
    assert half.document["flows"] == mark.document["flows"] and half.document["interval"] == "1s"
    whole = run(mark.scenario, seed=BENCH_SEED, limits=Limits(None, None)).timeseries
    first = run(half.scenario, seed=BENCH_SEED, limits=Limits(None, None)).timeseries
    prefix = whole[whole["t_ns"] <= half.scenario.duration_ns].reset_index(drop=True)
    assert len(first) == 8
    pandas.testing.assert_frame_equal(prefix, first.reset_index(drop=True))


def test_steady_state_is_the_second_half_alone():
    whole = BenchResult("C", "desc", 10.0, 20_000_000, 5.0, 4e6, 0.5)
    half = BenchResult("C, first half", "desc", 5.0, 9_000_000, 2.8, 3.2e6, 0.56)
    st = steady_state(whole, half)
    assert (st.name, st.events) == ("C", 11_000_000)
    assert st.wall_seconds == pytest.approx(2.2)
    assert st.events_per_second == pytest.approx(5e6) and st.ns_per_event == pytest.approx(200)
    assert steady_json([st])[0]["ns_per_event"] == pytest.approx(200)
    assert "ns / event" in steady_report([st])
    # Noise that makes the whole run no slower than its half gives no figure, not a negative one.
    noisy = steady_state(whole, replace(half, wall_seconds=5.5))
    assert math.isnan(noisy.events_per_second) and math.isnan(noisy.ns_per_event)
    assert "  -" in steady_report([noisy])


def test_json_output_writes_a_missing_figure_as_null(capsys):
    whole = BenchResult("C", "desc", 10.0, 20_000_000, 5.0, 4e6, 0.5)
    half = BenchResult("C, first half", "desc", 5.0, 9_000_000, 5.5, 1.6e6, 1.1)
    print_json({"steady_state": steady_json([steady_state(whole, half)])})
    (st,) = json.loads(capsys.readouterr().out)["steady_state"]
    assert st["events_per_second"] is None and st["ns_per_event"] is None and st["events"] == 11_000_000


def test_cli_steady_runs_each_half_and_reports_the_difference(capsys):
    argv = ["bench", "--case", "corescale", "--flows", "5", "--duration", "400ms", "--steady"]
    argv += ["--repeat", "2"]
    assert main([*argv, "--quiet", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (whole,) = document["benchmarks"]
    (st,) = document["steady_state"]
    assert whole["name"] == st["name"] == "corescale" and 0 < st["events"] < whole["events"]
    assert main(["bench", "--memory", "--steady"]) == 2
    assert "--steady" in capsys.readouterr().err

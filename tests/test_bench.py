from ccfair.bench import BenchResult, bench_json, bench_report, benchmarks


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
    r = BenchResult("A", "desc", 60.0, 1_000_000, 0.5, 2e6, 0.5 / 60)
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
            }
        ]
    }
    text = bench_report([r])
    assert "M ev/s" in text and "2.00" in text and "1,000,000" in text

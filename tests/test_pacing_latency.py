"""The pacing timer's lateness from a kernel trace (ccfair.devtools.pacing_latency): each expiry against the
start that armed the same timer."""

from __future__ import annotations

from ccfair.devtools.pacing_latency import describe, lateness_ns


def _start(timer: str, expires: int, function: str = "tcp_pace_kick") -> str:
    return (
        f"  ccfair-emu-1 [000] d..1.  10.000001: hrtimer_start: hrtimer={timer} function={function} "
        f"expires={expires} softexpires={expires} mode=ABS|PINNED|SOFT was_armed=0"
    )


def _expire(timer: str, now: int, function: str = "tcp_pace_kick") -> str:
    head = "  python-2 [001] ..s..  10.000002: hrtimer_expire_entry"
    return f"{head}: hrtimer={timer} function={function} now={now}"


def test_each_expiry_is_paired_with_the_latest_start_of_its_own_timer() -> None:
    trace = [
        "# tracer: nop",
        _expire("a", 900),  # armed before the trace began: left out
        _start("a", 1_000),
        _start("b", 2_000),
        _expire("b", 2_030),  # b: 30 ns late
        _start("a", 1_500),  # a re-armed before it fired: the later deadline counts
        _expire("a", 1_512),  # a: 12 ns late
        _start("c", 5_000, "tcp_compressed_ack_kick"),
        _expire("c", 5_900, "tcp_compressed_ack_kick"),  # another callback: left out
        _start("b", 3_000),  # never fired (cancelled): left out
    ]
    assert lateness_ns(trace) == [30, 12]


def test_the_report_gives_the_uniform_slack_of_the_same_mean() -> None:
    text = describe([10_000, 20_000, 30_000])
    assert "mean 20.0 us" in text and "pacing_slack with this mean: 40 us" in text
    assert "no pacing timer expiries" in describe([])

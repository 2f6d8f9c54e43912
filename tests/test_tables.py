import math

import ccfair
from ccfair.catalog import L4S_QUEUE_DISCIPLINES, has_l4s_queue, queue_discipline_names
from ccfair.columns import summary_pairs
from ccfair.plots.html_report import run_section
from ccfair.report import MAX_FLOW_ROWS, run_report
from ccfair.tables import Column, counted, fixed, integer, render, render_pairs, text
from ccfair.terminal import printable, printable_lines
from conftest import small


def test_render_aligns_columns():
    rows = [{"name": "a", "x": 1.5, "n": 1000}, {"name": "long name", "x": math.nan, "n": None}]
    text = render(
        rows, [Column("name", "name", align="left"), Column("x ms", "x", fixed(2)), Column("n", "n", integer)]
    )
    lines = text.splitlines()
    assert len({len(line) for line in lines}) <= 2  # right-aligned columns end together
    assert lines[1].endswith("1.50  1,000")
    assert lines[2].split()[-2:] == ["-", "-"]
    assert lines[0].index("x ms") + len("x ms") == lines[1].index("1.50") + len("1.50")


def test_render_pairs():
    assert render_pairs([("a", "1"), ("long", "2")]) == "  a     1\n  long  2"


def test_run_report_truncates_many_flows():
    d = small()
    d["flows"] = [{"cc": "cubic", "rtt": "20ms", "count": MAX_FLOW_ROWS + 5}]
    d["duration"] = "1s"
    text = run_report(ccfair.run(d))
    assert "5 more flows" in text
    assert "fness" not in text  # not a two-flow run


def test_untrusted_text_is_escaped_for_the_terminal():
    assert printable("plain ascii, é, 中文, ±") == "plain ascii, é, 中文, ±"
    assert printable("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert printable("tab\tnew\nline\r") == "tab\\tnew\\nline\\r"
    assert printable("\x7f\x9b\u202e\u2028\U000e0001") == "\\x7f\\x9b\\u202e\\u2028\\U000e0001"
    assert printable_lines("one\x1b\ntwo") == "one\\x1b\ntwo"
    # Tables escape their cells and headers, and align on what is shown.
    table = render([{"name": "x\x1by"}], [Column("h\x07", "name", text, "left")], indent="")
    assert table == "h\\x07\nx\\x1by"


def l4s_run() -> ccfair.RunResult:
    """Prague (L4S) against Cubic through DualPI2: CE marks, and the two queues' sojourn apart."""
    return ccfair.run(
        {
            "duration": "3s",
            "measure": {"start": "1s"},
            "link": {"rate": "20Mbps", "buffer": "2bdp", "aqm": "dualpi2"},
            "flows": [
                {"cc": "prague", "rtt": "10ms", "ecn": "l4s"},
                {"cc": "cubic", "rtt": "10ms"},
            ],
        }
    )


def test_a_run_with_ecn_shows_its_marks_and_both_queues_sojourn():
    result = l4s_run()
    summary = result.summary
    assert summary["marks"] > 0 and summary["queue_sojourn_l4s_p99_ns"] is not None
    text = run_report(result)
    shown = dict(
        (line[:21].strip(), line[21:].strip()) for line in text.split("Summary\n")[1].splitlines() if line
    )
    assert shown["CE marks"] == f"{summary['marks']:,}"
    assert shown["marking ratio"] == f"{summary['marking_ratio'] * 100:.2f} %"
    assert shown["L4S sojourn p99"] == f"{summary['queue_sojourn_l4s_p99_ns'] / 1e6:.2f} ms"
    assert shown["classic sojourn p99"] == f"{summary['queue_sojourn_classic_p99_ns'] / 1e6:.2f} ms"
    flows_header = text.split("Flows\n")[1].splitlines()[0]
    assert "CE marks" in flows_header and "marked %" in flows_header
    # The HTML report's run section shows the same lines.
    section = run_section(result, "runs/x")
    summary_table = next(t for t in section.tables if t.id == "summary")
    assert ["L4S sojourn p99", shown["L4S sojourn p99"]] in summary_table.rows


def test_a_run_without_ecn_shows_no_ecn_lines():
    text = run_report(ccfair.run(small(duration="1s")))
    assert "CE marks" not in text and "sojourn p99" in text and "L4S" not in text and "classic" not in text


def _summary_lines(text: str) -> dict[str, str]:
    return dict(
        (line[:21].strip(), line[21:].strip()) for line in text.split("Summary\n")[1].splitlines() if line
    )


def test_a_dual_queue_run_without_l4s_traffic_shows_its_l4s_queue_empty():
    """Classic Cubic alone through DualPI2: no ECN anywhere, yet the L4S lines are shown, since the queue
    discipline has an L4S queue and its staying empty is what the reader looks for; the same traffic
    through FIFO shows none."""
    dual = small(duration="1s", link={"rate": "10Mbps", "buffer": "1bdp", "aqm": "dualpi2"})
    dual["flows"] = [{"cc": "cubic", "rtt": "20ms"}]
    result = ccfair.run(dual)
    summary = result.summary
    assert summary["queue_sojourn_l4s_p99_ns"] is None and summary["queue_sojourn_classic_p99_ns"] > 0
    shown = _summary_lines(run_report(result))
    assert shown["L4S sojourn p99"] == "- (no L4S packet)"
    assert shown["classic sojourn p99"] == f"{summary['queue_sojourn_classic_p99_ns'] / 1e6:.2f} ms"
    assert shown["CE marks"] == f"{summary['marks']:,}"
    assert "L4S sojourn p99" in result._repr_html_()  # the notebook view decides the same way
    fifo = {**dual, "link": {**dual["link"], "aqm": "fifo"}}
    assert "L4S" not in run_report(ccfair.run(fifo))


def test_the_l4s_queue_flag_names_queue_disciplines_of_the_catalog():
    assert L4S_QUEUE_DISCIPLINES <= set(queue_discipline_names())
    assert has_l4s_queue("dualpi2") and has_l4s_queue("vdq_csaqm")
    assert not has_l4s_queue("step") and not has_l4s_queue("fifo")


def test_the_event_rate_says_what_the_run_did():
    def wall_line(summary):
        return dict(summary_pairs(summary))["wall time"]

    assert wall_line({"events": 2_000_000, "wall_seconds": 0.5}) == "0.500 s  (4.00 M events/s)"
    # A kernel run's frames at the pace of real time: thousands a second, not "0.00 M".
    assert wall_line({"events": 90_000, "wall_seconds": 30.0}) == "30.000 s  (3,000 events/s)"
    assert wall_line({"events": 10, "wall_seconds": 0.0}) == "0.000 s"


def test_counted_nouns_agree_with_their_number():
    assert counted(1, "scenario") == "1 scenario"
    assert counted(0, "scenario") == "0 scenarios"
    assert counted(1200, "run") == "1,200 runs"
    assert counted(2, "repetition", "repetitions") == "2 repetitions"

import math

import ccfair
from ccfair.report import MAX_FLOW_ROWS, run_report
from ccfair.tables import Column, fixed, integer, render, render_pairs
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

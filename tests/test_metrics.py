"""The tables and summary, from hand-made native output (no simulation)."""

import math

import numpy as np
import pandas as pd
import pytest

from ccfair.analysis import schema
from ccfair.analysis.metrics import (
    class_table,
    columns_frame,
    flow_table,
    run_summary,
)
from ccfair.analysis.schema import CLASS_NAMES, FLOW_NAMES, SUMMARY_KEYS
from ccfair.scenario import Scenario

# A summary value's JSON type by its schema dtype (None, where undefined, aside).
JSON_TYPES = {"<f8": float, "<i8": int, "|b1": bool}


def _dtype_ok(column: pd.Series, dtype: str) -> bool:
    if dtype == "str":
        return pd.api.types.is_string_dtype(column.dtype)
    return column.dtype == np.dtype(dtype)


def schema_problems(flows: pd.DataFrame, classes: pd.DataFrame, summary: dict) -> list[str]:
    """How a run's derived tables differ from their schema (ccfair.analysis.schema): column order, dtypes,
    summary keys and value types. Empty when they match."""
    problems = []
    if tuple(flows.columns[: len(FLOW_NAMES)]) != FLOW_NAMES:
        problems.append(f"flows: leading columns {list(flows.columns[: len(FLOW_NAMES)])}")
    if tuple(classes.columns) != CLASS_NAMES:
        problems.append(f"classes: columns {list(classes.columns)}")
    for table, frame, columns in (("flows", flows, schema.flows()), ("classes", classes, schema.CLASSES)):
        problems += [
            f"{table}.{c.name}: {frame[c.name].dtype}, schema {c.dtype}"
            for c in columns
            if c.name in frame and not _dtype_ok(frame[c.name], c.dtype)
        ]
    always = [c.name for c in schema.SUMMARY if c.always]
    if [k for k in summary if k in always] != always or not set(summary) <= set(SUMMARY_KEYS):
        problems.append(f"summary: keys {list(summary)}")
    for c in schema.SUMMARY:
        value = summary.get(c.name)
        if value is not None and type(value) is not JSON_TYPES[c.dtype]:
            problems.append(f"summary.{c.name}: {type(value).__name__}, schema {c.dtype}")
    return problems


COUNTERS = ("delivered_bytes", "sent_segments", "retransmitted_segments", "queue_drops", "path_drops")


def native_flows(rows):
    """Native-shaped flow columns from dicts with cc, group, rtt_ns, start_ns, stop_ns and window counters."""
    n = len(rows)
    cols = {
        "flow_id": ("<u4", np.arange(n, dtype="<u4").tobytes()),
        "group": ("<u4", np.array([r["group"] for r in rows], dtype="<u4").tobytes()),
        "cc": [r["cc"] for r in rows],
    }
    for name in ("rtt_ns", "start_ns", "stop_ns"):
        cols[name] = ("<u8", np.array([r[name] for r in rows], dtype="<u8").tobytes())
    for prefix in ("window_", "total_"):
        for c in (*COUNTERS, "ce_marks", "rto_events"):
            values = [r.get(c, 0) for r in rows]
            cols[prefix + c] = ("<u8", np.array(values, dtype="<u8").tobytes())
    cols["rtt_samples"] = ("<u8", np.array([r.get("rtt_samples", 0) for r in rows], dtype="<u8").tobytes())
    cols["rtt_mean_ns"] = (
        "<f8",
        np.array([r.get("rtt_mean_ns", np.nan) for r in rows], dtype="<f8").tobytes(),
    )
    cols["rtt_p99_ns"] = ("<f8", np.array([r.get("rtt_p99_ns", np.nan) for r in rows], dtype="<f8").tobytes())
    completion = [r.get("completion_ns", np.nan) for r in rows]
    cols["completion_ns"] = ("<f8", np.array(completion, dtype="<f8").tobytes())
    return cols


SCENARIO = Scenario.from_dict(
    {
        "duration": "10s",
        "measure": {"start": "2s", "end": "10s"},  # an 8 s window
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "flows": [
            {"cc": "cubic", "rtt": "20ms", "count": 2, "label": "short"},
            {"cc": "reno", "rtt": "80ms"},
            {"cc": "reno", "rtt": "80ms", "start": "9.5s"},
            {"cc": "reno", "rtt": "80ms", "stop": "1s"},
        ],
    }
)
S = 10**9


def row(group, cc, rtt_ns, delivered_bytes, start_ns=0, stop_ns=10 * S, **counters):
    return dict(
        group=group,
        cc=cc,
        rtt_ns=rtt_ns,
        start_ns=start_ns,
        stop_ns=stop_ns,
        delivered_bytes=delivered_bytes,
        **counters,
    )


ROWS = [
    row(
        0,
        "cubic",
        20_000_000,
        3_000_000,
        retransmitted_segments=4,
        queue_drops=3,
        path_drops=1,
        sent_segments=2000,
        ce_marks=50,
        rtt_mean_ns=25e6,
        rtt_p99_ns=40e6,
    ),
    row(
        0,
        "cubic",
        20_000_000,
        1_000_000,
        retransmitted_segments=2,
        queue_drops=2,
        sent_segments=700,
        ce_marks=10,
    ),
    row(1, "reno", 80_000_000, 2_000_000),
    row(2, "reno", 80_000_000, 0, start_ns=9_500_000_000),
    row(3, "reno", 80_000_000, 0, stop_ns=1 * S),
]
TOTALS = {
    "events": 1234,
    "window_link_tx_bytes": 9_000_000,
    "window_queue_drops": 5,
    "window_path_drops": 1,
    "window_sojourn_p50_ns": 1.5e6,
    "window_sojourn_p99_ns": float("nan"),
    "window_sojourn_mean_ns": 1.75e6,
    "window_marks": 60,
    "window_sojourn_l4s_p99_ns": float("nan"),
    "window_sojourn_classic_p99_ns": 2.5e6,
    "wall_seconds": 0.25,
}


@pytest.fixture
def flows():
    return flow_table(native_flows(ROWS), SCENARIO)


def test_columns_frame_decodes_native_columns():
    frame = columns_frame({"a": ("<u8", np.array([1, 2], dtype="<u8").tobytes()), "s": ["x", "y"]})
    assert frame["a"].dtype == np.uint64 and frame["a"].tolist() == [1, 2]
    assert frame["s"].tolist() == ["x", "y"]
    frame.loc[0, "a"] = 5  # writable, not a view of immutable bytes
    assert frame["a"].tolist() == [5, 2]


def test_flow_table(flows):
    assert list(flows.columns[: len(FLOW_NAMES)]) == list(FLOW_NAMES)
    assert "window_delivered_bytes" in flows.columns and "total_sent_segments" in flows.columns
    # active: [start, stop) overlaps [2 s, 10 s]; the flow stopping at 1 s is not
    assert flows["active"].tolist() == [True, True, True, True, False]
    assert flows["in_window"].tolist() == flows["active"].tolist()  # no finite flows
    assert flows["goodput_bps"].tolist() == pytest.approx([3e6, 1e6, 2e6, 0.0, 0.0])  # bytes x 8 / 8 s
    assert flows.loc[flows["active"], "share"].sum() == pytest.approx(1.0)
    assert flows["share"].tolist()[:4] == pytest.approx([0.5, 1 / 6, 1 / 3, 0.0])
    assert math.isnan(flows["share"].iloc[4])
    assert flows["drops"].tolist() == [4, 2, 0, 0, 0]
    assert flows["retransmissions"].tolist() == [4, 2, 0, 0, 0]
    assert flows["rtt_mean_ms"].iloc[0] == pytest.approx(25.0) and flows["rtt_p99_ms"].iloc[
        0
    ] == pytest.approx(40.0)
    assert math.isnan(flows["rtt_mean_ms"].iloc[1])
    assert (
        flows["label"].tolist()[:2] == ["short", "short"] and flows["label"].isna().tolist()[2:] == [True] * 3
    )


def test_class_table(flows):
    classes = class_table(flows, 10_000_000)
    assert list(classes.columns) == list(CLASS_NAMES)
    assert classes[["cc", "rtt_ns", "flows"]].values.tolist() == [
        ["cubic", 20_000_000, 2],
        ["reno", 80_000_000, 2],
    ]
    cubic, reno = classes.iloc[0], classes.iloc[1]
    assert cubic["goodput_bps"] == pytest.approx(2e6) and reno["goodput_bps"] == pytest.approx(1e6)
    # 4 active flows on 10 Mbps: a fair share is 2.5 Mbps
    assert cubic["relative_goodput"] == pytest.approx(2e6 / 2.5e6)
    assert reno["relative_goodput"] == pytest.approx(1e6 / 2.5e6)
    assert cubic["share"] == pytest.approx(4 / 6) and reno["share"] == pytest.approx(2 / 6)
    assert classes["share"].sum() == pytest.approx(1.0)
    assert cubic["jain_index"] == pytest.approx((3 + 1) ** 2 / (2 * (9 + 1)))
    assert reno["jain_index"] == pytest.approx(0.5)  # one of two flows got everything


def test_class_table_without_active_flows(flows):
    classes = class_table(flows.assign(in_window=False), 10_000_000)
    assert len(classes) == 0 and list(classes.columns) == list(CLASS_NAMES)


def test_the_tables_and_summary_follow_their_schema(flows):
    classes = class_table(flows, 10_000_000)
    summary = run_summary(flows, TOTALS, SCENARIO)
    assert schema_problems(flows, classes, summary) == []
    assert schema_problems(flows, class_table(flows.assign(in_window=False), 10_000_000), summary) == []
    # The check can fail: a column of another dtype, a missing summary value, a value of another type.
    assert schema_problems(flows.astype({"drops": "float64"}), classes, summary) == [
        "flows.drops: float64, schema <u8"
    ]
    assert schema_problems(flows, classes, {k: v for k, v in summary.items() if k != "marks"}) != []
    assert schema_problems(flows, classes, {**summary, "events": 1.5}) == [
        "summary.events: float, schema <i8"
    ]


def test_summary(flows):
    summary = run_summary(flows, TOTALS, SCENARIO)
    assert "fness" not in summary  # five flows
    assert summary["utilization"] == pytest.approx(9e6 * 8 / (10e6 * 8))
    assert summary["total_goodput_bps"] == pytest.approx(6e6)
    assert summary["jain_index"] == pytest.approx((3 + 1 + 2 + 0) ** 2 / (4 * (9 + 1 + 4 + 0)))
    assert summary["drops"] == 6 and summary["retransmissions"] == 6
    assert summary["queue_sojourn_p50_ns"] == 1.5e6 and summary["queue_sojourn_p99_ns"] is None
    assert summary["queue_sojourn_mean_ns"] == 1.75e6
    assert summary["events"] == 1234 and summary["wall_seconds"] == 0.25
    assert summary["marks"] == 60 and summary["marking_ratio"] == pytest.approx(60 / 2700)
    assert summary["queue_sojourn_l4s_p99_ns"] is None and summary["queue_sojourn_classic_p99_ns"] == 2.5e6


def test_finite_flows_take_part_only_while_they_have_data_to_send():
    # Window [2 s, 10 s]. Flow 1 completed its size at 1.5 s, before the window opened: it stays active
    # (its application's [start, stop) overlaps the window) but had nothing to send in it. Flow 2 completed
    # at 3 s, inside the window; flow 3 never completed. Flow 4 starts at 9.5 s and completes at 12 s.
    rows = [
        row(0, "cubic", 20_000_000, 3_000_000),
        row(0, "cubic", 20_000_000, 0, start_ns=1 * S, completion_ns=0.5e9),
        row(1, "reno", 80_000_000, 1_000_000, start_ns=1 * S, completion_ns=2e9),
        row(1, "reno", 80_000_000, 2_000_000, completion_ns=math.nan),
        row(2, "reno", 80_000_000, 500_000, start_ns=9_500_000_000, completion_ns=2.5e9),
    ]
    flows = flow_table(native_flows(rows), SCENARIO)
    assert flows["active"].tolist() == [True, True, True, True, True]
    assert flows["in_window"].tolist() == [True, False, True, True, True]
    assert math.isnan(flows["share"].iloc[1])
    assert flows.loc[flows["in_window"], "share"].sum() == pytest.approx(1.0)
    goodputs = np.array([3e6, 1e6, 2e6, 0.5e6])  # bytes x 8 / 8 s of the four that took part
    summary = run_summary(flows, TOTALS, SCENARIO)
    assert summary["jain_index"] == pytest.approx(goodputs.sum() ** 2 / (4 * (goodputs**2).sum()))
    classes = class_table(flows, 10_000_000).set_index("cc")
    assert classes.loc["cubic", "flows"] == 1 and classes.loc["cubic", "jain_index"] == 1.0
    assert classes.loc["reno", "flows"] == 3
    assert classes.loc["cubic", "relative_goodput"] == pytest.approx(3e6 / (10e6 / 4))
    # A flow that never started (its start after its stop) took part in nothing.
    never = flow_table(native_flows([row(1, "reno", 80_000_000, 0, start_ns=5 * S, stop_ns=4 * S)]), SCENARIO)
    assert never["in_window"].tolist() == [False]


def test_marking_ratios(flows):
    assert flows.loc[0, "ce_marks"] == 50 and flows.loc[0, "marking_ratio"] == pytest.approx(50 / 2000)
    assert np.isnan(flows.loc[2, "marking_ratio"])  # sent nothing
    classes = class_table(flows, 10_000_000).set_index("cc")
    assert classes.loc["cubic", "ce_marks"] == 60
    assert classes.loc["cubic", "marking_ratio"] == pytest.approx(60 / 2700)


def test_summary_fness_for_two_flows():
    scenario = Scenario.from_dict(
        {
            "duration": "10s",
            "link": {"rate": "10Mbps", "buffer": "1bdp"},
            "flows": [{"cc": "reno", "rtt": "20ms"}, {"cc": "cubic", "rtt": "20ms"}],
        }
    )
    rows = [
        {**ROWS[2], "group": 0, "delivered_bytes": 300},
        {**ROWS[2], "group": 1, "cc": "cubic", "delivered_bytes": 700},
    ]
    flows = flow_table(native_flows(rows), scenario)
    summary = run_summary(flows, TOTALS, scenario)
    assert summary["fness"] == pytest.approx(1 - 300 / 700)
    assert list(summary) == list(SUMMARY_KEYS), "every value, fness included, in the schema's order"


def test_window_short_by_backlog_or_round_trips(flows):
    # The 8 s window is 100 round trips of the slowest active flow (80 ms); the link carries
    # 10 Mbps x 8 s / 8 x 1448 / 1500 = 9.65 MB of payload in it, of which 2 % is 193,066 bytes.
    summary = run_summary(flows, TOTALS, SCENARIO)
    assert summary["window_backlog_bytes"] is None and summary["window_short"] is False
    assert run_summary(flows, {**TOTALS, "window_backlog_bytes": 190_000}, SCENARIO)["window_short"] is False
    summary = run_summary(flows, {**TOTALS, "window_backlog_bytes": 200_000}, SCENARIO)
    assert summary["window_backlog_bytes"] == 200_000 and summary["window_short"] is True
    # A measured RTT above the base one counts: 900 ms x 10 > 8 s.
    slow = flow_table(native_flows([{**ROWS[2], "rtt_mean_ns": 900e6}, *ROWS[3:]]), SCENARIO)
    assert run_summary(slow, TOTALS, SCENARIO)["window_short"] is True
    # Half a second is fewer than 10 round trips of 80 ms.
    brief = Scenario.from_dict({**SCENARIO.to_dict(), "measure": {"start": "9.5s", "end": "10s"}})
    assert run_summary(flow_table(native_flows(ROWS), brief), TOTALS, brief)["window_short"] is True

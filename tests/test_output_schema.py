"""The output schema (the native tables defined once in crates/ccfair-core/src/output.rs, the derived ones in
python/ccfair/analysis/schema.py) against what the backends produce and what the documentation says: the
simulator's raw output has exactly the schema's simulator columns, in order, with its dtypes; the kernel
backend's collector likewise (on recorded emulator, sender and receiver output; the root-only kernel tests
check a real run the same way); the derived schema is complete and consistent (the tables computed from it
are checked in test_metrics.py); the output reference's generated tables are current."""

from __future__ import annotations

import copy

from ccfair.analysis import schema
from ccfair.catalog import catalog, output_table
from ccfair.devtools import output_schema
from ccfair.emu import collect
from ccfair.runner import simulate
from ccfair.scenario import kernel_scenario
from test_emu import BBR_VS_CUBIC, fake_outputs


def test_the_simulators_output_has_exactly_the_schemas_columns_and_dtypes() -> None:
    _, _, native = simulate(
        {
            "duration": "3s",
            "link": {"rate": "10Mbps", "buffer": "1bdp", "aqm": "fifo"},
            "flows": [{"cc": "cubic", "rtt": "20ms"}, {"cc": "bbr", "rtt": "40ms"}],
        }
    )
    assert output_schema.mismatches(native, "sim") == []
    assert len(native["timeseries"]["cwnd"][1]) > 0


def test_the_kernel_collector_has_exactly_the_schemas_kernel_columns_and_dtypes() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()
    emu, sender, receiver = fake_outputs(spec)
    native = collect.to_native(spec, collect.flow_infos(spec), emu, sender, receiver, 2.5)
    assert output_schema.mismatches(native, "kernel") == []
    assert "window_backlog_bytes" not in native["totals"], "a simulator-only value"
    assert native["timeseries"]["delivery_rate_bps"][0] == "<f8"


def test_a_kernel_without_the_rto_counter_gets_the_float_dtype_the_schema_allows() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()
    emu, sender, receiver = fake_outputs(spec)
    old_kernel = copy.deepcopy(sender)
    for f in old_kernel["flows"]:
        for part in ("window_start", "window_end", "total"):
            f[part]["total_rto"] = None
    native = collect.to_native(spec, collect.flow_infos(spec), emu, old_kernel, receiver, 2.5)
    assert native["flows"]["window_rto_events"][0] == "<f8"
    assert output_schema.mismatches(native, "kernel") == []


def test_a_mismatch_is_reported() -> None:
    spec = kernel_scenario(BBR_VS_CUBIC).resolve()
    emu, sender, receiver = fake_outputs(spec)
    native = collect.to_native(spec, collect.flow_infos(spec), emu, sender, receiver, 2.5)
    assert output_schema.mismatches(native, "sim"), "the kernel's extra columns are not the simulator's"
    native["queue"]["drops"] = ("<f8", native["queue"]["drops"][1])
    assert output_schema.mismatches(native, "kernel") == ["queue.drops: <f8, schema ['<u8']"]


def test_every_column_is_documented_with_unit_meaning_and_backends() -> None:
    for table in ("flows", "timeseries", "queue", "totals"):
        for c in output_table(table):
            assert c["doc"], f"{table}.{c['name']}"
            assert c["backends"], f"{table}.{c['name']}"
            if c["name"].endswith("_ns"):
                assert c["unit"] == "ns", f"{table}.{c['name']}"
            if c["name"].endswith("_bps"):
                assert c["unit"] == "bit/s", f"{table}.{c['name']}"
    for a in catalog()["congestion_controls"]:
        assert a["vars"], a["name"]


UNIT_SUFFIXES = {"_ns": "ns", "_ms": "ms", "_bps": "bit/s", "_bytes": "bytes", "_seconds": "s"}


def test_every_derived_column_is_declared_with_a_dtype_unit_and_meaning_it_can_be_shown_in() -> None:
    native = {c["name"] for c in output_table("flows")}
    for t in schema.tables():
        names = [c.name for c in t["columns"]]
        assert len(set(names)) == len(names), f"{t['name']}: a name repeats"
        for c in t["columns"]:
            where = f"{t['name']}.{c.name}"
            assert c.doc and c.dtype in {"<u4", "<u8", "<i8", "<f8", "|b1", "str"}, where
            for suffix, unit in UNIT_SUFFIXES.items():
                if c.name.endswith(suffix):
                    assert c.unit == unit, where
            if c.shown is not None:
                assert c.shown_scale() > 0, where  # a KeyError for a unit it cannot be shown in
            if c.plotted is not None:
                assert c.plotted_scale() > 0, where
            if t["name"] == "flows":
                # A computed column must not hide a native one of the same name; a passed-through one exists.
                assert (c.name in native) == c.native, where
            if t["name"] == "summary":
                assert c.dtype in {"<i8", "<f8", "|b1"} and c.added_in >= 1, where
    labelled: dict[str, schema.Plotted] = {}
    for c in (*schema.SUMMARY, *schema.CLASSES, *schema.flows()):
        if c.plotted is not None:
            assert labelled.setdefault(c.name, c.plotted) == c.plotted, f"{c.name} is labelled two ways"


def test_the_output_reference_tables_are_generated_from_the_schema() -> None:
    assert output_schema.main(["--check"]) == 0, f"{output_schema.PAGE} is stale: run `make docs`"
    text = output_schema.PAGE.read_text(encoding="utf-8")
    for a in catalog()["congestion_controls"]:
        assert f"| `{a['name']}` | {a['vars']}" in text
    for c in schema.SUMMARY:
        assert f"| `{c.name}` | `{c.dtype.replace('|', chr(92) + '|')}` |" in text

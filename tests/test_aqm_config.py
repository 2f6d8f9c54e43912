"""Queue disciplines in scenarios: ``[link.aqm]`` parameters with units, resolution to the canonical native
configuration (kernel/RFC defaults filled from the Rust definitions), errors that name the field, and the
catalog every listing and check reads."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from ccfair.catalog import catalog
from ccfair.errors import InputError
from ccfair.scenario import Scenario
from conftest import SMALL, run_cli

QDISCS = ["fifo", "red", "codel", "fq_codel", "pie", "gsp", "ppv", "dualpi2", "step", "vdq_csaqm"]


def with_aqm(aqm: Any, **link: Any) -> dict[str, Any]:
    d: dict[str, Any] = {**SMALL, "link": {**SMALL["link"], "aqm": aqm, **link}}
    return d


def resolved(aqm: Any, **link: Any) -> dict[str, Any]:
    spec: dict[str, Any] = Scenario.from_dict(with_aqm(aqm, **link)).resolve()["link"]["aqm"]
    return spec


def test_catalog_lists_every_discipline_with_its_defaults():
    entries = {q["name"]: q for q in catalog()["queue_disciplines"]}
    assert list(entries) == QDISCS
    for name, q in entries.items():
        documented = {p["alias"] or p["name"] for p in q["params"]} - {"limit"}
        assert set(q["defaults"]) == documented, name
        assert q["source"] and q["summary"]


def test_every_discipline_resolves_with_its_kernel_defaults():
    for name in QDISCS:
        spec = resolved(name)
        assert spec["name"] == name
        assert spec["limit"] == {"packets": 42}
    codel = resolved("codel")
    assert (codel["target_ns"], codel["interval_ns"], codel["ecn"]) == (5_000_000, 100_000_000, False)
    assert resolved("fq_codel")["ecn"] is True
    assert resolved("pie")["target_ns"] == 15_000_000


def test_parameters_take_quantities_in_their_unit():
    spec = resolved({"name": "codel", "target_ns": "2ms", "interval_ns": "50ms", "ecn": True})
    assert (spec["target_ns"], spec["interval_ns"], spec["ecn"]) == (2_000_000, 50_000_000, True)
    spec = resolved({"name": "red", "min_bytes": "20KB", "max_bytes": 60_000, "bandwidth_bps": "10Mbps"})
    assert (spec["min_bytes"], spec["max_bytes"], spec["bandwidth_bps"]) == (20_000, 60_000, 10_000_000)
    spec = resolved({"name": "ppv", "weights": [1, 2]})
    assert spec["weights"] == [1.0, 2.0]
    # The name without its unit, as tc writes it, takes a quantity: the documented spelling (the one with the
    # unit stays accepted, with an integer in that unit too).
    spec = resolved({"name": "codel", "target": "2ms", "interval": "50ms", "ce_threshold": "1ms"})
    assert (spec["target_ns"], spec["interval_ns"], spec["ce_threshold_ns"]) == (
        2_000_000,
        50_000_000,
        1_000_000,
    )
    spec = resolved({"name": "red", "min": "20KB", "max": "60KB", "bandwidth": "10Mbps"})
    assert (spec["min_bytes"], spec["max_bytes"], spec["bandwidth_bps"]) == (20_000, 60_000, 10_000_000)
    spec = resolved({"name": "dualpi2", "tupdate": "8ms", "step_threshold": "2ms"})
    assert (spec["tupdate_ns"], spec["step_threshold_ns"]) == (8_000_000, 2_000_000)
    # A byte buffer becomes a byte limit for every discipline.
    assert resolved("pie", buffer="64KiB")["limit"] == {"bytes": 65_536}


@pytest.mark.parametrize(
    ("aqm", "field", "message"),
    [
        ({"name": "codel", "targett": "5ms"}, "link.aqm.targett", "unknown parameter"),
        ({"name": "codel", "target": 5}, "link.aqm.target", "missing unit"),
        ({"name": "codel", "target": "5ms", "target_ns": 5}, "link.aqm.target", "written twice"),
        ({"name": "codel", "target_ns": "5 parsecs"}, "link.aqm.target_ns", "unknown unit"),
        ({"name": "codel", "target_ns": 0}, "link.aqm.target_ns", "positive"),
        ({"name": "codel", "ecn": "yes"}, "link.aqm.ecn", "invalid type"),
        ({"name": "pie", "alpha": 0.1}, "link.aqm.alpha", "multiple of 1/16"),
        ({"name": "fq_codel", "flows": 0}, "link.aqm.flows", "between 1 and 65536"),
        ({"name": "fq_codel", "quantum_bytes": 100}, "link.aqm.quantum_bytes", "between 256"),
        ({"name": "red", "min_bytes": 50_000, "max_bytes": 40_000}, "link.aqm.max_bytes", "greater than"),
        ({"name": "red", "nodrop": True}, "link.aqm.nodrop", "only meaningful with ecn"),
        ({"name": "dualpi2", "ecn_mask": "ect0"}, "link.aqm.ecn_mask", "unknown variant"),
        ({"name": "dualpi2", "c_protection_percent": 101}, "link.aqm.c_protection_percent", "0 and 100"),
        ({"name": "ppv", "weights": [1, 2, 3]}, "link.aqm.weights", "one weight per flow group (2)"),
        ({"name": "ppv", "weights": [1, -2]}, "link.aqm.weights", "positive"),
        ({"name": "vdq_csaqm", "weights": [1, 2, 3]}, "link.aqm.weights", "one weight per flow group (2)"),
        (
            {"name": "vdq_csaqm", "l4s_target_ns": "30ms"},
            "link.aqm.l4s_target_ns",
            "at most classic_target_ns",
        ),
        ({"name": "gsp", "alpha": float("nan")}, "link.aqm.alpha", "finite"),
        ({"name": "step", "limit": 5}, "link.aqm.limit", "set by link.buffer"),
        ({"name": "sfq"}, "link.aqm", "unknown queue discipline"),
    ],
)
def test_bad_parameters_name_the_field(aqm: dict[str, Any], field: str, message: str):
    with pytest.raises(InputError) as e:
        Scenario.from_dict(with_aqm(aqm))
    assert e.value.field == field
    assert message in e.value.message


@pytest.mark.parametrize("packets", [1, 2, 3, 8, 11, 13, 14, 15, 100])
def test_reds_defaults_fit_every_buffer(packets: int):
    """tc's default thresholds (max = limit/4, min = max/3) admit no EWMA weight below about 15 packets; there
    RED takes the smallest thresholds tc's rules admit (2 and 6 average packets), so a buffer of any size
    resolves."""
    red = resolved("red", buffer=f"{packets}pkt")
    assert red["limit"] == {"packets": packets}


def test_red_thresholds_that_admit_no_average_name_the_threshold():
    with pytest.raises(InputError) as e:
        Scenario.from_dict(with_aqm({"name": "red", "min_bytes": "1000B", "max_bytes": "3000B"}))
    assert e.value.field == "link.aqm.min_bytes"
    assert "min must be more than avpkt" in e.value.message and "= 0" not in e.value.message


def test_explicit_form_writes_every_parameter_and_means_the_same_run():
    s = Scenario.from_dict(with_aqm({"name": "pie", "target_ns": "10ms"}))
    explicit = s.to_dict(explicit=True)
    aqm = explicit["link"]["aqm"]
    assert aqm["target_ns"] == 10_000_000 and aqm["tupdate_ns"] == 15_000_000 and "limit" not in aqm
    again = Scenario.from_dict(explicit)
    assert again.resolve() == s.resolve()
    # Unset optional parameters (no TOML null) stay out and keep their derived defaults.
    red = Scenario.from_dict(with_aqm("red")).to_dict(explicit=True)["link"]["aqm"]
    assert "min_bytes" not in red and red["probability"] == 0.02
    # The plain form is what was written.
    assert s.to_dict()["link"]["aqm"] == {"name": "pie", "target_ns": "10ms"}
    assert Scenario.from_dict(tomllib.loads(s.to_toml())) == s
    assert Scenario.from_dict(tomllib.loads(s.to_toml(explicit=True))).resolve() == s.resolve()


@pytest.mark.slow
def test_cli_reports_a_bad_aqm_parameter_with_exit_code_2(tmp_path):
    toml = tmp_path / "bad.toml"
    toml.write_text(
        'duration = "2s"\n[link]\nrate = "10Mbps"\nbuffer = "1bdp"\n[link.aqm]\nname = "codel"\n'
        'interval_ns = "-3ms"\n[[flows]]\ncc = "reno"\nrtt = "20ms"\n'
    )
    out = tmp_path / "out"
    p = run_cli("run", str(toml), "--out", str(out))
    assert p.returncode == 2
    assert "link.aqm.interval_ns" in p.stderr
    assert not out.exists()

"""Plans: reading, expansion into cells and runs, seeds and run identities, flip_start_order, and every kind
of bad plan (caught before anything runs, naming the path and the cell)."""

import copy
import hashlib
import json
import os
import subprocess
import sys

import pytest

from ccfair import __version__
from ccfair.errors import InputError
from ccfair.scenario import Scenario
from ccfair.sweep.expand import expand, mirror_start_order
from ccfair.sweep.identity import ids_of_scenario, run_id, run_seed, seeds_of_cell
from ccfair.sweep.paths import column_name, parse_path, set_path
from ccfair.sweep.plan import MAX_PLAN_RUNS, load_plan, plan_from_dict
from conftest import REPO
from test_sweep_support import BASE, plan_dict


def expected_seed(plan_seed, coordinates, repetition):
    """The documented derivation, written out independently of the implementation."""
    text = json.dumps(
        {"coordinates": coordinates, "plan_seed": plan_seed, "repetition": repetition},
        sort_keys=True,
        separators=(",", ":"),
    )
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def runs_of(**top):
    return expand(plan_from_dict(plan_dict(**top)))


# --------------------------------------------------------------------------------------------- expansion


def test_grid_times_repetitions_times_flip_gives_exactly_the_expected_runs():
    runs = runs_of(repetitions=3, flip_start_order=True)
    buffers, rtts = ["0.5bdp", "1bdp"], ["20ms", "50ms"]
    cells = [(b, r) for b in buffers for r in rtts]  # product order, last axis fastest
    expected = [
        (rep, cell, flipped) for rep in range(3) for cell in range(len(cells)) for flipped in (False, True)
    ]
    assert [(r.repetition, r.cell, r.flipped) for r in runs] == expected
    assert [r.index for r in runs] == list(range(len(expected)))
    for r in runs:
        buffer, rtt = cells[r.cell]
        assert r.coordinates == (("link.buffer", buffer), ("flows[0].rtt", rtt))
        assert r.seed == expected_seed(11, {"link.buffer": buffer, "flows[0].rtt": rtt}, r.repetition)
        assert r.scenario["seed"] == r.seed
        assert r.scenario["link"]["buffer"] == buffer and r.scenario["flows"][0]["rtt"] == rtt
    assert len({r.run_id for r in runs}) == len(runs)
    assert len({r.seed for r in runs}) == len(runs) // 2  # a run and its mirror share the seed


def test_mirrored_runs_swap_which_group_starts_first():
    runs = runs_of(flip_start_order=True, repetitions=1)
    for original, mirror in zip(runs[::2], runs[1::2], strict=True):
        assert (original.flipped, mirror.flipped) == (False, True)
        assert [f["start"] for f in original.scenario["flows"]] == ["0s", "1s"]
        assert [f["start"] for f in mirror.scenario["flows"]] == ["1s", "0s"]
        assert original.seed == mirror.seed and original.run_id != mirror.run_id


def test_mirror_reverses_the_order_of_distinct_start_times_and_keeps_active_time():
    sc = Scenario.from_dict(
        {
            "duration": "30s",
            "link": {"rate": "10Mbps", "buffer": "1bdp"},
            "flows": [
                {"cc": "reno", "rtt": "50ms", "start": "0s", "stop": "20s"},
                {"cc": "reno", "rtt": "50ms", "start": "2s"},
                {"cc": "cubic", "rtt": "50ms", "start": "10s"},
                {"cc": "cubic", "rtt": "50ms", "start": "2s"},
            ],
        }
    )
    mirrored = mirror_start_order(sc)
    assert [g.start_ns // 10**9 for g in mirrored.flows] == [10, 2, 0, 2]
    assert mirrored.flows[0].stop_ns == 30 * 10**9  # 20 s of activity, as before
    assert [g.stop_ns for g in mirrored.flows[1:]] == [None, None, None]
    assert mirror_start_order(mirrored) == sc
    together = Scenario.from_dict({**sc.to_dict(), "flows": [{"cc": "reno", "rtt": "50ms", "count": 2}]})
    assert mirror_start_order(together) is None


def test_cells_without_a_start_difference_have_no_mirror():
    # flows[1].start = 0s makes both groups start together: that cell has no mirrored run.
    runs = runs_of(repetitions=1, flip_start_order=True, grid={"flows[1].start": ["0s", "1s"]})
    assert [(r.coordinates[0][1], r.flipped) for r in runs] == [("0s", False), ("1s", False), ("1s", True)]


@pytest.mark.slow
def test_expansion_is_stable_across_processes():
    code = (
        "import json, sys; sys.path.insert(0, 'tests');"
        "from test_sweep_support import plan_dict;"
        "from ccfair.sweep.plan import plan_from_dict; from ccfair.sweep.expand import expand;"
        "runs = expand(plan_from_dict(plan_dict(flip_start_order=True)));"
        "print(json.dumps([[r.run_id, r.seed] for r in runs]))"
    )
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
        )
        outputs.append(json.loads(done.stdout))
    here = [[r.run_id, r.seed] for r in runs_of(flip_start_order=True)]
    assert outputs[0] == outputs[1] == here


def test_run_identity_depends_on_scenario_seed_and_version():
    doc = Scenario.from_dict(BASE).to_dict(explicit=True)
    spec = Scenario.from_dict(BASE).resolve()
    base = run_id(doc, spec, 5, __version__)
    assert base == run_id(copy.deepcopy(doc), copy.deepcopy(spec), 5, __version__)
    assert base != run_id(doc, spec, 6, __version__)
    assert base != run_id(doc, spec, 5, __version__ + ".1")
    other = copy.deepcopy(doc)
    other["flows"][0]["loss"] = 0.002
    assert base != run_id(other, spec, 5, __version__)


@pytest.mark.parametrize("backend", ["sim", "kernel"])
def test_identities_computed_once_per_cell_equal_the_ones_computed_per_run(backend):
    doc = Scenario.from_dict(BASE).to_dict(explicit=True)
    spec = Scenario.from_dict(BASE).resolve()
    emulator = None if backend == "sim" else {"arrival": "kernel"}
    ids = ids_of_scenario(doc, spec, __version__, backend, emulator)
    for seed in (0, 1, 12345, 2**63 - 1):
        assert ids(seed) == run_id(doc, spec, seed, __version__, backend, emulator)
    # A scenario holding the marker's text itself still gets its true id.
    odd = copy.deepcopy(doc)
    odd["flows"][0]["label"] = "\x00ccfair seed\x00"
    assert ids_of_scenario(odd, spec, __version__)(7) == run_id(odd, spec, 7, __version__)
    coordinates = {"link.rate": "10Mbps", "flows[0].cc_params": {"beta": 0.5}}
    seeds = seeds_of_cell(3, coordinates)
    for repetition in (0, 1, 9, 999_999):
        assert seeds(repetition) == run_seed(3, coordinates, repetition)


def test_a_plan_larger_than_a_store_can_take_is_refused_before_it_expands():
    with pytest.raises(InputError) as err:
        plan_from_dict(plan_dict(repetitions=MAX_PLAN_RUNS // 4 + 1))  # 4 cells
    assert err.value.field == "repetitions" and f"more than the {MAX_PLAN_RUNS:,}" in err.value.message
    grid = {"flows[0].count": list(range(1, 1001)), "flows[0].initial_window": list(range(1, 1002))}
    with pytest.raises(InputError) as err:
        plan_from_dict(plan_dict(repetitions=1, grid=grid))
    assert err.value.field == "grid" and "1,001,000 runs" in err.value.message


def test_seed_changes_with_plan_seed_coordinates_and_repetition():
    s = run_seed(1, {"link.rate": "10Mbps"}, 0)
    assert 0 <= s < 2**63
    assert s == run_seed(1, {"link.rate": "10Mbps"}, 0)
    assert len({s, run_seed(2, {"link.rate": "10Mbps"}, 0), run_seed(1, {"link.rate": "20Mbps"}, 0)}) == 3
    assert s != run_seed(1, {"link.rate": "10Mbps"}, 1)


def test_adding_a_value_keeps_the_other_cells_runs():
    before = {r.run_id for r in runs_of()}
    after = {
        r.run_id
        for r in runs_of(grid={"link.buffer": ["0.5bdp", "1bdp", "2bdp"], "flows[0].rtt": ["20ms", "50ms"]})
    }
    assert before < after and len(after - before) == 4


def test_zip_groups_vary_together_and_exclude_drops_cells():
    runs = runs_of(
        repetitions=1,
        grid={"link.buffer": ["0.5bdp", "1bdp"]},
        zip=[{"flows[0].count": [1, 2, 4], "flows[1].count": [4, 2, 1]}],
        exclude=[{"link.buffer": "1bdp", "flows[0].count": [2, 4]}],
    )
    got = [
        (r.scenario["link"]["buffer"], r.scenario["flows"][0]["count"], r.scenario["flows"][1]["count"])
        for r in runs
    ]
    assert got == [("0.5bdp", 1, 4), ("0.5bdp", 2, 2), ("0.5bdp", 4, 1), ("1bdp", 1, 4)]


def test_unquoted_dotted_grid_keys_mean_the_same_paths():
    quoted = plan_from_dict(plan_dict())
    nested = plan_from_dict(
        plan_dict(grid={"link": {"buffer": ["0.5bdp", "1bdp"]}, "flows[0].rtt": ["20ms", "50ms"]})
    )
    assert quoted.axes == nested.axes


def test_scenario_file_relative_to_the_plan_and_its_seed_ignored(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "base.toml").write_text(
        'duration = "5s"\nseed = 99\n[link]\nrate = "10Mbps"\nbuffer = "1bdp"\n'
        '[[flows]]\ncc = "reno"\nrtt = "20ms"\n'
    )
    plan_file = tmp_path / "plans" / "p.toml"
    plan_file.parent.mkdir()
    plan_file.write_text('scenario = "../scenarios/base.toml"\n[grid]\n"link.rate" = ["10Mbps", "20Mbps"]\n')
    plan = load_plan(plan_file)
    assert plan.name == "p" and "seed" not in plan.base
    runs = expand(plan)
    assert [r.scenario["link"]["rate"] for r in runs] == ["10Mbps", "20Mbps"]
    assert all(r.seed != 99 for r in runs)


@pytest.mark.slow
def test_every_plan_file_in_the_repository_expands():
    plans = sorted((REPO / "plans").glob("*.toml"))
    assert plans
    for path in plans:
        runs = expand(load_plan(path))
        assert runs and all(r.spec is not None for r in runs), path


def test_paths():
    assert parse_path("flows[0].cc_params.beta", "f") == ("flows", 0, "cc_params", "beta")
    assert column_name("flows[0].count") == "flows0_count" and column_name("link.rate") == "link_rate"
    doc = {"flows": [{"cc": "reno"}], "link": "x"}
    set_path(doc, ("measure", "start"), "1s", "f")
    assert doc["measure"] == {"start": "1s"}
    for path, message in [
        (("flows", 1, "cc"), "flows[1] does not exist"),
        (("link", "rate"), "not a table"),
        (("flows", "cc"), "not a table"),
    ]:
        with pytest.raises(InputError) as err:
            set_path(copy.deepcopy(doc), path, 1, "f")
        assert err.value.field == "f" and message in err.value.message


# ---------------------------------------------------------------------------------------------- bad plans


BAD_PLANS = {
    "unknown-key": ({"repetition": 3}, "repetition", "unknown plan key"),
    "repetitions": ({"repetitions": 0}, "repetitions", "between 1"),
    "seed": ({"seed": -1}, "seed", "between 0"),
    "flip": ({"flip_start_order": "yes"}, "flip_start_order", "true or false"),
    "no-scenario": ({"scenario": None}, "scenario", "is required"),
    "empty-list": ({"grid": {"link.rate": []}}, 'grid."link.rate"', "empty"),
    "not-a-list": ({"grid": {"link.rate": "10Mbps"}}, 'grid."link.rate"', "list of values"),
    "duplicate": ({"grid": {"link.rate": ["1Mbps", "1Mbps"]}}, 'grid."link.rate"', "twice"),
    "bad-path": ({"grid": {"flows[x].rtt": ["1ms"]}}, 'grid."flows[x].rtt"', "not a dotted"),
    "overlap": ({"grid": {"link.aqm": ["fifo"], "link.aqm.x": [1]}}, 'grid."link.aqm.x"', "overlaps"),
    "seed-path": ({"grid": {"seed": [1, 2]}}, 'grid."seed"', "plan's top-level seed"),
    "zip-lengths": ({"zip": [{"flows[0].count": [1, 2], "flows[1].count": [1]}]}, "zip[0]", "one length"),
    "zip-and-grid": ({"zip": [{"link.buffer": ["1bdp"]}]}, "zip[0]", "overlaps"),
    "exclude-path": ({"exclude": [{"link.rate": "1Mbps"}]}, 'exclude[0]."link.rate"', "not a path"),
    "exclude-value": ({"exclude": [{"link.buffer": "3bdp"}]}, 'exclude[0]."link.buffer"', "not one of"),
    "exclude-all": ({"exclude": [{"link.buffer": ["0.5bdp", "1bdp"]}]}, "exclude", "every cell"),
    "no-mirror": (
        {"flip_start_order": True, "grid": {"flows[1].start": ["0s"]}},
        "flip_start_order",
        "same time",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_PLANS))
def test_bad_plans_name_the_field(case):
    top, field, message = BAD_PLANS[case]
    with pytest.raises(InputError) as err:
        runs_of(**top)
    assert err.value.field == field
    assert message in err.value.message


def test_exclude_matching_no_cell_is_an_error():
    with pytest.raises(InputError) as err:
        runs_of(
            grid={"link.buffer": ["1bdp"]},
            zip=[{"flows[0].count": [1, 2], "flows[1].count": [2, 1]}],
            exclude=[{"flows[0].count": 1, "flows[1].count": 1}],
        )
    assert err.value.field == "exclude[0]" and "matches no cell" in err.value.message


@pytest.mark.parametrize(
    ("grid", "field", "cell"),
    [
        ({"link.rte": ["1Mbps"]}, "link.rte", 'cell 0: link.rte = "1Mbps"'),
        ({"flows[2].rtt": ["1ms"]}, "flows[2].rtt", "cell 0"),
        ({"link.buffer": ["1bdp", "1000B"]}, "link.buffer", 'cell 1: link.buffer = "1000B"'),
        ({"flows[0].cc": ["reno", "no-such-cc"]}, "flows[0].cc", 'cell 1: flows[0].cc = "no-such-cc"'),
    ],
)
def test_an_invalid_cell_names_the_field_and_the_cell(grid, field, cell):
    with pytest.raises(InputError) as err:
        runs_of(grid=grid)
    assert err.value.field == field
    assert f"(in {cell}" in err.value.message


def test_skip_invalid_keeps_invalid_cells_as_runs_to_record():
    runs = expand(plan_from_dict(plan_dict(grid={"link.buffer": ["1bdp", "1000B"]})), skip_invalid=True)
    assert [r.invalid is None for r in runs] == [True, False, True, False]
    bad = runs[1]
    assert bad.spec is None and bad.invalid.startswith("link.buffer: ") and "1500-byte packet" in bad.invalid
    assert len({r.run_id for r in runs}) == 4


def test_a_plan_names_its_own_results_directory(tmp_path):
    base = {
        "scenario": {"duration": "1s", "link": {"rate": "1Mbps", "buffer": "1bdp"}, "flows": [{"rtt": "5ms"}]}
    }
    assert plan_from_dict(base).out is None  # ccfair sweep's default then: results/ here
    plan = plan_from_dict({**base, "out": "study-results"}, base_dir=tmp_path / "study")
    assert plan.out == tmp_path / "study" / "study-results"
    assert "out" not in json.loads(plan.to_json()), "where results go is no part of the experiment"
    for bad in ("", 3):
        with pytest.raises(InputError) as info:
            plan_from_dict({**base, "out": bad})
        assert info.value.field == "out"

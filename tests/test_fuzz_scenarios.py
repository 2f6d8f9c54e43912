"""Property test of the scenario front end and the simulator behind it: whatever the input, a scenario
either runs or is refused with an InputError naming a field. No other exception, no panic (pyo3's
PanicException), no abort (it would take the test process down).

Inputs: (a) scenario dicts built from the schema, each field drawn from valid values and from values of the
wrong kind, range or unit; (b) TOML text: valid scenario files mutated character by character and line by
line. A scenario that validates runs if its estimated cost is small (the estimate caps every run here); a
larger one must be refused by a small limit, naming a field, without running.

(c) Every queue discipline's and congestion control's parameters (from the catalog, so a new one is fuzzed
without a line here) at their extremes: zero, one, the edges of 32 and 64 bits, a nanosecond, a week, NaN;
a run must also take a wall time its estimate answers for (PIE updating every nanosecond was two billion
updates in a 2 s run that its estimate called 5000 events).

(d) Command lines of every subcommand, with option values that are other scripts' digits, huge or negative
counts, non-finite numbers, control characters, and files nested 100,000 deep (a scenario, a plan, a suite,
a truth file): exit 0 or 2, never a traceback, never an answer that takes longer than a dry run should.

(e) Crafted results directories: a finished sweep's directory tampered with (names and errors holding
terminal escapes, run ids that name other paths, JSON nested past the limit, files removed, truncated or
replaced by directories and links, a garbage marker or status file), read by ``status``, ``status --verify``,
``query`` and ``export``: exit 0, 1 or 2, no traceback, and no control character reaches the terminal.

Budget: ``CCFAIR_FUZZ_EXAMPLES`` examples per property (default 60; a tenth of it command lines and a
two-hundredth crafted directories, at least 20 and 8, as those take longer), derandomized so CI is stable;
``make fuzz`` runs thousands with fresh randomness and prints the failing example's seed.

The strategies include the inputs that once escaped as other exceptions: quantities beyond a float
(``"1e400bdp"``), deeply nested TOML, NaN and infinities in parameters, empty keys, odd labels, ``cubic:²``,
a truth file nested 100,000 deep; the end of the file keeps one example of each as a plain test.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import time
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccfair
from ccfair.catalog import catalog
from ccfair.errors import InputError
from ccfair.resources import Limits
from ccfair.scenario import Scenario
from docs_runner import run_ccfair

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("CCFAIR_FUZZ_EXAMPLES", "60"))
FRESH = os.environ.get("CCFAIR_FUZZ_RANDOM") == "1"
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not FRESH,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    print_blob=True,
)

# What a fuzzed run may cost here; anything bigger must be refused by these limits instead of run.
RUN_EVENTS = 150_000
RUN_MEMORY_BYTES = 200 << 20
SMALL = Limits(max_memory_bytes=RUN_MEMORY_BYTES, max_events=RUN_EVENTS, memory_source="test")
# The simulation's wall time a run's estimate answers for: 20 us per estimated event (`ccfair bench` shows
# 0.1 to 0.5), plus half a second for a loaded machine. Work the estimate does not count breaks it (PIE
# updating every nanosecond: seconds of work in a run estimated at 5000 events).
WALL_PER_EVENT_S = 20e-6
WALL_SLACK_S = 0.5

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
CCS = ("reno", "cubic", "dctcp", "prague", "bbr", "bbr1", "bbr2", "bbr3")
AQMS = ("fifo", "red", "codel", "fq_codel", "pie", "gsp", "ppv", "dualpi2", "step", "vdq_csaqm")

# A field names a place in the scenario: one of these paths (list indices as [N]), or a key the input has.
SCHEMA_PATH = re.compile(
    r"^(scenario|duration|interval|seed|measure(\.(start|end))?"
    r"|link(\.(rate|buffer|base_rtt|mtu|aqm(\.[A-Za-z0-9_]+)?))?"
    r"|flows(\[\d+\](\.(cc|count|rtt|start|stop|initial_window|pacing|loss|ecn|label"
    r"|cc_params(\.[A-Za-z0-9_]+)?))?)?)$"
)


def _in_input(doc: Any, field: str) -> bool:
    """Whether ``field`` (``a.b[2].c``) is a path of keys and indices that exists in ``doc``."""
    node = doc
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", field):
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(node, list) or index >= len(node):
                return False
            node = node[index]
        elif isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            return False
    return True


def _check_refusal(err: InputError, doc: Any, source: str | None = None) -> None:
    assert err.field, f"empty field: {err!r}"
    assert err.message, f"empty message: {err!r}"
    named = SCHEMA_PATH.match(err.field) or _in_input(doc, err.field) or err.field == source
    assert named, f"{err.field!r} names no place in the input: {err.message}"


def _exercise(doc: Any, source: str | None = None) -> None:
    """The property: runs (when small) or an InputError naming a field; nothing else."""
    try:
        scenario = Scenario.from_dict(doc) if source is None else Scenario.from_toml(source)
        _, estimate = scenario.resolve_estimated()
    except InputError as err:
        _check_refusal(err, doc, source)
        return
    if estimate.events > RUN_EVENTS or estimate.peak_memory_bytes > RUN_MEMORY_BYTES:
        try:
            ccfair.run(scenario, limits=SMALL)
        except InputError as err:
            _check_refusal(err, doc, source)
            assert "estimated" in err.message
            return
        raise AssertionError(f"ran a scenario estimated above the limits: {estimate}")
    result = ccfair.run(scenario, limits=SMALL)
    summary = result.summary
    assert summary["events"] <= 4 * max(estimate.events, 1000), (summary["events"], estimate)
    wall_bound = WALL_SLACK_S + WALL_PER_EVENT_S * estimate.events
    assert summary["wall_seconds"] <= wall_bound, (summary["wall_seconds"], estimate)
    # Delivered payload over the window: the link's share plus what crossed before it
    # (docs/explanation/metrics.md).
    window_bytes = int(result.flows["window_delivered_bytes"].sum())
    mss, mtu = scenario.mss_bytes(), scenario.link.mtu_bytes
    start_ns, end_ns = scenario.measure_window_ns()
    link_bytes = scenario.link.rate_bps * (end_ns - start_ns) / 8e9 + mtu
    assert window_bytes <= link_bytes / mtu * mss + summary["window_backlog_bytes"]


# ------------------------------------------------------------------------------------------- (a) dicts


def _quantity(units: tuple[str, ...], low: float, high: float) -> st.SearchStrategy[str]:
    number = st.one_of(
        st.integers(min_value=int(low), max_value=int(high)).map(str),
        st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False).map(
            lambda x: f"{x:.6g}"
        ),
    )
    return st.builds(lambda n, u: f"{n}{u}", number, st.sampled_from(units))


JUNK = st.one_of(
    st.none(),
    st.sampled_from(["1e400bdp", "1e99999999ms", "-0ms", "1e-400s", "nanMbps", "infpkt", "1_000Mbps"]),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=string.ascii_letters + string.digits + " .-_+[]%", max_size=12),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
    st.dictionaries(st.sampled_from(["name", "x", "rate"]), st.integers(-3, 3), max_size=2),
)

RATES = _quantity(("kbps", "Mbps"), 100, 50_000)
WILD_RATES = _quantity(("bps", "kbps", "Gbps", "Tbps"), 0, 1e6)
SHORT_TIMES = _quantity(("ms",), 1, 400)
ANY_TIMES = st.one_of(SHORT_TIMES, _quantity(("ns", "us", "s", "min", "h"), 0, 1e7))
BUFFERS = st.one_of(
    st.integers(1, 2000).map(lambda n: f"{n}pkt"),
    st.floats(0.1, 4).map(lambda x: f"{x:.3g}bdp"),
    st.integers(10, 3000).map(lambda n: f"{n}KB"),
    st.integers(5, 200).map(lambda n: f"{n}ms"),
)


@st.composite
def valid_groups(draw: st.DrawFn) -> dict[str, Any]:
    g: dict[str, Any] = {"cc": draw(st.sampled_from(CCS)), "rtt": draw(SHORT_TIMES)}
    optional: dict[str, st.SearchStrategy[Any]] = {
        "count": st.integers(1, 4),
        "start": _quantity(("ms",), 0, 100),
        "stop": _quantity(("ms",), 100, 3000),
        "initial_window": st.integers(1, 64),
        "pacing": st.booleans(),
        "loss": st.floats(0, 0.05),
        "ecn": st.sampled_from(["off", "classic", "l4s"]),
        "cc_params": st.dictionaries(
            st.sampled_from(["beta", "hystart", "c", "ecn_enable", "alpha_on_init"]),
            st.one_of(st.booleans(), st.floats(0, 1), st.integers(0, 1024)),
            max_size=2,
        ),
        "label": st.text(max_size=8),
    }
    # Sorted: a set of strings iterates in the process's hash order, which would make the draws that follow
    # differ from run to run even with derandomize.
    for key in sorted(draw(st.sets(st.sampled_from(sorted(optional)), max_size=4))):
        g[key] = draw(optional[key])
    return g


AQM_TABLES = st.builds(
    lambda name, params: {"name": name, **params},
    st.sampled_from(AQMS),
    st.dictionaries(
        st.sampled_from(["target_ns", "interval_ns", "ecn", "flows", "probability"]),
        st.one_of(
            st.booleans(),
            st.integers(0, 10**9),
            st.sampled_from(["5ms", "x", "10Mbps", "1e400ms"]),
            st.floats(),
        ),
        max_size=2,
    ),
)


@st.composite
def valid_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """Scenarios built from the schema's valid values (some are still refused: a stop before a start, an
    AQM parameter out of range, a flow starting after the end)."""
    duration_ms = draw(st.integers(100, 3000))
    link: dict[str, Any] = {"rate": draw(RATES), "buffer": draw(BUFFERS)}
    aqm = draw(st.one_of(st.none(), st.sampled_from(AQMS), AQM_TABLES))
    if aqm is not None:
        link["aqm"] = aqm
    if draw(st.booleans()):
        link["base_rtt"] = draw(SHORT_TIMES)
    if draw(st.booleans()):
        link["mtu"] = draw(st.integers(576, 9000))
    doc: dict[str, Any] = {
        "duration": f"{duration_ms}ms",
        "link": link,
        "flows": draw(st.lists(valid_groups(), min_size=1, max_size=3)),
    }
    if draw(st.booleans()):
        doc["interval"] = draw(_quantity(("ms",), 1, 500))
    if draw(st.booleans()):
        start_ms = draw(st.integers(0, duration_ms - 1))
        end_ms = draw(st.integers(start_ms + 1, duration_ms))
        doc["measure"] = draw(
            st.fixed_dictionaries(
                {}, optional={"start": st.just(f"{start_ms}ms"), "end": st.just(f"{end_ms}ms")}
            )
        )
    if draw(st.booleans()):
        doc["seed"] = draw(st.integers(0, 2**64 - 1))
    return doc


# Wild values per kind of field, and anything for any field.
WILD = {
    "time": st.one_of(ANY_TIMES, JUNK),
    "rate": st.one_of(WILD_RATES, JUNK),
    "buffer": st.one_of(_quantity(("bdp", "pkt", "KB", "GB", "us", "ms"), 0, 1e12), JUNK),
    "count": st.one_of(st.integers(-2, 2**33), JUNK),
    "any": JUNK,
}
FIELD_KIND = {
    "duration": "time",
    "interval": "time",
    "rtt": "time",
    "start": "time",
    "stop": "time",
    "base_rtt": "time",
    "end": "time",
    "rate": "rate",
    "buffer": "buffer",
    "count": "count",
    "initial_window": "count",
    "mtu": "count",
    "seed": "count",
}


def _places(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in ``doc`` (tables and arrays of tables)."""
    places = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for key, value in items:
        places.append((*prefix, key))
        places += _places(value, (*prefix, key))
    return places


@st.composite
def scenario_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """A valid scenario with up to three mutations: a value replaced by a wild one of its kind or by
    anything, a key removed, or an unknown key added."""
    doc = draw(valid_scenarios())
    for _ in range(draw(st.integers(0, 3))):
        places = _places(doc)
        where = draw(st.sampled_from(places))
        parent = doc
        for key in where[:-1]:
            parent = parent[key]
        last = where[-1]
        action = draw(st.sampled_from(["replace", "replace", "remove", "add"]))
        if action == "replace":
            kind = FIELD_KIND.get(str(last), "any")
            parent[last] = draw(st.one_of(WILD[kind], JUNK))
        elif action == "remove" and isinstance(parent, dict):
            del parent[last]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "Duration", "flow", "rtt_ms", ""]))] = draw(JUNK)
    return doc


@FUZZ
@given(scenario_dicts())
def test_scenario_dicts_run_or_are_refused_by_field(doc):
    _exercise(doc)


# ------------------------------------------------------------------------------------ (b) TOML text

SEEDS = [
    p.read_text()
    for p in sorted(SCENARIOS.glob("*.toml"))
    if not p.name.startswith("kernel-")  # the same format; these only add runs at 10 Mbps
]
SMALL_TEXT = """\
duration = "2s"
interval = "100ms"
[measure]
start = "500ms"
[link]
rate = "10Mbps"
buffer = "1bdp"
aqm = "codel"
[[flows]]
cc = "cubic"
rtt = "20ms"
count = 2
[[flows]]
cc = "bbr"
rtt = "40ms"
start = "200ms"
"""
SNIPPETS = [
    "=",
    '"',
    "[",
    "]",
    "[[flows]]",
    "\n",
    "0",
    "-1",
    "1e9",
    "18446744073709551616",
    "nan",
    "inf",
    "true",
    '"1us"',
    '"10Tbps"',
    '"0bdp"',
    '"1000000pkt"',
    "count = 100000",
    "initial_window = 4294967295",
    'duration = "1000h"',
    'interval = "1ns"',
    "{ name = 'red' }",
    "#",
    "'",
    "\\u0000",
    "é",
    "1e400",
    '"1e400bdp"',
    '"" = 1',
    "label = ''",
    "cc_params = { beta = nan }",
    "x = " + "[" * 40 + "]" * 40,
    "[" + "a." * 40 + "b]",
]


@st.composite
def toml_texts(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from([SMALL_TEXT, *SEEDS]))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 4))
        if kind == 0 and text:  # delete a span
            i = draw(st.integers(0, len(text) - 1))
            text = text[:i] + text[i + draw(st.integers(1, 12)) :]
        elif kind == 1:  # insert a snippet
            i = draw(st.integers(0, len(text)))
            text = text[:i] + draw(st.sampled_from(SNIPPETS)) + text[i:]
        elif kind == 2:  # replace a number
            numbers = list(re.finditer(r"\d+(\.\d+)?", text))
            if numbers:
                m = draw(st.sampled_from(numbers))
                text = (
                    text[: m.start()]
                    + draw(st.sampled_from(["0", "7", "99999", "1e6", "0.0001"]))
                    + text[m.end() :]
                )
        elif kind == 3:  # duplicate or drop a line
            lines = text.splitlines(keepends=True)
            if lines:
                i = draw(st.integers(0, len(lines) - 1))
                lines.insert(i, lines[i]) if draw(st.booleans()) else lines.pop(i)
                text = "".join(lines)
        else:  # shorten the run so that most mutants stay cheap enough to run
            text = re.sub(r'^duration = "[^"]*"', 'duration = "2s"', text, flags=re.MULTILINE)
            text = re.sub(r"^\[measure\][^\[]*", "", text, flags=re.MULTILINE)
    return text


@FUZZ
@given(toml_texts())
def test_toml_texts_run_or_are_refused_by_field(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "scenario.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        doc: Any = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        doc = {}
    _exercise(doc, str(path))


def test_the_fuzz_strategies_reach_runs_and_refusals():
    """The strategies exercise both outcomes: small valid scenarios that run and inputs that are refused."""
    outcomes = {"ran": 0, "refused": 0}

    @settings(max_examples=40, deadline=None, derandomize=True, database=None)
    @given(scenario_dicts())
    def count(doc: dict[str, Any]) -> None:
        try:
            _, estimate = Scenario.from_dict(doc).resolve_estimated()
        except InputError:
            outcomes["refused"] += 1
            return
        outcomes["ran" if estimate.events <= RUN_EVENTS else "refused"] += 1

    count()
    assert outcomes["ran"] >= 5 and outcomes["refused"] >= 5, outcomes


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda d: d["link"].__setitem__("buffer", "1e400bdp"), id="quantity beyond a float"),
        pytest.param(lambda d: d.__setitem__("", 1), id="empty key"),
        pytest.param(
            lambda d: d["flows"][0].__setitem__("cc_params", {"beta": float("nan")}), id="NaN parameter"
        ),
    ],
)
def test_inputs_that_escaped_once_are_refused_by_field(mutate):
    """One example of each input that once escaped as another exception, checked by the same property."""
    doc = {
        "duration": "2s",
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "20ms"}],
    }
    mutate(doc)
    with pytest.raises(InputError) as err:
        Scenario.from_dict(doc)
    _check_refusal(err.value, doc)


def test_deeply_nested_toml_is_refused_by_field(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InputError) as err:
        Scenario.from_toml(path)
    assert err.value.field == str(path)


# ------------------------------------------------------------- (c) parameters at their extremes

EXTREME_INTS = [0, 1, 2, 255, 256, 65535, 65536, 2**31 - 1, 2**32 - 1, 2**32, 2**53, 2**63 - 1, 2**64 - 1, -1]
EXTREME_TIMES = ["0ns", "1ns", "999ns", "1us", "999us", "1ms", "4294967295us", "1e12s", "168h"]
EXTREME_SIZES = ["1B", "1499B", "1500B", "4294967295B", "4294967296B", "1TB", "1e30B"]
EXTREME_FLOATS = [0.0, 1 / 256, 1 / 16, 0.5, 1.0, 2.0, 2.0625, 8388607.0, 1e-300, 1e300]
EXTREMES = st.one_of(
    st.sampled_from(EXTREME_INTS),
    st.sampled_from(EXTREME_FLOATS),
    st.sampled_from(EXTREME_TIMES + EXTREME_SIZES),
    st.sampled_from([float("nan"), float("inf"), -0.0, True, False, "l4s_ect", "any_ect", "", [], [1e-9]]),
)


def _extreme_for(name: str) -> st.SearchStrategy[Any]:
    """Extreme values for a parameter, those of its kind (its name's unit) most often."""
    if name.endswith("_ns") or name.endswith("_us"):
        kind: st.SearchStrategy[Any] = st.sampled_from(EXTREME_TIMES + EXTREME_INTS)
    elif name.endswith("_bytes") or name.endswith("_bps"):
        kind = st.sampled_from(EXTREME_SIZES + EXTREME_INTS)
    else:
        kind = st.one_of(st.sampled_from(EXTREME_INTS), st.sampled_from(EXTREME_FLOATS), st.booleans())
    return st.one_of(kind, kind, EXTREMES)


_CATALOG = catalog()
QDISC_PARAMS = {
    q["name"]: [p["name"] for p in q["params"] if p["name"] != "limit"] for q in _CATALOG["queue_disciplines"]
}
CC_PARAMS = {a["name"]: [p["name"] for p in a["params"]] for a in _CATALOG["congestion_controls"]}


@st.composite
def extreme_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A small valid scenario whose queue discipline or congestion controls take one or two parameters at
    their extremes (any of each's parameters, from the catalog); the rest stays valid, so that an extreme
    that is accepted runs."""
    doc = draw(valid_scenarios())
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(n for n, params in QDISC_PARAMS.items() if params)))
        chosen = draw(st.sets(st.sampled_from(QDISC_PARAMS[name]), min_size=1, max_size=2))
        doc["link"]["aqm"] = {"name": name, **{k: draw(_extreme_for(k)) for k in sorted(chosen)}}
        for group in doc["flows"]:
            group.pop("cc_params", None)
        return doc
    doc["link"].pop("aqm", None)
    for group in doc["flows"]:
        group["cc"] = draw(st.sampled_from(sorted(CC_PARAMS)))
        params = CC_PARAMS[group["cc"]]
        picked = draw(st.sets(st.sampled_from(params), min_size=1, max_size=2)) if params else set()
        group["cc_params"] = {k: draw(_extreme_for(k)) for k in sorted(picked)}
    return doc


@FUZZ
@given(extreme_scenarios())
def test_parameters_at_their_extremes_run_within_their_estimate_or_are_refused_by_field(doc):
    _exercise(doc)  # a run also within the wall time its estimate answers for


# ----------------------------------------------------------------------- (d) command lines

# A command line takes about 0.05 s, a crafted directory's copy and readers about 10 s: a tenth and a
# two-hundredth of the budget (at least 20 and 8).
CLI = settings(FUZZ, max_examples=max(20, EXAMPLES // 10))
# Option values: other scripts' digits (superscript, Arabic-Indic, fullwidth, Devanagari), underscores,
# huge and negative counts, non-finite numbers, control characters, empty text.
ODD_VALUES = [
    "\u00b2", "\u0661", "\uff11", "\u0967", "1_0", "+1", "-1", "0", "00", " 3 ", "9" * 40, "1e400", "1e-400",
    "nan", "inf", "-inf", "1e11", "1000000000", "\x1b[2J", "a\x00b", "", " ", "10Mbps", "20ms", "1bdp",
    "cubic:1", "cubic:\u00b2", "reno:1,cubic:\u0661", "flows[0]", "flows[\u0661]", "none", "tcp://url:::",
    "nota://x", "0.5", "1.5",
]  # fmt: skip
VALUES = st.one_of(st.sampled_from(ODD_VALUES), st.text(max_size=6), st.integers(-(2**70), 2**70).map(str))
# Numerals: other scripts' digits, underscores, signs, huge, non-finite; and the kinds of value options take.
NUMERALS = st.sampled_from(
    ["\u00b2", "\u0661", "\uff11", "\u0967", "1_0", "+1", "-1", "0", " 3 ", "9" * 40, "1e400", "nan", "inf",
     "1000000000", "1", "2", "0.5"]
)  # fmt: skip
UNITS = st.sampled_from(["", "ms", "s", "ns", "Mbps", "kbps", "bdp", "pkt", "KB", "GB"])
QUANTITIES = st.builds(lambda n, u: f"{n}{u}", NUMERALS, UNITS)
MIXES = st.builds(lambda cc, n: f"{cc}:{n}", st.sampled_from(["cubic", "reno", "bbr", "nope"]), NUMERALS)
OPTION_VALUES: dict[str, st.SearchStrategy[str]] = {
    **{o: NUMERALS for o in ("--repetitions", "--jobs", "--flows", "--repeat", "--seed", "--max-events")},
    **{o: QUANTITIES for o in ("--rate", "--rtt", "--duration", "--max-delay", "--time-limit", "--max-memory",
                               "--cluster-timeout", "--buffers", "--min-jain", "--min-utilization",
                               "--tolerance")},
    "--mix": MIXES,
    "--cluster": st.sampled_from(["nota://url:::", "tcp://url:::", "tcp://host", "tls://h:1", "inproc://x"]),
}  # fmt: skip
DEEP = "[" * 100_000 + "]" * 100_000


def _files(tmp: Path) -> dict[str, Path]:
    """Files a command line names: well-formed small ones, and the same kinds nested 100,000 deep."""
    files = {
        "scenario": tmp / "small.toml",
        "plan": tmp / "plan.toml",
        "suite": tmp / "suite.toml",
        "deep.toml": tmp / "deep.toml",
        "deep.json": tmp / "deep.json",
        "bad.json": tmp / "bad.json",
    }
    files["scenario"].write_text(SMALL_TEXT)
    files["plan"].write_text(
        'name = "p"\nrepetitions = 2\n[scenario]\nduration = "1s"\n[scenario.link]\nrate = "10Mbps"\n'
        'buffer = "1bdp"\n[[scenario.flows]]\ncc = "reno"\nrtt = "20ms"\n'
        '[grid]\n"link.buffer" = ["1bdp", "2bdp"]\n'
    )
    files["suite"].write_text(
        'duration = "4s"\nmeasure_start = "2s"\nrate = "10Mbps"\nbuffers = ["1bdp"]\nrtts = ["20ms"]\n'
        'flow_counts = [1]\naqms = ["fifo"]\nrepetitions = 1\n'
    )
    files["deep.toml"].write_text("x = " + DEEP + "\n")
    files["deep.json"].write_text(DEEP)
    files["bad.json"].write_text('{"generator": "x", "format": 1, "cells": 5}')
    return files


# Per subcommand: its fixed words (with --dry-run, or whatever keeps it from running long), and the options
# a fuzzed command line may add. A value "@kind" is a file of _files.
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "run": (["run", "@scenario", "--quiet", "--max-events", "2e5"], ["--seed", "--max-memory", "--json"]),
    "run-file": (["run", "--quiet"], ["@scenario", "@deep.toml", "@plan"]),
    "sweep": (["sweep", "@plan", "--dry-run"], ["--jobs", "--max-memory", "--max-events", "--time-limit",
                                               "--cluster", "--cluster-timeout"]),
    "sweep-file": (["sweep", "--dry-run"], ["@deep.toml", "@suite", "@plan"]),
    "advise": (["advise", "--dry-run", "--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:1"],
               ["--rate", "--rtt", "--mix", "--aqms", "--buffers", "--min-jain", "--max-delay",
                "--min-utilization", "--duration", "--jobs", "--cluster"]),
    "harm": (["harm", "reno", "--dry-run", "--against", "cubic", "--suite", "@suite"],
             ["--against", "--suite", "--tolerance", "--jobs", "--time-limit", "--cluster"]),
    "harm-file": (["harm", "@scenario", "--dry-run", "--suite", "@suite", "--against", "flows[0]",
                   "--new", "flows[1]"], ["--new", "--against", "--suite"]),
    "reproduce": (["reproduce", "rueth-tma19", "--dry-run"], ["--repetitions", "--scale", "--jobs",
                                                              "--cluster", "--max-events"]),
    "validate": (["validate", "--dry-run", "--cells", "reno-reno"], ["--repetitions", "--cells", "--truth"]),
    "bench": (["bench", "--max-events", "1"], ["--flows", "--duration", "--case", "--repeat", "--preset"]),
    "list": (["list"], ["--json"]),
}  # fmt: skip
# Options that name files: fuzzed with files most of the time.
FILE_OPTIONS = ("--truth", "--suite")


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[str, list[str]]:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    fixed, options = COMMANDS[name]
    argv = list(fixed)
    for option in draw(st.lists(st.sampled_from(options), max_size=4, unique=True)):
        if option.startswith("@"):
            argv.append(option)
        elif option == "--json":
            argv.append(option)
        else:
            file_value = st.sampled_from(["@deep.toml", "@deep.json", "@bad.json", "@suite", "@plan"])
            value = st.one_of(file_value, file_value, VALUES)
            if option not in FILE_OPTIONS:
                value = st.one_of(OPTION_VALUES.get(option, VALUES), VALUES, file_value)
            argv += [option, draw(value)]
    return name, argv


# A dry run, a refusal or a listing answers within this, whatever the input (README: every input answered
# within seconds); the few small runs take about a second.
ANSWER_S = 60.0


@CLI
@given(command_lines())
def test_every_command_line_is_answered_without_a_traceback(tmp_path_factory, command):
    name, argv = command
    tmp = tmp_path_factory.mktemp("cli")
    files = _files(tmp)
    argv = [str(files[a[1:]]) if a.startswith("@") and a[1:] in files else a for a in argv]
    started = time.monotonic()
    code, _, err = run_ccfair(argv, tmp)
    took = time.monotonic() - started
    assert code in (0, 2), (name, argv, code, err[-2000:])
    assert "Traceback" not in err and "unexpected failure" not in err, (argv, err[-2000:])
    if code == 2:
        assert err.startswith("error: ") or "usage:" in err, (argv, err[-500:])
    assert took < ANSWER_S, (argv, took)


# ----------------------------------------------------------------- (e) crafted results directories

CRAFT = settings(FUZZ, max_examples=max(8, EXAMPLES // 200))
HOSTILE_TEXT = [
    "evil\x1b]0;pwned\x07\x1b[2J", "\u202ereversed", "a\nb\rc\td", "\x9b31m", "''; DROP TABLE runs; --",
    "../../etc/passwd", "x" * 5000, "",
]  # fmt: skip
CATALOG_CRAFTS = [
    "UPDATE plans SET plan = {text}",
    "UPDATE cells SET plan = {text}",
    "UPDATE runs SET error = {text}, error_kind = {text}, status = 'failed' WHERE rowid = 0",
    "UPDATE runs SET run_id = {text} WHERE rowid = 1",
    "UPDATE plans SET definition = {text}",
    "UPDATE runs SET summary_json = {text} WHERE rowid = 0",
    "UPDATE runs SET scenario_json = {text} WHERE rowid = 0",
    "UPDATE runs SET jain_index = 'nan'::DOUBLE",
    "UPDATE meta SET value = {text} WHERE key = 'schema_version'",
    "DELETE FROM plans",
    "DELETE FROM cells WHERE rowid = 0",
]
FILE_CRAFTS = ["remove", "truncate", "directory", "link", "garbage"]


@st.composite
def crafts(draw: st.DrawFn) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """SQL statements run on the catalog, file changes ((what, which file)), and the commands that read
    the directory afterwards."""
    texts = st.one_of(
        st.sampled_from(HOSTILE_TEXT), st.just("[" * 100 + "]" * 100), st.text(max_size=12), st.just("1")
    )
    statements = [
        draw(st.sampled_from(CATALOG_CRAFTS)).replace("{text}", "'" + draw(texts).replace("'", "''") + "'")
        for _ in range(draw(st.integers(0, 3)))
    ]
    targets = st.sampled_from(["series", ".ccfair-output.json", "status.json", "catalog.duckdb"])
    changes = draw(st.lists(st.tuples(st.sampled_from(FILE_CRAFTS), targets), max_size=2))
    readers = draw(
        st.lists(
            st.sampled_from(["status", "status --verify", "status --json", "query", "query --csv", "export"]),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    return statements, changes, readers


@pytest.fixture(scope="module")
def finished_results(tmp_path_factory):
    """A finished 2-run sweep; each example crafts a copy."""
    from ccfair.sweep.driver import run_sweep
    from ccfair.sweep.plan import plan_from_dict

    root = tmp_path_factory.mktemp("crafted") / "results"
    plan = plan_from_dict(
        {
            "name": "fuzz",
            "scenario": {
                "duration": "1s",
                "link": {"rate": "10Mbps", "buffer": "1bdp"},
                "flows": [{"cc": "reno", "rtt": "20ms"}],
            },
            "grid": {"link.buffer": ["1bdp", "2bdp"]},
        }
    )
    report = run_sweep(plan, root, jobs=1)
    assert report.done == 2
    return root


def _change(root: Path, what: str, target: str) -> None:
    path = root / target
    if target == "series":  # a done run's series file
        files = sorted(p for p in root.rglob("*.parquet"))
        if not files:
            return
        path = files[0]
    if what == "remove":
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    elif what == "truncate" and path.is_file():
        with path.open("r+b") as f:
            f.truncate(max(0, path.stat().st_size // 2))
    elif what == "directory":
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        path.mkdir()
    elif what == "link":
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        path.symlink_to("/etc/hostname")
    elif what == "garbage" and not path.is_dir():
        path.write_bytes(b"\x1b]0;pwned\x07" + DEEP.encode()[:4096])


@CRAFT
@given(crafts())
def test_a_crafted_results_directory_is_read_refused_or_repaired_never_echoed_raw(
    finished_results, tmp_path_factory, craft
):
    import duckdb

    statements, changes, readers = craft
    root = tmp_path_factory.mktemp("craft") / "results"
    shutil.copytree(finished_results, root)
    con = duckdb.connect(str(root / "catalog.duckdb"))
    try:
        for sql in statements:
            try:
                con.execute(sql)
            except duckdb.Error:
                pass  # a craft the catalog's own constraints refuse
    finally:
        con.close()
    for what, target in changes:
        _change(root, what, target)
    for reader in readers:
        words = reader.split()
        if words[0] == "query":
            argv = ["query", str(root), "select * from runs", *words[1:]]
        elif words[0] == "export":
            argv = ["export", str(root), "--format", "csv", "--to", str(root.parent / "export"), "--quiet"]
        else:
            argv = [*words[:1], str(root), *words[1:]]
        code, out, err = run_ccfair(argv, root.parent)
        assert code in (0, 1, 2), (argv, code, err[-2000:])
        assert "Traceback" not in err and "unexpected failure" not in err, (statements, changes, argv, err)
        if "--json" not in argv and "--csv" not in argv:  # JSON escapes; CSV to a pipe keeps the values
            for c in "\x1b\x07\x9b\u202e\x00":
                assert c not in out + err, (statements, argv, repr(c))


def test_a_queue_discipline_timer_no_run_could_afford_is_refused_by_field():
    """PIE updating every nanosecond: two billion updates in a 2 s run its estimate called 5000 events."""
    doc = {
        "duration": "2s",
        "link": {"rate": "10Mbps", "buffer": "1000pkt", "aqm": {"name": "pie", "tupdate_ns": 1}},
        "flows": [{"cc": "bbr", "rtt": "500us", "count": 3}],
    }
    with pytest.raises(InputError) as err:
        Scenario.from_dict(doc)
    assert err.value.field == "link.aqm.tupdate_ns"
    doc["link"]["aqm"]["tupdate_ns"] = "1ms"  # the shortest Linux runs: accepted, and within its estimate
    _exercise(doc)


@pytest.mark.parametrize(
    "argv",
    [
        ["advise", "--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:\u00b2", "--dry-run"],
        ["validate", "--dry-run", "--cells", "reno-reno", "--truth", "@deep.json"],
        ["sweep", "@plan", "--dry-run", "--cluster", "nota://url:::"],
    ],
    ids=["superscript count", "deep truth file", "unknown cluster scheme"],
)
def test_command_lines_that_escaped_once_are_answered(tmp_path, argv):
    """One example of each command line that once ended in a traceback or a hang, by the same property."""
    files = _files(tmp_path)
    argv = [str(files[a[1:]]) if a.startswith("@") else a for a in argv]
    code, _, err = run_ccfair(argv, tmp_path)
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err, err[-2000:]

"""Property test of the scenario front end and the simulator behind it: whatever the input, a scenario
either runs or is refused with a ScenarioError naming a field. No other exception, no panic (pyo3's
PanicException), no abort (it would take the test process down).

Inputs: (a) scenario dicts built from the schema, each field drawn from valid values and from values of the
wrong kind, range or unit; (b) TOML text: valid scenario files mutated character by character and line by
line. A scenario that validates runs if its estimated cost is small (the estimate caps every run here); a
larger one must be refused by a small limit, naming a field, without running.

Budget: ``CCFAIR_FUZZ_EXAMPLES`` examples per property (default 60, derandomized so CI is stable; ``make
fuzz`` runs thousands with fresh randomness and prints the failing example's seed).

The strategies include the inputs that once escaped as other exceptions: quantities beyond a float
(``"1e400bdp"``), deeply nested TOML, NaN and infinities in parameters, empty keys, odd labels; the end of the
file keeps one example of each as a plain test.
"""

from __future__ import annotations

import os
import re
import string
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccfair
from ccfair.errors import ScenarioError
from ccfair.resources import Limits
from ccfair.scenario import Scenario

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


def _check_refusal(err: ScenarioError, doc: Any, source: str | None = None) -> None:
    assert err.field, f"empty field: {err!r}"
    assert err.message, f"empty message: {err!r}"
    named = SCHEMA_PATH.match(err.field) or _in_input(doc, err.field) or err.field == source
    assert named, f"{err.field!r} names no place in the input: {err.message}"


def _exercise(doc: Any, source: str | None = None) -> None:
    """The property: runs (when small) or a ScenarioError naming a field; nothing else."""
    try:
        scenario = Scenario.from_dict(doc) if source is None else Scenario.from_toml(source)
        _, estimate = scenario.resolve_estimated()
    except ScenarioError as err:
        _check_refusal(err, doc, source)
        return
    if estimate.events > RUN_EVENTS or estimate.peak_memory_bytes > RUN_MEMORY_BYTES:
        try:
            ccfair.run(scenario, limits=SMALL)
        except ScenarioError as err:
            _check_refusal(err, doc, source)
            assert "estimated" in err.message
            return
        raise AssertionError(f"ran a scenario estimated above the limits: {estimate}")
    result = ccfair.run(scenario, limits=SMALL)
    summary = result.summary
    assert summary["events"] <= 4 * max(estimate.events, 1000), (summary["events"], estimate)
    # Delivered payload over the window: the link's share plus what crossed before it (see README).
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
    for key in draw(st.sets(st.sampled_from(sorted(optional)), max_size=4)):
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
        except ScenarioError:
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
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict(doc)
    _check_refusal(err.value, doc)


def test_deeply_nested_toml_is_refused_by_field(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ScenarioError) as err:
        Scenario.from_toml(path)
    assert err.value.field == str(path)

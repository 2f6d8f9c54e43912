import math
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccfair.toml_text import dumps

keys = st.text(min_size=1, max_size=8)
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=20),
)
inline = st.dictionaries(keys, scalars, max_size=4)
bodies = st.dictionaries(keys, st.one_of(scalars, inline, st.lists(scalars, max_size=3)), max_size=5)


@pytest.mark.slow
@given(
    top=st.dictionaries(keys, scalars, max_size=4),
    tables=st.dictionaries(keys, bodies, max_size=3),
    arrays=st.dictionaries(keys, st.lists(bodies, min_size=1, max_size=3), max_size=2),
)
def test_round_trip(top, tables, arrays):
    doc = {**top}
    for k, v in tables.items():
        doc.setdefault(k, v)
    for k, v in arrays.items():
        doc.setdefault(k, v)
    assert tomllib.loads(dumps(doc)) == doc


def test_layout_and_special_values():
    text = dumps({"b": 1, "t": {"x": "y", "inner": {"k": True}}, "arr": [{"n": 1}, {"n": 2}], "a": "z"})
    assert text.splitlines()[:2] == ["b = 1", 'a = "z"']
    assert "[t]" in text and "inner = { k = true }" in text and text.count("[[arr]]") == 2
    parsed = tomllib.loads(dumps({"n": math.nan, "i": math.inf, "m": -math.inf, "none": None}))
    assert math.isnan(parsed["n"]) and parsed["i"] == math.inf and parsed["m"] == -math.inf
    assert "none" not in parsed


def test_rejects_unknown_types():
    with pytest.raises(TypeError):
        dumps({"x": object()})


def nested(depth: int) -> dict:
    """A document ``depth`` levels deep (the document itself is level 1)."""
    value: object = 1
    for _ in range(depth - 1):
        value = [value]
    return {"x": value}


@pytest.mark.slow
def test_depth_limit_is_checked_without_recursion(tmp_path):
    from ccfair.errors import InputError
    from ccfair.toml_text import MAX_DEPTH, check_depth, read_toml

    check_depth(nested(MAX_DEPTH), "f")
    with pytest.raises(InputError, match="nested too deeply") as err:
        check_depth(nested(MAX_DEPTH + 1), "f")
    assert err.value.field == "f"
    with pytest.raises(InputError, match="nested too deeply"):
        check_depth(nested(100_000), "f")  # far beyond the recursion limit
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(InputError, match="nested too deeply"):
        check_depth(loop, "f")
    path = tmp_path / "deep.toml"
    path.write_text(dumps(nested(MAX_DEPTH)))
    assert read_toml(path) == nested(MAX_DEPTH)

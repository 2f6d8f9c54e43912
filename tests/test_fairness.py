import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccfair.analysis import fness, harm, jain_index, relative_goodput

finite = st.floats(min_value=0, max_value=1e15, allow_nan=False)


def test_jain_equal_allocations_are_fair():
    assert jain_index([5.0, 5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert jain_index([3e9]) == pytest.approx(1.0)


@pytest.mark.parametrize(("k", "n"), [(1, 2), (1, 4), (2, 4), (3, 7), (5, 5)])
def test_jain_k_of_n(k, n):
    values = [7.5] * k + [0.0] * (n - k)
    assert jain_index(values) == pytest.approx(k / n)


def test_jain_known_value():
    # (1 + 2 + 3)^2 / (3 * (1 + 4 + 9)) = 36 / 42
    assert jain_index([1, 2, 3]) == pytest.approx(36 / 42)


def test_jain_undefined_cases_are_nan():
    assert math.isnan(jain_index([]))
    assert math.isnan(jain_index([0.0, 0.0]))


@pytest.mark.parametrize("bad", [[-1.0, 2.0], [float("nan")], [float("inf"), 1.0]])
def test_jain_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        jain_index(bad)


@pytest.mark.slow
@given(st.lists(finite, min_size=1, max_size=50).filter(lambda xs: sum(xs) > 0))
def test_jain_bounds(xs):
    j = jain_index(xs)
    assert 1 / len(xs) - 1e-9 <= j <= 1.0
    assert jain_index([x * 3.5 for x in xs]) == pytest.approx(j)  # scale-independent


def test_fness_values_and_signs():
    assert fness(10, 10) == 0.0
    assert fness(10, 0) == -1.0  # a takes everything
    assert fness(0, 10) == 1.0  # b takes everything
    assert fness(30, 70) == pytest.approx(1 - 30 / 70)
    assert fness(70, 30) == pytest.approx(-1 + 30 / 70)
    assert fness(70, 30) < 0 < fness(30, 70)
    assert math.isnan(fness(0, 0))


@given(finite, finite)
def test_fness_bounds_and_antisymmetry(a, b):
    f = fness(a, b)
    if a == 0 and b == 0:
        assert math.isnan(f)
    else:
        assert -1.0 <= f <= 1.0
        assert fness(b, a) == pytest.approx(-f)


def test_relative_goodput():
    # 4 flows on 100 Mbps: a fair share is 25 Mbps
    assert relative_goodput(25e6, 100e6, 4) == pytest.approx(1.0)
    assert relative_goodput(50e6, 100e6, 4) == pytest.approx(2.0)
    assert relative_goodput(0.0, 100e6, 4) == 0.0
    with pytest.raises(ValueError):
        relative_goodput(1.0, 0.0, 4)
    with pytest.raises(ValueError):
        relative_goodput(1.0, 10.0, 0)


def test_harm_more_is_better():
    assert harm(10.0, 10.0) == 0.0
    assert harm(10.0, 0.0) == 1.0
    assert harm(10.0, 6.0) == pytest.approx(0.4)
    assert harm(10.0, 12.0) == pytest.approx(-0.2)  # B did better: no harm, reported as negative
    assert math.isnan(harm(0.0, 5.0))


def test_harm_less_is_better():
    # latency 20 ms alone, 50 ms with the competitor: (50 - 20) / 50
    assert harm(20.0, 50.0, more_is_better=False) == pytest.approx(0.6)
    assert harm(20.0, 20.0, more_is_better=False) == 0.0
    assert harm(0.0, 0.0, more_is_better=False) == 0.0
    assert math.isnan(harm(5.0, 0.0, more_is_better=False))


@given(st.floats(min_value=1e-6, max_value=1e12), st.floats(min_value=0, max_value=1))
def test_harm_in_unit_interval_when_worse(x, fraction):
    assert 0.0 <= harm(x, x * fraction) <= 1.0 + 1e-12
    assert 0.0 <= harm(x, x / max(fraction, 1e-9), more_is_better=False) <= 1.0

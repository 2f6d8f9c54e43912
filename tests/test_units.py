import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccfair.errors import InputError
from ccfair.units import (
    Buffer,
    format_buffer,
    format_duration,
    format_rate,
    format_size,
    parse_bdp_multiple,
    parse_buffer,
    parse_duration_ns,
    parse_packets,
    parse_rate_bps,
    parse_size_bytes,
)


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("10Mbps", 10_000_000),
        ("1Gbps", 1_000_000_000),
        ("2.5Gbps", 2_500_000_000),
        ("800kbps", 800_000),
        ("800Kbps", 800_000),
        ("1Tbps", 10**12),
        ("1000bps", 1000),
        ("0.1Gbps", 100_000_000),
        (" 10 Mbps ", 10_000_000),
        ("1e3kbps", 1_000_000),
    ],
)
def test_rates(text, bps):
    assert parse_rate_bps(text, "link.rate") == bps


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        # SI: bit/s with a prefix, in any case, and b/s
        ("10Mbit/s", 10_000_000),
        ("10 Mbit/s", 10_000_000),
        ("10MBit/s", 10_000_000),
        ("2.5Gbit/s", 2_500_000_000),
        ("800kbit/s", 800_000),
        ("800Kbit/s", 800_000),
        ("1Tbit/s", 10**12),
        ("9600bit/s", 9600),
        ("10Mb/s", 10_000_000),
        ("1Gb/s", 10**9),
        ("64kb/s", 64_000),
        ("300b/s", 300),
        # tc's spelling (man tc: bit, kbit, mbit, gbit, tbit), any case as tc reads it
        ("10mbit", 10_000_000),
        ("10Mbit", 10_000_000),
        ("10MBIT", 10_000_000),
        ("1gbit", 10**9),
        ("1Gbit", 10**9),
        ("500kbit", 500_000),
        ("500Kbit", 500_000),
        ("1tbit", 10**12),
        ("56000bit", 56_000),
    ],
)
def test_rate_spellings_researchers_type(text, bps):
    assert parse_rate_bps(text, "link.rate") == bps


@pytest.mark.parametrize(
    ("text", "readings"),
    [
        # tc reads these as bytes per second, elsewhere they often mean bits: refused, naming both
        ("10mbps", ("tc reads 'mbps' as MB per second", "80Mbit/s", "'10Mbit/s'")),
        ("1gbps", ("tc reads 'gbps' as GB per second", "8Gbit/s", "'1Gbit/s'")),
        ("2.5tbps", ("tc reads 'tbps' as TB per second", "20Tbit/s", "'2.5Tbit/s'")),
    ],
)
def test_rate_spellings_with_two_meanings_are_refused(text, readings):
    with pytest.raises(InputError) as info:
        parse_rate_bps(text, "link.rate")
    assert info.value.field == "link.rate"
    assert "ambiguous" in info.value.message
    for reading in readings:
        assert reading in info.value.message


@pytest.mark.parametrize(
    ("text", "instead"),
    [
        ("10MB/s", "'80Mbit/s'"),
        ("1.5GBps", "'12Gbit/s'"),
        ("100KB/s", "'800kbit/s'"),
        ("100B/s", "'800bit/s'"),
    ],
)
def test_byte_rates_are_refused_with_the_bit_rate_to_write(text, instead):
    with pytest.raises(InputError) as info:
        parse_rate_bps(text, "link.rate")
    assert "bytes per second" in info.value.message
    assert instead in info.value.message


@pytest.mark.parametrize(
    ("text", "n_bytes"),
    [
        ("150KB", 150_000),
        ("1.5MB", 1_500_000),
        ("1GB", 10**9),
        ("1500B", 1500),
        ("64KiB", 65_536),
        ("1MiB", 1_048_576),
        ("1GiB", 2**30),
        ("2kB", 2000),
    ],
)
def test_sizes(text, n_bytes):
    assert parse_size_bytes(text, "x") == n_bytes


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("50ms", 50_000_000),
        ("1s", 10**9),
        ("200us", 200_000),
        ("200µs", 200_000),
        ("10ns", 10),
        ("2min", 120 * 10**9),
        ("1.5s", 1_500_000_000),
        ("1h", 3600 * 10**9),
        ("0.0015ms", 1500),
    ],
)
def test_durations(text, ns):
    assert parse_duration_ns(text, "duration") == ns


def test_zero_duration_only_where_allowed():
    assert parse_duration_ns("0s", "flows[0].start", allow_zero=True) == 0
    with pytest.raises(InputError, match="must be positive"):
        parse_duration_ns("0s", "duration")


def test_fractions_of_a_base_unit_round_half_up():
    assert parse_duration_ns("1.5ns", "d") == 2
    assert parse_duration_ns("1.4ns", "d") == 1
    with pytest.raises(InputError, match="rounds to zero"):
        parse_duration_ns("0.4ns", "d")


def test_packets_and_bdp():
    assert parse_packets("1000pkt", "b") == 1000
    assert parse_bdp_multiple("0.5bdp", "b") == 0.5
    assert parse_bdp_multiple("2bdp", "b") == 2.0
    with pytest.raises(InputError, match="whole number"):
        parse_packets("1.5pkt", "b")
    with pytest.raises(InputError, match="must be positive"):
        parse_packets("0pkt", "b")
    with pytest.raises(InputError, match="must be positive"):
        parse_bdp_multiple("0bdp", "b")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1bdp", Buffer("bdp", 1.0)),
        ("0.5bdp", Buffer("bdp", 0.5)),
        ("1000pkt", Buffer("packets", 1000)),
        ("150KB", Buffer("bytes", 150_000)),
        ("64KiB", Buffer("bytes", 65_536)),
        ("20ms", Buffer("time", 20_000_000)),
    ],
)
def test_buffers(text, expected):
    assert parse_buffer(text, "link.buffer") == expected


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("10", "missing unit"),
        (10, "missing unit"),
        (2.5, "missing unit"),
        ("10Mbit/h", "unknown unit 'Mbit/h'"),
        ("10Mibit", "unknown unit 'Mibit'"),
        ("-10Mbps", "must not be negative"),
        ("0Mbps", "must be positive"),
        ("nanMbps", "not a finite number"),
        ("infGbps", "not a finite number"),
        ("Mbps", "cannot read"),
        ("", "cannot read"),
        ("1.2.3Mbps", "cannot read"),
        (True, "expected a rate"),
        (None, "expected a rate"),
    ],
)
def test_rate_rejections_name_field_and_forms(value, needle):
    with pytest.raises(InputError) as info:
        parse_rate_bps(value, "link.rate")
    err = info.value
    assert err.field == "link.rate"
    assert needle in err.message
    assert str(err).startswith("link.rate: ")
    if needle != "must be positive" and needle != "must not be negative":
        assert "Mbps" in err.message  # the allowed forms are listed


@pytest.mark.parametrize(
    ("parse", "value", "needle"),
    [
        (parse_duration_ns, "50", "missing unit"),
        (parse_duration_ns, "50msec", "unknown unit"),
        (parse_duration_ns, "-1s", "must not be negative"),
        (parse_duration_ns, "infs", "not a finite number"),
        (parse_size_bytes, "10Kb", "unknown unit 'Kb'"),
        (parse_size_bytes, "0B", "must be positive"),
        (parse_buffer, "10", "missing unit"),
        (parse_buffer, "10Mbps", "unknown unit 'Mbps'"),
        (parse_buffer, "-1bdp", "must not be negative"),
        (parse_buffer, "0pkt", "must be positive"),
    ],
)
def test_other_rejections(parse, value, needle):
    with pytest.raises(InputError, match=needle) as info:
        parse(value, "some.field")
    assert info.value.field == "some.field"


def test_buffer_error_lists_every_form():
    with pytest.raises(InputError) as info:
        parse_buffer("3 parsecs", "link.buffer")
    for form in ("bdp", "pkt", "KB", "KiB", "ms"):
        assert form in info.value.message


@pytest.mark.parametrize(
    ("fmt", "value", "text"),
    [
        (format_rate, 10_000_000, "10Mbps"),
        (format_rate, 2_500_000_000, "2.5Gbps"),
        (format_rate, 800_000, "800kbps"),
        (format_rate, 999, "999bps"),
        (format_size, 150_000, "150KB"),
        (format_size, 65_536, "64KiB"),
        (format_size, 1500, "1.5KB"),
        (format_size, 100, "100B"),
        (format_duration, 50_000_000, "50ms"),
        (format_duration, 12_500_000, "12.5ms"),
        (format_duration, 0, "0s"),
        (format_duration, 60 * 10**9, "60s"),
    ],
)
def test_formatting(fmt, value, text):
    assert fmt(value) == text


@given(st.integers(min_value=1, max_value=2**64 - 1))
def test_format_parse_round_trip(n):
    assert parse_rate_bps(format_rate(n), "r") == n
    assert parse_size_bytes(format_size(n), "s") == n
    assert parse_duration_ns(format_duration(n), "d") == n


@given(
    st.one_of(
        st.builds(Buffer, st.just("packets"), st.integers(1, 2**32 - 1)),
        st.builds(Buffer, st.just("bytes"), st.integers(1, 2**50)),
        st.builds(Buffer, st.just("time"), st.integers(1, 2**50)),
        st.builds(Buffer, st.just("bdp"), st.floats(min_value=1e-9, max_value=1e6)),
    )
)
def test_buffer_format_round_trip(buffer):
    assert parse_buffer(format_buffer(buffer), "b") == buffer


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_bdp_multiple, "1e400bdp", "is too large"),
        (parse_buffer, "1e400bdp", "is too large"),
        (parse_duration_ns, "1e99999999ms", "is too large"),  # refused before building 10^99999999
        (parse_duration_ns, "1e-99999999ms", "is too small"),
        (parse_rate_bps, "1e41bps", "is too large"),
        (parse_size_bytes, "20000000000000000000B", "is too large"),  # above 2^64 - 1 bytes
        (parse_packets, "1e30pkt", "is too large"),
    ],
)
def test_numbers_out_of_range_are_refused_with_the_field(parse, text, message):
    with pytest.raises(InputError, match=message) as err:
        parse(text, "f")
    assert err.value.field == "f"


def test_the_largest_values_still_parse():
    assert parse_size_bytes("18446744073709551615B", "f") == 2**64 - 1
    assert parse_bdp_multiple("1e40bdp", "f") == 1e40
    assert parse_duration_ns("1e-9s", "f") == 1

//! Quantities with units, as a scenario writes them: parsed into integers in base units, and formatted back.
//!
//! Base units: bit/s for rates, bytes for sizes, nanoseconds for durations. Decimal prefixes (k, M, G, T) are
//! powers of 1000, binary ones (Ki, Mi, Gi, Ti) powers of 1024. A result that is not a whole base unit is
//! rounded to the nearest one (halves up); a quantity that must be positive and rounds to zero is refused.
//! The arithmetic is exact: the number is read as decimal digits and a power of ten, never as a float.
//!
//! Accepted forms:
//! - rates, in bits per second: `1000bps`, `800kbps` (or `800Kbps`), `10Mbps`, `2.5Gbps`, `1Tbps`; the SI
//!   spelling `10Mbit/s` (`bit/s`, `kbit/s`, `Mbit/s`, `Gbit/s`, `Tbit/s`, or `Mb/s`); tc's `10mbit` (`bit`,
//!   `kbit`, `mbit`, `gbit`, `tbit`, any case, as tc reads them);
//! - sizes: `1500B`, `150KB`, `1.5MB`, `1GB`, `1TB`, `64KiB`, `1MiB`, `1GiB`, `1TiB`;
//! - durations: `10ns`, `200us` (or `200µs`), `50ms`, `1.5s`, `2min`, `1h`;
//! - packets: `1000pkt`; multiples of the bandwidth-delay product: `0.5bdp`.
//!
//! Rate spellings with two meanings are refused, with both readings in the message: tc (`man tc`, "UNITS")
//! reads `mbps`, `gbps` and `tbps` as mega-, giga- and terabytes per second, while elsewhere they are often
//! bits, so a tc line copied into a scenario would be 8 times off either way. The capitalised `Mbps`, `Gbps`
//! and `Tbps` are the networking literature's megabits and are kept; `bps` and `kbps` are bits as everywhere
//! outside tc (tc alone reads them as bytes: its `rate 100kbps` is `800kbit`). Byte rates (`MB/s`, `MBps`)
//! are refused with the bit rate to write instead.
//!
//! Every quantity fits in 64 bits of its base unit, and no unit is worth more than 10^13 base units, so a
//! number beyond 10^±40 ([`MAX_DECIMAL_EXPONENT`]) is out of range whatever its unit; it is refused before
//! any arithmetic, so `"1e99999999ms"` costs nothing.
//!
//! Messages quote the value as the front end's user wrote it (Python's `repr`), and every error is the
//! message alone: the reader attaches the field.

use crate::value::Value;

/// The largest decimal exponent of a number that a quantity may have (see the module docs).
pub const MAX_DECIMAL_EXPONENT: i64 = 40;
/// The largest quantity in base units.
pub const MAX_BASE_UNITS: u128 = u64::MAX as u128;

pub const RATE_FORMS: &str = "a rate such as '10Mbps', '10Mbit/s' or tc's '10mbit' (units: bps, kbps, Mbps, Gbps, \
     Tbps; bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s; bit, kbit, mbit, gbit, tbit)";
pub const SIZE_FORMS: &str =
    "a size such as '150KB' or '64KiB' (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)";
pub const DURATION_FORMS: &str = "a duration such as '50ms' (units: ns, us, ms, s, min, h)";
pub const PACKET_FORMS: &str = "a packet count such as '1000pkt'";
pub const BDP_FORMS: &str = "a multiple of the bandwidth-delay product such as '0.5bdp'";
pub const BUFFER_FORMS: &str = "a buffer such as '1bdp' (multiple of rate x base_rtt), '1000pkt' (packets), \
     '150KB' / '64KiB' (bytes) or '20ms' (queueing delay at the link rate)";

type Units = &'static [(&'static str, u64)];

pub const RATE_UNITS_BPS: Units = &[
    ("bps", 1),
    ("kbps", 1_000),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
    ("b/s", 1),
    ("kb/s", 1_000),
    ("Kb/s", 1_000),
    ("Mb/s", 1_000_000),
    ("Gb/s", 1_000_000_000),
    ("Tb/s", 1_000_000_000_000),
];
/// The rate words with "bit" in them, read in any case (as tc reads them).
const BIT_RATE_UNITS_BPS: Units = &[
    ("bit/s", 1),
    ("kbit/s", 1_000),
    ("mbit/s", 1_000_000),
    ("gbit/s", 1_000_000_000),
    ("tbit/s", 1_000_000_000_000),
    ("bit", 1),
    ("kbit", 1_000),
    ("mbit", 1_000_000),
    ("gbit", 1_000_000_000),
    ("tbit", 1_000_000_000_000),
];
/// Refused: spellings with two readings (tc's bytes, elsewhere bits).
const AMBIGUOUS_RATE_UNITS: &[&str] = &["mbps", "gbps", "tbps"];
/// Refused: byte rates.
const BYTE_RATE_UNITS: &[&str] = &[
    "B/s", "kB/s", "MB/s", "GB/s", "TB/s", "KB/s", "kBps", "MBps", "GBps", "TBps", "KBps",
];
pub const SIZE_UNITS_BYTES: Units = &[
    ("B", 1),
    ("KB", 1_000),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];
pub const DURATION_UNITS_NS: Units = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];
const PACKET_UNITS: Units = &[("pkt", 1)];
const BDP_UNITS: Units = &[("bdp", 1)];

fn unit_value(units: Units, unit: &str) -> Option<u64> {
    units.iter().find(|(name, _)| *name == unit).map(|&(_, v)| v)
}

// ------------------------------------------------------------------------------------------ exact decimals

/// A non-negative decimal number, exactly: `digits × 10^exp` (digits most significant first, no leading
/// zeros; none for zero).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decimal {
    digits: Vec<u8>,
    exp: i64,
}

impl Decimal {
    fn new(mut digits: Vec<u8>, exp: i64) -> Decimal {
        let lead = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..lead);
        Decimal { digits, exp }
    }

    pub fn from_u128(v: u128) -> Decimal {
        Decimal::new(v.to_string().bytes().map(|b| b - b'0').collect(), 0)
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// The exponent of the leading digit (Python's `Decimal.adjusted()`).
    fn adjusted(&self) -> i64 {
        self.digits.len() as i64 - 1 + self.exp
    }

    /// `self × m`.
    pub fn times(&self, m: u128) -> Decimal {
        if m == 0 || self.is_zero() {
            return Decimal::new(vec![], 0);
        }
        let m = Decimal::from_u128(m);
        let mut out = vec![0u32; self.digits.len() + m.digits.len()];
        for (i, &a) in self.digits.iter().rev().enumerate() {
            for (j, &b) in m.digits.iter().rev().enumerate() {
                out[i + j] += a as u32 * b as u32;
            }
        }
        let mut carry = 0u32;
        for d in out.iter_mut() {
            let v = *d + carry;
            *d = v % 10;
            carry = v / 10;
        }
        let digits = out.iter().rev().map(|&d| d as u8).collect();
        Decimal::new(digits, self.exp + m.exp)
    }

    /// `self / d`, as the integer part and whether the rest is at least a half (for rounding halves up) and
    /// whether it is zero.
    fn div_rounded(&self, d: u128) -> (Decimal, bool, bool) {
        // The digits of self, with the exponent made non-negative by dividing by 10^-exp at the end.
        let mut digits = self.digits.clone();
        if self.exp > 0 {
            digits.extend(std::iter::repeat_n(0, self.exp as usize));
        }
        let shift = if self.exp < 0 { (-self.exp) as usize } else { 0 };
        // Long division by d: quotient digits and remainder.
        let mut quotient = Vec::with_capacity(digits.len());
        let mut rem: u128 = 0;
        for &x in &digits {
            let cur = rem * 10 + x as u128;
            quotient.push((cur / d) as u8);
            rem = cur % d;
        }
        // Drop the last `shift` digits of the quotient (the division by 10^shift).
        let keep = quotient.len().saturating_sub(shift);
        let dropped: Vec<u8> = quotient[keep..].to_vec();
        let dropped_len = shift.min(quotient.len());
        let mut first_dropped = if dropped_len == shift {
            dropped.first().copied()
        } else {
            None
        };
        if shift > quotient.len() {
            // Leading zeros of the fraction: the first dropped digit is 0.
            first_dropped = Some(0);
        }
        let whole = Decimal::new(quotient[..keep].to_vec(), 0);
        let rest_zero = rem == 0 && dropped.iter().all(|&x| x == 0);
        let half = match (shift, first_dropped) {
            (0, _) => 2 * rem >= d,
            (_, Some(first)) => first >= 5,
            (_, None) => false,
        };
        (whole, half, rest_zero)
    }

    /// The nearest integer, halves up.
    fn round_half_up(&self) -> Decimal {
        let (whole, half, _) = self.div_rounded(1);
        if half { whole.plus_one() } else { whole }
    }

    fn plus_one(&self) -> Decimal {
        let mut digits = self.digits.clone();
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, 1);
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
        Decimal::new(digits, self.exp)
    }

    fn is_integer(&self) -> bool {
        self.exp >= 0
            || self.digits[(self.digits.len() as i64 + self.exp).max(0) as usize..]
                .iter()
                .all(|&d| d == 0)
    }

    /// The value as an integer, if it is one and fits in 128 bits.
    fn to_u128(&self) -> Option<u128> {
        if !self.is_integer() {
            return None;
        }
        let mut v: u128 = 0;
        let whole = (self.digits.len() as i64 + self.exp.min(0)).max(0) as usize;
        for &d in &self.digits[..whole] {
            v = v.checked_mul(10)?.checked_add(d as u128)?;
        }
        for _ in 0..self.exp.max(0) {
            v = v.checked_mul(10)?;
        }
        Some(v)
    }

    /// The nearest double (the digits' decimal text read as Rust reads floats: correctly rounded).
    fn to_f64(&self) -> f64 {
        if self.is_zero() {
            return 0.0;
        }
        let text: String = self.digits.iter().map(|d| (b'0' + d) as char).collect();
        format!("{text}e{}", self.exp).parse().unwrap_or(f64::INFINITY)
    }

    /// The decimal in fixed notation, trailing zeros removed (Python's `format(d.normalize(), "f")`).
    fn fixed(&self) -> String {
        if self.is_zero() {
            return "0".into();
        }
        let mut digits = self.digits.clone();
        let mut exp = self.exp;
        while digits.last() == Some(&0) {
            digits.pop();
            exp += 1;
        }
        let text: String = digits.iter().map(|d| (b'0' + d) as char).collect();
        if exp >= 0 {
            format!("{text}{}", "0".repeat(exp as usize))
        } else {
            let point = text.len() as i64 + exp;
            if point > 0 {
                format!("{}.{}", &text[..point as usize], &text[point as usize..])
            } else {
                format!("0.{}{text}", "0".repeat((-point) as usize))
            }
        }
    }
}

/// A float's shortest decimal (the one its `repr` prints), exactly.
pub fn decimal_of_f64(x: f64) -> Decimal {
    let text = format!("{:e}", x.abs());
    let (mantissa, exp) = text.split_once('e').expect("LowerExp has an exponent");
    let exp: i64 = exp.parse().expect("an integer exponent");
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = whole.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
    Decimal::new(digits, exp - frac.len() as i64)
}

/// `value` written by Python's `repr`: the shortest decimal, in scientific notation below 1e-4 and from
/// 1e16 (`1e-05`, `1e+16`), with `.0` on whole numbers.
pub fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    let d = decimal_of_f64(x);
    let text: String = d.digits.iter().map(|d| (b'0' + d) as char).collect();
    let adjusted = d.adjusted();
    if (-4..16).contains(&adjusted) {
        let f = d.fixed();
        let f = if f.contains('.') { f } else { format!("{f}.0") };
        return format!("{sign}{f}");
    }
    let mantissa = if text.len() == 1 {
        text
    } else {
        format!("{}.{}", &text[..1], &text[1..])
    };
    let e_sign = if adjusted < 0 { '-' } else { '+' };
    format!("{sign}{mantissa}e{e_sign}{:02}", adjusted.abs())
}

/// `x` as Python's `format(x, "g")` writes it (six significant digits, trailing zeros removed).
pub fn py_format_g(x: f64) -> String {
    if !x.is_finite() {
        return py_float_repr(x);
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:.5e}", x);
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp has an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        trim(&format!("{:.*}", decimals, x))
    } else {
        let e_sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{e_sign}{:02}", trim(mantissa), exp.abs())
    }
}

// -------------------------------------------------------------------------------------------------- reading

/// A number and its unit as written: `[+-]digits[.digits][e[+-]digits]`, then letters, `µ` or `/`, with
/// blanks around.
struct Written<'a> {
    negative: bool,
    number: &'a str,
    unit: &'a str,
}

fn split_quantity(text: &str) -> Option<Written<'_>> {
    let t = text.trim();
    let bytes = t.as_bytes();
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        let s = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - s;
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        let s = j;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        if j > s {
            i = j;
        }
    }
    let number = &t[..i];
    let rest = t[i..].trim_start();
    if !rest
        .chars()
        .all(|c| c.is_ascii_alphabetic() || c == 'µ' || c == '/')
    {
        return None;
    }
    Some(Written {
        negative: number.starts_with('-'),
        number,
        unit: rest,
    })
}

/// The exact value of a number as `split_quantity` reads it, or None if its exponent is beyond any range.
fn decimal(number: &str) -> Decimal {
    let n = number.trim_start_matches(['+', '-']);
    let (mantissa, exp) = match n.find(['e', 'E']) {
        Some(k) => (&n[..k], &n[k + 1..]),
        None => (n, "0"),
    };
    // An exponent of more digits than an i64 holds is saturated: the bounds refuse it anyway.
    let exp: i64 = exp.parse().unwrap_or(if exp.starts_with('-') {
        i64::MIN / 2
    } else {
        i64::MAX / 2
    });
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = whole.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
    Decimal::new(digits, exp.saturating_sub(frac.len() as i64))
}

fn is_non_finite(text: &str) -> bool {
    let t = text
        .trim_start()
        .trim_start_matches(['+', '-'])
        .to_ascii_lowercase();
    t.starts_with("nan") || t.starts_with("inf")
}

/// The exact amount in base units of `value` and its unit as written; refuses negatives, NaN and infinities.
fn exact_quantity<'a>(
    value: &'a Value,
    units: &[(&str, u64)],
    forms: &str,
) -> Result<(Decimal, &'a str), String> {
    let text = match value {
        Value::Str(s) => s.as_str(),
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) => {
            return Err(format!("missing unit in {}: expected {forms}", value.repr()));
        }
        other => {
            return Err(format!(
                "expected {forms}, got {} {}",
                other.type_name(),
                other.repr()
            ));
        }
    };
    if is_non_finite(text) {
        return Err(format!(
            "{} is not a finite number: expected {forms}",
            value.repr()
        ));
    }
    let Some(w) = split_quantity(text) else {
        return Err(format!("cannot read {}: expected {forms}", value.repr()));
    };
    if w.unit.is_empty() {
        return Err(format!("missing unit in {}: expected {forms}", value.repr()));
    }
    let Some(unit) = units.iter().find(|(name, _)| *name == w.unit).map(|&(_, v)| v) else {
        return Err(format!(
            "unknown unit {} in {}: expected {forms}",
            Value::Str(w.unit.into()).repr(),
            value.repr()
        ));
    };
    let number = decimal(w.number);
    if !number.is_zero() && number.adjusted() > MAX_DECIMAL_EXPONENT {
        return Err(format!("{} is too large", value.repr()));
    }
    if !number.is_zero() && number.adjusted() < -MAX_DECIMAL_EXPONENT {
        return Err(format!("{} is too small: it rounds to zero", value.repr()));
    }
    if w.negative && !number.is_zero() {
        return Err(format!("must not be negative, got {}", value.repr()));
    }
    let unit_text = &text.trim()[w.number.len()..];
    Ok((number.times(unit as u128), unit_text.trim_start()))
}

/// The integer in base units, halves up; positive unless `allow_zero`.
fn integer(value: &Value, units: &[(&str, u64)], forms: &str, positive: bool) -> Result<u64, String> {
    let (amount, _) = exact_quantity(value, units, forms)?;
    let n = amount.round_half_up();
    if positive && amount.is_zero() {
        return Err(format!("must be positive, got {}", value.repr()));
    }
    if positive && n.is_zero() {
        return Err(format!(
            "{} rounds to zero: must be at least one base unit",
            value.repr()
        ));
    }
    match n.to_u128() {
        Some(v) if v <= MAX_BASE_UNITS => Ok(v as u64),
        _ => Err(format!("{} is too large", value.repr())),
    }
}

/// The number's text times eight, as an exact decimal (`1.5` -> `12`).
fn times_eight(number: &str) -> String {
    let sign = if number.starts_with('-') { "-" } else { "" };
    let d = decimal(number).times(8);
    let text = d.fixed();
    if d.is_zero() {
        text
    } else {
        format!("{sign}{text}")
    }
}

/// The rate units to read `value` with: [`RATE_UNITS_BPS`], plus its own unit if that is a "bit" word in
/// any case. Refuses a spelling with two meanings or a byte rate, saying what to write instead.
fn rate_units(value: &str) -> Result<Vec<(&str, u64)>, String> {
    let mut units: Vec<(&str, u64)> = RATE_UNITS_BPS.to_vec();
    let Some(w) = split_quantity(value) else {
        return Ok(units);
    };
    let (unit, number) = (w.unit, w.number);
    let shown = Value::Str(value.trim().into()).repr();
    if let Some(bps) = unit_value(BIT_RATE_UNITS_BPS, &unit.to_lowercase()) {
        units.push((unit, bps));
        return Ok(units);
    }
    if AMBIGUOUS_RATE_UNITS.contains(&unit) {
        let prefix = unit[..1].to_uppercase();
        return Err(format!(
            "{shown} is ambiguous: tc reads {} as {prefix}B per second (bytes: {number}{unit} = {}{prefix}bit/s), \
             elsewhere it often means {prefix}bit/s; write '{number}{prefix}bit/s' or '{number}{prefix}bps' for \
             bits per second",
            Value::Str(unit.into()).repr(),
            times_eight(number)
        ));
    }
    if BYTE_RATE_UNITS.contains(&unit) {
        let prefix = unit[..unit.len() - 3].replace('K', "k");
        return Err(format!(
            "{shown} is a rate in bytes per second; rates are in bits per second: write '{}{prefix}bit/s'",
            times_eight(number)
        ));
    }
    Ok(units)
}

/// A rate in bit/s (`"10Mbps"`, `"10Mbit/s"`, `"10mbit"` -> 10_000_000); positive unless `allow_zero`.
pub fn parse_rate_bps(value: &Value, allow_zero: bool) -> Result<u64, String> {
    let units = match value {
        Value::Str(s) => rate_units(s)?,
        _ => RATE_UNITS_BPS.to_vec(),
    };
    integer(value, &units, RATE_FORMS, !allow_zero)
}

/// A positive size in bytes (`"150KB"` -> 150_000, `"64KiB"` -> 65_536).
pub fn parse_size_bytes(value: &Value) -> Result<u64, String> {
    integer(value, SIZE_UNITS_BYTES, SIZE_FORMS, true)
}

/// A duration in ns (`"50ms"` -> 50_000_000); positive unless `allow_zero`.
pub fn parse_duration_ns(value: &Value, allow_zero: bool) -> Result<u64, String> {
    integer(value, DURATION_UNITS_NS, DURATION_FORMS, !allow_zero)
}

/// A positive whole number of packets (`"1000pkt"` -> 1000).
pub fn parse_packets(value: &Value) -> Result<u64, String> {
    let (amount, _) = exact_quantity(value, PACKET_UNITS, PACKET_FORMS)?;
    if !amount.is_integer() {
        return Err(format!(
            "a packet count must be a whole number, got {}",
            value.repr()
        ));
    }
    if amount.is_zero() {
        return Err(format!("must be positive, got {}", value.repr()));
    }
    match amount.to_u128() {
        Some(v) if v <= MAX_BASE_UNITS => Ok(v as u64),
        _ => Err(format!("{} is too large", value.repr())),
    }
}

/// A positive multiple of the bandwidth-delay product (`"0.5bdp"` -> 0.5), the nearest double.
pub fn parse_bdp_multiple(value: &Value) -> Result<f64, String> {
    let (amount, _) = exact_quantity(value, BDP_UNITS, BDP_FORMS)?;
    if amount.is_zero() {
        return Err(format!("must be positive, got {}", value.repr()));
    }
    let multiple = amount.to_f64();
    if !multiple.is_finite() {
        return Err(format!("{} is too large", value.repr()));
    }
    Ok(multiple)
}

/// A bottleneck buffer as written.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Buffer {
    /// A packet limit.
    Packets(u64),
    /// A byte limit.
    Bytes(u64),
    /// A multiple of the link rate times the base RTT.
    Bdp(f64),
    /// The bytes the link sends in this many nanoseconds.
    Time(u64),
}

/// A buffer in any of the forms of [`BUFFER_FORMS`].
pub fn parse_buffer(value: &Value) -> Result<Buffer, String> {
    if let Value::Str(s) = value
        && let Some(w) = split_quantity(s)
    {
        if unit_value(PACKET_UNITS, w.unit).is_some() {
            return parse_packets(value).map(Buffer::Packets);
        }
        if unit_value(BDP_UNITS, w.unit).is_some() {
            return parse_bdp_multiple(value).map(Buffer::Bdp);
        }
        if unit_value(DURATION_UNITS_NS, w.unit).is_some() {
            return parse_duration_ns(value, false).map(Buffer::Time);
        }
        if unit_value(SIZE_UNITS_BYTES, w.unit).is_some() {
            return parse_size_bytes(value).map(Buffer::Bytes);
        }
    }
    let all: Vec<(&str, u64)> = [PACKET_UNITS, BDP_UNITS, DURATION_UNITS_NS, SIZE_UNITS_BYTES].concat();
    exact_quantity(value, &all, BUFFER_FORMS)?;
    Err(format!("cannot read {}: expected {BUFFER_FORMS}", value.repr()))
}

/// What a `bdp` or time buffer stands for, exactly: rate × time (× the multiple), in bit·ns; the bytes are
/// this over 8 × 10^9.
pub fn buffer_bits_ns(rate_bps: u64, time_ns: u64, multiple: Option<f64>) -> Decimal {
    let d = Decimal::from_u128(rate_bps as u128 * time_ns as u128);
    match multiple {
        Some(m) => d.times_decimal(&decimal_of_f64(m)),
        None => d,
    }
}

impl Decimal {
    fn times_decimal(&self, other: &Decimal) -> Decimal {
        let mut acc = Decimal::new(vec![], 0);
        // Schoolbook on digit vectors: other's digits one by one.
        for (k, &digit) in other.digits.iter().rev().enumerate() {
            if digit == 0 {
                continue;
            }
            let part = self.times(digit as u128);
            let shifted = Decimal::new(part.digits, part.exp + k as i64);
            acc = acc.plus(&shifted);
        }
        Decimal::new(acc.digits, acc.exp + other.exp)
    }

    fn plus(&self, other: &Decimal) -> Decimal {
        if self.is_zero() {
            return other.clone();
        }
        if other.is_zero() {
            return self.clone();
        }
        let exp = self.exp.min(other.exp);
        let pad = |d: &Decimal| -> Vec<u8> {
            let mut v = d.digits.clone();
            v.extend(std::iter::repeat_n(0, (d.exp - exp) as usize));
            v
        };
        let (a, b) = (pad(self), pad(other));
        let n = a.len().max(b.len());
        let mut out = vec![0u8; n + 1];
        let mut carry = 0;
        for i in 0..n {
            let x = if i < a.len() { a[a.len() - 1 - i] } else { 0 };
            let y = if i < b.len() { b[b.len() - 1 - i] } else { 0 };
            let s = x + y + carry;
            out[n - i] = s % 10;
            carry = s / 10;
        }
        out[0] = carry;
        Decimal::new(out, exp)
    }
}

/// The packet limit of a buffer of `bits_ns / 8e9` bytes at `mtu_bytes` per packet: round(bytes / mtu),
/// halves up; None if it is less than one packet. With it, the bytes as a float (for messages).
pub fn packets_of(bits_ns: &Decimal, mtu_bytes: u64) -> (Option<Decimal>, f64) {
    let per_packet = 8_000_000_000u128 * mtu_bytes as u128;
    let (whole, half, _) = bits_ns.div_rounded(per_packet);
    let (bytes_whole, _, _) = bits_ns.div_rounded(8_000_000_000);
    let bytes = bits_ns.to_f64() / 8e9;
    let bytes = if bytes.is_finite() {
        bytes
    } else {
        bytes_whole.to_f64()
    };
    if whole.is_zero() {
        return (None, bytes);
    }
    (Some(if half { whole.plus_one() } else { whole }), bytes)
}

impl Decimal {
    /// The integer, if it is one within 128 bits; its decimal text otherwise.
    pub fn integer_text(&self) -> Result<u128, String> {
        self.to_u128().ok_or_else(|| self.fixed())
    }
}

// ------------------------------------------------------------------------------------------------ writing

/// `value` in the largest of `units` (largest first) not above it, as an exact decimal.
fn format_scaled(value: u64, units: &[(&str, u64)], zero: &str) -> String {
    if value == 0 {
        return format!("0{zero}");
    }
    let last = units[units.len() - 1];
    let (name, size) = units
        .iter()
        .copied()
        .find(|&(_, size)| value >= size)
        .unwrap_or(last);
    let (whole, mut rest) = (value / size, (value % size) as u128);
    if rest == 0 {
        return format!("{whole}{name}");
    }
    // The exact decimal: the units are powers of ten or of two, whose fractions end.
    let mut fraction = String::new();
    while rest != 0 {
        rest *= 10;
        fraction.push((b'0' + (rest / size as u128) as u8) as char);
        rest %= size as u128;
    }
    format!("{whole}.{fraction}{name}")
}

/// `bps` as a scenario writes rates: `10Mbps`; reads back to the same integer.
pub fn format_rate_bps(bps: u64) -> String {
    let units = [
        ("Tbps", 1_000_000_000_000),
        ("Gbps", 1_000_000_000),
        ("Mbps", 1_000_000),
        ("kbps", 1_000),
        ("bps", 1),
    ];
    format_scaled(bps, &units, "bps")
}

/// `ns` as a scenario writes durations: `50ms`, `12.5ms`, `0s`.
pub fn format_duration_ns(ns: u64) -> String {
    let units = [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)];
    format_scaled(ns, &units, "s")
}

/// `bytes` as a scenario writes sizes: `150KB`, and `64KiB` for a multiple of 1024 that is not one of 1000.
pub fn format_size_bytes(bytes: u64) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) && !bytes.is_multiple_of(1000) {
        let units = [
            ("TiB", 1 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ];
        return format_scaled(bytes, &units, "B");
    }
    let units = [
        ("TB", 1_000_000_000_000),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("KB", 1_000),
        ("B", 1),
    ];
    format_scaled(bytes, &units, "B")
}

/// A buffer as a scenario writes it; reads back to an equal buffer.
pub fn format_buffer(buffer: Buffer) -> String {
    match buffer {
        Buffer::Packets(n) => format!("{n}pkt"),
        Buffer::Bytes(n) => format_size_bytes(n),
        Buffer::Time(ns) => format_duration_ns(ns),
        Buffer::Bdp(m) if m.fract() == 0.0 && m < 1e15 => format!("{}bdp", m as u64),
        Buffer::Bdp(m) => format!("{}bdp", py_float_repr(m)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Str(text.into())
    }

    #[test]
    fn rates_sizes_durations() {
        assert_eq!(parse_rate_bps(&s("10Mbps"), false), Ok(10_000_000));
        assert_eq!(parse_rate_bps(&s("10Mbit/s"), false), Ok(10_000_000));
        assert_eq!(parse_rate_bps(&s("10MBIT"), false), Ok(10_000_000));
        assert_eq!(parse_rate_bps(&s("2.5Gbps"), false), Ok(2_500_000_000));
        assert_eq!(parse_size_bytes(&s("64KiB")), Ok(65_536));
        assert_eq!(parse_size_bytes(&s("1.5MB")), Ok(1_500_000));
        assert_eq!(parse_duration_ns(&s("12.5ms"), false), Ok(12_500_000));
        assert_eq!(parse_duration_ns(&s(" 2min "), false), Ok(120_000_000_000));
        assert_eq!(parse_duration_ns(&s("0.5ns"), false), Ok(1)); // halves up
        assert_eq!(parse_duration_ns(&s("1.4ns"), false), Ok(1));
        assert_eq!(parse_duration_ns(&s("1e3ms"), false), Ok(1_000_000_000));
        assert_eq!(parse_duration_ns(&s("0s"), true), Ok(0));
        assert!(
            parse_duration_ns(&s("0s"), false)
                .unwrap_err()
                .contains("must be positive")
        );
        assert!(
            parse_duration_ns(&s("0.4ns"), false)
                .unwrap_err()
                .contains("rounds to zero")
        );
        assert!(
            parse_duration_ns(&s("-1s"), true)
                .unwrap_err()
                .contains("must not be negative")
        );
        assert!(
            parse_duration_ns(&s("1e99999999ms"), true)
                .unwrap_err()
                .contains("too large")
        );
        assert!(
            parse_duration_ns(&s("1e-99ms"), true)
                .unwrap_err()
                .contains("too small")
        );
        assert!(
            parse_duration_ns(&s("nan s"), true)
                .unwrap_err()
                .contains("not a finite number")
        );
        assert!(
            parse_duration_ns(&Value::Int(50), false)
                .unwrap_err()
                .starts_with("missing unit in 50")
        );
        assert_eq!(
            parse_duration_ns(&s("18446744073.709551615s"), false),
            Ok(u64::MAX)
        );
        assert!(
            parse_duration_ns(&s("18446744073.709551616s"), false)
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn two_readings_and_byte_rates_are_refused_with_what_to_write() {
        let e = parse_rate_bps(&s("10mbps"), false).unwrap_err();
        assert!(
            e.contains("ambiguous") && e.contains("80Mbit/s") && e.contains("'10Mbps'"),
            "{e}"
        );
        let e = parse_rate_bps(&s("1.5MB/s"), false).unwrap_err();
        assert!(e.contains("write '12Mbit/s'"), "{e}");
        let e = parse_rate_bps(&s("1KBps"), false).unwrap_err();
        assert!(e.contains("write '8kbit/s'"), "{e}");
    }

    #[test]
    fn buffers_and_their_bytes() {
        assert_eq!(parse_buffer(&s("1bdp")), Ok(Buffer::Bdp(1.0)));
        assert_eq!(parse_buffer(&s("1000pkt")), Ok(Buffer::Packets(1000)));
        assert_eq!(parse_buffer(&s("20ms")), Ok(Buffer::Time(20_000_000)));
        assert_eq!(parse_buffer(&s("64KiB")), Ok(Buffer::Bytes(65_536)));
        assert!(parse_buffer(&s("1.5pkt")).unwrap_err().contains("whole number"));
        assert!(
            parse_buffer(&s("1bdb"))
                .unwrap_err()
                .contains("unknown unit 'bdb'")
        );
        // 10 Mbps x 50 ms / 8 = 62 500 bytes = 41.67 packets -> 42; half of it 20.83 -> 21.
        let bits = buffer_bits_ns(10_000_000, 50_000_000, Some(1.0));
        assert_eq!(packets_of(&bits, 1500).0.unwrap().integer_text(), Ok(42));
        let bits = buffer_bits_ns(10_000_000, 50_000_000, Some(0.5));
        assert_eq!(packets_of(&bits, 1500).0.unwrap().integer_text(), Ok(21));
        // 1.8 Mbps x 10 ms / 8 = 2250 bytes = 1.5 packets: halves up.
        let bits = buffer_bits_ns(1_800_000, 10_000_000, None);
        assert_eq!(packets_of(&bits, 1500).0.unwrap().integer_text(), Ok(2));
        let bits = buffer_bits_ns(10_000_000, 50_000_000, Some(0.01));
        let (packets, bytes) = packets_of(&bits, 1500);
        assert!(packets.is_none() && (bytes - 625.0).abs() < 1e-9);
    }

    #[test]
    fn formatting_reads_back() {
        for n in [
            0u64,
            1,
            999,
            1000,
            1500,
            150_500,
            65_536,
            1_779_712,
            10_000_000,
            u64::MAX,
        ] {
            assert_eq!(parse_size_bytes(&s(&format_size_bytes(n.max(1)))), Ok(n.max(1)));
            assert_eq!(parse_duration_ns(&s(&format_duration_ns(n)), true), Ok(n));
            assert_eq!(parse_rate_bps(&s(&format_rate_bps(n)), true), Ok(n));
        }
        assert_eq!(format_size_bytes(1_779_712), "1.697265625MiB");
        assert_eq!(format_buffer(Buffer::Bdp(0.5)), "0.5bdp");
        assert_eq!(format_buffer(Buffer::Bdp(2.0)), "2bdp");
        assert_eq!(format_buffer(Buffer::Bdp(1e-5)), "1e-05bdp");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(1.5e15), "1500000000000000.0");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_format_g(0.01), "0.01");
        assert_eq!(py_format_g(1.0), "1");
        assert_eq!(py_format_g(1e-7), "1e-07");
        assert_eq!(py_format_g(123456789.0), "1.23457e+08");
    }
}

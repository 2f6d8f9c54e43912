//! Dynamic traffic: finite flows and flow arrivals, resolved per flow from a group's `size` and `arrivals`.
//!
//! In a nutshell: a group's application either writes forever until `stop` (a bulk flow, the default) or
//! writes `size` bytes and closes; a finite flow *completes* when its last byte is delivered in order to the
//! receiving application. Its flows either all start at `start` or start at `start` plus the arrival times
//! of a process. These are the two ingredients of the "dynamic traffic" experiments of the fairness
//! literature (flows joining and leaving, web-like transfers with heavy-tailed sizes; e.g. Nadas et al.), and
//! of flow-completion-time studies.
//!
//! Sizes (`size`): a fixed number of bytes, or a distribution with the given mean, drawn once per flow from
//! the flow's own stream of the run's seed (`StreamId::FlowSize`), so a group's sizes do not depend on any
//! other component's draws and scenarios without `size` draw nothing:
//! - `exponential`: `-mean ln(1 - U)`;
//! - `pareto` with shape α > 1 (the mean is finite only then): scale `x_m = mean (α - 1) / α`, drawn by
//!   inversion, `x_m / (1 - U)^(1/α)`;
//! - `lognormal` with σ = `shape` in (0, [`MAX_LOGNORMAL_SIGMA`]]: `exp(μ + σ Z)` with `μ = ln(mean) - σ²/2`
//!   so that the mean is `mean`, Z standard normal by the Box-Muller transform.
//!
//! Each draw is rounded to whole bytes, at least 1, and capped at [`MAX_SIZE_BYTES`] (a heavy tail can draw
//! sizes no run delivers; the cap lowers a Pareto mean by a negligible amount for α above 1.05).
//!
//! Arrivals (`arrivals`), drawn once per group from the group's own stream (`StreamId::Arrivals`):
//! - `poisson` with `mean_interval`: flow k (k = 0, 1, ...) of the group starts at `start + T_k`, where
//!   `T_k` is the (k+1)-th arrival of a Poisson process of rate 1 / `mean_interval` (a sum of k+1
//!   exponential gaps): flows arrive in the order of their ids;
//! - `uniform` with `window`: the flows' offsets are `count` independent uniform draws on `[0, window)`,
//!   sorted so that flow ids are again in arrival order.
//!
//! The host's start jitter, if any, is added on top. A flow whose start falls at or after the run's end or
//! its group's `stop` never starts: its row in the flow table shows the start it would have had, and it is
//! never active. Validation (`UncheckedSpec::check_rules`) refuses a Poisson group whose *mean* last arrival,
//! `start + count × mean_interval`, is after the end (most of its flows would never start: the scenario is
//! mis-sized), and a uniform window that reaches past the end; a few late draws of a Poisson process are
//! allowed and counted (`flows_not_started` in the summary of dynamic traffic).
//!
//! Deviations: a finite flow's data is written at once when it starts (one `write` and `close`, as a web
//! server sends a response); connection set-up is not simulated, as for every flow. The simulator counts
//! sequence numbers in segments, so a flow of `size` bytes sends `ceil(size / MSS)` segments, the last one
//! carrying the remainder (its wire length is the remainder plus the headers).

use ccfair_core::names::quoted;
use ccfair_core::rng::StreamId;
use ccfair_core::{FieldError, Rng};
use serde::{Deserialize, Serialize};

use crate::spec::{Algorithm, GroupSpec, UncheckedSpec, format_duration_ns};

use FieldError as E;

/// The largest flow size, and the largest draw of a distribution: 1 TiB, more than any run delivers in
/// practice (15 minutes at 10 Gbit/s), and few enough segments (7.6 × 10^8 at the smallest MSS) for the
/// simulator's 32-bit segment sequence numbers.
pub const MAX_SIZE_BYTES: u64 = 1 << 40;
/// The largest lognormal σ: at σ = 4 the mean is e^8 ≈ 3000 times the median, and a larger σ gives a mean
/// that no run's number of flows samples (its draws' average stays far below the mean).
pub const MAX_LOGNORMAL_SIGMA: f64 = 4.0;

/// The distribution names, in the order error messages list them.
pub const DISTRIBUTIONS: [&str; 4] = ["fixed", "exponential", "pareto", "lognormal"];
/// The arrival processes, in the order error messages list them.
pub const PROCESSES: [&str; 2] = ["poisson", "uniform"];

/// A group's `size`, as written: a number of bytes (`distribution` None) or a table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeInput {
    #[serde(default)]
    pub distribution: Option<String>,
    pub mean_bytes: i128,
    #[serde(default)]
    pub shape: Option<f64>,
}

/// A group's `arrivals`, as written (durations in ns).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsInput {
    pub process: String,
    #[serde(default)]
    pub mean_interval_ns: Option<i128>,
    #[serde(default)]
    pub window_ns: Option<i128>,
}

/// The bytes each flow of a group writes.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "distribution", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeSpec {
    Fixed { bytes: u64 },
    Exponential { mean_bytes: u64 },
    Pareto { mean_bytes: u64, shape: f64 },
    Lognormal { mean_bytes: u64, sigma: f64 },
}

/// When the flows of a group start, after the group's `start`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "process", rename_all = "lowercase", deny_unknown_fields)]
pub enum ArrivalSpec {
    Poisson { mean_interval_ns: u64 },
    Uniform { window_ns: u64 },
}

impl SizeInput {
    /// The size of group `group` (`flows[1]`); errors name `size`, or `size.mean`, `size.shape`, ... for a
    /// table.
    pub fn resolve(&self, group: &str) -> Result<SizeSpec, FieldError> {
        let table = self.distribution.is_some();
        let mean_field = if table {
            format!("{group}.size.mean")
        } else {
            format!("{group}.size")
        };
        if self.mean_bytes < 1 {
            return E::err(
                mean_field,
                format!("must be at least 1 byte, got {}", self.mean_bytes),
            );
        }
        let mean_bytes = u64::try_from(self.mean_bytes)
            .ok()
            .filter(|&b| b <= MAX_SIZE_BYTES)
            .ok_or_else(|| {
                E::new(
                    &mean_field,
                    format!("must be at most {MAX_SIZE_BYTES} bytes (1 TiB)"),
                )
            })?;
        let name = self.distribution.as_deref().unwrap_or("fixed");
        let shape_field = format!("{group}.size.shape");
        let shape = |low_open: f64, high: f64, what: &str| -> Result<f64, FieldError> {
            match self.shape {
                None => E::err(
                    &shape_field,
                    format!("is required for the {name} distribution ({what})"),
                ),
                Some(s) if s.is_finite() && s > low_open && s <= high => Ok(s),
                Some(s) => E::err(
                    &shape_field,
                    format!("{what} must be in ({low_open}, {high}], got {s}"),
                ),
            }
        };
        let no_shape = || -> Result<(), FieldError> {
            match self.shape {
                Some(_) => E::err(
                    &shape_field,
                    format!("applies to the pareto and lognormal distributions only, not {name}"),
                ),
                None => Ok(()),
            }
        };
        match name {
            "fixed" => no_shape().map(|_| SizeSpec::Fixed { bytes: mean_bytes }),
            "exponential" => no_shape().map(|_| SizeSpec::Exponential { mean_bytes }),
            "pareto" => Ok(SizeSpec::Pareto {
                mean_bytes,
                shape: shape(
                    1.0,
                    f64::MAX,
                    "the tail index α, which needs to exceed 1 for a finite mean",
                )?,
            }),
            "lognormal" => Ok(SizeSpec::Lognormal {
                mean_bytes,
                sigma: shape(0.0, MAX_LOGNORMAL_SIGMA, "σ of the underlying normal")?,
            }),
            other => E::err(
                format!("{group}.size.distribution"),
                format!("expected one of {}, got '{other}'", quoted(&DISTRIBUTIONS)),
            ),
        }
    }
}

impl ArrivalsInput {
    /// The arrivals of group `group`; errors name `arrivals.process`, `arrivals.mean_interval`, ...
    pub fn resolve(&self, group: &str) -> Result<ArrivalSpec, FieldError> {
        let f = |name: &str| format!("{group}.arrivals.{name}");
        let positive = |name: &str, v: Option<i128>| -> Result<u64, FieldError> {
            match v {
                None => E::err(f(name), format!("is required for {} arrivals", self.process)),
                Some(v) if v <= 0 => E::err(f(name), "must be positive"),
                Some(v) => u64::try_from(v).map_err(|_| E::new(f(name), "is too large")),
            }
        };
        let unused = |name: &str, v: Option<i128>| -> Result<(), FieldError> {
            match v {
                Some(_) => E::err(f(name), format!("does not apply to {} arrivals", self.process)),
                None => Ok(()),
            }
        };
        match self.process.as_str() {
            "poisson" => {
                unused("window", self.window_ns)?;
                Ok(ArrivalSpec::Poisson {
                    mean_interval_ns: positive("mean_interval", self.mean_interval_ns)?,
                })
            }
            "uniform" => {
                unused("mean_interval", self.mean_interval_ns)?;
                Ok(ArrivalSpec::Uniform {
                    window_ns: positive("window", self.window_ns)?,
                })
            }
            other => E::err(
                f("process"),
                format!("expected one of {}, got '{other}'", quoted(&PROCESSES)),
            ),
        }
    }
}

impl SizeSpec {
    /// The mean of the distribution (the fixed size for `fixed`).
    pub fn mean_bytes(&self) -> u64 {
        match *self {
            SizeSpec::Fixed { bytes } => bytes,
            SizeSpec::Exponential { mean_bytes }
            | SizeSpec::Pareto { mean_bytes, .. }
            | SizeSpec::Lognormal { mean_bytes, .. } => mean_bytes,
        }
    }

    /// One flow's size, drawn from `rng` (a fixed size draws nothing).
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let x = match *self {
            SizeSpec::Fixed { bytes } => return bytes,
            SizeSpec::Exponential { mean_bytes } => -(mean_bytes as f64) * open_unit(rng).ln(),
            SizeSpec::Pareto { mean_bytes, shape } => {
                let scale = mean_bytes as f64 * (shape - 1.0) / shape;
                scale / open_unit(rng).powf(1.0 / shape)
            }
            SizeSpec::Lognormal { mean_bytes, sigma } => {
                let mu = (mean_bytes as f64).ln() - sigma * sigma / 2.0;
                (mu + sigma * standard_normal(rng)).exp()
            }
        };
        if x.is_nan() {
            return 1;
        }
        (x.round() as u64).clamp(1, MAX_SIZE_BYTES)
    }
}

/// Uniform on (0, 1]: `1 - U` for U uniform on [0, 1), so that logarithms and powers stay finite.
fn open_unit(rng: &mut Rng) -> f64 {
    1.0 - rng.next_f64()
}

/// A standard normal draw (Box-Muller, the cosine branch; two uniforms per draw).
fn standard_normal(rng: &mut Rng) -> f64 {
    let r = (-2.0 * open_unit(rng).ln()).sqrt();
    r * (std::f64::consts::TAU * rng.next_f64()).cos()
}

impl ArrivalSpec {
    /// The offsets after the group's start of its `count` flows, in flow order (non-decreasing).
    pub fn offsets_ns(&self, count: u32, rng: &mut Rng) -> Vec<u64> {
        match *self {
            ArrivalSpec::Poisson { mean_interval_ns } => {
                let mut t = 0.0f64;
                (0..count)
                    .map(|_| {
                        t += -(mean_interval_ns as f64) * open_unit(rng).ln();
                        to_ns(t)
                    })
                    .collect()
            }
            ArrivalSpec::Uniform { window_ns } => {
                let mut v: Vec<u64> = (0..count).map(|_| rng.below_u64(window_ns)).collect();
                v.sort_unstable();
                v
            }
        }
    }

    /// The mean offset of flow `k` (0-based) of `count`: k+1 mean gaps for Poisson, (k+1)/(count+1) of the
    /// window for uniform order statistics.
    pub fn mean_offset_ns(&self, k: u32, count: u32) -> f64 {
        match *self {
            ArrivalSpec::Poisson { mean_interval_ns } => (k as f64 + 1.0) * mean_interval_ns as f64,
            ArrivalSpec::Uniform { window_ns } => window_ns as f64 * (k as f64 + 1.0) / (count as f64 + 1.0),
        }
    }
}

fn to_ns(t: f64) -> u64 {
    if t >= u64::MAX as f64 {
        u64::MAX
    } else {
        t.round() as u64
    }
}

/// The rules of a group's dynamic traffic against the run (see the module docs); `f` names a field.
pub(crate) fn validate_group<C: Algorithm>(
    g: &GroupSpec<C>,
    duration_ns: u64,
    f: impl Fn(&str) -> String,
) -> Result<(), FieldError> {
    let duration = format_duration_ns(duration_ns);
    let late = |field: &str, message: String| E::err(f(field), message);
    match g.arrivals {
        Some(ArrivalSpec::Poisson { mean_interval_ns })
            if g.start_ns as u128 + g.count as u128 * mean_interval_ns as u128 > duration_ns as u128 =>
        {
            return late(
                "arrivals.mean_interval",
                format!(
                    "the mean last arrival, start + count × mean_interval = {} + {} × {}, is after the end \
                     of the run ({duration}): most of the group's flows would never start",
                    format_duration_ns(g.start_ns),
                    g.count,
                    format_duration_ns(mean_interval_ns)
                ),
            );
        }
        Some(ArrivalSpec::Uniform { window_ns })
            if g.start_ns as u128 + window_ns as u128 > duration_ns as u128 =>
        {
            return late(
                "arrivals.window",
                format!(
                    "start + window ({} + {}) must be at most the end of the run ({duration})",
                    format_duration_ns(g.start_ns),
                    format_duration_ns(window_ns)
                ),
            );
        }
        _ => {}
    }
    if let Some(size) = g.size {
        let (field, bytes) = match size {
            SizeSpec::Fixed { bytes } => ("size", bytes),
            other => ("size.mean", other.mean_bytes()),
        };
        if bytes == 0 || bytes > MAX_SIZE_BYTES {
            return E::err(
                f(field),
                format!("must be between 1 byte and {MAX_SIZE_BYTES} bytes"),
            );
        }
        match size {
            SizeSpec::Pareto { shape, .. } if !(shape.is_finite() && shape > 1.0) => {
                return E::err(f("size.shape"), format!("must exceed 1, got {shape}"));
            }
            SizeSpec::Lognormal { sigma, .. } if !(sigma > 0.0 && sigma <= MAX_LOGNORMAL_SIGMA) => {
                return E::err(
                    f("size.shape"),
                    format!("must be in (0, {MAX_LOGNORMAL_SIGMA}], got {sigma}"),
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// One flow's start and size, as the run draws them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlowPlan {
    /// When the flow starts (it never starts if this is at or after the run's end or its group's stop).
    pub start_ns: u64,
    /// Bytes the application writes; 0 for a bulk flow that writes until it stops.
    pub size_bytes: u64,
}

/// How long after its group's start (and arrival) flow `flow` starts: U[0, start_jitter) from its own
/// stream, no draw for a host without jitter (the ideal host draws nothing, so its runs are those of a
/// simulator without hosts).
fn start_jitter_ns<C: Algorithm>(g: &GroupSpec<C>, seed: u64, flow: u32) -> u64 {
    match g.host.start_jitter_ns {
        0 => 0,
        window => Rng::stream(seed, StreamId::HostStart(flow)).below_u64(window),
    }
}

/// Every flow's start and size under `seed`, in flow order. A flow's start is its group's `start`, plus its
/// arrival offset, plus `k × start_spacing` when it is the k-th flow (counted from 0 in flow order, over all
/// groups) due at that instant, plus its start jitter: one thread starting flows due together one after
/// the other (the host's `start_spacing`, see [`crate::host`]).
pub fn flow_plans<C: Algorithm>(spec: &UncheckedSpec<C>, seed: u64) -> Vec<FlowPlan> {
    let mut plans = Vec::with_capacity(spec.flow_count() as usize);
    // Flows already due at an instant, for the spacing (a scenario has few distinct instants without
    // arrivals; with them each flow has its own).
    let mut due: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
    for (gi, g) in spec.groups.iter().enumerate() {
        let offsets = g
            .arrivals
            .map(|a| a.offsets_ns(g.count, &mut Rng::stream(seed, StreamId::Arrivals(gi as u32))));
        for k in 0..g.count {
            let id = plans.len() as u32;
            let arrival = offsets.as_ref().map_or(0, |o| o[k as usize]);
            let size_bytes = g
                .size
                .map_or(0, |s| s.draw(&mut Rng::stream(seed, StreamId::FlowSize(id))));
            let due_ns = g.start_ns.saturating_add(arrival);
            let spacing_ns = if g.host.start_spacing_ns > 0 {
                let earlier = due.entry(due_ns).or_insert(0);
                let offset = earlier.saturating_mul(g.host.start_spacing_ns);
                *earlier += 1;
                offset
            } else {
                0
            };
            plans.push(FlowPlan {
                start_ns: due_ns
                    .saturating_add(spacing_ns)
                    .saturating_add(start_jitter_ns(g, seed, id)),
                size_bytes,
            });
        }
    }
    plans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_of(spec: SizeSpec, n: u32) -> f64 {
        let mut rng = Rng::stream(3, StreamId::Other(0));
        (0..n).map(|_| spec.draw(&mut rng) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn size_draws_have_the_written_mean() {
        let mean = 1_000_000u64;
        // Relative standard error of the sample mean: CV / sqrt(n); CV = 1 (exponential), sqrt(e^σ² - 1)
        // (lognormal σ = 1: 1.31), 1 / sqrt(α(α - 2)) for Pareto α = 3 (0.58). n = 200,000 gives at most
        // 0.3 %; 2 % is over six standard errors.
        for spec in [
            SizeSpec::Exponential { mean_bytes: mean },
            SizeSpec::Lognormal {
                mean_bytes: mean,
                sigma: 1.0,
            },
            SizeSpec::Pareto {
                mean_bytes: mean,
                shape: 3.0,
            },
        ] {
            let m = mean_of(spec, 200_000);
            assert!((m / mean as f64 - 1.0).abs() < 0.02, "{spec:?}: sample mean {m}");
        }
        assert_eq!(mean_of(SizeSpec::Fixed { bytes: 1234 }, 10), 1234.0);
    }

    #[test]
    fn pareto_has_its_scale_as_minimum() {
        // x_m = mean (α - 1) / α: 1.2 → 1/6 of the mean.
        let spec = SizeSpec::Pareto {
            mean_bytes: 600_000,
            shape: 1.2,
        };
        let mut rng = Rng::stream(9, StreamId::Other(1));
        let min = (0..10_000).map(|_| spec.draw(&mut rng)).min().unwrap();
        assert!((100_000..101_000).contains(&min), "min {min}");
    }

    #[test]
    fn poisson_gaps_have_the_mean_interval() {
        let a = ArrivalSpec::Poisson {
            mean_interval_ns: 200_000_000,
        };
        let mut rng = Rng::stream(5, StreamId::Arrivals(0));
        let n = 20_000;
        let offsets = a.offsets_ns(n, &mut rng);
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
        // Mean gap = last / n; its standard error is mean / sqrt(n) = 0.7 %; allow 3 %.
        let mean_gap = offsets[n as usize - 1] as f64 / n as f64;
        assert!((mean_gap / 2e8 - 1.0).abs() < 0.03, "mean gap {mean_gap}");
        // Exponential gaps: about e^-1 of them exceed the mean.
        let long = offsets.windows(2).filter(|w| w[1] - w[0] > 200_000_000).count() as f64 / n as f64;
        assert!(
            (long - (-1.0f64).exp()).abs() < 0.02,
            "share of gaps above the mean {long}"
        );
    }

    #[test]
    fn uniform_offsets_stay_in_the_window_in_order() {
        let a = ArrivalSpec::Uniform { window_ns: 1_000 };
        let offsets = a.offsets_ns(500, &mut Rng::stream(1, StreamId::Arrivals(2)));
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
        assert!(offsets.iter().all(|&o| o < 1_000));
        let mean = offsets.iter().sum::<u64>() as f64 / 500.0;
        assert!((mean - 500.0).abs() < 40.0, "mean {mean}");
    }

    #[test]
    fn bad_sizes_and_arrivals_name_their_field() {
        let size = |d: Option<&str>, mean: i128, shape: Option<f64>| {
            SizeInput {
                distribution: d.map(str::to_owned),
                mean_bytes: mean,
                shape,
            }
            .resolve("flows[2]")
            .unwrap_err()
            .field
        };
        assert_eq!(size(None, -5, None), "flows[2].size");
        assert_eq!(size(Some("pareto"), 0, Some(1.5)), "flows[2].size.mean");
        assert_eq!(size(Some("zipf"), 10, None), "flows[2].size.distribution");
        assert_eq!(size(Some("pareto"), 10, Some(1.0)), "flows[2].size.shape");
        assert_eq!(size(Some("pareto"), 10, None), "flows[2].size.shape");
        assert_eq!(size(Some("lognormal"), 10, Some(4.5)), "flows[2].size.shape");
        assert_eq!(size(Some("exponential"), 10, Some(2.0)), "flows[2].size.shape");
        let arrivals = |p: &str, mean: Option<i128>, window: Option<i128>| {
            ArrivalsInput {
                process: p.to_owned(),
                mean_interval_ns: mean,
                window_ns: window,
            }
            .resolve("flows[0]")
            .unwrap_err()
            .field
        };
        assert_eq!(arrivals("burst", Some(1), None), "flows[0].arrivals.process");
        assert_eq!(
            arrivals("poisson", Some(0), None),
            "flows[0].arrivals.mean_interval"
        );
        assert_eq!(arrivals("poisson", None, None), "flows[0].arrivals.mean_interval");
        assert_eq!(arrivals("poisson", Some(5), Some(5)), "flows[0].arrivals.window");
        assert_eq!(arrivals("uniform", None, Some(-1)), "flows[0].arrivals.window");
    }
}

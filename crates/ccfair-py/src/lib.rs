//! `ccfair._native`: the Python extension. It runs resolved scenarios (JSON from the Python front end) and
//! hands results back as columns of little-endian bytes that NumPy views without copying element by element.
//! Python is called only between chunks of simulated time (progress, Ctrl-C), never per packet.

#![allow(clippy::disallowed_methods)] // wall-clock time here is for progress reporting only

use std::time::Instant;

use ccfair_cc::CcConfig;
use ccfair_sim::{RunOutput, ScenarioSpec, Simulation};
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// A numeric column as (NumPy dtype string, little-endian bytes).
trait Column: Sized {
    const DTYPE: &'static str;
    /// Writes the value into `out`, which is exactly `size_of::<Self>()` bytes long.
    fn put(&self, out: &mut [u8]);
}

macro_rules! column {
    ($t:ty, $d:expr) => {
        impl Column for $t {
            const DTYPE: &'static str = $d;
            fn put(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}
column!(u64, "<u8");
column!(i64, "<i8");
column!(u32, "<u4");
column!(i32, "<i4");
column!(u8, "|u1");
column!(f64, "<f8");

/// Sets `d[name]` to the column `v`, written straight into the Python bytes object (no intermediate copy:
/// the time series can be most of a run's memory).
fn col<'py, T: Column>(py: Python<'py>, d: &Bound<'py, PyDict>, name: &str, v: &[T]) -> PyResult<()> {
    let width = std::mem::size_of::<T>();
    let bytes = PyBytes::new_with(py, std::mem::size_of_val(v), |out| {
        for (x, slot) in v.iter().zip(out.chunks_exact_mut(width)) {
            x.put(slot);
        }
        Ok(())
    })?;
    d.set_item(name, (T::DTYPE, bytes))
}

fn parse_spec(spec_json: &str) -> PyResult<ScenarioSpec> {
    let spec: ScenarioSpec =
        serde_json::from_str(spec_json).map_err(|e| PyValueError::new_err(format!("scenario: {e}")))?;
    spec.validate()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(spec)
}

/// Checks a resolved scenario; raises ValueError("field: message"). Returns the estimate of the run's cost
/// (peak memory, events, and their parts with the fields that drive them) as JSON.
#[pyfunction]
fn validate(spec_json: &str) -> PyResult<String> {
    let spec = parse_spec(spec_json)?;
    Ok(serde_json::to_string(&ccfair_sim::estimate(&spec)).expect("estimates serialize"))
}

/// Validates a congestion control and its parameters; returns the canonical configuration as JSON.
#[pyfunction]
fn check_cc(name: &str, params_json: &str) -> PyResult<String> {
    let params: serde_json::Value =
        serde_json::from_str(params_json).map_err(|e| PyValueError::new_err(format!("cc_params: {e}")))?;
    let cfg =
        CcConfig::from_name_and_params(name, &params).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(serde_json::to_string(&cfg).expect("configs serialize"))
}

/// Validates a queue discipline, its parameters and the buffer limit (`{"packets": N}` or `{"bytes": N}`) for a
/// link of `mtu_bytes` shared by `flow_groups` groups of flows; returns the canonical configuration as JSON.
/// Errors are `link.aqm[.param]: message`.
#[pyfunction]
fn check_aqm(
    name: &str,
    params_json: &str,
    limit_json: &str,
    mtu_bytes: u32,
    flow_groups: usize,
) -> PyResult<String> {
    let params: serde_json::Value =
        serde_json::from_str(params_json).map_err(|e| PyValueError::new_err(format!("link.aqm: {e}")))?;
    let limit: ccfair_aqm::QueueLimit =
        serde_json::from_str(limit_json).map_err(|e| PyValueError::new_err(format!("link.buffer: {e}")))?;
    let checked = ccfair_aqm::AqmConfig::from_name_and_params(name, &params, limit, mtu_bytes)
        .and_then(|cfg| cfg.validate_groups(flow_groups).map(|_| cfg));
    let cfg = checked.map_err(|e| PyValueError::new_err(e.prefixed("link").to_string()))?;
    Ok(serde_json::to_string(&cfg).expect("configs serialize"))
}

/// The available congestion controls and queue disciplines, with parameters, as JSON.
#[pyfunction]
fn catalog() -> String {
    let ccs: Vec<serde_json::Value> = ccfair_cc::algorithms()
        .into_iter()
        .map(|a| {
            serde_json::json!({
                "name": a.name,
                "aliases": a.aliases,
                "summary": a.summary,
                "source": a.source,
                "defaults": a.defaults,
                "params": a.params.iter().map(|p| serde_json::json!({"name": p.name, "allowed": p.allowed, "doc": p.doc})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let qdiscs: Vec<serde_json::Value> = ccfair_aqm::qdiscs()
        .into_iter()
        .map(|q| {
            serde_json::json!({
                "name": q.name,
                "summary": q.summary,
                "source": q.source,
                "defaults": q.defaults,
                "params": q.params.iter().map(|p| serde_json::json!({"name": p.name, "allowed": p.allowed, "doc": p.doc})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let limits = serde_json::json!({
        "header_bytes": ccfair_sim::tcp::HEADER_BYTES,
        "min_mtu_bytes": ccfair_sim::scenario::MIN_MTU,
        "max_mtu_bytes": ccfair_sim::scenario::MAX_MTU,
        "max_flows": ccfair_sim::sim::MAX_FLOWS,
    });
    serde_json::json!({"congestion_controls": ccs, "queue_disciplines": qdiscs, "limits": limits}).to_string()
}

fn output_to_py<'py>(py: Python<'py>, out: &RunOutput, wall_seconds: f64) -> PyResult<Bound<'py, PyDict>> {
    let flows = PyDict::new(py);
    let f = &out.flows;
    col(
        py,
        &flows,
        "flow_id",
        &f.iter().map(|r| r.flow_id).collect::<Vec<_>>(),
    )?;
    col(
        py,
        &flows,
        "group",
        &f.iter().map(|r| r.group).collect::<Vec<_>>(),
    )?;
    flows.set_item("cc", PyList::new(py, f.iter().map(|r| r.cc))?)?;
    col(
        py,
        &flows,
        "rtt_ns",
        &f.iter().map(|r| r.rtt_ns).collect::<Vec<_>>(),
    )?;
    col(
        py,
        &flows,
        "start_ns",
        &f.iter().map(|r| r.start_ns).collect::<Vec<_>>(),
    )?;
    col(
        py,
        &flows,
        "stop_ns",
        &f.iter().map(|r| r.stop_ns).collect::<Vec<_>>(),
    )?;
    macro_rules! counters {
        ($prefix:literal, $field:ident) => {
            col(
                py,
                &flows,
                concat!($prefix, "delivered_bytes"),
                &f.iter()
                    .map(|r| r.$field.delivered_bytes)
                    .collect::<Vec<_>>(),
            )?;
            col(
                py,
                &flows,
                concat!($prefix, "sent_segments"),
                &f.iter().map(|r| r.$field.sent_segments).collect::<Vec<_>>(),
            )?;
            col(
                py,
                &flows,
                concat!($prefix, "retransmitted_segments"),
                &f.iter()
                    .map(|r| r.$field.retransmitted_segments)
                    .collect::<Vec<_>>(),
            )?;
            col(
                py,
                &flows,
                concat!($prefix, "queue_drops"),
                &f.iter().map(|r| r.$field.queue_drops).collect::<Vec<_>>(),
            )?;
            col(
                py,
                &flows,
                concat!($prefix, "path_drops"),
                &f.iter().map(|r| r.$field.path_drops).collect::<Vec<_>>(),
            )?;
            col(
                py,
                &flows,
                concat!($prefix, "ce_marks"),
                &f.iter().map(|r| r.$field.ce_marks).collect::<Vec<_>>(),
            )?;
            col(
                py,
                &flows,
                concat!($prefix, "rto_events"),
                &f.iter().map(|r| r.$field.rto_events).collect::<Vec<_>>(),
            )?;
        };
    }
    counters!("window_", window);
    counters!("total_", total);
    col(
        py,
        &flows,
        "rtt_samples",
        &f.iter().map(|r| r.rtt_samples).collect::<Vec<_>>(),
    )?;
    col(
        py,
        &flows,
        "rtt_mean_ns",
        &f.iter().map(|r| r.rtt_mean_ns).collect::<Vec<_>>(),
    )?;
    col(
        py,
        &flows,
        "rtt_p99_ns",
        &f.iter().map(|r| r.rtt_p99_ns).collect::<Vec<_>>(),
    )?;

    let ts = PyDict::new(py);
    let s = &out.series;
    col(py, &ts, "t_ns", &s.t_ns)?;
    col(py, &ts, "flow_id", &s.flow_id)?;
    col(py, &ts, "delivered_bytes", &s.delivered_bytes)?;
    col(py, &ts, "goodput_bps", &s.goodput_bps)?;
    col(py, &ts, "cwnd", &s.cwnd)?;
    col(py, &ts, "ssthresh", &s.ssthresh)?;
    col(py, &ts, "srtt_ns", &s.srtt_ns)?;
    col(py, &ts, "min_rtt_ns", &s.min_rtt_ns)?;
    col(py, &ts, "pacing_rate_bps", &s.pacing_rate_bps)?;
    col(py, &ts, "inflight", &s.inflight)?;
    col(py, &ts, "retransmits", &s.retransmits)?;
    col(py, &ts, "drops", &s.drops)?;
    col(py, &ts, "ca_state", &s.ca_state)?;
    col(py, &ts, "cc_mode", &s.cc_mode)?;
    col(py, &ts, "cc_pacing_gain", &s.cc_pacing_gain)?;
    col(py, &ts, "cc_cwnd_gain", &s.cc_cwnd_gain)?;
    col(py, &ts, "cc_bw_bps", &s.cc_bw_bps)?;
    col(py, &ts, "cc_min_rtt_ns", &s.cc_min_rtt_ns)?;
    col(py, &ts, "cc_inflight_hi", &s.cc_inflight_hi)?;
    col(py, &ts, "cc_inflight_lo", &s.cc_inflight_lo)?;
    col(py, &ts, "cc_aux", &s.cc_aux)?;

    let q = PyDict::new(py);
    let qs = &out.queue;
    col(py, &q, "t_ns", &qs.t_ns)?;
    col(py, &q, "backlog_bytes", &qs.backlog_bytes)?;
    col(py, &q, "backlog_packets", &qs.backlog_packets)?;
    col(py, &q, "sojourn_p50_ns", &qs.sojourn_p50_ns)?;
    col(py, &q, "sojourn_p99_ns", &qs.sojourn_p99_ns)?;
    col(py, &q, "sojourn_max_ns", &qs.sojourn_max_ns)?;
    col(py, &q, "drops", &qs.drops)?;
    col(py, &q, "marks", &qs.marks)?;
    col(py, &q, "departures", &qs.departures)?;
    col(py, &q, "tx_bytes", &qs.tx_bytes)?;
    col(py, &q, "sojourn_l4s_p99_ns", &qs.sojourn_l4s_p99_ns)?;
    col(py, &q, "sojourn_classic_p99_ns", &qs.sojourn_classic_p99_ns)?;

    let t = &out.totals;
    let totals = PyDict::new(py);
    totals.set_item("events", t.events)?;
    totals.set_item("sim_end_ns", t.sim_end_ns)?;
    totals.set_item("window_ns", t.window_ns)?;
    totals.set_item("window_link_tx_bytes", t.window_link_tx_bytes)?;
    totals.set_item("window_queue_drops", t.window_queue_drops)?;
    totals.set_item("window_path_drops", t.window_path_drops)?;
    totals.set_item("window_marks", t.window_marks)?;
    totals.set_item("window_sojourn_p50_ns", t.window_sojourn_p50_ns)?;
    totals.set_item("window_sojourn_p99_ns", t.window_sojourn_p99_ns)?;
    totals.set_item("window_sojourn_mean_ns", t.window_sojourn_mean_ns)?;
    totals.set_item("window_sojourn_l4s_p99_ns", t.window_sojourn_l4s_p99_ns)?;
    totals.set_item("window_sojourn_classic_p99_ns", t.window_sojourn_classic_p99_ns)?;
    totals.set_item("window_departures", t.window_departures)?;
    totals.set_item("sent_segments", t.sent_segments)?;
    totals.set_item("arrived_segments", t.arrived_segments)?;
    totals.set_item("queue_drops", t.queue_drops)?;
    totals.set_item("path_drops", t.path_drops)?;
    totals.set_item("in_flight_at_end", t.in_flight_at_end)?;
    totals.set_item("window_backlog_bytes", t.window_backlog_bytes)?;
    totals.set_item("wall_seconds", wall_seconds)?;

    let result = PyDict::new(py);
    result.set_item("flows", flows)?;
    result.set_item("timeseries", ts)?;
    result.set_item("queue", q)?;
    result.set_item("totals", totals)?;
    Ok(result)
}

/// Wall time one chunk of simulation aims at: Python checks for Ctrl-C and calls `progress` between chunks,
/// so this bounds how long either waits.
const CHUNK_TARGET_SECONDS: f64 = 0.02;
/// The first chunk's event budget, and the bounds of the adapted one. Chunks are sized in events, not in
/// simulated time: the cost of a simulated second grows with the link rate (a 10 Tbps link has a million
/// times the events of a 10 Mbps one), the cost of an event does not.
const CHUNK_FIRST_POPS: u64 = 1 << 14;
const CHUNK_MIN_POPS: u64 = 1 << 8;
const CHUNK_MAX_POPS: u64 = 1 << 26;

/// The next chunk's event budget: scaled towards [`CHUNK_TARGET_SECONDS`] by the last chunk's wall time,
/// by at most 2x up and 4x down per step (a slow chunk shrinks the next one fast).
fn next_chunk_pops(pops: u64, took_seconds: f64) -> u64 {
    let factor = if took_seconds > 0.0 {
        (CHUNK_TARGET_SECONDS / took_seconds).clamp(0.25, 2.0)
    } else {
        2.0
    };
    ((pops as f64 * factor) as u64).clamp(CHUNK_MIN_POPS, CHUNK_MAX_POPS)
}

/// Runs a resolved scenario (JSON) with `seed`. The simulation advances in chunks of about 20 ms of wall
/// time; between chunks it checks for Ctrl-C (KeyboardInterrupt) and calls `progress(fraction of simulated
/// time)`, so an exception raised there (a wall-time limit) also stops the run within a chunk.
#[pyfunction]
#[pyo3(signature = (spec_json, seed, progress=None))]
fn run<'py>(
    py: Python<'py>,
    spec_json: &str,
    seed: u64,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = parse_spec(spec_json)?;
    let t0 = Instant::now();
    let mut sim = Simulation::new(spec, seed).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let end = sim.end();
    let mut pops = CHUNK_FIRST_POPS;
    loop {
        let started = Instant::now();
        let done = py.detach(|| sim.run_until_events(end, pops));
        pops = next_chunk_pops(pops, started.elapsed().as_secs_f64());
        if py.check_signals().is_err() {
            return Err(PyKeyboardInterrupt::new_err("simulation interrupted"));
        }
        if let Some(cb) = &progress {
            cb.call1((sim.now().ns() as f64 / end.ns() as f64,))?;
        }
        if done {
            break;
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let out = sim.into_output();
    output_to_py(py, &out, wall)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(check_cc, m)?)?;
    m.add_function(wrap_pyfunction!(check_aqm, m)?)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

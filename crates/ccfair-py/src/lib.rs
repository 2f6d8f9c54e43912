//! `ccfair._native`: the Python extension. It resolves scenarios (JSON in base units from the Python front end,
//! one call that checks everything and returns the spec or a `ScenarioError`), runs resolved specs, and
//! hands results back as columns of little-endian bytes that NumPy views without copying element by element.
//! Python is called only between chunks of simulated time (progress, Ctrl-C), never per packet.

#![allow(clippy::disallowed_methods)] // wall-clock time here is for progress reporting only

use std::time::Instant;

use ccfair_core::FieldError;
use ccfair_core::output::{
    Backends, ColumnData, ColumnDoc, Dtype, FlowRecord, FlowSeries, QueueSeries, Scalar, Totals,
};
use ccfair_sim::{RunOutput, ScenarioInput, ScenarioSpec, Simulation};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// Writes `v` as little-endian bytes straight into a Python bytes object (no intermediate copy: the time
/// series can be most of a run's memory) and returns `(dtype, bytes)`.
fn le_column<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    dtype: Dtype,
    v: &[T],
    le: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = PyBytes::new_with(py, std::mem::size_of_val(v), |out| {
        for (&x, slot) in v.iter().zip(out.chunks_exact_mut(N)) {
            slot.copy_from_slice(&le(x));
        }
        Ok(())
    })?;
    Ok((dtype.numpy(), bytes).into_pyobject(py)?.into_any())
}

/// A column as the Python side takes it: `(NumPy dtype string, bytes)`, or a list of str for text.
fn column_to_py<'py>(py: Python<'py>, data: &ColumnData<'_>) -> PyResult<Bound<'py, PyAny>> {
    match data {
        ColumnData::U8(v) => le_column(py, Dtype::U8, v, u8::to_le_bytes),
        ColumnData::U32(v) => le_column(py, Dtype::U32, v, u32::to_le_bytes),
        ColumnData::U64(v) => le_column(py, Dtype::U64, v, u64::to_le_bytes),
        ColumnData::I32(v) => le_column(py, Dtype::I32, v, i32::to_le_bytes),
        ColumnData::I64(v) => le_column(py, Dtype::I64, v, i64::to_le_bytes),
        ColumnData::F64(v) => le_column(py, Dtype::F64, v, f64::to_le_bytes),
        ColumnData::Str(v) => Ok(PyList::new(py, v.iter())?.into_any()),
    }
}

/// A table as a dict of columns, named by its schema.
fn table_to_py<'py>(
    py: Python<'py>,
    schema: &[ColumnDoc],
    columns: &[ColumnData<'_>],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (doc, data) in schema.iter().zip(columns) {
        debug_assert_eq!(doc.dtype, data.dtype(), "{}", doc.name);
        d.set_item(doc.name, column_to_py(py, data)?)?;
    }
    Ok(d)
}

pyo3::create_exception!(
    _native,
    ScenarioError,
    pyo3::exceptions::PyValueError,
    "A scenario the simulator cannot run: `.field` names the value (`flows[1].cc_params.beta`), `.message` \
     says what is allowed."
);

/// `ScenarioError(field, message)` with both as attributes.
fn scenario_error(py: Python<'_>, e: FieldError) -> PyErr {
    let err = ScenarioError::new_err((e.field.clone(), e.message.clone()));
    let value = err.value(py);
    let set = value
        .setattr("field", e.field)
        .and_then(|_| value.setattr("message", e.message));
    match set {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// Resolves a scenario in base units (JSON, see `ccfair_sim::resolve::ScenarioInput`): every default filled,
/// every rule checked. Returns `{"spec": <the spec `run` takes>, "estimate": <the run's memory and events>}`
/// as JSON, or raises `ScenarioError`.
#[pyfunction]
fn resolve(py: Python<'_>, input_json: &str) -> PyResult<String> {
    let input: ScenarioInput = serde_json::from_str(input_json)
        .map_err(|e| scenario_error(py, FieldError::new("scenario", e.to_string())))?;
    let spec = input.resolve().map_err(|e| scenario_error(py, e))?;
    let estimate = ccfair_sim::estimate(&spec);
    Ok(serde_json::json!({"spec": spec, "estimate": estimate}).to_string())
}

/// Every flow's start time and size under `seed` for a resolved scenario (JSON), as the simulator draws them
/// (`ccfair_sim::traffic::flow_plans`): a JSON list of `{"start_ns", "size_bytes"}`, so that the kernel
/// backend starts and sizes its flows as the simulator does.
#[pyfunction]
fn flow_plans(py: Python<'_>, spec_json: &str, seed: u64) -> PyResult<String> {
    let spec: ScenarioSpec = serde_json::from_str(spec_json)
        .map_err(|e| scenario_error(py, FieldError::new("scenario", e.to_string())))?;
    let plans = ccfair_sim::traffic::flow_plans(&spec, seed);
    Ok(serde_json::to_string(&plans).expect("plans serialize"))
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
                "vars": a.vars,
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
    serde_json::json!({
        "congestion_controls": ccs,
        "queue_disciplines": qdiscs,
        "limits": limits,
        "output": output_schema(),
        "kernel_cc_prefix": ccfair_sim::scenario::KERNEL_CC_PREFIX,
    })
    .to_string()
}

/// The output schema as JSON: each table with its columns (name, dtype, unit, doc, backends, kernel note).
fn output_schema() -> serde_json::Value {
    let column = |c: &ColumnDoc| {
        let backends: Vec<&str> = [(c.backends.sim(), "sim"), (c.backends.kernel(), "kernel")]
            .into_iter()
            .filter_map(|(yes, name)| yes.then_some(name))
            .collect();
        let mut kernel_dtypes = vec![c.dtype.numpy()];
        if matches!(c.backends, Backends::KernelFloatWhenMissing(_)) {
            kernel_dtypes.push(Dtype::F64.numpy());
        }
        serde_json::json!({
            "name": c.name,
            "dtype": c.dtype.numpy(),
            "unit": c.unit,
            "doc": c.doc,
            "backends": backends,
            "kernel_note": c.backends.kernel_note(),
            "kernel_dtypes": if c.backends.kernel() { kernel_dtypes } else { vec![] },
        })
    };
    ccfair_core::output::tables()
        .iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name,
                "doc": t.doc,
                "columns": t.columns.iter().chain(t.kernel_only).map(column).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The run's tables as the Python side takes them, each named and ordered by the output schema.
fn output_to_py<'py>(py: Python<'py>, out: &RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let totals = PyDict::new(py);
    for (doc, value) in Totals::SCHEMA.iter().zip(out.totals.values()) {
        match value {
            Scalar::U64(x) => totals.set_item(doc.name, x)?,
            Scalar::F64(x) => totals.set_item(doc.name, x)?,
        }
    }
    let result = PyDict::new(py);
    result.set_item(
        "flows",
        table_to_py(py, FlowRecord::SCHEMA, &FlowRecord::columns(&out.flows))?,
    )?;
    result.set_item(
        "timeseries",
        table_to_py(py, FlowSeries::SCHEMA, &out.series.columns())?,
    )?;
    result.set_item(
        "queue",
        table_to_py(py, QueueSeries::SCHEMA, &out.queue.columns())?,
    )?;
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
    let spec: ScenarioSpec = serde_json::from_str(spec_json)
        .map_err(|e| scenario_error(py, FieldError::new("scenario", e.to_string())))?;
    let t0 = Instant::now();
    let mut sim = Simulation::new(spec, seed).map_err(|e| scenario_error(py, e))?;
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
    let mut out = sim.into_output();
    out.totals.wall_seconds = t0.elapsed().as_secs_f64();
    output_to_py(py, &out)
}

/// What one cache line costs on this machine over a working set of `working_set_bytes`
/// (`ccfair_sim::memprobe`): a dict of the working set in bytes, the accesses made, and wall nanoseconds per
/// line for dependent, overlapped and prefetched random accesses. Runs without the GIL.
#[pyfunction]
fn memory_probe<'py>(
    py: Python<'py>,
    working_set_bytes: usize,
    accesses: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    use ccfair_sim::memprobe::{Pattern, WorkingSet};
    let accesses = accesses.max(1);
    let (bytes, ns) = py.detach(|| {
        let mut set = WorkingSet::new(working_set_bytes, seed);
        let ns = [Pattern::Dependent, Pattern::Overlapped, Pattern::Prefetched].map(|pattern| {
            let started = Instant::now();
            std::hint::black_box(set.access(pattern, accesses));
            started.elapsed().as_nanos() as f64 / accesses as f64
        });
        (set.bytes(), ns)
    });
    let d = PyDict::new(py);
    d.set_item("working_set_bytes", bytes)?;
    d.set_item("accesses", accesses)?;
    d.set_item("dependent_ns", ns[0])?;
    d.set_item("overlapped_ns", ns[1])?;
    d.set_item("prefetched_ns", ns[2])?;
    Ok(d)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(flow_plans, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(memory_probe, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

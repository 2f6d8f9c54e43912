//! `ccfair._native`: the Python extension. It resolves scenarios (JSON in base units from the Python front end,
//! one call that checks everything and returns the spec or an `InputError`), runs resolved specs, and
//! hands results back as columns of little-endian bytes that NumPy views without copying element by element.
//! Python is called only between chunks of work (progress, Ctrl-C), never per packet.

#![allow(clippy::disallowed_methods)] // wall-clock time here is for progress reporting only

use std::time::Instant;

mod memprobe;

use ccfair_core::FieldError;
use ccfair_core::output::{
    Backends, ColumnData, ColumnDoc, Dtype, FlowRecord, FlowSeries, QueueSeries, Scalar, Totals,
};
use ccfair_scenario::kernel::KernelModule;
use ccfair_scenario::value::Value;
use ccfair_scenario::{Backend, Source};
use ccfair_sim::{RunOutput, ScenarioInput, ScenarioSpec, Simulation, UncheckedSpec};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};

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
    InputError,
    pyo3::exceptions::PyValueError,
    "Bad input: `.field` names the value (`flows[1].cc_params.beta`, an option such as `--jobs`), `.message` \
     says what is allowed."
);

/// `InputError(field, message)` with both as attributes.
fn scenario_error(py: Python<'_>, e: FieldError) -> PyErr {
    let err = InputError::new_err((e.field.clone(), e.message.clone()));
    let value = err.value(py);
    let set = value
        .setattr("field", e.field)
        .and_then(|_| value.setattr("message", e.message));
    match set {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// A Python value (a scenario document: dicts, lists, numbers, strings, TOML dates) as the resolver reads it;
/// nested beyond `ccfair_scenario::value::MAX_DEPTH` levels it is refused (the conversion recurses).
fn document_value(obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, FieldError> {
    if depth > ccfair_scenario::value::MAX_DEPTH + 1 {
        return FieldError::err(
            "scenario",
            format!(
                "nested too deeply: more than {} levels of tables and arrays",
                ccfair_scenario::value::MAX_DEPTH
            ),
        );
    }
    let text = |o: &Bound<'_, PyAny>| o.str().map(|s| s.to_string()).unwrap_or_default();
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.extract::<bool>().unwrap_or(false)));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(match obj.extract::<i128>() {
            Ok(v) => Value::Int(v),
            Err(_) => Value::BigInt(text(obj)),
        });
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(obj.extract::<f64>().unwrap_or(f64::NAN)));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.to_string()));
    }
    if let Ok(m) = obj.cast::<PyMapping>() {
        let mut entries = Vec::new();
        let items = m
            .items()
            .map_err(|e| FieldError::new("scenario", e.to_string()))?;
        for item in items.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item
                .extract()
                .map_err(|e: PyErr| FieldError::new("scenario", e.to_string()))?;
            let key = match k.cast::<PyString>() {
                Ok(s) => s.to_string(),
                Err(_) => text(&k),
            };
            entries.push((key, document_value(&v, depth + 1)?));
        }
        return Ok(Value::Table(entries));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj
            .try_iter()
            .map_err(|e| FieldError::new("scenario", e.to_string()))?
            .map(|item| {
                let item = item.map_err(|e| FieldError::new("scenario", e.to_string()))?;
                document_value(&item, depth + 1)
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Value::Array(items));
    }
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into());
    let repr = obj.repr().map(|r| r.to_string()).unwrap_or_default();
    Ok(Value::Other { type_name, repr })
}

/// Resolves a scenario for a backend: `scenario` is its document (a dict, as TOML reads it) or the scenario in
/// base units (JSON text of `ccfair_scenario::ScenarioInput`, the front end's typed scenario); `backend_json`
/// is `{"name": "sim"}` (the default) or `{"name": "kernel", "available_ccs": [...]}` (this host's
/// congestion controls). Returns JSON: the scenario in base units (`input`), the document's `seed`, the
/// `document` and its `explicit` form, the `spec` the backend runs, for the kernel backend the simulator's
/// `sim_spec` of its stand-in, and the run's `estimate` (memory and events); or raises `InputError`.
#[pyfunction]
#[pyo3(signature = (scenario, backend_json=None))]
fn resolve(py: Python<'_>, scenario: &Bound<'_, PyAny>, backend_json: Option<&str>) -> PyResult<String> {
    let field_error = |e: FieldError| scenario_error(py, e);
    let backend: Backend = match backend_json {
        Some(text) => {
            serde_json::from_str(text).map_err(|e| field_error(FieldError::new("backend", e.to_string())))?
        }
        None => Backend::Sim,
    };
    let value;
    let source = if let Ok(text) = scenario.cast::<PyString>() {
        let input: ScenarioInput = serde_json::from_str(&text.to_string())
            .map_err(|e| field_error(FieldError::new("scenario", e.to_string())))?;
        Source::Input(Box::new(input))
    } else {
        value = document_value(scenario, 1).map_err(field_error)?;
        Source::Document(&value)
    };
    let r = ccfair_scenario::resolve(source, &backend).map_err(field_error)?;
    let estimate = ccfair_sim::estimate(&r.sim_spec);
    let base_rtt_ns = r.input.link.base_rtt_ns(&r.input.flows).ok().flatten();
    let mut out = serde_json::json!({
        "input": r.input,
        "base_rtt_ns": base_rtt_ns,
        "seed": r.seed,
        "document": r.document,
        "explicit": r.explicit,
        "spec": r.spec,
        "estimate": estimate,
    });
    if let Backend::Kernel(_) = backend {
        out["sim_spec"] = serde_json::to_value(&r.sim_spec).expect("specs serialize");
    }
    Ok(out.to_string())
}

/// A quantity with its unit in base units, as scenarios write it (`ccfair_scenario::units`): `kind` is
/// `rate` (bit/s), `size` (bytes), `duration` (ns), `packets`, `bdp` (a float multiple), `buffer`
/// (`(kind, value)`, kind `packets`, `bytes`, `bdp` or `time`) or `seed` (an integer in [0, 2^64)); zero is
/// refused unless `allow_zero` (rates and durations). Raises `InputError` on `field`.
#[pyfunction]
#[pyo3(signature = (kind, value, field, allow_zero=false))]
fn parse_quantity<'py>(
    py: Python<'py>,
    kind: &str,
    value: &Bound<'py, PyAny>,
    field: &str,
    allow_zero: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use ccfair_scenario::units;
    let v = document_value(value, 1).map_err(|e| scenario_error(py, FieldError::new(field, e.message)))?;
    let err = |m: String| scenario_error(py, FieldError::new(field, m));
    Ok(match kind {
        "rate" => units::parse_rate_bps(&v, allow_zero)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any(),
        "size" => units::parse_size_bytes(&v)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any(),
        "packets" => units::parse_packets(&v)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any(),
        "bdp" => units::parse_bdp_multiple(&v)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any(),
        "duration" => units::parse_duration_ns(&v, allow_zero)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any(),
        "seed" => ccfair_scenario::reader::read::<ccfair_scenario::document::Seed>(&v)
            .map_err(|e| err(e.message))?
            .0
            .into_pyobject(py)?
            .into_any(),
        "buffer" => {
            let b = units::parse_buffer(&v).map_err(err)?;
            let pair = match b {
                units::Buffer::Packets(n) => ("packets", n.into_pyobject(py)?.into_any()),
                units::Buffer::Bytes(n) => ("bytes", n.into_pyobject(py)?.into_any()),
                units::Buffer::Time(n) => ("time", n.into_pyobject(py)?.into_any()),
                units::Buffer::Bdp(m) => ("bdp", m.into_pyobject(py)?.into_any()),
            };
            pair.into_pyobject(py)?.into_any()
        }
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "no quantity kind {other:?}"
            )));
        }
    })
}

/// A quantity in base units written as scenarios write it: `kind` `rate`, `size`, `duration`; or a buffer
/// (`kind` one of `packets`, `bytes`, `bdp`, `time`, with its value).
#[pyfunction]
fn format_quantity(kind: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    use ccfair_scenario::units::{self, Buffer};
    let n = || value.extract::<u64>();
    Ok(match kind {
        "rate" => units::format_rate_bps(n()?),
        "size" => units::format_size_bytes(n()?),
        "duration" => units::format_duration_ns(n()?),
        "packets" => units::format_buffer(Buffer::Packets(n()?)),
        "bytes" => units::format_buffer(Buffer::Bytes(n()?)),
        "time" => units::format_buffer(Buffer::Time(n()?)),
        "bdp" => units::format_buffer(Buffer::Bdp(value.extract::<f64>()?)),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "no quantity kind {other:?}"
            )));
        }
    })
}

/// A spec's JSON (what `resolve` returned, or a changed copy of it) as a checked spec: a spec from outside is
/// held to every rule the resolver keeps.
fn checked_spec(py: Python<'_>, spec_json: &str) -> PyResult<ScenarioSpec> {
    let spec: UncheckedSpec = serde_json::from_str(spec_json)
        .map_err(|e| scenario_error(py, FieldError::new("scenario", e.to_string())))?;
    spec.check().map_err(|e| scenario_error(py, e))
}

/// Every flow's start time and size under `seed` for a resolved spec (JSON: the simulator's, or the kernel
/// backend's, which has `offloads`), as both backends draw them (`ccfair_scenario::traffic::flow_plans`): a
/// JSON list of `{"start_ns", "size_bytes"}`.
#[pyfunction]
fn flow_plans(py: Python<'_>, spec_json: &str, seed: u64) -> PyResult<String> {
    let bad = |e: String| scenario_error(py, FieldError::new("scenario", e));
    let value: serde_json::Value = serde_json::from_str(spec_json).map_err(|e| bad(e.to_string()))?;
    let plans = if value.get("offloads").is_some() {
        let spec: UncheckedSpec<KernelModule> =
            serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
        ccfair_scenario::traffic::flow_plans(&*spec.check().map_err(|e| scenario_error(py, e))?, seed)
    } else {
        ccfair_sim::traffic::flow_plans(&*checked_spec(py, spec_json)?, seed)
    };
    Ok(serde_json::to_string(&plans).expect("plans serialize"))
}

/// The scenario document's defaults (`ccfair_scenario::document::defaults`) and the header bytes of a segment,
/// for the front end's typed scenario (its constructors' defaults are these).
#[pyfunction]
fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use ccfair_scenario::document::defaults as d;
    let out = PyDict::new(py);
    out.set_item("interval_ns", d::INTERVAL_NS)?;
    out.set_item("mtu_bytes", d::MTU_BYTES)?;
    out.set_item("aqm", d::AQM)?;
    out.set_item("count", d::COUNT)?;
    out.set_item("start_ns", d::START_NS)?;
    out.set_item("initial_window", d::INITIAL_WINDOW)?;
    out.set_item("pacing", d::PACING)?;
    out.set_item("loss", d::LOSS)?;
    out.set_item("ecn", d::ECN)?;
    out.set_item("connect", d::CONNECT)?;
    out.set_item("seed", d::SEED)?;
    out.set_item("header_bytes", ccfair_scenario::HEADER_BYTES)?;
    out.set_item("max_depth", ccfair_scenario::value::MAX_DEPTH)?;
    Ok(out)
}

/// Refuses `value` (a document: dicts and lists) nested more than `ccfair_scenario::value::MAX_DEPTH` levels
/// deep, naming `field`.
#[pyfunction]
fn check_depth(py: Python<'_>, value: &Bound<'_, PyAny>, field: &str) -> PyResult<()> {
    document_value(value, 1)
        .and_then(|v| v.check_depth(field))
        .map(|_| ())
        .map_err(|e| scenario_error(py, FieldError::new(field, e.message)))
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
                "params": q.params.iter().map(qdisc_param).collect::<Vec<_>>(),
            })
        })
        .collect();
    let limits = serde_json::json!({
        "header_bytes": ccfair_sim::tcp::HEADER_BYTES,
        "min_mtu_bytes": ccfair_sim::scenario::MIN_MTU,
        "max_mtu_bytes": ccfair_sim::scenario::MAX_MTU,
        "max_flows": ccfair_scenario::MAX_FLOWS,
    });
    serde_json::json!({
        "congestion_controls": ccs,
        "queue_disciplines": qdiscs,
        "limits": limits,
        "output": output_schema(),
        "kernel_cc_prefix": ccfair_sim::scenario::KERNEL_CC_PREFIX,
        "scenario_keys": ccfair_scenario::catalog::keys(),
        "host_presets": ccfair_scenario::catalog::presets()
            .into_iter()
            .map(|(name, spec)| {
                let default = spec.preset == ccfair_scenario::host::DEFAULT_PRESET;
                serde_json::json!({"name": name, "default": default, "values": spec})
            })
            .collect::<Vec<_>>(),
        "flow_profiles": ccfair_scenario::profile::PROFILES,
        "kernel": {
            "max_flows": ccfair_scenario::kernel::MAX_KERNEL_FLOWS,
            "max_groups": ccfair_scenario::kernel::MAX_KERNEL_GROUPS,
            "honoured_host_keys": ccfair_scenario::kernel::HONOURED_HOST_KEYS,
            "delay_placements": ccfair_scenario::kernel::DELAY_PLACEMENTS,
            "available_cc_file": ccfair_scenario::kernel::AVAILABLE_CC_FILE,
        },
    })
    .to_string()
}

/// A queue discipline's parameter for listings: the name a scenario writes (`target = "5ms"`, as tc writes
/// it, for a parameter whose registry name carries its unit), the registry's name, accepted too, as its
/// alias (`target_ns`, an integer in that unit or a quantity), and the unit.
fn qdisc_param(p: &ccfair_core::ParamDoc) -> serde_json::Value {
    match ccfair_aqm::unit_free_name(p.name) {
        Some((written, unit)) => serde_json::json!({
            "name": written, "alias": p.name, "unit": unit.name(), "allowed": p.allowed, "doc": p.doc,
        }),
        None => {
            serde_json::json!({"name": p.name, "alias": null, "unit": null, "allowed": p.allowed, "doc": p.doc})
        }
    }
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
/// The first chunk's budget of work, and the bounds of the adapted one. Chunks are sized in work done (an
/// event popped, or a run of the queue discipline's own timer: `Simulation::run_until_events`), not in
/// simulated time: the cost of a simulated second grows with the link rate (a 10 Tbps link has a million
/// times the events of a 10 Mbps one) and with the discipline's timer (DualPI2 updating every microsecond
/// works a million times a simulated second with no event), the cost of a unit of work does not.
const CHUNK_FIRST_WORK: u64 = 1 << 14;
const CHUNK_MIN_WORK: u64 = 1 << 8;
const CHUNK_MAX_WORK: u64 = 1 << 26;

/// The next chunk's budget of work: scaled towards [`CHUNK_TARGET_SECONDS`] by the last chunk's wall time,
/// by at most 2x up and 4x down per step (a slow chunk shrinks the next one fast).
fn next_chunk_work(work: u64, took_seconds: f64) -> u64 {
    let factor = if took_seconds > 0.0 {
        (CHUNK_TARGET_SECONDS / took_seconds).clamp(0.25, 2.0)
    } else {
        2.0
    };
    ((work as f64 * factor) as u64).clamp(CHUNK_MIN_WORK, CHUNK_MAX_WORK)
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
    let spec = checked_spec(py, spec_json)?;
    let t0 = Instant::now();
    let mut sim = Simulation::new(spec, seed).map_err(|e| scenario_error(py, e))?;
    let end = sim.end();
    let mut work = CHUNK_FIRST_WORK;
    loop {
        let started = Instant::now();
        let done = py.detach(|| sim.run_until_events(end, work));
        work = next_chunk_work(work, started.elapsed().as_secs_f64());
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
/// (`memprobe`): a dict of the working set in bytes, the accesses made, and wall nanoseconds per
/// line for dependent, overlapped and prefetched random accesses. Runs without the GIL.
#[pyfunction]
fn memory_probe<'py>(
    py: Python<'py>,
    working_set_bytes: usize,
    accesses: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    use memprobe::{Pattern, WorkingSet};
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
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(check_depth, m)?)?;
    m.add_function(wrap_pyfunction!(format_quantity, m)?)?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    // Its former name, for code written against it.
    m.add("ScenarioError", m.py().get_type::<InputError>())?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(memory_probe, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! The golden snapshots from `cargo test`: every case of `tests/snapshots/cases.toml`, read and resolved
//! through `ccfair-scenario` as the front end reads it, run here, and its native sections (the per-flow
//! counters over the window and the whole run, the per-flow series summary, the run's counters, the digest of
//! every integer column of both interval series, the flow table's other columns, the run's other values, and
//! the digest of every float column of both series by the values' bits) checked byte for byte against
//! `tests/snapshots/expected/<case>.txt` as `python -m ccfair.devtools.snapshots` renders them (its `take.py`
//! and `table.py`). The header (the case's description and its scenario as TOML) is the Python tool's, and so
//! are the derived sections (`derived_*`, after the native ones: the tables `ccfair.analysis` computes);
//! what is checked here is every native section.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ccfair_core::output::{ColumnData, FlowRecord, FlowSeries, QueueSeries, Scalar, Totals};
use ccfair_scenario::value::Value;
use ccfair_scenario::{Backend, Source};
use ccfair_sim::Simulation;
use sha2::{Digest, Sha256};

/// The columns a snapshot pins by name (`tests/snapshots/columns.toml`, which the Python tool reads too).
struct Pinned {
    /// The per-flow counters of the `window` and `total` sections.
    counters: Vec<String>,
    /// The `series` section's columns.
    series: Vec<String>,
    /// The `run` section's counters, in order.
    run_counters: Vec<String>,
    /// The integer columns of the two interval series whose digests are pinned.
    timeseries: Vec<String>,
    queue: Vec<String>,
    /// The one output that is not deterministic.
    not_pinned: Vec<String>,
}

fn pinned() -> &'static Pinned {
    static PINNED: OnceLock<Pinned> = OnceLock::new();
    PINNED.get_or_init(|| {
        let path = root().join("tests/snapshots/columns.toml");
        let text = std::fs::read_to_string(&path).expect("columns.toml");
        let table: toml::Table = text.parse().expect("columns.toml parses");
        let list = |key: &str| -> Vec<String> {
            table[key]
                .as_array()
                .unwrap_or_else(|| panic!("columns.toml: {key} is a list"))
                .iter()
                .map(|v| v.as_str().expect("a column name").to_owned())
                .collect()
        };
        Pinned {
            counters: list("counters"),
            series: list("series"),
            run_counters: list("run_counters"),
            timeseries: list("timeseries"),
            queue: list("queue"),
            not_pinned: list("not_pinned"),
        }
    })
}

/// Where the derived sections begin.
const DERIVED: &str = "[derived_";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn value_of(t: &toml::Value) -> Value {
    match t {
        toml::Value::String(s) => Value::Str(s.clone()),
        toml::Value::Integer(i) => Value::Int(*i as i128),
        toml::Value::Float(x) => Value::Float(*x),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Array(items) => Value::Array(items.iter().map(value_of).collect()),
        toml::Value::Table(m) => Value::Table(m.iter().map(|(k, v)| (k.clone(), value_of(v))).collect()),
        toml::Value::Datetime(d) => Value::Other {
            type_name: "datetime".into(),
            repr: d.to_string(),
        },
    }
}

/// A column as integers (every snapshot column is one); text columns as their text.
enum Column {
    Ints(Vec<i128>),
    Floats(Vec<f64>),
    Text(Vec<String>),
}

fn column(data: &ColumnData<'_>) -> Column {
    match data {
        ColumnData::U8(v) => Column::Ints(v.iter().map(|&x| x as i128).collect()),
        ColumnData::U32(v) => Column::Ints(v.iter().map(|&x| x as i128).collect()),
        ColumnData::U64(v) => Column::Ints(v.iter().map(|&x| x as i128).collect()),
        ColumnData::I32(v) => Column::Ints(v.iter().map(|&x| x as i128).collect()),
        ColumnData::I64(v) => Column::Ints(v.iter().map(|&x| x as i128).collect()),
        ColumnData::F64(v) => Column::Floats(v.to_vec()),
        ColumnData::Str(v) => Column::Text(v.iter().map(|s| s.to_string()).collect()),
    }
}

/// A table's columns by name.
struct Table(Vec<(&'static str, Column)>);

impl Table {
    fn new(schema: &[ccfair_core::output::ColumnDoc], columns: &[ColumnData<'_>]) -> Table {
        Table(
            schema
                .iter()
                .zip(columns)
                .map(|(doc, data)| (doc.name, column(data)))
                .collect(),
        )
    }

    fn ints(&self, name: &str) -> &[i128] {
        match self.0.iter().find(|(n, _)| *n == name).map(|(_, c)| c) {
            Some(Column::Ints(v)) => v,
            _ => panic!("{name} is not an integer column"),
        }
    }

    fn text(&self, name: &str) -> &[String] {
        match self.0.iter().find(|(n, _)| *n == name).map(|(_, c)| c) {
            Some(Column::Text(v)) => v,
            _ => panic!("{name} is not a text column"),
        }
    }

    /// Row `i` of column `name` as a snapshot cell: an integer in decimal, a float by its bits, text.
    fn cell(&self, name: &str, i: usize) -> String {
        match self.0.iter().find(|(n, _)| *n == name).map(|(_, c)| c) {
            Some(Column::Ints(v)) => v[i].to_string(),
            Some(Column::Floats(v)) => bits(v[i]),
            Some(Column::Text(v)) => v[i].clone(),
            None => panic!("no column {name}"),
        }
    }

    fn floats(&self, name: &str) -> &[f64] {
        match self.0.iter().find(|(n, _)| *n == name).map(|(_, c)| c) {
            Some(Column::Floats(v)) => v,
            _ => panic!("{name} is not a float column"),
        }
    }

    fn len(&self) -> usize {
        match &self.0[0].1 {
            Column::Ints(v) => v.len(),
            Column::Floats(v) => v.len(),
            Column::Text(v) => v.len(),
        }
    }
}

struct Section {
    name: &'static str,
    title: String,
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn is_number(cell: &str) -> bool {
    let digits = cell.strip_prefix('-').unwrap_or(cell);
    cell == "-" || (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// A section as `table.py` renders it: numbers right-aligned (the key column left), text left-aligned.
fn render(s: &Section) -> String {
    let mut table = vec![s.columns.clone()];
    table.extend(s.rows.iter().cloned());
    let widths: Vec<usize> = (0..s.columns.len())
        .map(|i| table.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let numeric: Vec<bool> = (0..s.columns.len())
        .map(|i| !s.rows.is_empty() && s.rows.iter().all(|r| is_number(&r[i])))
        .collect();
    let mut out = format!("[{}] {}", s.name, s.title).trim_end().to_string() + "\n";
    for r in &table {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let pad = widths[i] - cell.chars().count();
                if numeric[i] && i > 0 {
                    format!("{}{cell}", " ".repeat(pad))
                } else {
                    format!("{cell}{}", " ".repeat(pad))
                }
            })
            .collect();
        out += cells.join("  ").trim_end();
        out += "\n";
    }
    out
}

fn flow_counters(name: &'static str, title: String, flows: &Table, prefix: &str) -> Section {
    let mut columns: Vec<String> = ["flow", "group", "cc"].iter().map(|s| s.to_string()).collect();
    columns.extend(pinned().counters.iter().cloned());
    if prefix == "window_" {
        columns.push("rtt_samples".into());
    }
    let rows = (0..flows.len())
        .map(|i| {
            let mut cells = vec![
                flows.ints("flow_id")[i].to_string(),
                flows.ints("group")[i].to_string(),
                flows.text("cc")[i].clone(),
            ];
            cells.extend(
                pinned()
                    .counters
                    .iter()
                    .map(|c| flows.ints(&format!("{prefix}{c}"))[i].to_string()),
            );
            if prefix == "window_" {
                cells.push(flows.ints("rtt_samples")[i].to_string());
            }
            cells
        })
        .collect();
    Section {
        name,
        title,
        columns,
        rows,
    }
}

fn first_seen(values: impl Iterator<Item = i128>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        let t = v.to_string();
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    if seen.is_empty() {
        "none".into()
    } else {
        seen.join(">")
    }
}

fn flow_series(flows: &Table, series: &Table) -> Section {
    let ids = series.ints("flow_id");
    let rows = flows
        .ints("flow_id")
        .iter()
        .map(|&id| {
            let rows: Vec<usize> = (0..ids.len()).filter(|&r| ids[r] == id).collect();
            if rows.is_empty() {
                return ["0", "-", "-", "-1", "-1", "none", "none"].iter().fold(
                    vec![id.to_string()],
                    |mut v, c| {
                        v.push(c.to_string());
                        v
                    },
                );
            }
            let col = |name: &str| -> Vec<i128> { rows.iter().map(|&r| series.ints(name)[r]).collect() };
            let (t, cwnd, ssthresh, drops) = (col("t_ns"), col("cwnd"), col("ssthresh"), col("drops"));
            let first_t = |hit: &dyn Fn(usize) -> bool| {
                (0..t.len())
                    .find(|&k| hit(k))
                    .map_or("-1".to_string(), |k| t[k].to_string())
            };
            vec![
                id.to_string(),
                rows.len().to_string(),
                cwnd.iter().max().unwrap().to_string(),
                cwnd.last().unwrap().to_string(),
                first_t(&|k| ssthresh[k] >= 0),
                first_t(&|k| drops[k] > 0),
                first_seen(col("ca_state").into_iter()),
                first_seen(col("cc_mode").into_iter().filter(|&m| m >= 0)),
            ]
        })
        .collect();
    Section {
        name: "series",
        title: "per flow, from its interval rows (t: interval end; -1: never)".into(),
        columns: pinned().series.clone(),
        rows,
    }
}

fn exact(value: Scalar) -> String {
    match value {
        Scalar::U64(x) => x.to_string(),
        Scalar::F64(x) if x.is_nan() => "-".into(),
        Scalar::F64(x) => {
            assert!(x.fract() == 0.0, "{x} is not a whole number");
            (x as i128).to_string()
        }
    }
}

/// A float as `0x` and the 16 hex digits of its IEEE-754 bits.
fn bits(x: f64) -> String {
    format!("0x{:016x}", x.to_bits())
}

/// The first 16 hex digits of the SHA-256 of `cells`, each followed by a newline.
fn digest(cells: impl Iterator<Item = String>) -> String {
    let text: String = cells.map(|c| c + "\n").collect();
    let hex: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    hex[..16].to_string()
}

fn digests(name: &'static str, what: &str, table: &Table, columns: &[String]) -> Section {
    let rows = columns
        .iter()
        .map(|c| vec![c.to_string(), digest(table.ints(c).iter().map(|v| v.to_string()))])
        .collect();
    Section {
        name,
        title: format!("SHA-256 (first 16 hex) of each integer column of {what}"),
        columns: vec!["column".into(), "sha256".into()],
        rows,
    }
}

/// Every column of the flow table the `window` and `total` sections do not hold, floats by their bits.
fn flow_rest(flows: &Table) -> Section {
    let mut held: Vec<String> = ["flow_id", "group", "cc", "rtt_samples"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for prefix in ["window_", "total_"] {
        held.extend(pinned().counters.iter().map(|c| format!("{prefix}{c}")));
    }
    let columns: Vec<&str> = FlowRecord::SCHEMA
        .iter()
        .map(|c| c.name)
        .filter(|n| !held.iter().any(|p| p == n))
        .collect();
    let rows = (0..flows.len())
        .map(|i| {
            let mut cells = vec![flows.ints("flow_id")[i].to_string()];
            cells.extend(columns.iter().map(|c| flows.cell(c, i)));
            cells
        })
        .collect();
    Section {
        name: "flows",
        title: "per flow, the flow table's other columns (floats: 0x and their IEEE-754 bits)".into(),
        columns: std::iter::once("flow".to_string())
            .chain(columns.iter().map(|c| c.to_string()))
            .collect(),
        rows,
    }
}

/// Every run-level value the `run` section does not hold, the wall-clock time aside.
fn totals_rest(totals: &[(&str, Scalar)]) -> Section {
    let rows = totals
        .iter()
        .filter(|(n, _)| {
            let p = pinned();
            !p.run_counters.iter().chain(&p.not_pinned).any(|c| c == *n)
        })
        .map(|(n, v)| {
            let cell = match *v {
                Scalar::U64(x) => x.to_string(),
                Scalar::F64(x) => bits(x),
            };
            vec![n.to_string(), cell]
        })
        .collect();
    Section {
        name: "totals",
        title: "the run's other values, the wall-clock time aside (floats: 0x and their IEEE-754 bits)"
            .into(),
        columns: vec!["value".into(), "exact".into()],
        rows,
    }
}

/// A digest of every float column of a series, by the values' bits.
fn float_digests(
    name: &'static str,
    what: &str,
    table: &Table,
    schema: &[ccfair_core::output::ColumnDoc],
) -> Section {
    let rows = schema
        .iter()
        .filter(|c| c.dtype == ccfair_core::output::Dtype::F64)
        .map(|c| {
            vec![
                c.name.to_string(),
                digest(table.floats(c.name).iter().map(|&x| bits(x))),
            ]
        })
        .collect();
    Section {
        name,
        title: format!("SHA-256 (first 16 hex) of each float column of {what}, by the values' IEEE-754 bits"),
        columns: vec!["column".into(), "sha256".into()],
        rows,
    }
}

/// The native sections of `case`'s snapshot as this build computes them.
fn take(doc: &Value) -> String {
    let r = ccfair_scenario::resolve(Source::Document(doc), &Backend::Sim).expect("the case resolves");
    let seed = r.seed.unwrap_or(ccfair_scenario::document::defaults::SEED);
    let (start_ns, end_ns) = (r.sim_spec.measure_start_ns, r.sim_spec.measure_end_ns);
    let mut sim = Simulation::new(r.sim_spec, seed).expect("the case builds");
    let end = sim.end();
    sim.run_until_events(end, u64::MAX);
    let out = sim.into_output();
    let flows = Table::new(FlowRecord::SCHEMA, &FlowRecord::columns(&out.flows));
    let series = Table::new(FlowSeries::SCHEMA, &out.series.columns());
    let queue = Table::new(QueueSeries::SCHEMA, &out.queue.columns());
    let totals: Vec<(&str, Scalar)> = Totals::SCHEMA
        .iter()
        .map(|d| d.name)
        .zip(out.totals.values())
        .collect();
    let mut run: Vec<Vec<String>> = pinned()
        .run_counters
        .iter()
        .map(|k| {
            let v = totals
                .iter()
                .find(|(n, _)| *n == k.as_str())
                .unwrap_or_else(|| panic!("no total {k}"))
                .1;
            vec![k.to_string(), exact(v)]
        })
        .collect();
    run.push(vec!["timeseries_rows".into(), series.len().to_string()]);
    run.push(vec!["queue_rows".into(), queue.len().to_string()]);
    let sections = [
        flow_counters(
            "window",
            format!("per flow, measurement window {start_ns} to {end_ns} ns"),
            &flows,
            "window_",
        ),
        flow_counters("total", "per flow, whole run".into(), &flows, "total_"),
        flow_series(&flows, &series),
        Section {
            name: "run",
            title: "whole run; window_* over the measurement window".into(),
            columns: vec!["counter".into(), "value".into()],
            rows: run,
        },
        digests(
            "timeseries",
            "the per-flow interval series",
            &series,
            &pinned().timeseries,
        ),
        digests("queue", "the queue's interval series", &queue, &pinned().queue),
        flow_rest(&flows),
        totals_rest(&totals),
        float_digests(
            "timeseries_bits",
            "the per-flow interval series",
            &series,
            FlowSeries::SCHEMA,
        ),
        float_digests(
            "queue_bits",
            "the queue's interval series",
            &queue,
            QueueSeries::SCHEMA,
        ),
    ];
    sections.iter().map(render).collect::<Vec<_>>().join("\n")
}

/// The native sections of an expected file: everything after its header of `#` lines and before the first
/// derived section.
fn expected_sections(text: &str) -> String {
    let mut body: Vec<&str> = text
        .lines()
        .skip_while(|l| l.starts_with('#') || l.is_empty())
        .take_while(|l| !l.starts_with(DERIVED))
        .collect();
    while body.last() == Some(&"") {
        body.pop();
    }
    body.join("\n") + "\n"
}

#[test]
fn every_case_matches_its_expected_snapshot() {
    let cases_path = root().join("tests/snapshots/cases.toml");
    let text = std::fs::read_to_string(&cases_path).expect("cases.toml");
    let cases: toml::Table = text.parse().expect("cases.toml parses");
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let mut moved = Vec::new();
    for (name, case) in &cases {
        let doc = value_of(
            case.get("scenario")
                .unwrap_or_else(|| panic!("{name}: no scenario")),
        );
        let path = root().join(format!("tests/snapshots/expected/{name}.txt"));
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let got = take(&doc);
        if got != expected_sections(&expected) {
            let (e, g) = (expected_sections(&expected), got);
            let line = e.lines().zip(g.lines()).find(|(a, b)| a != b);
            moved.push(format!("{name}: first difference {line:?}"));
        }
    }
    assert!(
        moved.is_empty(),
        "snapshots moved (`make snapshots` shows the cells):\n{}",
        moved.join("\n")
    );
}

//! The output schema: every table a run produces (`flows`, `timeseries`, `queue`, `totals`), each column
//! with its name, dtype, unit, meaning and the backends that fill it. Each table's Rust type is generated
//! from its column list below, so the list is the one place a column is defined: the simulator's recorder
//! fills the generated types, the Python binding loops over [`tables`] to hand them over, the catalog exports
//! the list, the kernel backend's collector builds its tables from it and the documentation's column tables
//! (docs/reference/output.md) are generated from it.
//!
//! A column the kernel backend cannot measure keeps the simulator's dtype and holds the placeholder its
//! [`Backends`] entry names; kernel-only columns are listed separately per table ([`TIMESERIES_KERNEL`],
//! [`QUEUE_KERNEL`]) since the Rust types never carry them.

use std::borrow::Cow;

/// A column's element type, named as NumPy names it in the native output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    U8,
    U32,
    U64,
    I32,
    I64,
    F64,
    /// Text (a Python list of str, not a NumPy column).
    Str,
}

impl Dtype {
    /// The NumPy dtype string of the native output's `(dtype, bytes)` pairs; `str` for text.
    pub const fn numpy(self) -> &'static str {
        match self {
            Dtype::U8 => "|u1",
            Dtype::U32 => "<u4",
            Dtype::U64 => "<u8",
            Dtype::I32 => "<i4",
            Dtype::I64 => "<i8",
            Dtype::F64 => "<f8",
            Dtype::Str => "str",
        }
    }
}

/// Which backends fill a column, and how the kernel backend fills what it cannot measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backends {
    /// Both backends measure it, with the same meaning.
    Both,
    /// Only the simulator's output has it.
    Sim,
    /// Only the kernel backend's output has it.
    Kernel,
    /// Both outputs have it, with the simulator's dtype; the kernel cannot measure it and holds the
    /// placeholder described.
    KernelPlaceholder(&'static str),
    /// Both measure it; on kernels that lack the counter the column is float64 and NaN, as described.
    KernelFloatWhenMissing(&'static str),
}

impl Backends {
    pub const fn sim(self) -> bool {
        !matches!(self, Backends::Kernel)
    }

    pub const fn kernel(self) -> bool {
        !matches!(self, Backends::Sim)
    }

    /// How the kernel backend fills the column when it differs from the simulator, else "".
    pub const fn kernel_note(self) -> &'static str {
        match self {
            Backends::Both | Backends::Sim | Backends::Kernel => "",
            Backends::KernelPlaceholder(n) | Backends::KernelFloatWhenMissing(n) => n,
        }
    }
}

/// One column of an output table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDoc {
    pub name: &'static str,
    pub dtype: Dtype,
    /// The unit ("ns", "bit/s", "bytes", "packets", ...), or "" for identifiers, counts of events and codes.
    pub unit: &'static str,
    pub doc: &'static str,
    pub backends: Backends,
}

/// One output table: its name in the native output, what a row is, and its columns in output order.
#[derive(Clone, Copy, Debug)]
pub struct TableDoc {
    pub name: &'static str,
    pub doc: &'static str,
    /// The columns both backends or the simulator alone fill, in the simulator's output order.
    pub columns: &'static [ColumnDoc],
    /// The columns only the kernel backend fills, after the others in its output.
    pub kernel_only: &'static [ColumnDoc],
}

/// Every output table, in the order of the native output.
pub fn tables() -> [TableDoc; 4] {
    [
        TableDoc {
            name: "flows",
            doc: "one row per flow: its identity, counters over the measurement window and the whole run, \
                  RTT samples of the window",
            columns: FlowRecord::SCHEMA,
            kernel_only: &[],
        },
        TableDoc {
            name: "timeseries",
            doc: "one row per active flow per interval; `t_ns` is the end of the interval (a flow is active \
                  in (t - interval, t] if it started before t and had not finished before the interval began)",
            columns: FlowSeries::SCHEMA,
            kernel_only: TIMESERIES_KERNEL,
        },
        TableDoc {
            name: "queue",
            doc: "the bottleneck queue, one row per interval; `t_ns` is the end of the interval, the backlog \
                  is the instantaneous one then, the other columns cover the interval",
            columns: QueueSeries::SCHEMA,
            kernel_only: QUEUE_KERNEL,
        },
        TableDoc {
            name: "totals",
            doc: "run-level numbers (plain values, not columns)",
            columns: Totals::SCHEMA,
            kernel_only: &[],
        },
    ]
}

/// A column's values as the binding hands them over: borrowed from a series, or gathered from rows.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData<'a> {
    U8(Cow<'a, [u8]>),
    U32(Cow<'a, [u32]>),
    U64(Cow<'a, [u64]>),
    I32(Cow<'a, [i32]>),
    I64(Cow<'a, [i64]>),
    F64(Cow<'a, [f64]>),
    Str(Cow<'a, [&'static str]>),
}

impl ColumnData<'_> {
    pub fn len(&self) -> usize {
        match self {
            ColumnData::U8(v) => v.len(),
            ColumnData::U32(v) => v.len(),
            ColumnData::U64(v) => v.len(),
            ColumnData::I32(v) => v.len(),
            ColumnData::I64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn dtype(&self) -> Dtype {
        match self {
            ColumnData::U8(_) => Dtype::U8,
            ColumnData::U32(_) => Dtype::U32,
            ColumnData::U64(_) => Dtype::U64,
            ColumnData::I32(_) => Dtype::I32,
            ColumnData::I64(_) => Dtype::I64,
            ColumnData::F64(_) => Dtype::F64,
            ColumnData::Str(_) => Dtype::Str,
        }
    }
}

/// A run-level value of the `totals` table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    U64(u64),
    F64(f64),
}

/// An element type a column can hold.
pub trait ColumnType: Clone + Sized + 'static {
    const DTYPE: Dtype;
    fn data(v: Cow<'_, [Self]>) -> ColumnData<'_>;
}

macro_rules! column_type {
    ($t:ty, $variant:ident) => {
        impl ColumnType for $t {
            const DTYPE: Dtype = Dtype::$variant;
            fn data(v: Cow<'_, [Self]>) -> ColumnData<'_> {
                ColumnData::$variant(v)
            }
        }
    };
}
column_type!(u8, U8);
column_type!(u32, U32);
column_type!(u64, U64);
column_type!(i32, I32);
column_type!(i64, I64);
column_type!(f64, F64);
column_type!(&'static str, Str);

/// A scalar type of the `totals` table.
pub trait ScalarType: Copy {
    const DTYPE: Dtype;
    fn scalar(self) -> Scalar;
}

impl ScalarType for u64 {
    const DTYPE: Dtype = Dtype::U64;
    fn scalar(self) -> Scalar {
        Scalar::U64(self)
    }
}

impl ScalarType for f64 {
    const DTYPE: Dtype = Dtype::F64;
    fn scalar(self) -> Scalar {
        Scalar::F64(self)
    }
}

/// The schema of a `series!` or `scalars!` list: one [`ColumnDoc`] per field, in order. `$dtype_of` is the
/// trait that gives a field type's dtype (`ColumnType` for table columns, `ScalarType` for run-level values).
macro_rules! column_docs {
    ($dtype_of:ident; $( $field:ident : $t:ty = ($unit:literal, $backends:expr, $doc:literal) ),*) => {
        &[$(
            ColumnDoc {
                name: stringify!($field),
                dtype: <$t as $dtype_of>::DTYPE,
                unit: $unit,
                doc: $doc,
                backends: $backends,
            },
        )*]
    };
}

/// A columnar table (one `Vec` per column), its row type and its schema, from one column list.
macro_rules! series {
    (
        $(#[$meta:meta])*
        pub struct $name:ident / $row:ident {
            $( $field:ident : $t:ty = ($unit:literal, $backends:expr, $doc:literal) ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        pub struct $name {
            $( #[doc = $doc] pub $field: Vec<$t>, )*
        }

        #[doc = concat!("One row of [`", stringify!($name), "`].")]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $row {
            $( #[doc = $doc] pub $field: $t, )*
        }

        impl $name {
            /// The columns, in output order.
            pub const SCHEMA: &'static [ColumnDoc] =
                column_docs!(ColumnType; $( $field : $t = ($unit, $backends, $doc) ),*);

            /// Bytes of one row (the sum of the columns' element sizes).
            pub const ROW_BYTES: u64 = 0 $( + std::mem::size_of::<$t>() as u64 )*;

            /// Appends one row (no allocation while the reserved room lasts).
            #[inline]
            pub fn push(&mut self, row: $row) {
                $( self.$field.push(row.$field); )*
            }

            /// Reserves room for exactly `rows` more rows when the allocator can give it (growth by doubling
            /// would leave up to half of a long run's columns unused).
            pub fn reserve_exact(&mut self, rows: usize) {
                $( let _ = self.$field.try_reserve_exact(rows); )*
            }

            /// Rows the columns hold room for.
            pub fn capacity(&self) -> usize {
                usize::MAX $( .min(self.$field.capacity()) )*
            }

            /// Reserves room for exactly `rows` more rows, or an error on `field` (what drives the rows) if
            /// the allocator refuses it.
            pub fn try_reserve_rows(&mut self, rows: usize, field: &str) -> Result<(), crate::FieldError> {
                $( crate::error::try_reserve(&mut self.$field, rows, field, "the time series")?; )*
                Ok(())
            }

            /// The columns' values, in the order of [`Self::SCHEMA`].
            pub fn columns(&self) -> Vec<ColumnData<'_>> {
                vec![$( <$t as ColumnType>::data(Cow::Borrowed(&self.$field[..])), )*]
            }
        }
    };
}

/// Shorthands for the column lists.
use Backends::{Both, KernelFloatWhenMissing, KernelPlaceholder, Sim};

series! {
    /// The per-flow time series: one row per active flow per interval.
    pub struct FlowSeries / FlowRow {
        t_ns: u64 = ("ns", Both, "end of the interval"),
        flow_id: u32 = ("", Both, "the flow"),
        delivered_bytes: u64 = ("bytes", Both,
            "payload delivered in order to the receiving application in the interval"),
        goodput_bps: f64 = ("bit/s", Both, "delivered_bytes x 8 / interval"),
        cwnd: u32 = ("packets", Both, "congestion window at the interval's end"),
        ssthresh: i64 = ("packets", Both, "slow-start threshold; -1 while infinite"),
        srtt_ns: u64 = ("ns", Both, "the sender's smoothed RTT"),
        min_rtt_ns: f64 = ("ns", Both, "the sender's minimum RTT; NaN before the first sample"),
        pacing_rate_bps: f64 = ("bit/s", KernelPlaceholder("NaN while the kernel's pacing rate is unlimited"),
            "the sender's pacing rate"),
        inflight: u32 = ("packets", Both, "segments in flight"),
        retransmits: u64 = ("packets", Both, "segments retransmitted in the interval"),
        drops: u64 = ("packets", Both, "the flow's segments dropped in the interval (queue plus path)"),
        ca_state: u8 = ("", Both, "TCP congestion-avoidance state: 0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss"),
        cc_mode: i32 = ("", KernelPlaceholder("-1 (BBR's state is not in TCP_CC_INFO)"),
            "the algorithm's mode (per algorithm: see cc_mode and cc_aux below); -1 where it has none"),
        cc_pacing_gain: f64 = ("", Both, "the algorithm's pacing gain (BBR); NaN where unused"),
        cc_cwnd_gain: f64 = ("", Both, "the algorithm's cwnd gain (BBR); NaN where unused"),
        cc_bw_bps: f64 = ("bit/s", Both, "the algorithm's bandwidth estimate (BBR, Prague's rate); NaN where unused"),
        cc_min_rtt_ns: f64 = ("ns", Both, "the algorithm's own minimum-RTT estimate (BBR); NaN where unused"),
        cc_inflight_hi: f64 = ("packets", KernelPlaceholder("NaN (not in TCP_CC_INFO)"),
            "BBRv2/v3 inflight_hi; NaN while unset or unused"),
        cc_inflight_lo: f64 = ("packets", KernelPlaceholder("NaN (not in TCP_CC_INFO)"),
            "BBRv2/v3 inflight_lo; NaN while unset or unused"),
        cc_aux: f64 = ("", KernelPlaceholder("NaN (not in TCP_CC_INFO)"),
            "one more algorithm variable (per algorithm: see cc_mode and cc_aux below); NaN where unused"),
    }
}

/// The time series' kernel-only columns, after the others.
pub const TIMESERIES_KERNEL: &[ColumnDoc] = &[ColumnDoc {
    name: "delivery_rate_bps",
    dtype: Dtype::F64,
    unit: "bit/s",
    doc: "the kernel's delivery-rate estimate (TCP_INFO tcpi_delivery_rate)",
    backends: Backends::Kernel,
}];

series! {
    /// The bottleneck queue's time series: one row per interval.
    pub struct QueueSeries / QueueRow {
        t_ns: u64 = ("ns", Both, "end of the interval"),
        backlog_bytes: u64 = ("bytes", Both, "queue backlog at the interval's end"),
        backlog_packets: u32 = ("packets", Both, "queue backlog at the interval's end"),
        sojourn_p50_ns: f64 = ("ns", Both, "median sojourn of the packets that left the queue; NaN if none"),
        sojourn_p99_ns: f64 = ("ns", Both, "99th percentile sojourn; NaN if none left"),
        sojourn_max_ns: f64 = ("ns", Both, "largest sojourn; NaN if none left"),
        drops: u64 = ("packets", Both, "packets the queue discipline dropped"),
        marks: u64 = ("packets", Both, "packets the queue discipline CE-marked"),
        departures: u64 = ("packets", Both, "packets that left the queue"),
        tx_bytes: u64 = ("bytes", Both, "wire bytes (IP packets) the link finished sending"),
        sojourn_l4s_p99_ns: f64 = ("ns", Both,
            "99th percentile sojourn of L4S (ECT(1)) packets; NaN if none left"),
        sojourn_classic_p99_ns: f64 = ("ns", Both,
            "99th percentile sojourn of the other packets; NaN if none left"),
    }
}

/// The queue series' kernel-only columns, after the others.
pub const QUEUE_KERNEL: &[ColumnDoc] = &[ColumnDoc {
    name: "lateness_p99_ns",
    dtype: Dtype::F64,
    unit: "ns",
    doc: "99th percentile of how late the emulator sent frames against their ideal departure; NaN if none",
    backends: Backends::Kernel,
}];

/// A flow table: a row type with scalar columns around two [`FlowCounters`] (over the measurement window,
/// over the whole run), the counter type itself, and the schema, from one column list.
macro_rules! flow_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $head:ident : $ht:ty = ($hunit:literal, $hback:expr, $hdoc:literal) ),* $(,)?
        }
        counters $counters:ident {
            $( $c:ident = ($cunit:literal, $cback:expr, $cdoc:literal) ),* $(,)?
        }
        then {
            $( $tail:ident : $tt:ty = ($tunit:literal, $tback:expr, $tdoc:literal) ),* $(,)?
        }
    ) => {
        /// Per-flow counters; the flow table has each over the measurement window (`window_*`) and over the
        /// whole run (`total_*`).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        pub struct $counters {
            $( #[doc = $cdoc] pub $c: u64, )*
        }

        impl $counters {
            /// Counter by counter, `self - earlier`.
            pub fn minus(self, earlier: $counters) -> $counters {
                $counters { $( $c: self.$c - earlier.$c, )* }
            }
        }

        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $( #[doc = $hdoc] pub $head: $ht, )*
            /// Counters over the measurement window (end snapshot minus start snapshot).
            pub window: $counters,
            /// Counters over the whole run.
            pub total: $counters,
            $( #[doc = $tdoc] pub $tail: $tt, )*
        }

        impl $name {
            /// The columns, in output order.
            pub const SCHEMA: &'static [ColumnDoc] = &[
                $( ColumnDoc { name: stringify!($head), dtype: <$ht as ColumnType>::DTYPE, unit: $hunit,
                               doc: $hdoc, backends: $hback }, )*
                $( ColumnDoc { name: concat!("window_", stringify!($c)), dtype: Dtype::U64, unit: $cunit,
                               doc: concat!($cdoc, ", in the measurement window"), backends: $cback }, )*
                $( ColumnDoc { name: concat!("total_", stringify!($c)), dtype: Dtype::U64, unit: $cunit,
                               doc: concat!($cdoc, ", over the whole run"), backends: $cback }, )*
                $( ColumnDoc { name: stringify!($tail), dtype: <$tt as ColumnType>::DTYPE, unit: $tunit,
                               doc: $tdoc, backends: $tback }, )*
            ];

            /// The columns of `rows`, in the order of [`Self::SCHEMA`].
            pub fn columns(rows: &[$name]) -> Vec<ColumnData<'static>> {
                vec![
                    $( <$ht as ColumnType>::data(Cow::Owned(rows.iter().map(|r| r.$head).collect())), )*
                    $( ColumnData::U64(Cow::Owned(rows.iter().map(|r| r.window.$c).collect())), )*
                    $( ColumnData::U64(Cow::Owned(rows.iter().map(|r| r.total.$c).collect())), )*
                    $( <$tt as ColumnType>::data(Cow::Owned(rows.iter().map(|r| r.$tail).collect())), )*
                ]
            }
        }
    };
}

flow_table! {
    /// One flow's row of the flow table.
    pub struct FlowRecord {
        flow_id: u32 = ("", Both, "the flow, numbered from 0 in the order of the scenario's groups"),
        group: u32 = ("", Both, "index of the flow's group in the scenario"),
        cc: &'static str = ("", Both, "the congestion control's canonical name"),
        rtt_ns: u64 = ("ns", Both, "the flow's base RTT"),
        start_ns: u64 = ("ns", Both, "when the flow's application starts sending"),
        stop_ns: u64 = ("ns", Both, "when its application stops (the run's end if it does not)"),
        size_bytes: u64 = ("bytes", Both, "bytes its application writes before it closes; 0 = until it stops"),
    }
    counters FlowCounters {
        delivered_bytes = ("bytes", Both, "payload delivered in order to the receiving application"),
        sent_segments = ("packets", Both,
            "data segments sent (the kernel backend counts those that reached the bottleneck)"),
        retransmitted_segments = ("packets", Both, "data segments retransmitted"),
        queue_drops = ("packets", Both, "segments the bottleneck queue dropped"),
        path_drops = ("packets", Both, "segments lost to the path's random loss"),
        ce_marks = ("packets", Both, "segments the bottleneck CE-marked"),
        rto_events = ("", KernelFloatWhenMissing("float64 and NaN on kernels before 6.7, which lack tcpi_total_rto"),
            "retransmission timeouts"),
        cwnd_reductions = ("", KernelFloatWhenMissing("float64 and NaN: the emulator cannot see the sender's congestion state"),
            "window reductions for congestion: entries into fast recovery, into CWR on ECN, and new RTO loss episodes"),
    }
    then {
        rtt_samples: u64 = ("", Both, "RTT samples taken in the measurement window"),
        rtt_mean_ns: f64 = ("ns", Both, "mean of the window's RTT samples; NaN without samples"),
        rtt_p99_ns: f64 = ("ns", Both, "99th percentile of the window's RTT samples; NaN without samples"),
        completion_ns: f64 = ("ns", Both,
            "a finite flow's completion time: from its start to the delivery of its last byte; NaN if it did not complete"),
    }
}

/// Run-level values, their type and schema, from one list.
macro_rules! scalars {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $field:ident : $t:ty = ($unit:literal, $backends:expr, $doc:literal) ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        pub struct $name {
            $( #[doc = $doc] pub $field: $t, )*
        }

        impl $name {
            /// The values, in output order.
            pub const SCHEMA: &'static [ColumnDoc] =
                column_docs!(ScalarType; $( $field : $t = ($unit, $backends, $doc) ),*);

            /// The values, in the order of [`Self::SCHEMA`].
            pub fn values(&self) -> Vec<Scalar> {
                vec![$( ScalarType::scalar(self.$field), )*]
            }
        }
    };
}

scalars! {
    /// Run-level totals.
    pub struct Totals {
        events: u64 = ("", Both, "simulator events processed (kernel: frames the emulator forwarded)"),
        sim_end_ns: u64 = ("ns", Both, "simulated time at the end (kernel: the scenario's duration)"),
        window_ns: u64 = ("ns", Both, "length of the measurement window"),
        window_link_tx_bytes: u64 = ("bytes", Both, "wire bytes the bottleneck transmitted in the window"),
        window_queue_drops: u64 = ("packets", Both, "packets the queue dropped in the window"),
        window_path_drops: u64 = ("packets", Both, "packets lost on the paths in the window"),
        window_marks: u64 = ("packets", Both, "packets CE-marked in the window"),
        window_sojourn_p50_ns: f64 = ("ns", Both, "median queue sojourn of the window's departures"),
        window_sojourn_p99_ns: f64 = ("ns", Both, "99th percentile queue sojourn of the window's departures"),
        window_sojourn_mean_ns: f64 = ("ns", Both, "mean queue sojourn of the window's departures"),
        window_sojourn_l4s_p99_ns: f64 = ("ns", Both, "99th percentile sojourn of the window's L4S departures"),
        window_sojourn_classic_p99_ns: f64 = ("ns", Both,
            "99th percentile sojourn of the window's other departures"),
        window_departures: u64 = ("packets", Both, "packets that left the queue in the window"),
        sent_segments: u64 = ("packets", Both, "data segments sent over the run"),
        arrived_segments: u64 = ("packets", KernelPlaceholder("NaN (not measured)"),
            "data segments that reached a receiver over the run"),
        queue_drops: u64 = ("packets", Both, "packets the queue dropped over the run"),
        path_drops: u64 = ("packets", Both, "packets lost on the paths over the run"),
        in_flight_at_end: u64 = ("packets", Both,
            "segments still in the queue, on the link or in a pipe when the run ended"),
        window_backlog_bytes: u64 = ("bytes", Sim,
            "payload that had crossed the bottleneck but not reached the application when the window opened \
             (out of order at the receivers, or on the way to them)"),
        wall_seconds: f64 = ("s", Both, "wall-clock time of the run"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_per_table_and_kernel_only_columns_are_marked() {
        for t in tables() {
            let mut names: Vec<&str> = t.columns.iter().chain(t.kernel_only).map(|c| c.name).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), n, "{}: a column name repeats", t.name);
            assert!(t.columns.iter().all(|c| c.backends.sim()), "{}", t.name);
            assert!(
                t.kernel_only.iter().all(|c| c.backends == Backends::Kernel),
                "{}",
                t.name
            );
        }
    }

    #[test]
    fn generated_columns_follow_the_schema() {
        let mut s = FlowSeries::default();
        s.push(FlowRow {
            t_ns: 1,
            flow_id: 2,
            delivered_bytes: 3,
            goodput_bps: 4.0,
            cwnd: 5,
            ssthresh: -1,
            srtt_ns: 6,
            min_rtt_ns: 7.0,
            pacing_rate_bps: 8.0,
            inflight: 9,
            retransmits: 10,
            drops: 11,
            ca_state: 1,
            cc_mode: -1,
            cc_pacing_gain: f64::NAN,
            cc_cwnd_gain: f64::NAN,
            cc_bw_bps: f64::NAN,
            cc_min_rtt_ns: f64::NAN,
            cc_inflight_hi: f64::NAN,
            cc_inflight_lo: f64::NAN,
            cc_aux: 12.0,
        });
        let cols = s.columns();
        assert_eq!(cols.len(), FlowSeries::SCHEMA.len());
        for (doc, data) in FlowSeries::SCHEMA.iter().zip(&cols) {
            assert_eq!(doc.dtype, data.dtype(), "{}", doc.name);
            assert_eq!(data.len(), 1, "{}", doc.name);
        }
        assert_eq!(
            cols[4],
            ColumnData::U32(Cow::Owned(vec![5])),
            "cwnd is the fifth column"
        );

        let rec = FlowRecord {
            flow_id: 0,
            group: 0,
            cc: "reno",
            rtt_ns: 1,
            start_ns: 0,
            stop_ns: 2,
            size_bytes: 0,
            window: FlowCounters {
                ce_marks: 3,
                ..FlowCounters::default()
            },
            total: FlowCounters {
                ce_marks: 4,
                ..FlowCounters::default()
            },
            rtt_samples: 0,
            rtt_mean_ns: f64::NAN,
            rtt_p99_ns: f64::NAN,
            completion_ns: f64::NAN,
        };
        let cols = FlowRecord::columns(std::slice::from_ref(&rec));
        let at = |name: &str| FlowRecord::SCHEMA.iter().position(|c| c.name == name).unwrap();
        assert_eq!(cols[at("window_ce_marks")], ColumnData::U64(Cow::Owned(vec![3])));
        assert_eq!(cols[at("total_ce_marks")], ColumnData::U64(Cow::Owned(vec![4])));
        assert_eq!(cols[at("cc")], ColumnData::Str(Cow::Owned(vec!["reno"])));
        assert_eq!(Totals::default().values().len(), Totals::SCHEMA.len());
    }
}

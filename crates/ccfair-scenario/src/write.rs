//! A scenario in base units written back as its document (quantities with units), which reads back to the
//! same scenario; and its explicit form, with every default written out as the resolution decided it (the
//! measurement window, the base RTT, the algorithms' canonical names with every parameter, the queue
//! discipline's parameters): the canonical document whose hash is a run's identity, so it does not change
//! when a default does.
//!
//! The seed is not part of either (a run's seed is given beside its scenario).

use serde_json::{Map, Value as Json, json};

use crate::host::HostInput;
use crate::spec::{FlowInput, ScenarioInput, UncheckedSpec};
use crate::traffic::{ArrivalsInput, SizeInput};
use crate::units::{format_buffer, format_duration_ns, format_rate_bps, format_size_bytes};

/// A quantity as written: base units in [0, 2^64) by their unit, anything else (a typed scenario's value
/// out of range, which cannot resolve) as the integer.
fn quantity(v: i128, format: fn(u64) -> String) -> Json {
    match u64::try_from(v) {
        Ok(x) => Json::String(format(x)),
        Err(_) => json!(v.to_string()),
    }
}

fn int(v: i128) -> Json {
    if let Ok(x) = i64::try_from(v) {
        json!(x)
    } else if let Ok(x) = u64::try_from(v) {
        json!(x)
    } else {
        json!(v.to_string())
    }
}

fn duration(v: i128) -> Json {
    quantity(v, format_duration_ns)
}

/// The document of `input` (see the module docs); with `resolved`, its explicit form.
pub fn document(input: &ScenarioInput, resolved: Option<&UncheckedSpec>) -> Json {
    let mut d = Map::new();
    d.insert("duration".into(), duration(input.duration_ns));
    d.insert("interval".into(), duration(input.interval_ns));
    let mut measure = Map::new();
    match resolved {
        Some(spec) => {
            measure.insert("start".into(), duration(spec.measure_start_ns as i128));
            measure.insert("end".into(), duration(spec.measure_end_ns as i128));
        }
        None => {
            if let Some(v) = input.measure.start_ns {
                measure.insert("start".into(), duration(v));
            }
            if let Some(v) = input.measure.end_ns {
                measure.insert("end".into(), duration(v));
            }
        }
    }
    if !measure.is_empty() {
        d.insert("measure".into(), Json::Object(measure));
    }
    let link = &input.link;
    let mut l = Map::new();
    l.insert("rate".into(), quantity(link.rate_bps, format_rate_bps));
    l.insert("buffer".into(), Json::String(format_buffer(link.buffer)));
    let base_rtt = match resolved {
        Some(_) => link.base_rtt_ns(&input.flows).ok().flatten().map(|v| v as i128),
        None => link.base_rtt_ns,
    };
    if let Some(rtt) = base_rtt {
        l.insert("base_rtt".into(), duration(rtt));
    }
    let params: Map<String, Json> = match resolved {
        Some(spec) => {
            let mut wire = serde_json::to_value(&spec.link.aqm).expect("configs serialize");
            let m = wire.as_object_mut().expect("an object");
            m.remove("name");
            m.remove("limit");
            // Unset optional parameters have no TOML form; left out they mean the same derived default.
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }
        None => link.aqm.params.clone(),
    };
    let aqm = if params.is_empty() {
        Json::String(link.aqm.name.clone())
    } else {
        let mut t = Map::new();
        t.insert("name".into(), Json::String(link.aqm.name.clone()));
        t.extend(params);
        Json::Object(t)
    };
    l.insert("aqm".into(), aqm);
    l.insert("mtu".into(), int(link.mtu_bytes));
    d.insert("link".into(), Json::Object(l));
    let groups: Vec<Json> = input
        .flows
        .iter()
        .enumerate()
        .map(|(i, g)| group(g, resolved.map(|s| &s.groups[i].cc)))
        .collect();
    d.insert("flows".into(), Json::Array(groups));
    if let Some(h) = &input.host {
        d.insert("host".into(), host(h));
    }
    Json::Object(d)
}

fn group(g: &FlowInput, resolved_cc: Option<&ccfair_cc::CcConfig>) -> Json {
    let (cc, params) = match resolved_cc {
        Some(cfg) => {
            let mut wire = serde_json::to_value(cfg).expect("configs serialize");
            let m = wire.as_object_mut().expect("an object");
            let name = m.remove("name").expect("a name");
            (name, m.clone())
        }
        None => (Json::String(g.cc.clone()), g.cc_params.clone()),
    };
    let mut d = Map::new();
    d.insert("cc".into(), cc);
    // The profile's values are written out as the group's own (they are what it resolved to), so the
    // document reads back to the same group; the name says where they came from.
    if let Some(profile) = &g.profile {
        d.insert("profile".into(), Json::String(profile.clone()));
    }
    d.insert("count".into(), int(g.count));
    d.insert("rtt".into(), duration(g.rtt_ns));
    d.insert("start".into(), duration(g.start_ns));
    if let Some(stop) = g.stop_ns {
        d.insert("stop".into(), duration(stop));
    }
    d.insert("initial_window".into(), int(g.initial_window));
    d.insert("pacing".into(), Json::Bool(g.pacing));
    d.insert("loss".into(), json!(g.loss));
    d.insert("ecn".into(), Json::String(g.ecn.clone()));
    d.insert("connect".into(), Json::String(g.connect.clone()));
    if !params.is_empty() {
        d.insert("cc_params".into(), Json::Object(params));
    }
    if let Some(label) = &g.label {
        d.insert("label".into(), Json::String(label.clone()));
    }
    if let Some(h) = &g.host {
        d.insert("host".into(), host(h));
    }
    if let Some(size) = &g.size {
        d.insert("size".into(), self::size(size));
    }
    if let Some(a) = &g.arrivals {
        d.insert("arrivals".into(), arrivals(a));
    }
    // The default placement stays implicit: the document still loads on the simulator.
    if let Some(delay) = &g.delay
        && delay != crate::kernel::SPLIT
    {
        d.insert("delay".into(), Json::String(delay.clone()));
    }
    Json::Object(d)
}

fn size(s: &SizeInput) -> Json {
    let mean = quantity(s.mean_bytes, format_size_bytes);
    match &s.distribution {
        None => mean,
        Some(name) => {
            let mut d = Map::new();
            d.insert("distribution".into(), Json::String(name.clone()));
            d.insert("mean".into(), mean);
            if let Some(shape) = s.shape {
                d.insert("shape".into(), json!(shape));
            }
            Json::Object(d)
        }
    }
}

fn arrivals(a: &ArrivalsInput) -> Json {
    let mut d = Map::new();
    d.insert("process".into(), Json::String(a.process.clone()));
    if let Some(v) = a.mean_interval_ns {
        d.insert("mean_interval".into(), duration(v));
    }
    if let Some(v) = a.window_ns {
        d.insert("window".into(), duration(v));
    }
    Json::Object(d)
}

fn host(h: &HostInput) -> Json {
    let mut d = Map::new();
    let mut put = |key: &str, v: Option<Json>| {
        if let Some(v) = v {
            d.insert(key.into(), v);
        }
    };
    let text = |v: &Option<String>| v.clone().map(Json::String);
    let flag = |v: Option<bool>| v.map(Json::Bool);
    put("preset", text(&h.preset));
    put("start_jitter", h.start_jitter_ns.map(duration));
    put("start_spacing", h.start_spacing_ns.map(duration));
    put("noise", text(&h.noise));
    put("noise_scale", h.noise_scale_ns.map(duration));
    put("turnaround", h.turnaround_ns.map(duration));
    put("pacing_slack", h.pacing_slack_ns.map(duration));
    put("delack_granularity", h.delack_granularity_ns.map(duration));
    put("hz", h.hz.map(int));
    put("tick_phase", text(&h.tick_phase));
    put("tso", flag(h.tso));
    put("nic_rate", h.nic_rate_bps.map(|v| quantity(v, format_rate_bps)));
    put("gro", flag(h.gro));
    put("gro_flush", h.gro_flush_ns.map(duration));
    put("rcv_window", flag(h.rcv_window));
    put("rcv_autotune", flag(h.rcv_autotune));
    put(
        "rmem",
        h.rmem_bytes
            .as_ref()
            .map(|v| Json::Array(v.iter().map(|&x| int(x)).collect())),
    );
    put("rcv_scaling_ratio", h.rcv_scaling_ratio.map(int));
    put("rcv_initial_window", h.rcv_initial_window.map(int));
    Json::Object(d)
}

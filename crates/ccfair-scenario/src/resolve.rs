//! `resolve(scenario, backend)`: a scenario, as its document or already in base units, resolved for the
//! simulator or the kernel backend, with the documents it writes back (plain and explicit).

use ccfair_core::FieldError;
use serde::{Deserialize, Serialize};

use crate::document::Document;
use crate::kernel::{self, KernelHost};
use crate::spec::{ScenarioInput, ScenarioSpec};
use crate::value::Value;

/// Which backend a scenario is resolved for.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "lowercase", deny_unknown_fields)]
pub enum Backend {
    /// The simulator.
    #[default]
    Sim,
    /// Real Linux TCP through the userspace bottleneck, on a host that offers these congestion controls.
    Kernel(KernelHost),
}

/// What a scenario is given as.
pub enum Source<'a> {
    /// A user's document (TOML read, or a dict).
    Document(&'a Value),
    /// The scenario in base units (the front end's typed scenario).
    Input(Box<ScenarioInput>),
}

/// A resolved scenario.
pub struct Resolution {
    /// The scenario in base units.
    pub input: ScenarioInput,
    /// The document's seed, if it has one (a document only).
    pub seed: Option<u64>,
    /// The spec the simulator runs (for the kernel backend: its stand-in's, which gives the run's estimate and
    /// the flows' starts and sizes).
    pub sim_spec: ScenarioSpec,
    /// The spec the backend runs, as JSON.
    pub spec: serde_json::Value,
    /// The document (see [`crate::write`]) and its explicit form.
    pub document: serde_json::Value,
    pub explicit: serde_json::Value,
}

/// Resolves `source` for `backend`; errors name the field.
pub fn resolve(source: Source<'_>, backend: &Backend) -> Result<Resolution, FieldError> {
    let (input, seed) = match source {
        Source::Document(value) => {
            let doc = Document::read(value)?;
            let seed = doc.seed();
            (doc.into_input()?, seed)
        }
        Source::Input(input) => (*input, None),
    };
    let (sim_spec, spec) = match backend {
        Backend::Sim => {
            let spec = input.resolve()?;
            let json = serde_json::to_value(&spec).expect("specs serialize");
            (spec, json)
        }
        Backend::Kernel(host) => {
            let r = kernel::resolve(&input, host)?;
            let json = serde_json::to_value(&r.spec).expect("specs serialize");
            (r.stand_in, json)
        }
    };
    let document = crate::write::document(&input, None);
    let mut explicit = crate::write::document(&input, Some(&sim_spec));
    if let Backend::Kernel(_) = backend {
        // The algorithms as written: kernel modules have no parameters to write out.
        for (g, out) in input
            .flows
            .iter()
            .zip(explicit["flows"].as_array_mut().expect("flows"))
        {
            out["cc"] = serde_json::Value::String(g.cc.clone());
            out.as_object_mut().expect("a table").remove("cc_params");
        }
    }
    Ok(Resolution {
        input,
        seed,
        sim_spec,
        spec,
        document,
        explicit,
    })
}

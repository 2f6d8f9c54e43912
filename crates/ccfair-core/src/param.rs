//! Self-description of configurable parameters, for listings and front-end validation.

/// One documented parameter of an algorithm or queue discipline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamDoc {
    pub name: &'static str,
    /// Allowed values, in words ("0 < beta < 1").
    pub allowed: &'static str,
    pub doc: &'static str,
}

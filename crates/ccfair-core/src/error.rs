//! The error every configuration check returns: the field that holds the bad value and what is allowed.
//! Algorithms, queue disciplines and the scenario report it alike, and a caller that nests a configuration
//! (the parameters of flow group 0) prefixes the field with where it sits (`flows[0].cc_params.beta`).

/// A field and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field, as the user wrote it (`cc_params.beta`, `link.buffer`, `target_ns`).
    pub field: String,
    /// What is allowed.
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }

    /// `Err` of [`FieldError::new`], for early returns.
    pub fn err<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, FieldError> {
        Err(FieldError::new(field, message))
    }

    /// The field `key` of the table `table`; an empty key (TOML allows `"" = 1`) is named by its table.
    pub fn path(table: &str, key: &str) -> String {
        if key.is_empty() {
            table.to_string()
        } else {
            format!("{table}.{key}")
        }
    }

    /// Whether this is an error on `field` whose message contains `text`: what a test of a refusal checks
    /// (`assert!(e.says("link.rate", "must be positive"), "{e}")`, the whole error shown when it fails).
    pub fn says(&self, field: &str, text: &str) -> bool {
        self.field == field && self.message.contains(text)
    }

    /// The same error one level down: `prefix.field` (e.g. `flows[0]` + `cc_params.beta`).
    pub fn prefixed(self, prefix: &str) -> FieldError {
        FieldError {
            field: format!("{prefix}.{}", self.field),
            message: self.message,
        }
    }
}

/// Reserves room for `additional` more elements of `v`, or an error on `field` (the scenario field whose value
/// drives the size) saying that `what` could not be had. Stable Rust has no fallible `Box` or `collect`, but a
/// reservation can fail cleanly: whatever a run's size drives is reserved up front through here, so that a
/// process limit (RLIMIT_AS, `ulimit -v`) or an exhausted machine is an error that names the field instead of
/// an abort.
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize, field: &str, what: &str) -> Result<(), FieldError> {
    v.try_reserve_exact(additional)
        .map_err(|_| out_of_memory(field, what, additional as u128 * std::mem::size_of::<T>() as u128))
}

/// The error for `bytes` of `what` that the allocator refused, on `field`.
pub fn out_of_memory(field: &str, what: &str, bytes: u128) -> FieldError {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    FieldError::new(
        field,
        format!(
            "the memory for {what} ({gib:.2} GiB) could not be had: the allocator refused it (a process \
             limit such as ulimit -v, or the machine's memory); make the run smaller"
        ),
    )
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reservation_beyond_any_address_space_is_an_error_naming_the_field() {
        let mut v: Vec<u64> = Vec::new();
        let e = try_reserve(&mut v, usize::MAX / 16, "flows[0].count", "flow state").unwrap_err();
        assert_eq!(e.field, "flows[0].count");
        assert!(
            e.message.contains("flow state") && e.message.contains("GiB"),
            "{}",
            e.message
        );
        assert!(try_reserve(&mut v, 10, "f", "w").is_ok() && v.capacity() >= 10);
    }

    #[test]
    fn nesting_prefixes_the_field_and_display_names_it() {
        let e = FieldError::new("beta", "must be in (0, 1)")
            .prefixed("cc_params")
            .prefixed("flows[0]");
        assert_eq!(e.field, "flows[0].cc_params.beta");
        assert_eq!(e.to_string(), "flows[0].cc_params.beta: must be in (0, 1)");
        assert_eq!(FieldError::path("aqm", "target_ns"), "aqm.target_ns");
        assert_eq!(FieldError::path("aqm", ""), "aqm");
        let r: Result<(), FieldError> = FieldError::err("x", "bad");
        assert_eq!(r.unwrap_err().field, "x");
        let e = FieldError::new("link.rate", "must be positive, got 0");
        assert!(e.says("link.rate", "must be positive") && e.says("link.rate", ""));
        assert!(!e.says("link.buffer", "must be positive") && !e.says("link.rate", "negative"));
    }
}

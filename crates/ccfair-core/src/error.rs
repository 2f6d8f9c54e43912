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

    /// The same error one level down: `prefix.field` (e.g. `flows[0]` + `cc_params.beta`).
    pub fn prefixed(self, prefix: &str) -> FieldError {
        FieldError {
            field: format!("{prefix}.{}", self.field),
            message: self.message,
        }
    }
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
    fn nesting_prefixes_the_field_and_display_names_it() {
        let e = FieldError::new("beta", "must be in (0, 1)")
            .prefixed("cc_params")
            .prefixed("flows[0]");
        assert_eq!(e.field, "flows[0].cc_params.beta");
        assert_eq!(e.to_string(), "flows[0].cc_params.beta: must be in (0, 1)");
        let r: Result<(), FieldError> = FieldError::err("x", "bad");
        assert_eq!(r.unwrap_err().field, "x");
    }
}

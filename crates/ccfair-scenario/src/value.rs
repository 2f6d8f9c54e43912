//! A document as its reader hands it over (a TOML file read by the front end, or a dict): tables in the
//! order written, integers of any size, and values TOML has but JSON has not (dates), kept by their type name
//! and text so that an error can say what was found. [`MAX_DEPTH`] bounds its nesting.

use ccfair_core::FieldError;

/// Levels of tables and arrays a document may nest (the document itself is level 1): no scenario or plan
/// needs more than about six, and deeper data would exhaust the recursion of every walker after the reader.
pub const MAX_DEPTH: usize = 32;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i128),
    /// An integer beyond 128 bits, as its decimal text.
    BigInt(String),
    Float(f64),
    Str(String),
    Table(Vec<(String, Value)>),
    Array(Vec<Value>),
    /// Anything else (a TOML date): its type name and its text.
    Other {
        type_name: String,
        repr: String,
    },
}

impl Value {
    /// The value's kind in words, for "expected X, got Y" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Bool(_) => "boolean",
            Value::Int(_) | Value::BigInt(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Table(_) => "table",
            Value::Array(_) => "array",
            Value::Other { .. } => "value",
        }
    }

    /// The type name Python gives it (messages of the unit parser name it so).
    pub fn type_name(&self) -> String {
        match self {
            Value::Bool(_) => "bool".into(),
            Value::Int(_) | Value::BigInt(_) => "int".into(),
            Value::Float(_) => "float".into(),
            Value::Str(_) => "str".into(),
            Value::Table(_) => "dict".into(),
            Value::Array(_) => "list".into(),
            Value::Other { type_name, .. } => type_name.clone(),
        }
    }

    /// The value as Python's `repr` writes it (what the user's front end shows).
    pub fn repr(&self) -> String {
        match self {
            Value::Bool(b) => if *b { "True" } else { "False" }.into(),
            Value::Int(v) => v.to_string(),
            Value::BigInt(t) => t.clone(),
            Value::Float(x) => crate::units::py_float_repr(*x),
            Value::Str(s) => py_str_repr(s),
            Value::Table(entries) => {
                let items: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", py_str_repr(k), v.repr()))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(Value::repr).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Other { repr, .. } => repr.clone(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Table(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value as JSON; an integer beyond 64 bits, a non-finite float or a value JSON has not is an error
    /// naming the key where it sits (`field`) and what JSON can carry (`allowed`).
    pub fn to_json(&self, field: &str, allowed: &str) -> Result<serde_json::Value, FieldError> {
        Ok(match self {
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(v) => {
                if let Ok(x) = i64::try_from(*v) {
                    x.into()
                } else if let Ok(x) = u64::try_from(*v) {
                    x.into()
                } else {
                    return FieldError::err(field, format!("is too large ({})", shown_int(&v.to_string())));
                }
            }
            Value::BigInt(t) => return FieldError::err(field, format!("is too large ({})", shown_int(t))),
            Value::Float(x) => match serde_json::Number::from_f64(*x) {
                Some(n) => serde_json::Value::Number(n),
                None => {
                    return FieldError::err(field, format!("must be a finite number, got {}", self.repr()));
                }
            },
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::Array(items) => serde_json::Value::Array(
                items
                    .iter()
                    .map(|v| v.to_json(field, allowed))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Table(entries) => {
                let mut m = serde_json::Map::new();
                for (k, v) in entries {
                    m.insert(k.clone(), v.to_json(&FieldError::path(field, k), allowed)?);
                }
                serde_json::Value::Object(m)
            }
            Value::Other { type_name, repr } => {
                return FieldError::err(
                    field,
                    format!(
                        "values must be {allowed} (Object of type {type_name} is not JSON serializable: {repr})"
                    ),
                );
            }
        })
    }

    /// A JSON document as a value (objects keep their order).
    pub fn from_json(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Other {
                type_name: "NoneType".into(),
                repr: "None".into(),
            },
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(i as i128)
                } else if let Some(u) = n.as_u64() {
                    Value::Int(u as i128)
                } else {
                    Value::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Array(items) => Value::Array(items.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(m) => {
                Value::Table(m.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect())
            }
        }
    }

    /// Refuses a value nested more than [`MAX_DEPTH`] levels deep, naming `field`.
    pub fn check_depth(&self, field: &str) -> Result<(), FieldError> {
        let mut stack: Vec<(&Value, usize)> = vec![(self, 1)];
        while let Some((v, depth)) = stack.pop() {
            let children: Vec<&Value> = match v {
                Value::Table(entries) => entries.iter().map(|(_, v)| v).collect(),
                Value::Array(items) => items.iter().collect(),
                _ => continue,
            };
            if depth > MAX_DEPTH {
                return FieldError::err(
                    field,
                    format!("nested too deeply: more than {MAX_DEPTH} levels of tables and arrays"),
                );
            }
            stack.extend(children.into_iter().map(|c| (c, depth + 1)));
        }
        Ok(())
    }
}

/// An integer's text for a message; one too long to read is described by its length.
pub fn shown_int(text: &str) -> String {
    if text.len() <= 24 {
        text.to_string()
    } else {
        format!("a {}-digit number", text.trim_start_matches('-').len())
    }
}

/// A string as Python's `repr` writes it: in single quotes unless it holds one and no double quote.
pub fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

//! Reading a [`Value`] into the document's serde types, with every error naming the field where it arose.
//!
//! The document's tables are plain `#[derive(Deserialize)]` structs with `deny_unknown_fields` and their
//! defaults; this deserializer walks the value and knows the path of each part (`flows[1].host.hz`), so that
//! an unknown key ("unknown key 'rtt_ms'; allowed keys: cc, count, rtt, ..." from the struct's own field
//! list, and "; did you mean 'duration'?" for a close one, `durration`), a missing one ("is required") and a value of the wrong kind or unit are reported at their field.
//! A leaf type that reads a value whole (a quantity with its unit, an integer of any size) takes it as a
//! [`Raw`] value and returns its message; the path is added here.

use std::cell::RefCell;
use std::fmt;

use ccfair_core::FieldError;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;

use crate::value::{Value, py_str_repr};

/// The field of `key` in the table at `path`; an empty key is named by its table.
pub fn join(path: &str, key: &str) -> String {
    if key.is_empty() {
        return if path.is_empty() {
            "scenario".into()
        } else {
            path.into()
        };
    }
    if path.is_empty() {
        key.into()
    } else {
        format!("{path}.{key}")
    }
}

/// An error of the reader: the message, and where it arose once known.
#[derive(Debug)]
pub struct ReadError {
    field: Option<String>,
    /// The key of a table that the error is about (a missing or unknown key), named under the table's path.
    key: Option<String>,
    message: String,
}

impl ReadError {
    fn at(mut self, path: &str) -> ReadError {
        if self.field.is_none() {
            self.field = Some(match self.key.take() {
                Some(key) => join(path, &key),
                None => join(path, ""),
            });
        }
        self
    }

    pub fn into_field_error(self) -> FieldError {
        let field = self
            .field
            .unwrap_or_else(|| join("", self.key.as_deref().unwrap_or("")));
        FieldError::new(field, self.message)
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ReadError {}

impl de::Error for ReadError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ReadError {
            field: None,
            key: None,
            message: msg.to_string(),
        }
    }

    fn missing_field(field: &'static str) -> Self {
        ReadError {
            field: None,
            key: Some(field.into()),
            message: "is required".into(),
        }
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        ReadError {
            field: None,
            key: Some(field.into()),
            message: format!(
                "unknown key {}; allowed keys: {}{}",
                py_str_repr(field),
                expected.join(", "),
                ccfair_core::names::closest(field, expected)
                    .map(|k| format!("; did you mean {}?", py_str_repr(k)))
                    .unwrap_or_default()
            ),
        }
    }
}

/// Reads `value` into `T`; errors name their field.
pub fn read<'de, T: de::Deserialize<'de>>(value: &Value) -> Result<T, FieldError> {
    T::deserialize(Reader { value, path: "" }).map_err(|e| e.at("").into_field_error())
}

/// A value taken whole, for a leaf type to read itself (see the module docs).
#[derive(Clone, Debug)]
pub struct Raw(pub Value);

const RAW: &str = "$ccfair_scenario::Raw";

thread_local! {
    static RAW_SLOT: RefCell<Option<Value>> = const { RefCell::new(None) };
}

impl<'de> de::Deserialize<'de> for Raw {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        struct RawVisitor;
        impl<'de> Visitor<'de> for RawVisitor {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scenario value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
                RAW_SLOT
                    .with(|slot| slot.borrow_mut().take())
                    .map(Raw)
                    .ok_or_else(|| E::custom("a scenario value is read by the scenario reader only"))
            }
        }
        d.deserialize_newtype_struct(RAW, RawVisitor)
    }
}

/// Implements `Deserialize` for a leaf type through a function of its raw value returning the message of
/// its error.
#[macro_export]
macro_rules! read_leaf {
    ($ty:ty, |$v:ident| $body:expr) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                let $crate::reader::Raw($v) = $crate::reader::Raw::deserialize(d)?;
                let read: Result<$ty, String> = $body;
                read.map_err(<D::Error as serde::de::Error>::custom)
            }
        }
    };
}

struct Reader<'a, 'p> {
    value: &'a Value,
    path: &'p str,
}

impl<'de> de::Deserializer<'de> for Reader<'_, '_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(v) => visitor.visit_i128(*v),
            Value::Float(x) => visitor.visit_f64(*x),
            Value::Str(s) => visitor.visit_str(s),
            Value::Table(entries) => visitor.visit_map(TableAccess {
                entries,
                next: 0,
                path: self.path,
            }),
            Value::Array(items) => visitor.visit_seq(ArrayAccess {
                items,
                next: 0,
                path: self.path,
            }),
            other @ (Value::BigInt(_) | Value::Other { .. }) => Err(de::Error::custom(format!(
                "unexpected {} {}",
                other.kind(),
                other.repr()
            ))),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        if name == RAW {
            RAW_SLOT.with(|slot| *slot.borrow_mut() = Some(self.value.clone()));
            return visitor.visit_unit();
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let Value::Table(entries) = self.value else {
            return Err(ReadError {
                field: Some(join(self.path, "")),
                key: None,
                message: format!("expected a table, got {}", self.value.kind()),
            });
        };
        let path = self.path;
        visitor
            .visit_map(TableAccess {
                entries,
                next: 0,
                path,
            })
            .map_err(|e| e.at(path))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit unit_struct
        seq tuple tuple_struct map enum identifier
    }
}

struct TableAccess<'a, 'p> {
    entries: &'a [(String, Value)],
    next: usize,
    path: &'p str,
}

impl<'de> MapAccess<'de> for TableAccess<'_, '_> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ReadError> {
        let Some((key, _)) = self.entries.get(self.next) else {
            return Ok(None);
        };
        let path = self.path;
        let de: de::value::StrDeserializer<'_, ReadError> = key.as_str().into_deserializer();
        seed.deserialize(de).map(Some).map_err(|e| e.at(path))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, ReadError> {
        let (key, value) = &self.entries[self.next];
        self.next += 1;
        let path = join(self.path, key);
        seed.deserialize(Reader { value, path: &path })
            .map_err(|e| e.at(&path))
    }
}

struct ArrayAccess<'a, 'p> {
    items: &'a [Value],
    next: usize,
    path: &'p str,
}

impl<'de> SeqAccess<'de> for ArrayAccess<'_, '_> {
    type Error = ReadError;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, ReadError> {
        let Some(value) = self.items.get(self.next) else {
            return Ok(None);
        };
        let path = format!("{}[{}]", self.path, self.next);
        self.next += 1;
        seed.deserialize(Reader { value, path: &path })
            .map(Some)
            .map_err(|e| e.at(&path))
    }
}

//! [`ObjectsOnly`]: a deserializer adapter under which a struct is decoded from an object only.
//!
//! serde's derived structs also accept a sequence, taking its items as the fields in order, so
//! `"config": [0.9, true, false]` would be read as a threshold and two flags. A spec's documents
//! are objects (the reference's Go decoder refuses an array for a struct), so every struct inside
//! a value decoded through this adapter refuses a sequence: an array there is `invalid type:
//! sequence, expected struct X`, placed just past its `[`. Everything else is passed through
//! unchanged, at every depth.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess};
use serde::de::{Unexpected, VariantAccess, Visitor};

/// A deserializer whose structs, at every depth, decode from objects only.
pub struct ObjectsOnly<D>(pub D);

/// Each `deserialize_*` method, passing the visitor on wrapped.
macro_rules! pass_deserialize {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method($($arg,)* Visit::new(visitor))
        })*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectsOnly<D> {
    type Error = D::Error;

    /// The one change: a struct's visitor refuses a sequence.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = Visit {
            inner: visitor,
            of_struct: true,
        };
        self.0.deserialize_struct(name, fields, visitor)
    }

    pass_deserialize! {
        deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16();
        deserialize_i32(); deserialize_i64(); deserialize_i128(); deserialize_u8();
        deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
        deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str();
        deserialize_string(); deserialize_bytes(); deserialize_byte_buf(); deserialize_option();
        deserialize_unit(); deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str); deserialize_seq();
        deserialize_tuple(len: usize); deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map(); deserialize_identifier(); deserialize_ignored_any();
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor whose nested deserializers are wrapped in [`ObjectsOnly`]; a struct's also refuses
/// a sequence.
struct Visit<V> {
    inner: V,
    of_struct: bool,
}

impl<V> Visit<V> {
    fn new(inner: V) -> Self {
        Visit {
            inner,
            of_struct: false,
        }
    }
}

/// Each `visit_*` method of a plain value, passed on.
macro_rules! pass_visit {
    ($($method:ident($ty:ty);)*) => {
        $(fn $method<E: de::Error>(self, value: $ty) -> Result<V::Value, E> {
            self.inner.$method(value)
        })*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Visit<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    pass_visit! {
        visit_bool(bool); visit_i8(i8); visit_i16(i16); visit_i32(i32); visit_i64(i64);
        visit_i128(i128); visit_u8(u8); visit_u16(u16); visit_u32(u32); visit_u64(u64);
        visit_u128(u128); visit_f32(f32); visit_f64(f64); visit_char(char); visit_str(&str);
        visit_borrowed_str(&'de str); visit_string(String); visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]); visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(ObjectsOnly(inner))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(ObjectsOnly(inner))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, items: A) -> Result<V::Value, A::Error> {
        if self.of_struct {
            return Err(de::Error::invalid_type(Unexpected::Seq, &self));
        }
        self.inner.visit_seq(Access(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, members: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Access(members))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, choice: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(Access(choice))
    }
}

/// A sequence's, map's, enum's or variant's access whose values are decoded through
/// [`ObjectsOnly`].
struct Access<A>(A);

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Access<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Access<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Seed(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Access<A> {
    type Error = A::Error;
    type Variant = Access<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let (name, variant) = self.0.variant_seed(Seed(seed))?;
        Ok((name, Access(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Access<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Seed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Visit::new(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Visit::new(visitor))
    }
}

/// A seed that decodes through [`ObjectsOnly`].
struct Seed<T>(T);

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<T::Value, D::Error> {
        self.0.deserialize(ObjectsOnly(inner))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::Value;

    use super::ObjectsOnly;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        threshold: f64,
        exact: bool,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        name: String,
        inner: Option<Inner>,
        items: Vec<Inner>,
        free: Value,
    }

    fn decode(text: &str) -> Result<Outer, String> {
        let mut json = serde_json::Deserializer::from_str(text);
        Outer::deserialize(ObjectsOnly(&mut json)).map_err(|err| err.to_string())
    }

    #[test]
    fn objects_decode_as_before_and_arrays_of_values_stay_arrays() {
        let outer = decode(
            r#"{"name": "a", "inner": {"threshold": 0.5, "exact": true},
                "items": [{"threshold": 1, "exact": false}], "free": [1, {"x": [2]}]}"#,
        )
        .unwrap();
        assert_eq!(outer.inner.unwrap().threshold, 0.5);
        assert_eq!(outer.items.len(), 1);
        assert_eq!(outer.free, serde_json::json!([1, {"x": [2]}]));
    }

    #[test]
    fn a_struct_given_as_an_array_is_refused_at_every_depth() {
        let refused = |text: &str| decode(text).unwrap_err();
        assert_eq!(
            refused(r#"["a", null, [], 1]"#),
            "invalid type: sequence, expected struct Outer at line 1 column 1"
        );
        assert_eq!(
            refused(r#"{"name": "a", "inner": [0.5, true], "items": [], "free": 1}"#),
            "invalid type: sequence, expected struct Inner at line 1 column 24"
        );
        assert_eq!(
            refused(r#"{"name": "a", "inner": null, "items": [[1, false]], "free": 1}"#),
            "invalid type: sequence, expected struct Inner at line 1 column 40"
        );
        assert_eq!(
            Inner::deserialize(ObjectsOnly(&serde_json::json!([1, true])))
                .unwrap_err()
                .to_string(),
            "invalid type: sequence, expected struct Inner"
        );
    }
}

//! The typed entry of a `#[tool]`: the call's arguments read straight from their JSON text into
//! the function's parameter types, for the executor's typed path
//! (`executor::typed`). The macro generates one only where reading into those types checks
//! exactly what the tool's input schema says (each parameter of a type whose schema is the
//! type itself: strings, booleans, sized integers, guarded paths, `Option`/`Vec` of them, and
//! no declared default or schema attribute), so an argument text the entry accepts is one the
//! schema accepts, with the same values. Anything it does not accept takes the general path,
//! which refuses with the precise reason.

use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde::Deserialize;

use crate::context::ToolContext;

use super::handler::{ArgumentError, BoxFuture};

/// Read a call's arguments text; `None` when it is not exactly what the entry takes.
pub type TypedEntry = fn(&str) -> Option<TypedCall>;

/// What runs the handler once the context is made: the parsed parameters, moved in.
pub type TypedRun = Box<dyn FnOnce(ToolContext) -> Result<BoxFuture, ArgumentError> + Send>;

/// A call's arguments read by a typed entry: the path arguments for the workspace guard,
/// and the handler's run.
pub struct TypedCall {
    /// Each path argument the call gave, by name, as written (never empty).
    pub(crate) paths: Vec<(&'static str, String)>,
    pub(crate) run: TypedRun,
}

impl TypedCall {
    /// The call read by generated code.
    pub fn new(paths: Vec<(&'static str, String)>, run: TypedRun) -> Self {
        TypedCall { paths, run }
    }
}

impl std::fmt::Debug for TypedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedCall")
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

/// Read a call's arguments text into the parameters' types, in order, by name: a JSON object
/// only, each key one of `names`, none twice, each absent one an `Option` (`None`); `None` on
/// anything else (the general path then says what is wrong). Generated code names the types
/// as the function does, so no code is derived in the user's scope, where a type imported
/// under a primitive's name would change what derived code means.
pub fn typed_args<F: Fields>(raw: &str, names: &[&'static str]) -> Option<F> {
    if !raw.starts_with('{') || names.len() != F::COUNT {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(raw);
    let fields = serde::Deserializer::deserialize_map(
        &mut de,
        FieldsVisitor::<F> {
            names,
            fields: PhantomData,
        },
    )
    .ok()?;
    de.end().ok()?;
    Some(fields)
}

/// A tuple of parameter types a typed entry reads (up to twelve: `tool-macros` gives no typed
/// entry to a tool with more).
pub trait Fields: Sized {
    /// How many parameters.
    const COUNT: usize;
    /// One `Option` per parameter, filled as the keys come.
    #[doc(hidden)]
    type Slots: Default;
    /// Read the value of parameter `index` into its slot; a second value refuses.
    #[doc(hidden)]
    fn put<'de, A: MapAccess<'de>>(
        slots: &mut Self::Slots,
        index: usize,
        map: &mut A,
    ) -> Result<(), A::Error>;
    /// The parameters, an absent one read as absent (only an `Option` takes that).
    #[doc(hidden)]
    fn take(slots: Self::Slots, names: &[&'static str]) -> Result<Self, serde_json::Error>;
}

macro_rules! fields {
    ($count:expr; $($t:ident $i:tt),*) => {
        impl<$($t: DeserializeOwned),*> Fields for ($($t,)*) {
            const COUNT: usize = $count;
            type Slots = ($(Option<$t>,)*);

            #[allow(unused_variables)]
            fn put<'de, A: MapAccess<'de>>(
                slots: &mut Self::Slots,
                index: usize,
                map: &mut A,
            ) -> Result<(), A::Error> {
                let fresh = match index {
                    $($i if slots.$i.is_none() => {
                        slots.$i = Some(map.next_value()?);
                        true
                    })*
                    _ => false,
                };
                if fresh {
                    Ok(())
                } else {
                    Err(de::Error::custom("duplicate or unknown field"))
                }
            }

            #[allow(unused_variables)]
            fn take(slots: Self::Slots, names: &[&'static str]) -> Result<Self, serde_json::Error> {
                Ok(($(
                    match slots.$i {
                        Some(value) => value,
                        None => <$t as Deserialize>::deserialize(Missing(names[$i]))?,
                    },
                )*))
            }
        }
    };
}

fields!(0;);
fields!(1; T0 0);
fields!(2; T0 0, T1 1);
fields!(3; T0 0, T1 1, T2 2);
fields!(4; T0 0, T1 1, T2 2, T3 3);
fields!(5; T0 0, T1 1, T2 2, T3 3, T4 4);
fields!(6; T0 0, T1 1, T2 2, T3 3, T4 4, T5 5);
fields!(7; T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6);
fields!(8; T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7);
fields!(9; T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8);
fields!(10; T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9);
fields!(11; T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10);
fields!(12; T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11);

struct FieldsVisitor<'n, F> {
    names: &'n [&'static str],
    fields: PhantomData<F>,
}

impl<'de, F: Fields> Visitor<'de> for FieldsVisitor<'_, F> {
    type Value = F;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object of the tool's parameters")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<F, A::Error> {
        let mut slots = F::Slots::default();
        while let Some(index) = map.next_key_seed(KeyIndex(self.names))? {
            F::put(&mut slots, index, &mut map)?;
        }
        F::take(slots, self.names).map_err(de::Error::custom)
    }
}

/// A key, as the index of the parameter it names; any other key refuses.
struct KeyIndex<'n>(&'n [&'static str]);

impl<'de> DeserializeSeed<'de> for KeyIndex<'_> {
    type Value = usize;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<usize, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIndex<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a parameter's name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|name| *name == key)
            .ok_or_else(|| E::custom("unknown field"))
    }
}

/// The deserializer of an absent field: only an `Option` accepts it (as `None`).
pub(crate) struct Missing(pub(crate) &'static str);

impl<'de> serde::Deserializer<'de> for Missing {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::typed_args;

    type Three = (String, Option<u8>, Vec<bool>);
    const NAMES: &[&str] = &["s", "n", "v"];

    fn read(raw: &str) -> Option<Three> {
        typed_args::<Three>(raw, NAMES)
    }

    #[test]
    fn an_object_of_the_parameters_is_read_in_order() {
        assert_eq!(
            read(r#"{"v": [true], "s": "x", "n": 7}"#),
            Some(("x".to_owned(), Some(7), vec![true]))
        );
        assert_eq!(
            read(r#" {"s": "x", "v": [], "n": null}"#.trim_start()),
            Some(("x".to_owned(), None, vec![]))
        );
        // A key written with escapes names the same parameter.
        assert_eq!(
            read(r#"{"\u0073": "y", "v": []}"#),
            Some(("y".to_owned(), None, vec![]))
        );
        assert_eq!(typed_args::<()>("{}", &[]), Some(()));
    }

    #[test]
    fn anything_else_is_not_read() {
        for raw in [
            r#"{"s": "x", "v": [], "s": "y"}"#,
            r#"{"s": "x", "v": [], "w": 1}"#,
            r#"{"v": []}"#,
            r#"{"s": "x"}"#,
            r#"{"s": "x", "v": [], "n": 256}"#,
            r#"{"s": "x", "v": [], "n": 1.0}"#,
            r#"{"s": "x", "v": [1]}"#,
            r#"["x", null, []]"#,
            r#"{"s": "x", "v": []} {}"#,
            r#"{"s": "x", "v": [], }"#,
            r#" {"s": "x", "v": []}"#,
            "",
        ] {
            assert_eq!(read(raw), None, "{raw}");
        }
        // The names must be one per type.
        assert_eq!(
            typed_args::<Three>(r#"{"s": "x", "v": []}"#, &["s", "v"]),
            None
        );
        assert_eq!(typed_args::<()>(r#"{"s": 1}"#, &[]), None);
    }
}

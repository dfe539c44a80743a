//! The built-in argument checker against the general engine (`jsonschema`): a schema built
//! from the input out of the keywords the checker covers, and instances built from the rest;
//! both engines must give the same verdict and the same violations (paths, messages,
//! subschemas). Any difference is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use tool_core::schema::{compare_engines, Agreement};

struct Input<'a> {
    data: &'a [u8],
    at: usize,
}

const KEYS: [&str; 5] = ["a", "b", "kind", "a/b", "é"];
const PATTERNS: [&str; 9] = [
    "^a", "b$", "^[a-z]+$", "\\d", "^\\w{2,3}$", "é", "^$", "[A-Z]-\\d", "^.{0,2}$",
];
const MULTIPLES: [f64; 7] = [0.5, 2.0, 5.0, 0.1, 0.25, 3.0, 0.001];
const TYPES: [&str; 7] = ["null", "boolean", "integer", "number", "string", "array", "object"];

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn pick<'b, T>(&mut self, items: &'b [T]) -> &'b T {
        &items[usize::from(self.byte()) % items.len()]
    }

    fn number(&mut self) -> Value {
        match self.byte() % 10 {
            0 => json!(i64::from(self.byte() as i8)),
            1 => json!(f64::from(self.byte() as i8) / 4.0),
            2 => json!(u64::MAX - u64::from(self.byte())),
            3 => json!(i64::MIN + i64::from(self.byte())),
            4 => json!(9_007_199_254_740_992u64 + u64::from(self.byte() % 3)),
            5 => json!(f64::from(self.byte()) * 0.1),
            6 => json!(1e300),
            7 => json!(-0.0),
            8 => json!(f64::from(self.byte()) + 0.5),
            _ => json!(self.byte()),
        }
    }

    fn string(&mut self) -> String {
        let n = self.byte() % 6;
        (0..n)
            .map(|_| *self.pick(&['a', 'b', 'Z', '1', '-', 'é', '😀', ' ', '/']))
            .collect()
    }

    fn value(&mut self, depth: u8) -> Value {
        match self.byte() % if depth > 3 { 5 } else { 7 } {
            0 => Value::Null,
            1 => json!(self.byte() % 2 == 0),
            2 | 3 => self.number(),
            4 => json!(self.string()),
            5 => Value::Array((0..self.byte() % 4).map(|_| self.value(depth + 1)).collect()),
            _ => {
                let mut m = Map::new();
                for _ in 0..self.byte() % 4 {
                    let k = *self.pick(&KEYS);
                    let v = self.value(depth + 1);
                    m.insert(k.to_owned(), v);
                }
                Value::Object(m)
            }
        }
    }

    fn count(&mut self) -> Value {
        json!(self.byte() % 5)
    }

    fn list(&mut self, depth: u8) -> Value {
        Value::Array((0..1 + self.byte() % 3).map(|_| self.schema(depth + 1)).collect())
    }

    fn schema(&mut self, depth: u8) -> Value {
        match self.byte() % 16 {
            0 => return json!(true),
            1 => return json!(false),
            2 => return json!({"$ref": "#/$defs/d"}),
            _ => {}
        }
        let mut s = Map::new();
        let keywords = 1 + self.byte() % 4;
        for _ in 0..keywords {
            let (k, v) = match self.byte() % if depth > 2 { 16 } else { 26 } {
                0 => ("type", json!(*self.pick(&TYPES))),
                1 => ("type", json!([*self.pick(&TYPES), *self.pick(&TYPES)])),
                2 => ("enum", Value::Array((0..1 + self.byte() % 5).map(|_| self.value(2)).collect())),
                3 => ("const", self.value(2)),
                4 => ("minimum", self.number()),
                5 => ("maximum", self.number()),
                6 => ("exclusiveMinimum", self.number()),
                7 => ("exclusiveMaximum", self.number()),
                8 => ("multipleOf", json!(*self.pick(&MULTIPLES))),
                9 => ("minLength", self.count()),
                10 => ("maxLength", self.count()),
                11 => ("pattern", json!(*self.pick(&PATTERNS))),
                12 => ("minItems", self.count()),
                13 => ("maxItems", self.count()),
                14 => ("uniqueItems", json!(self.byte() % 2 == 0)),
                15 => ("required", json!([*self.pick(&KEYS), *self.pick(&KEYS)])),
                16 => ("items", self.schema(depth + 1)),
                17 => ("prefixItems", self.list(depth)),
                18 => {
                    let mut p = Map::new();
                    for _ in 0..1 + self.byte() % 3 {
                        let k = *self.pick(&KEYS);
                        p.insert(k.to_owned(), self.schema(depth + 1));
                    }
                    ("properties", Value::Object(p))
                }
                19 => ("additionalProperties", self.schema(depth + 1)),
                20 => ("minProperties", self.count()),
                21 => ("maxProperties", self.count()),
                22 => ("anyOf", self.list(depth)),
                23 => ("oneOf", self.list(depth)),
                24 => ("allOf", self.list(depth)),
                _ => ("not", self.schema(depth + 1)),
            };
            s.insert(k.to_owned(), v);
        }
        Value::Object(s)
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input { data, at: 0 };
    let mut schema = input.schema(0);
    let defs = input.schema(1);
    if let Value::Object(m) = &mut schema {
        m.insert("$defs".to_owned(), json!({ "d": defs }));
    } else {
        schema = json!({"allOf": [schema], "$defs": {"d": defs}});
    }
    for _ in 0..4 {
        let instance = input.value(0);
        match compare_engines(&schema, &instance) {
            Ok(Agreement::Same { .. } | Agreement::NotCovered) => {}
            Err(e) => panic!("{e}"),
        }
    }
});

//! Instances for a schema: a base value meant to be valid, then boundary and near-valid
//! variants of every part of it (each limit, one past it, each wrong type, each missing or
//! extra property), so both engines see what a model gets wrong.

use serde_json::{json, Map, Value};

/// Most variants of one nested value kept (the root keeps all of its own).
const NESTED: usize = 24;

pub(crate) struct Gen<'a> {
    pub(crate) root: &'a Value,
}

fn limit(s: &Value, key: &str) -> Option<f64> {
    s.get(key).and_then(Value::as_f64)
}

fn push_num(out: &mut Vec<Value>, f: f64) {
    if let Some(n) = serde_json::Number::from_f64(f) {
        out.push(Value::Number(n));
    }
}

impl<'a> Gen<'a> {
    fn follow(&self, s: &'a Value) -> &'a Value {
        let mut s = s;
        for _ in 0..8 {
            match s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
            {
                Some(p) => match self.root.pointer(p) {
                    Some(t) => s = t,
                    None => break,
                },
                None => break,
            }
        }
        s
    }

    /// Scalars of every type: what a model sends by mistake.
    fn wrong_types() -> Vec<Value> {
        vec![
            Value::Null,
            json!(true),
            json!(0),
            json!(-1),
            json!(1.5),
            json!("x"),
            json!([]),
            json!({}),
        ]
    }

    /// Values for `s`, the first meant to match it, at most `cap` of them.
    pub(crate) fn values(&self, s: &'a Value, depth: usize, cap: usize) -> Vec<Value> {
        let own = s;
        let s = self.follow(s);
        let mut out = Vec::new();
        if depth > 6 {
            out.push(Value::Null);
            return out;
        }
        for key in ["const"] {
            if let Some(v) = own.get(key).or_else(|| s.get(key)) {
                out.push(v.clone());
            }
        }
        if let Some(Value::Array(options)) = own.get("enum").or_else(|| s.get("enum")) {
            out.extend(options.iter().cloned());
            out.push(json!("not-an-option"));
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(branches)) = s.get(key) {
                for b in branches {
                    out.extend(self.values(b, depth + 1, cap / 2 + 1));
                }
            }
        }
        for key in ["default", "examples"] {
            match s.get(key) {
                Some(Value::Array(a)) if key == "examples" => out.extend(a.iter().cloned()),
                Some(v) if key == "default" => out.push(v.clone()),
                _ => {}
            }
        }
        let types: Vec<&str> = match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ if s.get("properties").is_some() => vec!["object"],
            _ => vec![],
        };
        for t in types {
            match t {
                "integer" | "number" => self.numbers(s, t == "integer", &mut out),
                "string" => self.strings(s, &mut out),
                "boolean" => out.extend([json!(true), json!(false)]),
                "null" => out.push(Value::Null),
                "array" => self.arrays(s, depth, &mut out),
                "object" => self.objects(s, depth, cap, &mut out),
                _ => {}
            }
        }
        out.extend(Self::wrong_types());
        let mut seen = Vec::new();
        out.retain(|v| {
            let key = v.to_string();
            let fresh = !seen.contains(&key);
            seen.push(key);
            fresh
        });
        out.truncate(cap.max(1));
        out
    }

    fn numbers(&self, s: &Value, integer: bool, out: &mut Vec<Value>) {
        let mut base = Vec::new();
        for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if let Some(v) = s.get(key) {
                base.push(v.clone());
            }
        }
        let lo = limit(s, "minimum").or(limit(s, "exclusiveMinimum").map(|x| x + 1.0));
        if let Some(lo) = lo {
            push_num(out, lo);
        }
        out.push(json!(1));
        for b in &base {
            out.push(b.clone());
            if let Some(u) = b.as_u64() {
                out.push(json!(u.saturating_add(1)));
                out.push(json!(u.saturating_sub(1)));
            }
            if let Some(i) = b.as_i64() {
                out.push(json!(i.saturating_sub(1)));
                out.push(json!(i.saturating_add(1)));
            }
            if let Some(f) = b.as_f64() {
                push_num(out, f + 0.5);
                push_num(out, f - 0.5);
                push_num(out, f);
                push_num(out, f * (1.0 + f64::EPSILON));
            }
        }
        if let Some(m) = limit(s, "multipleOf") {
            for k in [0.0, 1.0, 2.0, 1.5, 3.0, 10.0] {
                push_num(out, m * k);
            }
            push_num(out, m + 0.1);
        }
        out.extend([
            json!(0),
            json!(2.0),
            json!(-0.0),
            json!(9007199254740993u64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e300),
            json!(-2.5),
        ]);
        if !integer {
            out.push(json!(0.1));
        }
    }

    fn strings(&self, s: &Value, out: &mut Vec<Value>) {
        let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0);
        let max = s.get("maxLength").and_then(Value::as_u64);
        if let Some(p) = s.get("pattern").and_then(Value::as_str) {
            if let Some(w) = jsonschema_regex::pattern_witness(p) {
                out.push(json!(w));
            }
            out.push(json!(format!("/{}", "a".repeat(min.max(1) as usize))));
        }
        let a = |n: u64| json!("a".repeat(n.min(400) as usize));
        let e = |n: u64| json!("é".repeat(n.min(400) as usize));
        out.push(a(min.max(1)));
        out.push(a(min));
        if min > 0 {
            out.push(a(min - 1));
            out.push(e(min - 1));
        }
        if let Some(max) = max {
            out.extend([
                a(max),
                a(max + 1),
                e(max),
                e(max + 1),
                json!("😀".repeat(max.min(400) as usize)),
            ]);
        }
        out.extend([
            json!(""),
            json!("ABC"),
            json!("a-b_c.d/e"),
            json!("123"),
            json!("x y"),
        ]);
    }

    fn arrays(&self, s: &'a Value, depth: usize, out: &mut Vec<Value>) {
        let items: Vec<Value> = s
            .get("items")
            .map(|i| self.values(i, depth + 1, 6))
            .unwrap_or_else(|| vec![json!(1), json!("x")]);
        let prefix: Vec<Value> = s
            .get("prefixItems")
            .and_then(Value::as_array)
            .map(|p| {
                p.iter()
                    .filter_map(|i| self.values(i, depth + 1, 1).into_iter().next())
                    .collect()
            })
            .unwrap_or_default();
        let first = items.first().cloned().unwrap_or(Value::Null);
        let min = s
            .get("minItems")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .min(50) as usize;
        let max = s
            .get("maxItems")
            .and_then(Value::as_u64)
            .map(|m| m.min(50) as usize);
        let mut full = prefix.clone();
        full.extend(std::iter::repeat_n(
            first.clone(),
            min.max(1).saturating_sub(prefix.len()),
        ));
        out.push(Value::Array(full.clone()));
        out.push(json!([]));
        out.push(Value::Array(prefix.clone()));
        for v in &items {
            let mut a = prefix.clone();
            a.push(v.clone());
            out.push(Value::Array(a));
        }
        if items.len() > 1 {
            let mut distinct = prefix.clone();
            distinct.extend(items.iter().take(3).cloned());
            out.push(Value::Array(distinct));
        }
        out.push(json!([first.clone(), first.clone()]));
        if min > 0 {
            out.push(Value::Array(vec![first.clone(); min - 1]));
        }
        if let Some(max) = max {
            out.push(Value::Array(vec![first.clone(); max]));
            out.push(Value::Array(vec![first; max + 1]));
        }
    }

    fn objects(&self, s: &'a Value, depth: usize, cap: usize, out: &mut Vec<Value>) {
        let props: Vec<(&String, &Value)> = s
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.iter().collect())
            .unwrap_or_default();
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let per = if depth == 0 {
            NESTED * 2
        } else {
            (cap / props.len().max(1)).clamp(2, NESTED)
        };
        let variants: Vec<(&String, Vec<Value>)> = props
            .iter()
            .map(|(name, p)| (*name, self.values(p, depth + 1, per)))
            .collect();
        let mut base = Map::new();
        for (name, vs) in &variants {
            if let Some(v) = vs.first() {
                base.insert((*name).clone(), v.clone());
            }
        }
        out.push(Value::Object(base.clone()));
        let only_required: Map<String, Value> = base
            .iter()
            .filter(|(k, _)| required.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.push(Value::Object(only_required));
        for (name, vs) in &variants {
            for v in vs.iter().skip(1) {
                let mut o = base.clone();
                o.insert((*name).clone(), v.clone());
                out.push(Value::Object(o));
            }
            let mut o = base.clone();
            o.remove(name.as_str());
            out.push(Value::Object(o));
        }
        let mut extra = base.clone();
        extra.insert("zz_extra".to_owned(), json!(1));
        out.push(Value::Object(extra.clone()));
        extra.insert("aa/extra~".to_owned(), json!("x"));
        out.push(Value::Object(extra));
        // Two properties wrong at once: every violation must be listed.
        if variants.len() >= 2 {
            let mut o = base;
            for (name, _) in variants.iter().take(2) {
                o.insert((*name).clone(), json!({"wrong": [1, "two"]}));
            }
            out.push(Value::Object(o));
        }
    }
}

//! Every committed lab baseline (`out/<id>.json`) validates against
//! `schema/lab-report.schema.json`, and what the harness writes does too.
//!
//! The validator is a small one (below) for exactly the JSON Schema keywords the
//! schema uses; it refuses any other keyword, so the schema cannot grow a rule
//! that is silently not checked. A full validator crate (`jsonschema`) brings
//! regex engines, URL resolution and ~40 crates to compile on a 2-core CI machine
//! for these dozen keywords.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("schema/lab-report.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Validates `v` against `s` (a sub-schema of `root`); errors carry a JSON path.
fn validate(root: &Value, s: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(obj) = s.as_object() else {
        if s == &Value::Bool(false) {
            errors.push(format!("{path}: not allowed"));
        }
        return;
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        let name = r
            .strip_prefix("#/$defs/")
            .expect("only #/$defs/ references");
        let target = &root["$defs"][name];
        assert!(!target.is_null(), "unknown $ref {r}");
        validate(root, target, v, path, errors);
    }
    for (k, rule) in obj {
        match k.as_str() {
            "$schema" | "$id" | "$ref" | "$defs" | "title" | "description" => {}
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => panic!("bad type"),
                };
                let ok = types.iter().any(|t| match *t {
                    "object" => v.is_object(),
                    "array" => v.is_array(),
                    "string" => v.is_string(),
                    "number" => v.is_number(),
                    "integer" => v.is_u64() || v.is_i64(),
                    "boolean" => v.is_boolean(),
                    "null" => v.is_null(),
                    other => panic!("unknown type {other}"),
                });
                if !ok {
                    errors.push(format!("{path}: expected {types:?}, got {v}"));
                }
            }
            "properties" => {
                if let Some(o) = v.as_object() {
                    for (name, sub) in rule.as_object().unwrap() {
                        if let Some(x) = o.get(name) {
                            validate(root, sub, x, &format!("{path}.{name}"), errors);
                        }
                    }
                }
            }
            "additionalProperties" => {
                if let Some(o) = v.as_object() {
                    let known = obj.get("properties").and_then(Value::as_object);
                    for (name, x) in o {
                        if known.is_some_and(|p| p.contains_key(name)) {
                            continue;
                        }
                        if rule == &Value::Bool(false) {
                            errors.push(format!("{path}: unexpected property {name:?}"));
                        } else {
                            validate(root, rule, x, &format!("{path}.{name}"), errors);
                        }
                    }
                }
            }
            "required" => {
                if let Some(o) = v.as_object() {
                    for name in rule.as_array().unwrap() {
                        if !o.contains_key(name.as_str().unwrap()) {
                            errors.push(format!("{path}: missing {name}"));
                        }
                    }
                }
            }
            "items" => {
                if let Some(a) = v.as_array() {
                    for (i, x) in a.iter().enumerate() {
                        validate(root, rule, x, &format!("{path}[{i}]"), errors);
                    }
                }
            }
            "minItems" | "maxItems" => {
                if let Some(a) = v.as_array() {
                    let n = rule.as_u64().unwrap() as usize;
                    if (k == "minItems" && a.len() < n) || (k == "maxItems" && a.len() > n) {
                        errors.push(format!("{path}: {} items ({k} {n})", a.len()));
                    }
                }
            }
            "minLength" => {
                if let Some(t) = v.as_str() {
                    if t.chars().count() < rule.as_u64().unwrap() as usize {
                        errors.push(format!("{path}: shorter than {rule}"));
                    }
                }
            }
            "minimum" => {
                if let Some(x) = v.as_f64() {
                    if x < rule.as_f64().unwrap() {
                        errors.push(format!("{path}: {x} below {rule}"));
                    }
                }
            }
            "enum" => {
                if !rule.as_array().unwrap().contains(v) {
                    errors.push(format!("{path}: {v} not one of {rule}"));
                }
            }
            "const" => {
                if rule != v {
                    errors.push(format!("{path}: {v} is not {rule}"));
                }
            }
            "anyOf" => {
                let ok = rule.as_array().unwrap().iter().any(|sub| {
                    let mut e = Vec::new();
                    validate(root, sub, v, path, &mut e);
                    e.is_empty()
                });
                if !ok {
                    errors.push(format!("{path}: matches none of anyOf {rule}"));
                }
            }
            "if" => {
                let mut e = Vec::new();
                validate(root, rule, v, path, &mut e);
                if e.is_empty() {
                    if let Some(then) = obj.get("then") {
                        validate(root, then, v, path, errors);
                    }
                }
            }
            "then" => {}
            other => panic!("the schema uses {other:?}, which this validator does not check"),
        }
    }
}

fn errors_of(doc: &Value) -> Vec<String> {
    let s = schema();
    let mut errors = Vec::new();
    validate(&s, &s, doc, "$", &mut errors);
    errors
}

/// The lab ids (directories under labs/).
fn labs() -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(root().join("labs"))
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_type()
                .ok()?
                .is_dir()
                .then(|| e.file_name().into_string().ok())?
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn every_baseline_validates_against_the_schema() {
    let mut failures = Vec::new();
    for id in labs() {
        let path = root().join(format!("out/{id}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (./run.sh bless {id})", path.display()));
        let doc: Value = serde_json::from_str(&text).unwrap();
        for e in errors_of(&doc) {
            failures.push(format!("out/{id}.json {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_validator_refuses_what_the_schema_forbids() {
    let good = serde_json::json!({
        "lab": "x", "title": "t", "source": "s", "versions": {},
        "rows": [{"key": "k", "label": "l", "kind": "measured", "core_matches_redis": true,
                  "redis": {"text": "12 µs", "value": 12.0, "unit": "µs"}}]
    });
    assert!(errors_of(&good).is_empty(), "{:?}", errors_of(&good));
    // A measured value that is only text.
    let mut bad = good.clone();
    bad["rows"][0]["redis"] = serde_json::json!({"text": "12 µs"});
    assert!(!errors_of(&bad).is_empty());
    // A bare string where a cell belongs, an unknown field, a wrong kind.
    let mut bad = good.clone();
    bad["rows"][0]["core"] = serde_json::json!("12 µs");
    assert!(!errors_of(&bad).is_empty());
    let mut bad = good.clone();
    bad["rows"][0]["colour"] = serde_json::json!("red");
    assert!(!errors_of(&bad).is_empty());
    let mut bad = good;
    bad["rows"][0]["kind"] = serde_json::json!("guess");
    assert!(!errors_of(&bad).is_empty());
}

#[test]
fn what_the_harness_writes_validates() {
    use redislab_harness::report::{Cell, Report};
    use redislab_harness::timing::{Timing, PERCENTILES};
    let mut r = Report {
        lab: "t".into(),
        title: "t".into(),
        source: "s".into(),
        ..Default::default()
    };
    r.exact("e", "exact", "1");
    r.measured("m", "measured", Some("2 µs")).band(2.0);
    r.random("r", "random", None).bounds(0.0, 10.0);
    let mut rec = redislab_harness::Recorder::new("redis");
    rec.put("e", "1");
    rec.put(
        "m",
        Timing {
            calls: 3,
            median_us: 2,
            p99_us: 3,
            max_us: 3,
            percentiles_us: [1; PERCENTILES.len()],
        },
    );
    rec.put("r", Cell::num(4.5, "%").with_points(vec![[1.0, 2.0]]));
    r.merge(rec).unwrap();
    let doc = serde_json::to_value(&r).unwrap();
    assert!(errors_of(&doc).is_empty(), "{:?}", errors_of(&doc));
}

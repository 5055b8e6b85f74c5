//! Where two stored objects differ: the paths of the fields whose values differ, or that one
//! side has and the other lacks (a field, map key or list item only one side has is one path,
//! not one per field below it). List items are matched by `name`, `type`, else position.

use serde_json::Value;

/// One difference: its path, and the value on each side (`None`: absent there).
pub struct Difference {
    pub path: String,
    pub demo: Option<Value>,
    pub real: Option<Value>,
}

pub fn differences(demo: &Value, real: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(demo, real, String::new(), &mut out);
    out
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The key of a list item: its `name` or `type`, else its index.
fn item_key(item: &Value, index: usize) -> String {
    ["name", "type"]
        .iter()
        .find_map(|k| item.get(k).and_then(Value::as_str))
        .map_or_else(|| index.to_string(), |k| format!("[{k}]"))
}

fn walk(demo: &Value, real: &Value, path: String, out: &mut Vec<Difference>) {
    match (demo, real) {
        (Value::Object(d), Value::Object(r)) => {
            let mut keys: Vec<&String> = d.keys().chain(r.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let at = join(&path, key);
                match (d.get(key), r.get(key)) {
                    (Some(dv), Some(rv)) => walk(dv, rv, at, out),
                    (dv, rv) => out.push(Difference {
                        path: at,
                        demo: dv.cloned(),
                        real: rv.cloned(),
                    }),
                }
            }
        }
        (Value::Array(d), Value::Array(r)) => {
            let keyed = |items: &[Value]| -> Vec<(String, Value)> {
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (item_key(v, i), v.clone()))
                    .collect()
            };
            let (d, r) = (keyed(d), keyed(r));
            let mut keys: Vec<&String> = d.iter().chain(r.iter()).map(|(k, _)| k).collect();
            keys.dedup();
            let mut seen = std::collections::BTreeSet::new();
            for key in keys {
                if !seen.insert(key.clone()) {
                    continue;
                }
                fn find<'a>(side: &'a [(String, Value)], key: &str) -> Option<&'a Value> {
                    side.iter().find(|(k, _)| k == key).map(|(_, v)| v)
                }
                let at = format!(
                    "{path}{}",
                    if key.starts_with('[') {
                        key.clone()
                    } else {
                        format!("[{key}]")
                    }
                );
                match (find(&d, key), find(&r, key)) {
                    (Some(dv), Some(rv)) => walk(dv, rv, at, out),
                    (dv, rv) => out.push(Difference {
                        path: at,
                        demo: dv.cloned(),
                        real: rv.cloned(),
                    }),
                }
            }
        }
        (d, r) if d != r => out.push(Difference {
            path,
            demo: Some(d.clone()),
            real: Some(r.clone()),
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_path_per_difference_items_by_name() {
        let demo = json!({"a": 1, "b": {"c": [{"name": "x", "v": 1}, {"name": "y"}]}, "only": {"deep": 1}});
        let real = json!({"a": 2, "b": {"c": [{"name": "x", "v": 2}, {"name": "z"}]}});
        let paths: Vec<String> = differences(&demo, &real)
            .into_iter()
            .map(|d| d.path)
            .collect();
        assert_eq!(paths, ["a", "b.c[x].v", "b.c[y]", "b.c[z]", "only"]);
    }
}

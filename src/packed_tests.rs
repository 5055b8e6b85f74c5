//! Tests of [`super`] (packed.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use proptest::prelude::*;
use serde_json::json;

#[test]
fn a_value_unpacks_as_its_text_parses_in_content_and_order() {
    let text = r#"{"z":1,"a":[true,null,1.5,"x",-3,18446744073709551615,-9223372036854775808],"m":{"b":{},"a":[],"q\"uote":"é\n"},"e":""}"#;
    let mut names = Names::default();
    let packed = Packed::of_text(text, &mut names).unwrap();
    let value = packed.unpack().unwrap();
    let parsed: Value = serde_json::from_str(text).unwrap();
    assert_eq!(value, parsed);
    assert_eq!(value.to_string(), parsed.to_string());
    let keys: Vec<_> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["z", "a", "m", "e"]);
    // Packed from the text or from its `Value`: the same bytes.
    assert_eq!(Packed::of_value(&parsed, &mut names), packed);
    // Numbers stay as written: 1 is not 1.0.
    assert_ne!(
        Packed::of_text("1", &mut names).unwrap().unpack().unwrap(),
        json!(1.0)
    );
    assert!(Packed::of_text("{\"a\":", &mut names).is_none());
    assert!(Packed::of_text("{} {}", &mut names).is_none());
}

#[test]
fn names_are_written_once_for_all_values() {
    let mut names = Names::default();
    let a = Packed::of_text(r#"{"metadata":{"name":"a"}}"#, &mut names).unwrap();
    let b = Packed::of_text(r#"{"metadata":{"name":"bb"}}"#, &mut names).unwrap();
    // The second holds one byte more, its value's: the names are not written again.
    assert_eq!(b.len(), a.len() + 1);
    // Another packer numbers them the same.
    let again = Packed::of_text(r#"{"metadata":{"name":"a"}}"#, &mut Names::default());
    assert_eq!(again, Some(a));
}

#[test]
fn the_table_is_bounded_and_names_past_it_are_written_out() {
    let table: &'static Table = Box::leak(Box::new(Table::new(2)));
    assert_eq!(table.id("a"), Some(0));
    assert_eq!(table.id("b"), Some(1));
    assert_eq!(table.id("a"), Some(0));
    assert_eq!(table.id("c"), None);
    assert_eq!(table.name(1), Some("b"));
    assert_eq!(table.name(2), None);
    // A packer whose table is full writes every name out, and it still reads back.
    let full: &'static Table = Box::leak(Box::new(Table::new(0)));
    let mut names = Names {
        table: Some(full),
        ..Names::default()
    };
    let text = r#"{"never-seen":"v","metadata":{"x":[1]}}"#;
    let packed = Packed::of_text(text, &mut names).unwrap();
    assert_eq!(
        packed.unpack().unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );
    assert_eq!(packed.root().get("never-seen").unwrap().as_str(), Some("v"));
}

#[test]
fn a_deployment_body_packs_to_under_half_its_text() {
    let text = include_str!("../testdata/changes/deployment-body.json");
    // Sized with a table of its own: the process's holds the names of every test run
    // before, whose numbers may take two bytes.
    let own: &'static Table = Box::leak(Box::new(Table::new(NAMES_MAX)));
    let mut names = Names {
        table: Some(own),
        ..Names::default()
    };
    let sized = Packed::of_text(text, &mut names).unwrap();
    assert!(
        sized.len() * 2 < text.trim_end().len(),
        "{} of {}",
        sized.len(),
        text.len()
    );
    let packed = Packed::of_text(text, &mut Names::default()).unwrap();
    assert_eq!(
        packed.unpack().unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );
}

#[test]
fn a_node_is_read_in_place() {
    let value =
        json!({"z": 1, "a": [true, null, 1.5, "x"], "m": {"b": {}, "a": [], "s": ""}, "n": -3});
    let packed = Packed::from(value.clone());
    let root = packed.root();
    assert!(root.eq_value(&value));
    assert!(!root.eq_value(&json!({"z": 1})));
    let fields: Vec<_> = root.fields().unwrap().map(|(k, _)| k).collect();
    assert_eq!(fields, ["z", "a", "m", "n"]);
    assert_eq!(root.fields().unwrap().count(), 4);
    let m = root.get("m").unwrap();
    assert!(m.get("b").unwrap().is_empty() && m.get("b").unwrap().is_map());
    assert!(m.get("a").unwrap().is_empty() && m.get("s").unwrap().is_empty());
    assert!(!root.get("z").unwrap().is_empty());
    assert!(root.get("missing").is_none() && root.get("z").unwrap().get("z").is_none());
    let items = root.get("a").unwrap().items().unwrap();
    assert_eq!(items.clone().count(), 4);
    assert!(items.clone().nth(1).unwrap().is_null());
    assert_eq!(items.clone().nth(3).unwrap().as_str(), Some("x"));
    assert!(root.get("a").unwrap().fields().is_none());
    assert_eq!(root.get("n").unwrap().to_value(), json!(-3));
    assert_eq!(
        format!("{:?}", root.get("m").unwrap()),
        r#"{"b":{},"a":[],"s":""}"#
    );
}

#[test]
fn numbers_compare_as_written_like_values() {
    let node = |v: Value| Packed::from(v);
    assert!(node(json!(1)).root().eq_value(&json!(1)));
    assert!(!node(json!(1)).root().eq_value(&json!(1.0)));
    assert!(node(json!(1.0)).root().eq_value(&json!(1.0)));
    assert!(!node(json!("1")).root().eq_value(&json!(1)));
    assert!(node(json!(-1)).root().eq_value(&json!(-1)));
    assert!(node(json!(u64::MAX)).root().eq_value(&json!(u64::MAX)));
}

/// Any JSON value: scalars of every kind, nested maps and lists, names with escapes.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(Value::from),
        ".{0,80}".prop_map(Value::String),
        // Long values too: a length past one varint byte.
        "[a-z]{100,300}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec(("[a-zA-Z\"é./-]{0,12}", inner), 0..8)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn every_value_round_trips_and_reads_in_place(value in any_value()) {
        let packed = Packed::from(value.clone());
        let back = packed.unpack().unwrap();
        // Same content, same order, numbers as written.
        prop_assert_eq!(back.to_string(), value.to_string());
        prop_assert!(packed.root().eq_value(&value));
        if let Value::Object(map) = &value {
            for (name, field) in map {
                prop_assert!(packed.root().get(name).unwrap().eq_value(field));
            }
        }
        // One member or item fewer, or one more, is another value.
        let mut other = value.clone();
        match &mut other {
            Value::Object(map) if !map.is_empty() => {
                let last = map.keys().next_back().cloned().unwrap_or_default();
                map.shift_remove(&last);
            }
            Value::Array(items) if !items.is_empty() => {
                items.pop();
            }
            Value::Object(map) => {
                map.insert("extra".into(), Value::Null);
            }
            Value::Array(items) => items.push(Value::Null),
            _ => other = json!([]),
        }
        prop_assert!(!packed.root().eq_value(&other));
        prop_assert!(!Packed::from(other.clone()).root().eq_value(&value));
        // The text packs to the same bytes as the value.
        prop_assert_eq!(Packed::of_text(&value.to_string(), &mut Names::default()), Some(packed));
    }
}

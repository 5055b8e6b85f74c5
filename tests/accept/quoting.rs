//! Property test of the YAML text written for new and replaced string values: whatever the
//! string, in block or flow context, as a key or in the old quoting style, it reads back as itself.
use proptest::prelude::*;
use serde_json::{Value, json};

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Any string written as a new value, in block or flow context, reads back as that string.
    #[test]
    fn any_new_string_reads_back_as_itself(text in "\\PC{0,12}|[-:#,&*?|>'\"%@ 0-9a-zA-Z.\\[\\]{}\t\n\r\u{85}\u{feff}\u{2028}]{0,12}") {
        use kdrift::manifest::edit::render;
        let value = Value::String(text.clone());
        let block = format!("k: {}\n", render::inline(&value, false).unwrap_or_default());
        let parsed: Value = serde_yaml::from_str(&block).map_err(|e| TestCaseError::fail(format!("{e}: {block:?}")))?;
        prop_assert_eq!(&parsed["k"], &value, "block {:?}", block);
        let flow = format!("k: [{}]\n", render::flow_text(&value));
        let parsed: Value = serde_yaml::from_str(&flow).map_err(|e| TestCaseError::fail(format!("{e}: {flow:?}")))?;
        prop_assert_eq!(&parsed["k"][0], &value, "flow {:?}", flow);
        for old in ["x", "\"x\"", "'x'", "|"] {
            let line = format!("k: {}\n", render::replacement(old, &value, false));
            let parsed: Value = serde_yaml::from_str(&line).map_err(|e| TestCaseError::fail(format!("{e}: {line:?}")))?;
            prop_assert_eq!(&parsed["k"], &value, "replacing {} gives {:?}", old, line);
        }
        let key = format!("{}: 1\n", render::key(&text));
        let parsed: Value = serde_yaml::from_str(&key).map_err(|e| TestCaseError::fail(format!("{e}: {key:?}")))?;
        prop_assert_eq!(parsed.get(&text), Some(&json!(1)), "key {:?}", key);
    }
}

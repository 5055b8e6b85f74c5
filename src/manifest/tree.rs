//! A manifest's body, held packed ([`Packed`]): thousands of manifests are held at once, and a
//! body is one allocation whose field names are numbers into the process's table (see
//! [`crate::packed`]), read in place through [`NodeRef`] (`get`, `fields`, `items`, `eq_value`)
//! — as fast to walk as a tree (manifest maps are small: a linear search wins, and a map or list
//! is stepped over whole). Convert to a `Value` with [`NodeRef::to_value`] where a whole value
//! is needed (the diff view, a revert, a drift item's manifest value); a change to a body (a
//! rendered object's annotations) is made on a `Value` and packed again.

use serde_json::Value;

pub use crate::packed::{Fields, Items, Kind, NodeRef, Packed};

/// What the manifests read together share: the strings of their keys (a namespace, a kind, an
/// application's name) and the numbers of their field names.
#[derive(Debug, Default)]
pub struct Names {
    strings: crate::intern::Interner<str>,
    fields: crate::packed::Names,
}

impl Names {
    /// `text`, shared with the equal strings met before.
    pub fn share(&mut self, text: &str) -> super::SharedStr {
        self.strings.text(text).into()
    }

    /// `value`, packed.
    pub fn pack(&mut self, value: &Value) -> Packed {
        Packed::of_value(value, &mut self.fields)
    }
}

impl Packed {
    /// The field `name` of the body (a map).
    pub fn get(&self, name: &str) -> Option<NodeRef<'_>> {
        self.root().get(name)
    }

    /// The body as a `serde_json::Value`, in the same order.
    pub fn to_value(&self) -> Value {
        self.root().to_value()
    }
}

/// Removes `metadata.annotations[name]` of `body` (and `annotations` when it is left empty),
/// returning it: the body is packed again without it.
pub fn remove_annotation(body: &mut Packed, name: &str, names: &mut Names) -> Option<Value> {
    body.get("metadata")?.get("annotations")?.get(name)?;
    let mut value = body.to_value();
    let metadata = value.get_mut("metadata")?.as_object_mut()?;
    let annotations = metadata.get_mut("annotations")?.as_object_mut()?;
    let removed = annotations.shift_remove(name)?;
    if annotations.is_empty() {
        metadata.shift_remove("annotations");
    }
    *body = names.pack(&value);
    Some(removed)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_strings_are_shared_between_documents() {
        let mut names = Names::default();
        assert_eq!(names.share("shop"), names.share("shop"));
        names.share("web");
        assert_eq!(names.strings.len(), 2);
    }

    #[test]
    fn an_annotation_is_removed_in_order_and_an_emptied_map_with_it() {
        let mut names = Names::default();
        let value = json!({"kind": "ConfigMap", "metadata": {"name": "a", "annotations": {"x": "1", "y": "2"}, "labels": {}}, "data": {}});
        let mut body = names.pack(&value);
        assert_eq!(
            remove_annotation(&mut body, "x", &mut names),
            Some(json!("1"))
        );
        assert_eq!(
            body.to_value().to_string(),
            r#"{"kind":"ConfigMap","metadata":{"name":"a","annotations":{"y":"2"},"labels":{}},"data":{}}"#
        );
        assert_eq!(remove_annotation(&mut body, "x", &mut names), None);
        assert_eq!(
            remove_annotation(&mut body, "y", &mut names),
            Some(json!("2"))
        );
        assert_eq!(
            body.to_value().to_string(),
            r#"{"kind":"ConfigMap","metadata":{"name":"a","labels":{}},"data":{}}"#
        );
    }
}

//! A server default judged with the rest of an object as it is: the value the server gives one
//! field when a write leaves it out. Here, above the schema's defaults, because a field is named
//! by its managed-fields path.
use serde_json::Value;

use super::{FieldPath, PathElement};
use crate::schema::Schema;
use crate::schema::defaults::apply_defaults;

/// The value the server gives the field at `path` of `object` when a write leaves that field
/// out and keeps the rest of `object` as it is; `None` when it gives none. A default that
/// depends on another field (`externalTrafficPolicy: Cluster` for a `type: NodePort`) is judged
/// by that field's value in `object`. Only for a path that ends in a field.
pub fn default_without(
    group: &str,
    kind: &str,
    schema: Schema,
    object: &Value,
    path: &FieldPath,
) -> Option<Value> {
    let (Some(PathElement::Field(name)), parent) =
        (path.0.last(), &path.0[..path.0.len().checked_sub(1)?])
    else {
        return None;
    };
    // The places of the parent's steps (list items by index), found on the object as it is.
    let mut places = Vec::with_capacity(parent.len());
    let mut at = object;
    let mut at_schema = schema;
    for element in parent {
        let (next, next_schema) = element.lookup(at_schema, at)?;
        places.push(match (element, at) {
            (PathElement::Field(field), _) => Place::Field(field),
            (_, Value::Array(list)) => {
                Place::Index(list.iter().position(|v| std::ptr::eq(v, next))?)
            }
            _ => return None,
        });
        at = next;
        at_schema = next_schema;
    }
    at.as_object()?.get(name)?;
    let mut without = object.clone();
    let mut parent_value = &mut without;
    for place in &places {
        parent_value = match place {
            Place::Field(field) => parent_value.get_mut(*field)?,
            Place::Index(index) => parent_value.get_mut(*index)?,
        };
    }
    parent_value.as_object_mut()?.shift_remove(name);
    apply_defaults(group, kind, schema, &mut without);
    path.lookup(schema, &without).cloned()
}

/// A step to a field's parent: a field by name, a list item by index.
enum Place<'p> {
    Field(&'p str),
    Index(usize),
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::default_without;
    use crate::managed_fields::{FieldPath, PathElement};

    #[test]
    fn a_default_without_its_field_follows_the_fields_it_depends_on() {
        let service = crate::schema::builtin_kind("Service");
        let without = |object: &Value, path: &[&str]| {
            default_without("", "Service", service, object, &FieldPath::fields(path))
        };
        let node_port = json!({"spec": {"type": "NodePort", "externalTrafficPolicy": "Local",
            "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}}});
        assert_eq!(
            without(&node_port, &["spec", "externalTrafficPolicy"]),
            Some(json!("Cluster"))
        );
        assert_eq!(
            without(
                &node_port,
                &[
                    "spec",
                    "sessionAffinityConfig",
                    "clientIP",
                    "timeoutSeconds"
                ]
            ),
            Some(json!(10800))
        );
        let cluster_ip = json!({"spec": {"type": "ClusterIP", "externalTrafficPolicy": "Cluster"}});
        assert_eq!(
            without(&cluster_ip, &["spec", "externalTrafficPolicy"]),
            None
        );
        // A field the object does not have, or a path into a list item by its key.
        assert_eq!(without(&cluster_ip, &["spec", "sessionAffinity"]), None);
        let mut key = Map::new();
        key.insert("port".into(), json!(80));
        key.insert("protocol".into(), json!("TCP"));
        let target = FieldPath::fields(&["spec", "ports"])
            .child(PathElement::key(&key))
            .child(PathElement::field("targetPort"));
        let ports = json!({"spec": {"ports": [{"port": 443, "targetPort": 8443}, {"port": 80, "targetPort": 8080}]}});
        assert_eq!(
            default_without("", "Service", service, &ports, &target),
            Some(json!(80))
        );
    }
}

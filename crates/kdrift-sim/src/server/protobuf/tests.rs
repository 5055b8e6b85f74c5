use prost_reflect::prost::Message;
use serde_json::json;

use super::*;

fn schema() -> &'static Schema {
    SCHEMA.as_ref().unwrap_or_else(|e| panic!("{e}"))
}

/// A body as client-go sends it: `k8s\0`, then `runtime.Unknown` around the object.
fn envelope(api_version: &str, kind: &str, object: &DynamicMessage) -> Vec<u8> {
    let pool = &schema().pool;
    let desc = |name: &str| {
        pool.get_message_by_name(name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let mut type_meta = DynamicMessage::new(desc("k8s.io.apimachinery.pkg.runtime.TypeMeta"));
    type_meta.set_field_by_name("apiVersion", Pb::String(api_version.into()));
    type_meta.set_field_by_name("kind", Pb::String(kind.into()));
    let mut unknown = DynamicMessage::new(desc(UNKNOWN));
    unknown.set_field_by_name("typeMeta", Pb::Message(type_meta));
    unknown.set_field_by_name("raw", Pb::Bytes(object.encode_to_vec().into()));
    let mut body = b"k8s\0".to_vec();
    body.extend(unknown.encode_to_vec());
    body
}

#[test]
fn the_descriptors_and_the_go_types_load() {
    let schema = schema();
    assert!(
        schema
            .pool
            .get_message_by_name("k8s.io.api.apps.v1.Deployment")
            .is_some()
    );
    assert!(
        schema
            .types
            .contains_key("k8s.io.api.apps.v1.DeploymentSpec")
    );
}

#[test]
fn a_truncated_body_is_a_bad_request() {
    let err = decode(("apps/v1", "Deployment"), b"k8s\0\x12\x40abc").err();
    assert!(matches!(err, Some(ApiError::BadRequest(_))), "{err:?}");
    let err = decode(("apps/v1", "Deployment"), b"{}").err();
    assert!(matches!(err, Some(ApiError::BadRequest(_))), "{err:?}");
}

#[test]
fn a_kind_without_a_definition_is_an_unsupported_media_type() {
    let desc = schema()
        .pool
        .get_message_by_name("k8s.io.api.core.v1.ConfigMap")
        .unwrap();
    let body = envelope("example.com/v1", "Widget", &DynamicMessage::new(desc));
    let err = decode(("example.com/v1", "Widget"), &body).err();
    assert!(
        matches!(err, Some(ApiError::UnsupportedMediaType(_))),
        "{err:?}"
    );
}

#[test]
fn an_empty_namespace_is_written_as_go_writes_it() {
    let desc = schema()
        .pool
        .get_message_by_name("k8s.io.api.core.v1.Namespace")
        .unwrap();
    let body = envelope("v1", "Namespace", &DynamicMessage::new(desc));
    let object = decode(("v1", "Namespace"), &body).unwrap();
    assert_eq!(
        object,
        json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {}, "spec": {}, "status": {}})
    );
}

/// The bodies kubectl 1.36.3's typed commands sent (captured by `testdata/protobuf/capture.py`)
/// beside the JSON the same kubectl prints for the same command with `--dry-run=client -o json`
/// (Go's `encoding/json` of the same object): each decodes to that JSON, keys in its order.
#[test]
fn kubectl_bodies_decode_to_the_json_go_writes_for_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/protobuf");
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pb") {
            continue;
        }
        let json_path = path.with_extension("json");
        let Ok(text) = std::fs::read_to_string(&json_path) else {
            continue;
        };
        let want: Value = serde_json::from_str(&text).unwrap();
        let expected = (
            want["apiVersion"].as_str().unwrap(),
            want["kind"].as_str().unwrap(),
        );
        let got = decode(expected, &std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(got, want, "{}", path.display());
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&want).unwrap(),
            "{}: the keys in another order",
            path.display()
        );
        checked.push(path.file_stem().unwrap().to_string_lossy().into_owned());
    }
    checked.sort();
    assert!(checked.len() >= 22, "{checked:?}");
}

/// The Go types (`kdrift-schema/data/gotypes.txt`) and the descriptors (`proto/**/generated.proto`) come from
/// the same tag: every message has its Go type, every field its Go field, and no more.
#[test]
fn every_message_has_its_go_type_field_for_field() {
    // Their own JSON form: the walk writes them whole (see `json::Walker::special`).
    let special = [
        "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
        "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
        "k8s.io.apimachinery.pkg.apis.meta.v1.Duration",
        "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "k8s.io.apimachinery.pkg.runtime.RawExtension",
        "k8s.io.apimachinery.pkg.api.resource.Quantity",
        "k8s.io.apimachinery.pkg.api.resource.QuantityValue",
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON",
    ];
    let schema = schema();
    let mut count = 0;
    for message in schema.pool.all_messages() {
        let name = message.full_name();
        if !name.starts_with("k8s.io.") || special.contains(&name) || message.is_map_entry() {
            continue;
        }
        count += 1;
        let mut numbers: Vec<u32> = message.fields().map(|f| f.number()).collect();
        numbers.sort_unstable();
        match schema.types.get(name) {
            Some(gotypes::GoType::Struct(fields)) => {
                let mut go: Vec<u32> = fields.iter().map(|f| f.number).collect();
                go.sort_unstable();
                assert_eq!(go, numbers, "{name}");
                // A scalar is one on the wire; an inlined struct names the field's message.
                for go in fields {
                    let field = message.get_field(go.number).unwrap();
                    let scalar = !field.is_list()
                        && !field.is_map()
                        && !matches!(field.kind(), prost_reflect::Kind::Message(_));
                    assert_eq!(go.scalar, scalar, "{name} {}", go.number);
                    if let gotypes::JsonName::Inline(inner) = &go.json {
                        match field.kind() {
                            prost_reflect::Kind::Message(m) => {
                                assert_eq!(&**inner, m.full_name(), "{name}")
                            }
                            _ => assert!(scalar, "{name}"),
                        }
                    }
                }
            }
            Some(gotypes::GoType::Slice) => {
                assert_eq!(numbers, [1], "{name}");
                assert!(message.fields().all(|f| f.is_list()), "{name}");
            }
            None => panic!("{name} has no Go type in gotypes.txt"),
        }
    }
    assert!(count > 600, "{count} messages");
}

/// The release Secret helm 4.2.3 writes through client-go on `helm upgrade` (a PUT, captured):
/// its `data` bytes come out base64, as helm's own reading of the release expects.
#[test]
fn a_helm_release_secret_decodes_with_its_data_in_base64() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/protobuf");
    let body = std::fs::read(dir.join("helm4-release-secret-put.pb")).unwrap();
    let secret = decode(("v1", "Secret"), &body).unwrap();
    assert_eq!(secret["kind"], "Secret");
    assert_eq!(secret["type"], "helm.sh/release.v1");
    assert_eq!(secret["metadata"]["name"], "sh.helm.release.v1.rel1.v2");
    assert_eq!(secret["metadata"]["labels"]["owner"], "helm");
    assert_eq!(secret["metadata"]["labels"]["status"], "deployed");
    // The value is base64 of helm's own base64 of gzip: "H4sI" is gzip's magic in base64.
    let data = secret["data"]["release"].as_str().unwrap();
    let inner = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data).unwrap();
    assert!(inner.starts_with(b"H4sI"), "{:?}", &inner[..8]);
}

/// The `.proto` files under `proto/`, each as (package, text).
fn vendored_protos() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "proto") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("proto"),
        &mut files,
    );
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let package = text
                .lines()
                .find_map(|l| l.strip_prefix("package "))
                .unwrap_or_else(|| panic!("{}: no package", path.display()))
                .trim_end_matches(';')
                .to_string();
            (package, text)
        })
        .collect()
}

/// The committed descriptor set (`proto/kubernetes.fds`) is the vendored `.proto` files
/// compiled: the same messages, each with the same fields — name, number, repeated or not, and
/// type — read from the text (go-to-protobuf writes one field a line, no nested messages).
#[test]
fn the_descriptor_set_is_the_vendored_protos_compiled() {
    let pool = &schema().pool;
    let mut seen = std::collections::BTreeSet::new();
    for (package, text) in vendored_protos() {
        let mut message: Option<String> = None;
        let mut fields: Vec<(String, u32, bool, String)> = Vec::new();
        let mut check = |name: &str, fields: &mut Vec<(String, u32, bool, String)>| {
            let full = format!("{package}.{name}");
            let desc = pool
                .get_message_by_name(&full)
                .unwrap_or_else(|| panic!("{full} is not in kubernetes.fds"));
            let mut compiled: Vec<(String, u32, bool, String)> = desc
                .fields()
                .map(|f| {
                    let type_name = match f.kind() {
                        prost_reflect::Kind::Message(m) if m.is_map_entry() => {
                            let kind = |f: prost_reflect::FieldDescriptor| match f.kind() {
                                prost_reflect::Kind::Message(m) => m.name().to_string(),
                                other => format!("{other:?}").to_lowercase(),
                            };
                            format!(
                                "map<{}, {}>",
                                kind(m.map_entry_key_field()),
                                kind(m.map_entry_value_field())
                            )
                        }
                        prost_reflect::Kind::Message(m) => m.name().to_string(),
                        other => format!("{other:?}").to_lowercase(),
                    };
                    let repeated = f.is_list() || f.is_map();
                    (f.name().to_string(), f.number(), repeated, type_name)
                })
                .collect();
            compiled.sort();
            fields.sort();
            assert_eq!(compiled, *fields, "{full}");
            seen.insert(full);
            fields.clear();
        };
        for line in text.lines() {
            let line = line.trim();
            if let Some(name) = line
                .strip_prefix("message ")
                .and_then(|l| l.strip_suffix(" {"))
            {
                message = Some(name.to_string());
            } else if line == "}" {
                if let Some(name) = message.take() {
                    check(&name, &mut fields);
                }
            } else if message.is_some()
                && let Some((decl, number)) =
                    line.strip_suffix(';').and_then(|l| l.split_once(" = "))
            {
                let number: u32 = number.parse().unwrap();
                let words: Vec<&str> = decl.split_whitespace().collect();
                let (repeated, type_name, name) = match words[..] {
                    ["optional", t, n] => (false, t.to_string(), n),
                    ["repeated", t, n] => (true, t.to_string(), n),
                    [key, value, n] if key.starts_with("map<") => {
                        (true, format!("{key} {value}"), n)
                    }
                    _ => panic!("{package}: cannot read field {line:?}"),
                };
                // A message type by its last name segment, as the descriptor names it.
                let short = |t: &str| t.rsplit('.').next().unwrap_or(t).to_string();
                let type_name = match type_name.strip_prefix("map<") {
                    Some(rest) => {
                        let (k, v) = rest.trim_end_matches('>').split_once(", ").unwrap();
                        format!("map<{}, {}>", short(k), short(v))
                    }
                    None => short(&type_name),
                };
                fields.push((name.to_string(), number, repeated, type_name));
            }
        }
    }
    let compiled: std::collections::BTreeSet<String> = pool
        .all_messages()
        .filter(|m| !m.is_map_entry())
        .map(|m| m.full_name().to_string())
        .collect();
    assert_eq!(
        compiled, seen,
        "kubernetes.fds holds other messages than the .proto files"
    );
    assert!(seen.len() > 600, "{} messages", seen.len());
}

#[test]
fn a_json_body_is_held_as_its_go_struct_writes_it() {
    // kubectl 1.20's RoleBinding: the ServiceAccount subject's empty apiGroup is gone on a real
    // server (omitempty); a field without omitempty and an unknown field stay; a nil pointer
    // with omitempty, an empty omitempty list and a zero omitempty number go, at any depth.
    let mut binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "b", "namespace": "", "labels": {}, "finalizers": []},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "sa", "namespace": "gen", "apiGroup": ""},
            {"kind": "User", "name": "", "apiGroup": "rbac.authorization.k8s.io", "extra": ""}
        ]
    });
    as_go_holds(
        ("rbac.authorization.k8s.io/v1", "RoleBinding"),
        &mut binding,
    );
    assert_eq!(
        binding,
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "sa", "namespace": "gen"},
                {"kind": "User", "name": "", "apiGroup": "rbac.authorization.k8s.io", "extra": ""}
            ]
        })
    );
    let mut deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "spec": {"replicas": 0, "minReadySeconds": 0, "paused": false, "strategy": {},
            "template": {"spec": {"containers": [{"name": "c", "image": "", "ports": [],
                "resources": {"limits": {"cpu": "0"}}}], "hostNetwork": false,
                "terminationGracePeriodSeconds": null}}}});
    as_go_holds(("apps/v1", "Deployment"), &mut deployment);
    assert_eq!(
        deployment["spec"],
        // replicas is a pointer: a set 0 stays; a Quantity is left as written.
        json!({"replicas": 0, "strategy": {},
            "template": {"spec": {"containers": [{"name": "c",
                "resources": {"limits": {"cpu": "0"}}}]}}})
    );
    // A custom resource has no Go type: left as it is.
    let mut widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"a": ""}});
    let before = widget.clone();
    as_go_holds(("example.com/v1", "Widget"), &mut widget);
    assert_eq!(widget, before);
}

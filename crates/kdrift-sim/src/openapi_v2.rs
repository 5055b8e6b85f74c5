//! `/openapi/v2`: the Swagger 2.0 document of a v1.36 server (captured, in `data/`), as JSON or
//! as the protobuf kubectl asks for (gnostic's `openapi.v2.Document`). kubectl before 1.27
//! downloads it to validate `create`, `apply` and `edit` and to build strategic merge patches; a
//! server without it gets "the server could not find the requested resource" from them.
//!
//! The definitions of every built-in kind stay (a real server serves them all); the paths are
//! those the demo cluster serves. Custom resources would add their definitions here once the
//! demo cluster serves CustomResourceDefinitions.
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::server::router::{Route, route};

/// The captured document, minified.
const DOCUMENT: &str = include_str!("data/openapi-v2.json");

/// The protobuf content type kubectl sends in `Accept` (older and newer spellings).
pub fn wants_protobuf(accept: &str) -> bool {
    accept.contains("com.github.proto-openapi.spec.v2")
}

/// The document as served: the paths the demo cluster answers, every definition.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc: Value = serde_json::from_str(DOCUMENT).unwrap_or(Value::Null);
        if let Some(Value::Object(paths)) = doc.get_mut("paths") {
            paths.retain(|path, _| served(path));
        }
        doc
    })
}

/// The JSON text of [`document`].
pub fn json() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| document().to_string())
}

/// The protobuf encoding of [`document`].
pub fn protobuf() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| encode_document(document()).0)
}

/// Is `path` (`/apis/apps/v1/namespaces/{namespace}/deployments/{name}`) one the demo serves?
fn served(path: &str) -> bool {
    let concrete = path
        .replace("{namespace}", "default")
        .replace("{name}", "x")
        .replace("{path}", "x");
    !matches!(
        route(&concrete, crate::resources::ResourceType::BUILTIN),
        Route::Unknown
    )
}

/// A protobuf message being written (proto3 wire format).
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.0.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn tag(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }

    fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.tag(field, 2);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    /// A string field; proto3 leaves an empty one out.
    fn string(&mut self, field: u32, value: Option<&Value>) {
        if let Some(text) = value.and_then(Value::as_str).filter(|t| !t.is_empty()) {
            self.bytes(field, text.as_bytes());
        }
    }

    fn strings(&mut self, field: u32, value: Option<&Value>) {
        for item in value.and_then(Value::as_array).into_iter().flatten() {
            self.string(field, Some(item));
        }
    }

    fn boolean(&mut self, field: u32, value: Option<&Value>) {
        if value.and_then(Value::as_bool) == Some(true) {
            self.tag(field, 0);
            self.varint(1);
        }
    }

    fn double(&mut self, field: u32, value: Option<&Value>) {
        if let Some(x) = value.and_then(Value::as_f64) {
            self.tag(field, 1);
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }

    fn int64(&mut self, field: u32, value: Option<&Value>) {
        if let Some(n) = value.and_then(Value::as_i64) {
            self.tag(field, 0);
            self.varint(n as u64);
        }
    }

    fn message(&mut self, field: u32, message: Msg) {
        self.bytes(field, &message.0);
    }

    /// A message field built in place.
    fn nested(&mut self, field: u32, build: impl FnOnce(&mut Msg)) {
        let mut inner = Msg::default();
        build(&mut inner);
        self.message(field, inner);
    }

    /// `Any { yaml }`: gnostic keeps free-form values as YAML text; JSON text is YAML.
    fn any(&mut self, field: u32, value: &Value) {
        let mut any = Msg::default();
        any.bytes(2, format!("{value}\n").as_bytes());
        self.message(field, any);
    }

    /// `repeated NamedAny` of the `x-` keys of `object`.
    fn vendor_extensions(&mut self, field: u32, object: &Map<String, Value>) {
        for (name, value) in object.iter().filter(|(k, _)| k.starts_with("x-")) {
            let mut named = Msg::default();
            named.bytes(1, name.as_bytes());
            named.any(2, value);
            self.message(field, named);
        }
    }

    /// `repeated Named<T> { name = 1; value = 2 }` of a JSON map.
    fn named(&mut self, field: u32, map: Option<&Value>, value: impl Fn(&Value) -> Msg) {
        for (name, item) in map.and_then(Value::as_object).into_iter().flatten() {
            let mut named = Msg::default();
            named.bytes(1, name.as_bytes());
            named.message(2, value(item));
            self.message(field, named);
        }
    }
}

/// The items of the list at `key` (none when absent).
fn items<'v>(value: &'v Value, key: &str) -> impl Iterator<Item = &'v Value> {
    value
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn object(value: &Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn encode_document(doc: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, doc.get("swagger"));
    if let Some(info) = doc.get("info") {
        let mut i = Msg::default();
        i.string(1, info.get("title"));
        i.string(2, info.get("version"));
        i.string(3, info.get("description"));
        i.vendor_extensions(7, &object(info));
        m.message(2, i);
    }
    m.string(3, doc.get("host"));
    m.string(4, doc.get("basePath"));
    m.strings(5, doc.get("schemes"));
    m.strings(6, doc.get("consumes"));
    m.strings(7, doc.get("produces"));
    if let Some(paths) = doc.get("paths") {
        let mut p = Msg::default();
        p.vendor_extensions(1, &object(paths));
        let items: Map<String, Value> = object(paths)
            .into_iter()
            .filter(|(k, _)| !k.starts_with("x-"))
            .collect();
        p.named(2, Some(&Value::Object(items)), path_item);
        m.message(8, p);
    }
    if doc.get("definitions").is_some() {
        let mut d = Msg::default();
        d.named(1, doc.get("definitions"), schema);
        m.message(9, d);
    }
    if doc.get("parameters").is_some() {
        let mut p = Msg::default();
        p.named(1, doc.get("parameters"), parameter);
        m.message(10, p);
    }
    if doc.get("responses").is_some() {
        let mut r = Msg::default();
        r.named(1, doc.get("responses"), response);
        m.message(11, r);
    }
    for requirement in items(doc, "security") {
        let mut s = Msg::default();
        s.named(1, Some(requirement), |scopes| {
            let mut a = Msg::default();
            a.strings(1, Some(scopes));
            a
        });
        m.message(12, s);
    }
    if doc.get("securityDefinitions").is_some() {
        let mut s = Msg::default();
        s.named(1, doc.get("securityDefinitions"), security_definition);
        m.message(13, s);
    }
    m.vendor_extensions(16, &object(doc));
    m
}

/// `SecurityDefinitionsItem`: the kinds a Kubernetes server uses (API key, basic).
fn security_definition(value: &Value) -> Msg {
    let mut item = Msg::default();
    let mut s = Msg::default();
    match value.get("type").and_then(Value::as_str) {
        Some("basic") => {
            s.string(1, value.get("type"));
            s.string(2, value.get("description"));
            s.vendor_extensions(3, &object(value));
            item.message(1, s);
        }
        _ => {
            s.string(1, value.get("type"));
            s.string(2, value.get("name"));
            s.string(3, value.get("in"));
            s.string(4, value.get("description"));
            s.vendor_extensions(5, &object(value));
            item.message(2, s);
        }
    }
    item
}

fn schema(value: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, value.get("$ref"));
    m.string(2, value.get("format"));
    m.string(3, value.get("title"));
    m.string(4, value.get("description"));
    if let Some(default) = value.get("default") {
        m.any(5, default);
    }
    m.double(6, value.get("multipleOf"));
    m.double(7, value.get("maximum"));
    m.boolean(8, value.get("exclusiveMaximum"));
    m.double(9, value.get("minimum"));
    m.boolean(10, value.get("exclusiveMinimum"));
    m.int64(11, value.get("maxLength"));
    m.int64(12, value.get("minLength"));
    m.string(13, value.get("pattern"));
    m.int64(14, value.get("maxItems"));
    m.int64(15, value.get("minItems"));
    m.boolean(16, value.get("uniqueItems"));
    m.int64(17, value.get("maxProperties"));
    m.int64(18, value.get("minProperties"));
    m.strings(19, value.get("required"));
    for item in items(value, "enum") {
        m.any(20, item);
    }
    match value.get("additionalProperties") {
        Some(Value::Bool(b)) => m.nested(21, |a| {
            a.tag(2, 0);
            a.varint(u64::from(*b));
        }),
        Some(inner @ Value::Object(_)) => m.nested(21, |a| a.message(1, schema(inner))),
        _ => {}
    }
    match value.get("type") {
        Some(Value::String(t)) => m.nested(22, |t_msg| t_msg.bytes(1, t.as_bytes())),
        Some(types @ Value::Array(_)) => m.nested(22, |t_msg| t_msg.strings(1, Some(types))),
        _ => {}
    }
    match value.get("items") {
        Some(Value::Array(items)) => m.nested(23, |i| {
            for item in items {
                i.message(1, schema(item));
            }
        }),
        Some(item @ Value::Object(_)) => m.nested(23, |i| i.message(1, schema(item))),
        _ => {}
    }
    for item in items(value, "allOf") {
        m.message(24, schema(item));
    }
    if value.get("properties").is_some() {
        let mut p = Msg::default();
        p.named(1, value.get("properties"), schema);
        m.message(25, p);
    }
    m.string(26, value.get("discriminator"));
    m.boolean(27, value.get("readOnly"));
    if let Some(example) = value.get("example") {
        m.any(30, example);
    }
    m.vendor_extensions(31, &object(value));
    m
}

fn path_item(value: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, value.get("$ref"));
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(op) = value.get(method) {
            m.message(field, operation(op));
        }
    }
    for p in items(value, "parameters") {
        m.message(9, parameters_item(p));
    }
    m.vendor_extensions(10, &object(value));
    m
}

fn operation(value: &Value) -> Msg {
    let mut m = Msg::default();
    m.strings(1, value.get("tags"));
    m.string(2, value.get("summary"));
    m.string(3, value.get("description"));
    m.string(5, value.get("operationId"));
    m.strings(6, value.get("produces"));
    m.strings(7, value.get("consumes"));
    for p in items(value, "parameters") {
        m.message(8, parameters_item(p));
    }
    if value.get("responses").is_some() {
        let mut r = Msg::default();
        r.named(1, value.get("responses"), |resp| {
            // ResponseValue: a response, or a reference to one.
            let mut v = Msg::default();
            match resp.get("$ref") {
                Some(reference) => {
                    let mut j = Msg::default();
                    j.string(1, Some(reference));
                    v.message(2, j);
                }
                None => v.message(1, response(resp)),
            }
            v
        });
        m.message(9, r);
    }
    m.strings(10, value.get("schemes"));
    m.boolean(11, value.get("deprecated"));
    m.vendor_extensions(13, &object(value));
    m
}

fn response(value: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, value.get("description"));
    if let Some(s) = value.get("schema") {
        let mut item = Msg::default();
        item.message(1, schema(s));
        m.message(2, item);
    }
    m.vendor_extensions(5, &object(value));
    m
}

/// `ParametersItem`: a parameter, or a reference to one of the document's.
fn parameters_item(value: &Value) -> Msg {
    let mut m = Msg::default();
    match value.get("$ref") {
        Some(reference) => {
            let mut j = Msg::default();
            j.string(1, Some(reference));
            j.string(2, value.get("description"));
            m.message(2, j);
        }
        None => m.message(1, parameter(value)),
    }
    m
}

/// `Parameter`: a body parameter, or one of the query, path, header and form ones.
fn parameter(value: &Value) -> Msg {
    let mut m = Msg::default();
    let place = value.get("in").and_then(Value::as_str).unwrap_or("");
    if place == "body" {
        let mut b = Msg::default();
        b.string(1, value.get("description"));
        b.string(2, value.get("name"));
        b.string(3, value.get("in"));
        b.boolean(4, value.get("required"));
        if let Some(s) = value.get("schema") {
            b.message(5, schema(s));
        }
        b.vendor_extensions(6, &object(value));
        m.message(1, b);
        return m;
    }
    // The sub-schemas share their first fields; `type` and `uniqueItems` sit one place later
    // where `allowEmptyValue` comes first (query and form data).
    let (oneof, shift) = match place {
        "header" => (1, 0),
        "formData" => (2, 1),
        "path" => (4, 0),
        _ => (3, 1),
    };
    let mut s = Msg::default();
    s.boolean(1, value.get("required"));
    s.string(2, value.get("in"));
    s.string(3, value.get("description"));
    s.string(4, value.get("name"));
    if shift == 1 {
        s.boolean(5, value.get("allowEmptyValue"));
    }
    s.string(5 + shift, value.get("type"));
    s.string(6 + shift, value.get("format"));
    s.boolean(19 + shift, value.get("uniqueItems"));
    s.vendor_extensions(22 + shift, &object(value));
    let mut non_body = Msg::default();
    non_body.message(oneof, s);
    m.message(2, non_body);
    m
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The fields of one message: (number, wire type, bytes for length-delimited, varint).
    fn fields(mut bytes: &[u8]) -> Vec<(u32, u8, Vec<u8>, u64)> {
        fn varint(bytes: &mut &[u8]) -> u64 {
            let mut n = 0u64;
            let mut shift = 0;
            loop {
                let b = bytes[0];
                *bytes = &bytes[1..];
                n |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    return n;
                }
                shift += 7;
            }
        }
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let key = varint(&mut bytes);
            let (field, wire) = ((key >> 3) as u32, (key & 7) as u8);
            match wire {
                0 => out.push((field, wire, Vec::new(), varint(&mut bytes))),
                1 => {
                    out.push((field, wire, bytes[..8].to_vec(), 0));
                    bytes = &bytes[8..];
                }
                2 => {
                    let len = varint(&mut bytes) as usize;
                    out.push((field, wire, bytes[..len].to_vec(), 0));
                    bytes = &bytes[len..];
                }
                other => panic!("wire type {other}"),
            }
        }
        out
    }

    fn field(bytes: &[u8], number: u32) -> Vec<Vec<u8>> {
        fields(bytes)
            .into_iter()
            .filter(|f| f.0 == number)
            .map(|f| f.2)
            .collect()
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn the_deployment_definition_carries_its_kind_and_merge_keys() {
        let doc = protobuf();
        assert_eq!(text(&field(doc, 1)[0]), "2.0");
        let definitions = &field(doc, 9)[0];
        let named = field(definitions, 1);
        assert_eq!(
            named.len(),
            document()["definitions"].as_object().unwrap().len()
        );
        let deployment = named
            .iter()
            .find(|n| text(&field(n, 1)[0]) == "io.k8s.api.apps.v1.Deployment")
            .expect("the Deployment definition");
        let schema = &field(deployment, 2)[0];
        let extensions: Vec<(String, String)> = field(schema, 31)
            .iter()
            .map(|e| (text(&field(e, 1)[0]), text(&field(&field(e, 2)[0], 2)[0])))
            .collect();
        let (name, yaml) = &extensions[0];
        assert_eq!(name, "x-kubernetes-group-version-kind");
        assert_eq!(
            serde_json::from_str::<Value>(yaml).unwrap(),
            serde_json::json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
        );
        let properties = field(&field(schema, 25)[0], 1);
        let names: Vec<String> = properties.iter().map(|p| text(&field(p, 1)[0])).collect();
        assert_eq!(names, ["apiVersion", "kind", "metadata", "spec", "status"]);
    }

    #[test]
    fn only_the_paths_the_demo_serves_are_listed() {
        let paths = document()["paths"].as_object().unwrap();
        assert!(paths.contains_key("/apis/apps/v1/namespaces/{namespace}/deployments/{name}"));
        assert!(paths.contains_key("/api/v1/namespaces/{namespace}/pods"));
        assert!(paths.contains_key("/api/v1/namespaces/{namespace}/services/{name}"));
        assert!(
            !paths.keys().any(|p| p.contains("/leases")),
            "coordination.k8s.io is not served"
        );
        let encoded = &field(protobuf(), 8)[0];
        assert_eq!(field(encoded, 2).len(), paths.len());
    }
}

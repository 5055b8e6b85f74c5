//! What differs between two servers by nature, not by behaviour, masked before comparing: times,
//! ages, UIDs, IPs, node ports, resourceVersions, tokens, node names, kubectl diff's temporary
//! folders, and the random parts of generated names.

use regex::{Regex, RegexSet};
use serde_json::{Map, Value};

pub struct Masks {
    /// (pattern, replacement) for strings anywhere: outputs, object values and keys.
    everywhere: Vec<(Regex, String)>,
    /// Ages in kubectl's tables (`5s`, `2m3s`, `<invalid>`): outputs only, where a value such
    /// as `200m` is a quantity, not an age, in objects.
    ages: Regex,
    blanks: Regex,
    /// Keys whose values the server allocates or hashes (`nodePort`, `pod-template-hash`).
    allocated: RegexSet,
}

impl Masks {
    /// The masks, with `generated` the owner names whose objects get random suffixes.
    pub fn new(generated: &[String]) -> Masks {
        let mut everywhere: Vec<(Regex, String)> = [
            (
                r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
                "<token>",
            ),
            (
                r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                "<uid>",
            ),
            (
                r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)",
                "<time>",
            ),
            // diff's file headers.
            (
                r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? [+-]\d{4}",
                "<time>",
            ),
            (r"\b(LIVE|MERGED)-\d+\b", "$1-<n>"),
            (r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b", "<ip>"),
            (r":3\d{4}/(TCP|UDP|SCTP)", ":<port>/$1"),
            (r#"(resourceVersion\\?"?:\s*\\?"?)\d+"#, "${1}<rv>"),
            // klog's line header: severity, date, time, thread.
            (
                r"(?m)^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ ",
                "$1<klog> ",
            ),
            (r"\b(demo|realk8s)-node-\d+\b", "<node>"),
            (r"(pod-template-hash[=:]\s*)[a-z0-9]+", "${1}<hash>"),
        ]
        .into_iter()
        .map(|(p, r)| (Regex::new(p).unwrap(), r.to_owned()))
        .collect();
        for name in generated {
            everywhere.push((
                Regex::new(&format!(
                    r"\b{}-[a-z0-9]{{5,10}}(-[a-z0-9]{{5}})?\b",
                    regex::escape(name)
                ))
                .unwrap(),
                format!("{name}-<id>"),
            ));
        }
        Masks {
            everywhere,
            ages: Regex::new(r"\b\d+[smhdy](\d+[smh])?\b|<invalid>").unwrap(),
            blanks: Regex::new(r"[ \t]+").unwrap(),
            allocated: RegexSet::new([
                r"^nodePort$",
                r"^healthCheckNodePort$",
                r"^pod-template-hash$",
                r"^controller-revision-hash$",
            ])
            .unwrap(),
        }
    }

    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (pattern, replacement) in &self.everywhere {
            out = pattern.replace_all(&out, replacement.as_str()).into_owned();
        }
        out
    }

    /// kubectl's printed result: [`Masks::text`] and ages; runs of blanks are one space, as a
    /// table's columns are as wide as their masked values were.
    pub fn output(&self, text: &str) -> String {
        let text = self.text(text);
        let masked = self.ages.replace_all(&text, "<age>");
        self.blanks.replace_all(&masked, " ").into_owned()
    }

    /// An object as stored, reduced to what is compared: no status, no uid, resourceVersion,
    /// creation time or managedFields times; managedFields keyed by manager, operation and
    /// subresource (their order is the server's bookkeeping); masked strings and keys.
    pub fn object(&self, mut object: Value) -> Value {
        if let Some(root) = object.as_object_mut() {
            root.remove("status");
            if let Some(Value::Object(meta)) = root.get_mut("metadata") {
                for volatile in ["uid", "resourceVersion", "creationTimestamp", "selfLink"] {
                    meta.remove(volatile);
                }
                if let Some(Value::Array(entries)) = meta.remove("managedFields") {
                    let mut keyed = Map::new();
                    for mut entry in entries {
                        if let Some(e) = entry.as_object_mut() {
                            e.remove("time");
                        }
                        let part = |k: &str| entry[k].as_str().unwrap_or("-").to_owned();
                        let key = format!(
                            "{} {} {}",
                            part("manager"),
                            part("operation"),
                            part("subresource")
                        );
                        keyed.insert(key, entry);
                    }
                    meta.insert("managedFields".into(), Value::Object(keyed));
                }
            }
        }
        self.value(object)
    }

    fn value(&self, value: Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| {
                        let v = if self.allocated.is_match(&k) && !v.is_object() {
                            Value::String("<allocated>".into())
                        } else {
                            self.value(v)
                        };
                        (self.text(&k), v)
                    })
                    .collect(),
            ),
            other => other,
        }
    }
}

//! What Go's JSON encoding of a Kubernetes type needs that the protobuf wire does not carry,
//! read from `proto/gotypes.txt` (written by `proto/update.py` from the upstream `types.go`
//! struct tags): each field's JSON name and order, whether it is a pointer, `omitempty`,
//! `omitzero`, or inlined; and which messages are Go slices.
use std::collections::HashMap;

/// One field of a Go struct that is a protobuf message, in the struct's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoField {
    pub number: u32,
    pub json: JsonName,
    /// `*T`: nil when absent from the wire, written when set even if zero.
    pub pointer: bool,
    pub omitempty: bool,
    pub omitzero: bool,
}

/// Where a field goes in JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonName {
    Named(Box<str>),
    /// An embedded struct whose fields are written at this level (`json:",inline"`).
    Inline,
    /// `json:"-"`: on the wire, never in JSON.
    Skipped,
}

/// How a message is a Go type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoType {
    Struct(Vec<GoField>),
    /// `type ExtraValue []string`: on the wire a message of `items`, in JSON an array.
    Slice,
}

/// The table, by message full name.
pub type GoTypes = HashMap<Box<str>, GoType>;

/// Parse the table; a line that does not read is an error naming it.
pub fn parse(text: &str) -> Result<GoTypes, String> {
    let mut types = GoTypes::new();
    let mut current: Option<(Box<str>, Vec<GoField>)> = None;
    for (index, line) in text.lines().enumerate() {
        let bad = || format!("gotypes.txt:{}: cannot read {line:?}", index + 1);
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with("k8s.io.") {
            if let Some((name, fields)) = current.take() {
                types.insert(name, GoType::Struct(fields));
            }
            match line.split_once(' ') {
                Some((name, "[]")) => {
                    types.insert(name.into(), GoType::Slice);
                }
                Some(_) => return Err(bad()),
                None => current = Some((line.into(), Vec::new())),
            }
            continue;
        }
        let mut parts = line.split(' ');
        let (Some(number), Some(json), Some(flags), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let number = number.parse().map_err(|_| bad())?;
        if !flags.chars().all(|c| matches!(c, 'p' | 'o' | 'z' | '.')) {
            return Err(bad());
        }
        let Some((_, fields)) = current.as_mut() else {
            return Err(bad());
        };
        fields.push(GoField {
            number,
            json: match json {
                "-" => JsonName::Inline,
                "!" => JsonName::Skipped,
                name => JsonName::Named(name.into()),
            },
            pointer: flags.contains('p'),
            omitempty: flags.contains('o'),
            omitzero: flags.contains('z'),
        });
    }
    if let Some((name, fields)) = current {
        types.insert(name, GoType::Struct(fields));
    }
    Ok(types)
}

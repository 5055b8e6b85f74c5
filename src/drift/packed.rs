//! A JSON value held packed, for the change timeline's previous versions (one per watched
//! object: 30,000 of them at scale). The text a watch event carries is mostly field names
//! (`"terminationMessagePolicy":`, `"imagePullPolicy":`) that every object of a kind repeats;
//! packed, each name is a number into one table shared by all objects ([`Names`]) and each value
//! its bytes with a tag, with no quotes, colons or commas: a Deployment's 860 bytes of body
//! text take about 330. Unpacking gives back the same `Value` (same members in the same order,
//! numbers as written), so a line's old → new values are what the text said.
use std::collections::HashMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Field names given a number at most: past this, a new name is written out in full, so a
/// cluster whose objects carry ever new keys (labels, ConfigMap data) cannot grow the table
/// without bound.
const NAMES_MAX: usize = 1 << 16;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const UINT: u8 = 3;
const NEG: u8 = 4;
const FLOAT: u8 = 5;
const TEXT: u8 = 6;
const MAP: u8 = 7;
const LIST: u8 = 8;
const END: u8 = 9;
const NAME_ID: u8 = 10;
const NAME_TEXT: u8 = 11;

/// The field names of packed values, each given a number once.
#[derive(Debug, Clone, Default)]
pub struct Names {
    ids: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl Names {
    fn id(&mut self, name: &str) -> Option<u32> {
        if let Some(&id) = self.ids.get(name) {
            return Some(id);
        }
        if self.names.len() >= NAMES_MAX {
            return None;
        }
        let id = u32::try_from(self.names.len()).ok()?;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        Some(id)
    }

    fn name(&self, id: u64) -> Option<&str> {
        self.names.get(usize::try_from(id).ok()?).map(|n| &**n)
    }
}

/// A JSON value, packed (see the module's note).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed(Box<[u8]>);

impl Packed {
    /// Packs the JSON text `text` (`None` when it is not JSON).
    pub fn of_text(text: &str, names: &mut Names) -> Option<Packed> {
        let mut out = Vec::with_capacity(text.len() / 2);
        let mut de = serde_json::Deserializer::from_str(text);
        Pack {
            out: &mut out,
            names,
        }
        .deserialize(&mut de)
        .ok()?;
        de.end().ok()?;
        Some(Packed(out.into_boxed_slice()))
    }

    /// The value again (`None` only if `names` is not the table it was packed with).
    pub fn unpack(&self, names: &Names) -> Option<Value> {
        let mut at = 0;
        let value = read(&self.0, &mut at, names)?;
        (at == self.0.len()).then_some(value)
    }

    /// Bytes it holds on the heap.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn push_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(n);
        }
    }
    None
}

fn push_text(out: &mut Vec<u8>, tag: u8, text: &str) {
    out.push(tag);
    push_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn read_text<'b>(bytes: &'b [u8], at: &mut usize) -> Option<&'b str> {
    let len = usize::try_from(read_varint(bytes, at)?).ok()?;
    let text = bytes.get(*at..at.checked_add(len)?)?;
    *at += len;
    std::str::from_utf8(text).ok()
}

fn read(bytes: &[u8], at: &mut usize, names: &Names) -> Option<Value> {
    let tag = *bytes.get(*at)?;
    *at += 1;
    Some(match tag {
        NULL => Value::Null,
        FALSE => Value::Bool(false),
        TRUE => Value::Bool(true),
        UINT => Value::Number(read_varint(bytes, at)?.into()),
        NEG => Value::Number((!read_varint(bytes, at)? as i64).into()),
        FLOAT => {
            let raw: [u8; 8] = bytes.get(*at..*at + 8)?.try_into().ok()?;
            *at += 8;
            Value::Number(Number::from_f64(f64::from_le_bytes(raw))?)
        }
        TEXT => Value::String(read_text(bytes, at)?.to_owned()),
        LIST => {
            let mut items = Vec::new();
            while *bytes.get(*at)? != END {
                items.push(read(bytes, at, names)?);
            }
            *at += 1;
            Value::Array(items)
        }
        MAP => {
            let mut map = Map::new();
            loop {
                let tag = *bytes.get(*at)?;
                *at += 1;
                let name = match tag {
                    END => break,
                    NAME_ID => names.name(read_varint(bytes, at)?)?.to_owned(),
                    NAME_TEXT => read_text(bytes, at)?.to_owned(),
                    _ => return None,
                };
                let value = read(bytes, at, names)?;
                map.insert(name, value);
            }
            Value::Object(map)
        }
        _ => return None,
    })
}

/// Packs one value as serde reads it from the text (no tree is built).
struct Pack<'p> {
    out: &'p mut Vec<u8>,
    names: &'p mut Names,
}

impl Pack<'_> {
    fn again(&mut self) -> Pack<'_> {
        Pack {
            out: &mut *self.out,
            names: &mut *self.names,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Pack<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// A field name as the text has it (borrowed unless it holds escapes).
struct FieldName<'p>(&'p mut Vec<u8>, &'p mut Names);

impl<'de> DeserializeSeed<'de> for FieldName<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for FieldName<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E>(self, name: &str) -> Result<(), E> {
        match self.1.id(name) {
            Some(id) => {
                self.0.push(NAME_ID);
                push_varint(self.0, u64::from(id));
            }
            None => push_text(self.0, NAME_TEXT, name),
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Pack<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.out.push(NULL);
        Ok(())
    }
    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.out.push(if b { TRUE } else { FALSE });
        Ok(())
    }
    fn visit_u64<E>(self, n: u64) -> Result<(), E> {
        self.out.push(UINT);
        push_varint(self.out, n);
        Ok(())
    }
    fn visit_i64<E>(self, n: i64) -> Result<(), E> {
        match u64::try_from(n) {
            Ok(n) => {
                self.out.push(UINT);
                push_varint(self.out, n);
            }
            Err(_) => {
                self.out.push(NEG);
                push_varint(self.out, !n as u64);
            }
        }
        Ok(())
    }
    fn visit_f64<E>(self, n: f64) -> Result<(), E> {
        self.out.push(FLOAT);
        self.out.extend_from_slice(&n.to_le_bytes());
        Ok(())
    }
    fn visit_str<E>(self, text: &str) -> Result<(), E> {
        push_text(self.out, TEXT, text);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.out.push(LIST);
        while seq.next_element_seed(self.again())?.is_some() {}
        self.out.push(END);
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.out.push(MAP);
        while map
            .next_key_seed(FieldName(&mut *self.out, &mut *self.names))?
            .is_some()
        {
            map.next_value_seed(self.again())?;
        }
        self.out.push(END);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_unpacks_as_its_text_parses_in_content_and_order() {
        let text = r#"{"z":1,"a":[true,null,1.5,"x",-3,18446744073709551615,-9223372036854775808],"m":{"b":{},"a":[],"q\"uote":"é\n"},"e":""}"#;
        let mut names = Names::default();
        let packed = Packed::of_text(text, &mut names).unwrap();
        let value = packed.unpack(&names).unwrap();
        let parsed: Value = serde_json::from_str(text).unwrap();
        assert_eq!(value, parsed);
        assert_eq!(value.to_string(), parsed.to_string());
        let keys: Vec<_> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "m", "e"]);
        // Numbers stay as written: 1 is not 1.0.
        assert_ne!(
            Packed::of_text("1", &mut names)
                .unwrap()
                .unpack(&names)
                .unwrap(),
            json!(1.0)
        );
        assert!(Packed::of_text("{\"a\":", &mut names).is_none());
        assert!(Packed::of_text("{} {}", &mut names).is_none());
    }

    #[test]
    fn names_are_numbered_once_for_all_values_and_are_bounded() {
        let mut names = Names::default();
        let a = Packed::of_text(r#"{"metadata":{"name":"a"}}"#, &mut names).unwrap();
        let b = Packed::of_text(r#"{"metadata":{"name":"bb"}}"#, &mut names).unwrap();
        assert_eq!(names.names.len(), 2);
        // The second holds one byte more, its value's: the names are not written again.
        assert_eq!(b.len(), a.len() + 1);
        // Past the bound, a name is written out, and still unpacks.
        for i in 0..NAMES_MAX {
            names.id(&format!("k{i}"));
        }
        let text = r#"{"never-seen":"v","metadata":{}}"#;
        let packed = Packed::of_text(text, &mut names).unwrap();
        assert_eq!(names.names.len(), NAMES_MAX);
        assert_eq!(
            packed.unpack(&names).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn a_deployment_body_packs_to_under_half_its_text() {
        let text = include_str!("../../testdata/changes/deployment-body.json");
        let mut names = Names::default();
        let packed = Packed::of_text(text, &mut names).unwrap();
        assert!(
            packed.len() * 2 < text.trim_end().len(),
            "{} of {}",
            packed.len(),
            text.len()
        );
        assert_eq!(
            packed.unpack(&names).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }
}

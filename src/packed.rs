//! JSON values held packed, one allocation each, and read in place: the manifests' bodies
//! ([`crate::manifest::tree`]: 10,000s held at once) and the change timeline's previous versions
//! (one per watched object). Field names are numbers into one table of the process ([`Names`]):
//! every object of a kind repeats `"terminationMessagePolicy":`, `"imagePullPolicy":`. Values
//! are their bytes with a tag, with no quotes, colons or commas, and a map or list starts with
//! its length in bytes, so a reader steps over it whole (`get("spec")` does not
//! read `metadata`). A body made of dozens of small allocations (a slice per map, a string per
//! long value) is one here: they were long-lived chunks on pages the start's short-lived garbage
//! shares, which the allocator could then not give back.
//!
//! [`NodeRef`] reads a packed value where it lies; [`NodeRef::to_value`] gives the same `Value`
//! (same members in the same order, numbers as written: `1` is not `1.0`).
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Field names given a number at most: past this, a new name is written out in full, so a
/// cluster whose objects carry ever new keys (labels, ConfigMap data) cannot grow the table
/// without bound.
const NAMES_MAX: usize = 1 << 16;
/// The table is allocated a chunk of names at a time, as names come.
const CHUNK: usize = 1 << 10;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const UINT: u8 = 3;
const NEG: u8 = 4;
const FLOAT: u8 = 5;
const TEXT: u8 = 6;
const MAP: u8 = 7;
const LIST: u8 = 8;
const NAME_ID: u8 = 10;
const NAME_TEXT: u8 = 11;

/// Field names by number, read without a lock (a slot is written once, under `ids`' lock).
struct Table {
    chunks: [OnceLock<Box<[OnceLock<&'static str>]>>; NAMES_MAX / CHUNK],
    ids: Mutex<Option<HashMap<&'static str, u32>>>,
    max: usize,
}

/// The one table every packed value's names are numbers into.
static TABLE: Table = Table::new(NAMES_MAX);

impl Table {
    const fn new(max: usize) -> Table {
        Table {
            chunks: [const { OnceLock::new() }; NAMES_MAX / CHUNK],
            ids: Mutex::new(None),
            max,
        }
    }

    /// The number of `name`, given one if it has none (`None` once the table is full). Names
    /// are kept for the process's life: at most `max` of them.
    fn id(&self, name: &str) -> Option<u32> {
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        let ids = ids.get_or_insert_with(HashMap::new);
        if let Some(&id) = ids.get(name) {
            return Some(id);
        }
        let next = ids.len();
        if next >= self.max.min(NAMES_MAX) {
            return None;
        }
        let chunk = self
            .chunks
            .get(next / CHUNK)?
            .get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect());
        let name: &'static str = Box::leak(Box::from(name));
        chunk.get(next % CHUNK)?.set(name).ok()?;
        let id = u32::try_from(next).ok()?;
        ids.insert(name, id);
        Some(id)
    }

    fn name(&self, id: u64) -> Option<&'static str> {
        let id = usize::try_from(id).ok()?;
        self.chunks
            .get(id / CHUNK)?
            .get()?
            .get(id % CHUNK)?
            .get()
            .copied()
    }
}

/// A packer's view of the names table: the numbers it has met, without the table's lock.
#[derive(Debug, Clone, Default)]
pub struct Names {
    known: HashMap<&'static str, u32>,
    /// Set by tests to a small table of their own; else the process's.
    table: Option<&'static Table>,
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Table(max {})", self.max)
    }
}

impl Names {
    fn id(&mut self, name: &str) -> Option<u32> {
        if let Some(&id) = self.known.get(name) {
            return Some(id);
        }
        let table = self.table.unwrap_or(&TABLE);
        let id = table.id(name)?;
        self.known.insert(table.name(u64::from(id))?, id);
        Some(id)
    }
}

/// A JSON value, packed (see the module's note). Clones share the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Packed(Arc<[u8]>);

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
        Some(Packed(Arc::from(out)))
    }

    /// Packs `value`.
    pub fn of_value(value: &Value, names: &mut Names) -> Packed {
        let mut out = Vec::new();
        let packed = Pack {
            out: &mut out,
            names,
        }
        .deserialize(value);
        if packed.is_err() {
            // A `Value` always reads as itself; should it not, it is packed from its text.
            let text = value.to_string();
            return Packed::of_text(&text, names).unwrap_or_else(|| Packed(Arc::from([NULL])));
        }
        Packed(Arc::from(out))
    }

    /// The value, read in place.
    pub fn root(&self) -> NodeRef<'_> {
        NodeRef(&self.0)
    }

    /// The value again, checked to the last byte (`None` if the bytes are not a packed value).
    pub fn unpack(&self) -> Option<Value> {
        let (node, rest) = NodeRef::split(&self.0)?;
        rest.is_empty().then(|| node.to_value())
    }

    /// Whether `other` is this very value (one allocation shared), not an equal one.
    #[cfg(test)]
    pub(crate) fn same_bytes(&self, other: &Packed) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Bytes it holds on the heap.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Packed {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Debug::fmt(&self.root(), f)
    }
}

impl From<Value> for Packed {
    fn from(value: Value) -> Packed {
        Packed::from(&value)
    }
}

impl From<&Value> for Packed {
    fn from(value: &Value) -> Packed {
        Packed::of_value(value, &mut Names::default())
    }
}

/// One packed node where it lies: a map, a list or a scalar.
#[derive(Clone, Copy)]
pub struct NodeRef<'a>(&'a [u8]);

/// What a [`NodeRef`] holds.
#[derive(Debug, Clone)]
pub enum Kind<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(&'a str),
    List(Items<'a>),
    /// Fields in the manifest's order.
    Map(Fields<'a>),
}

impl<'a> NodeRef<'a> {
    /// The node at the start of `bytes`, and the bytes after it.
    fn split(bytes: &'a [u8]) -> Option<(NodeRef<'a>, &'a [u8])> {
        let mut at = 1;
        match *bytes.first()? {
            NULL | FALSE | TRUE => {}
            UINT | NEG => {
                read_varint(bytes, &mut at)?;
            }
            FLOAT => at += 8,
            TEXT | MAP | LIST => {
                let len = read_len(bytes, &mut at)?;
                at = at.checked_add(len)?;
            }
            _ => return None,
        }
        (at <= bytes.len()).then(|| (NodeRef(&bytes[..at]), &bytes[at..]))
    }

    /// A text's bytes, a map's or list's content.
    fn content(self) -> Option<&'a [u8]> {
        let mut at = 1;
        let len = read_len(self.0, &mut at)?;
        self.0.get(at..at.checked_add(len)?)
    }

    pub fn kind(self) -> Kind<'a> {
        self.try_kind().unwrap_or(Kind::Null)
    }

    fn try_kind(self) -> Option<Kind<'a>> {
        let mut at = 1;
        Some(match *self.0.first()? {
            NULL => Kind::Null,
            FALSE => Kind::Bool(false),
            TRUE => Kind::Bool(true),
            UINT => Kind::Number(read_varint(self.0, &mut at)?.into()),
            NEG => Kind::Number((!read_varint(self.0, &mut at)? as i64).into()),
            FLOAT => {
                let raw: [u8; 8] = self.0.get(1..9)?.try_into().ok()?;
                Kind::Number(Number::from_f64(f64::from_le_bytes(raw))?)
            }
            TEXT => Kind::String(std::str::from_utf8(self.content()?).ok()?),
            LIST => Kind::List(Items(self.content()?)),
            MAP => Kind::Map(Fields(self.content()?)),
            _ => return None,
        })
    }

    /// A map's fields in order (`None` for anything else).
    pub fn fields(self) -> Option<Fields<'a>> {
        match self.0.first() {
            Some(&MAP) => self.content().map(Fields),
            _ => None,
        }
    }

    /// A list's items in order (`None` for anything else).
    pub fn items(self) -> Option<Items<'a>> {
        match self.0.first() {
            Some(&LIST) => self.content().map(Items),
            _ => None,
        }
    }

    /// The field `name` of a map.
    pub fn get(self, name: &str) -> Option<NodeRef<'a>> {
        self.fields()?.find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    pub fn as_str(self) -> Option<&'a str> {
        match self.0.first() {
            Some(&TEXT) => std::str::from_utf8(self.content()?).ok(),
            _ => None,
        }
    }

    pub fn is_null(self) -> bool {
        self.0.first() == Some(&NULL)
    }

    pub fn is_map(self) -> bool {
        self.0.first() == Some(&MAP)
    }

    /// `null`, `{}`, `[]`, `""`: what the server drops or fills with a zero value.
    pub fn is_empty(self) -> bool {
        match self.0.first() {
            Some(&NULL) => true,
            Some(&MAP | &LIST | &TEXT) => self.content().is_none_or(<[u8]>::is_empty),
            _ => false,
        }
    }

    /// Go's zero of a scalar: `false`, `0`, `""` (or `null`).
    pub fn is_scalar_zero(self) -> bool {
        match self.kind() {
            Kind::Null => true,
            Kind::Bool(b) => !b,
            Kind::Number(n) => n.as_f64() == Some(0.0),
            Kind::String(s) => s.is_empty(),
            Kind::List(_) | Kind::Map(_) => false,
        }
    }

    /// The same value as `Value`'s `==` would say (numbers as written: `1` is not `1.0`).
    pub fn eq_value(self, value: &Value) -> bool {
        if self.0.first() == Some(&TEXT) {
            // Bytes against bytes: no UTF-8 check of a long value.
            return value
                .as_str()
                .is_some_and(|b| self.content() == Some(b.as_bytes()));
        }
        match (self.kind(), value) {
            (Kind::Null, Value::Null) => true,
            (Kind::Bool(a), Value::Bool(b)) => a == *b,
            (Kind::Number(a), Value::Number(b)) => a == *b,
            (Kind::List(mut a), Value::Array(b)) => {
                let mut b = b.iter();
                loop {
                    match (a.next(), b.next()) {
                        (Some(x), Some(y)) if x.eq_value(y) => {}
                        (None, None) => return true,
                        _ => return false,
                    }
                }
            }
            (Kind::Map(mut a), Value::Object(b)) => {
                let mut count = 0;
                a.all(|(k, x)| {
                    count += 1;
                    b.get(k).is_some_and(|y| x.eq_value(y))
                }) && count == b.len()
            }
            _ => false,
        }
    }

    /// The node as a `serde_json::Value`, in the same order.
    pub fn to_value(self) -> Value {
        match self.kind() {
            Kind::Null => Value::Null,
            Kind::Bool(b) => Value::Bool(b),
            Kind::Number(n) => Value::Number(n),
            Kind::String(text) => Value::String(text.to_owned()),
            Kind::List(items) => Value::Array(items.map(NodeRef::to_value).collect()),
            Kind::Map(fields) => {
                let mut map = Map::new();
                for (name, value) in fields {
                    map.insert(name.to_owned(), value.to_value());
                }
                Value::Object(map)
            }
        }
    }
}

/// Equal values (numbers as written); equal bytes but for a name written out past the table's
/// bound.
impl PartialEq for NodeRef<'_> {
    fn eq(&self, other: &NodeRef<'_>) -> bool {
        self.0 == other.0 || self.eq_value(&other.to_value())
    }
}

impl fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.to_value())
    }
}

/// A list's items, in order (the bytes not read yet).
#[derive(Debug, Clone)]
pub struct Items<'a>(&'a [u8]);

impl<'a> Iterator for Items<'a> {
    type Item = NodeRef<'a>;
    fn next(&mut self) -> Option<NodeRef<'a>> {
        let (node, rest) = NodeRef::split(self.0)?;
        self.0 = rest;
        Some(node)
    }
}

/// A map's fields, in order (the bytes not read yet).
#[derive(Debug, Clone)]
pub struct Fields<'a>(&'a [u8]);

impl<'a> Iterator for Fields<'a> {
    type Item = (&'a str, NodeRef<'a>);
    fn next(&mut self) -> Option<(&'a str, NodeRef<'a>)> {
        let bytes = self.0;
        let mut at = 1;
        let name = match *bytes.first()? {
            NAME_ID => TABLE.name(read_varint(bytes, &mut at)?)?,
            NAME_TEXT => {
                let len = read_len(bytes, &mut at)?;
                let text = bytes.get(at..at.checked_add(len)?)?;
                at += len;
                std::str::from_utf8(text).ok()?
            }
            _ => return None,
        };
        let (value, rest) = NodeRef::split(bytes.get(at..)?)?;
        self.0 = rest;
        Some((name, value))
    }
}

/// `n` as 7-bit groups, low first, the high bit set on all but the last.
fn varint(mut n: u64) -> ([u8; 10], usize) {
    let mut bytes = [0; 10];
    let mut len = 0;
    while n >= 0x80 {
        bytes[len] = (n as u8) | 0x80;
        n >>= 7;
        len += 1;
    }
    bytes[len] = n as u8;
    (bytes, len + 1)
}

fn push_varint(out: &mut Vec<u8>, n: u64) {
    let (bytes, len) = varint(n);
    out.extend_from_slice(&bytes[..len]);
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

fn read_len(bytes: &[u8], at: &mut usize) -> Option<usize> {
    usize::try_from(read_varint(bytes, at)?).ok()
}

fn push_text(out: &mut Vec<u8>, tag: u8, text: &str) {
    out.push(tag);
    push_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// Writes the length of the map or list whose tag is at `at - 1` and whose content runs from
/// `at` to the end (as long as the end marker it replaces while under 128 bytes).
fn close(out: &mut Vec<u8>, at: usize) {
    let (len, len_len) = varint((out.len() - at) as u64);
    out.splice(at..at, len[..len_len].iter().copied());
}

/// Packs one value as serde reads it — from JSON text or from a `Value` (no tree is built).
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
        let at = self.out.len();
        while seq.next_element_seed(self.again())?.is_some() {}
        close(self.out, at);
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.out.push(MAP);
        let at = self.out.len();
        while map
            .next_key_seed(FieldName(&mut *self.out, &mut *self.names))?
            .is_some()
        {
            map.next_value_seed(self.again())?;
        }
        close(self.out, at);
        Ok(())
    }
}

#[cfg(test)]
#[path = "packed_tests.rs"]
mod tests;

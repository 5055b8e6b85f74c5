//! The one interner: equal values of a kind the process repeats by the thousand (a manifest
//! key's strings, the change timeline's writers and field paths, the words of conditions) held
//! once, each user keeping an `Arc` of the shared copy. Values nobody holds any more are let go
//! when the set has doubled since it was last swept, so an interner that lives as long as the
//! process holds no more than twice what is in use.
use std::collections::BTreeSet;
use std::sync::Arc;

/// One shared copy of each distinct value asked for.
#[derive(Debug)]
pub struct Interner<T: ?Sized + Ord> {
    set: BTreeSet<Arc<T>>,
    swept_at: usize,
}

impl<T: ?Sized + Ord> Interner<T> {
    /// An empty interner (usable in a `static`).
    pub const fn new() -> Interner<T> {
        Interner {
            set: BTreeSet::new(),
            swept_at: 0,
        }
    }

    /// The shared copy of `value`, made by `make` the first time.
    pub fn get(&mut self, value: &T, make: impl FnOnce(&T) -> Arc<T>) -> Arc<T> {
        if let Some(shared) = self.set.get(value) {
            return Arc::clone(shared);
        }
        if self.set.len() >= 2 * self.swept_at.max(256) {
            self.set.retain(|v| Arc::strong_count(v) > 1);
            self.swept_at = self.set.len();
        }
        let shared = make(value);
        self.set.insert(Arc::clone(&shared));
        shared
    }

    /// Values held (for tests).
    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

impl Interner<str> {
    /// The shared copy of `text`.
    pub fn text(&mut self, text: &str) -> Arc<str> {
        self.get(text, |t| Arc::from(t))
    }
}

impl<T: ?Sized + Ord> Clone for Interner<T> {
    fn clone(&self) -> Self {
        Interner {
            set: self.set.clone(),
            swept_at: self.swept_at,
        }
    }
}

impl<T: ?Sized + Ord> Default for Interner<T> {
    fn default() -> Self {
        Interner::new()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_one_copy_and_unheld_ones_go_at_a_sweep() {
        let mut words = Interner::<str>::new();
        let a = words.text("Available");
        let b = words.text("Available");
        assert!(Arc::ptr_eq(&a, &b));
        // 255 more, held by nobody but the interner, then one past 2 × 256: the sweep keeps
        // only what is held.
        for i in 0..511 {
            words.text(&format!("word-{i}"));
        }
        assert_eq!(words.len(), 512);
        words.text("one more");
        assert_eq!(words.len(), 2, "\"Available\" (held) and the new one");
        assert!(Arc::ptr_eq(&a, &words.text("Available")));
    }
}

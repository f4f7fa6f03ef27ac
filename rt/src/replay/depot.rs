//! Interning for replay's reports: each distinct list (the frames of a stack, the locks a thread
//! holds) is stored once and named by a `u32`.
//!
//! Takes lists; gives their ids ([`Depot::intern`]) and the lists back ([`Depot::get`]). Id 0 is
//! the empty list. Nothing is removed: a replay is one short run, and the ids are what every
//! remembered access keeps (four bytes in a shadow cell, see `shadow`), long after the list it
//! names stopped being the thread's current one.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

pub(crate) struct Depot<T> {
    inner: Mutex<Option<Lists<T>>>,
}

struct Lists<T> {
    ids: HashMap<Vec<T>, u32>,
    /// Id `n` is `lists[n - 1]`.
    lists: Vec<Vec<T>>,
}

impl<T: Clone + Eq + Hash> Depot<T> {
    pub const fn new() -> Depot<T> {
        Depot {
            inner: Mutex::new(None),
        }
    }

    /// The id of `list`, stored now if it is new.
    pub fn intern(&self, list: Vec<T>) -> u32 {
        if list.is_empty() {
            return 0;
        }
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let d = guard.get_or_insert_with(|| Lists {
            ids: HashMap::new(),
            lists: Vec::new(),
        });
        if let Some(&id) = d.ids.get(&list) {
            return id;
        }
        d.lists.push(list.clone());
        let id = d.lists.len() as u32;
        d.ids.insert(list, id);
        id
    }

    /// The list of `id`; empty for 0 (and for an id it never gave).
    pub fn get(&self, id: u32) -> Vec<T> {
        if id == 0 {
            return Vec::new();
        }
        let guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        guard
            .as_ref()
            .and_then(|d| d.lists.get(id as usize - 1).cloned())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_lists_share_an_id_and_the_empty_list_is_zero() {
        let d = Depot::new();
        assert_eq!(d.intern(Vec::<u32>::new()), 0);
        let a = d.intern(vec![3, 1]);
        assert_ne!(a, 0);
        assert_eq!(d.intern(vec![3, 1]), a);
        let b = d.intern(vec![1, 3]);
        assert_ne!(a, b);
        assert_eq!(d.get(a), vec![3, 1]);
        assert_eq!(d.get(b), vec![1, 3]);
        assert!(d.get(0).is_empty());
        assert!(d.get(99).is_empty());
    }
}

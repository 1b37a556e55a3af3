//! The registry's loans, and the updates that come back to it while it is lent.
//!
//! The engine and the shell use the registry through [`lend`]: a loan ends before an
//! `await`, before an event is delivered and before a note is posted. An update that comes
//! back on its own (a call's hold given back as its future is dropped, a body's timer, a
//! peer's note) goes through [`free`]; should the registry be lent at that moment (a hook or
//! a handler that reached it some other way), the update is queued with [`queue`] and
//! applied, in order, as soon as the loan ends: in every build, never dropped. What such an
//! update would have told (a breaker transition) is not told.

use crate::registry::Registry;
use std::cell::{RefCell, RefMut};
use std::ops::{Deref, DerefMut};

/// An update queued for a lent registry.
pub type Update = Box<dyn FnOnce(&mut Registry)>;

thread_local! {
    /// The updates that found a registry lent, with its address, in the order they came.
    static QUEUED: RefCell<Vec<(usize, Update)>> = const { RefCell::new(Vec::new()) };
}

/// Where a registry lives: the key of its queued updates.
fn key(registry: *const Registry) -> usize {
    registry as usize
}

/// The registry, lent: derefs to it; when dropped, the loan ends and what was queued
/// meanwhile is applied.
pub struct Lent<'a> {
    registry: Option<RefMut<'a, Registry>>,
    cell: &'a RefCell<Registry>,
}

impl Deref for Lent<'_> {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        match &self.registry {
            Some(registry) => registry,
            None => unreachable!("a loan holds the registry until it is dropped"),
        }
    }
}

impl DerefMut for Lent<'_> {
    fn deref_mut(&mut self) -> &mut Registry {
        match &mut self.registry {
            Some(registry) => registry,
            None => unreachable!("a loan holds the registry until it is dropped"),
        }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        self.registry = None;
        apply_queued(self.cell);
    }
}

/// Lends the registry (a `RefCell` borrow: lending it twice at once is a bug and panics).
pub fn lend(cell: &RefCell<Registry>) -> Lent<'_> {
    apply_queued(cell);
    Lent {
        registry: Some(cell.borrow_mut()),
        cell,
    }
}

/// The registry lent for an update coming back to it, or `None` while it is lent elsewhere:
/// then [`queue`] the update.
pub fn free(cell: &RefCell<Registry>) -> Option<Lent<'_>> {
    apply_queued(cell);
    let registry = cell.try_borrow_mut().ok()?;
    Some(Lent {
        registry: Some(registry),
        cell,
    })
}

/// Queues `update` for the registry in `cell`, lent now: it is applied when the loan ends.
#[cold]
#[inline(never)]
pub fn queue(cell: &RefCell<Registry>, update: Update) {
    QUEUED.with(|q| q.borrow_mut().push((key(cell.as_ptr()), update)));
}

/// Applies the updates queued for the registry in `cell`, in order, while it is not lent.
pub fn apply_queued(cell: &RefCell<Registry>) {
    let key = key(cell.as_ptr());
    loop {
        let Ok(mut registry) = cell.try_borrow_mut() else {
            return;
        };
        let next = QUEUED.with(|q| {
            let mut q = q.borrow_mut();
            let at = q.iter().position(|(k, _)| *k == key)?;
            Some(q.remove(at).1)
        });
        let Some(update) = next else {
            return;
        };
        update(&mut registry);
    }
}

/// A registry going away takes what was queued for it (here, not in `registry.rs`, which
/// imports nothing of its loans).
impl Drop for Registry {
    fn drop(&mut self) {
        let key = key(self);
        // A registry dropped as its thread ends may outlive the queue: nothing is left then.
        let _ = QUEUED.try_with(|q| {
            if let Ok(mut q) = q.try_borrow_mut() {
                q.retain(|(k, _)| *k != key);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(cell: &RefCell<Registry>, origin: &str) -> u64 {
        lend(cell).with(origin, |_, s| s.stats().timeouts)
    }

    fn bump(r: &mut Registry, origin: &str) {
        r.with(origin, |_, s| s.body_timed_out());
    }

    #[test]
    fn an_update_that_finds_the_registry_lent_is_applied_when_the_loan_ends() {
        let cell = RefCell::new(Registry::new(10));
        let loan = lend(&cell);
        assert!(free(&cell).is_none(), "lent");
        queue(&cell, Box::new(|r| bump(r, "https://a")));
        queue(&cell, Box::new(|r| bump(r, "https://a")));
        drop(loan);
        assert_eq!(count(&cell, "https://a"), 2);
        let mut free = free(&cell).expect("free again");
        bump(&mut free, "https://a");
        drop(free);
        assert_eq!(count(&cell, "https://a"), 3);
    }

    #[test]
    fn queued_updates_stay_with_their_registry_and_go_with_it() {
        let (a, b) = (
            RefCell::new(Registry::new(10)),
            RefCell::new(Registry::new(10)),
        );
        let loan = lend(&a);
        queue(&a, Box::new(|r| bump(r, "https://a")));
        drop(lend(&b));
        assert_eq!(count(&b, "https://a"), 0, "b's loan applies only b's");
        drop(loan);
        assert_eq!(count(&a, "https://a"), 1);
        let leftover = {
            let gone = RefCell::new(Registry::new(10));
            let loan = gone.borrow_mut();
            queue(&gone, Box::new(|r| bump(r, "https://a")));
            drop(loan);
            gone.as_ptr() as usize
        };
        let left = QUEUED.with(|q| q.borrow().iter().filter(|(k, _)| *k == leftover).count());
        assert_eq!(left, 0, "a dropped registry's queue goes with it");
    }
}

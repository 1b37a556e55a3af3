//! The bulkhead slots hedges hold ([`crate::bulkhead`] keeps them in its slots): a hedge takes
//! a free slot only, and a call that finds every slot taken takes the youngest hedge's. The
//! bulkhead reads this list; without `hedge` it is always empty (`off.rs`).

/// A hedge's own bulkhead slot, held while it is in flight; a call may take it back.
pub use crate::bulkhead::HedgePermit as Slot;

/// The slots hedges hold, youngest last.
#[derive(Debug)]
pub struct Held<T>(Vec<T>);

impl<T> Default for Held<T> {
    fn default() -> Self {
        Held(Vec::new())
    }
}

impl<T> Held<T> {
    /// Keeps a hedge's slot, the youngest now (`true`: the hedge may take it).
    pub fn add(&mut self, slot: T) -> bool {
        self.0.push(slot);
        true
    }

    /// The youngest hedge's slot, taken out, if a hedge holds one.
    pub fn youngest(&mut self) -> Option<T> {
        self.0.pop()
    }

    /// Takes out the slot `is` matches, if it is still held.
    pub fn remove(&mut self, is: impl Fn(&T) -> bool) {
        if let Some(at) = self.0.iter().position(is) {
            self.0.remove(at);
        }
    }
}

//! The registry's owner, its loans, and the updates that come back to it while it is lent.
//!
//! The engine and the shell reach a client's origins only through its [`Owner`]: an attempt
//! is admitted for a [`Lease`] ([`Owner::admit`]) and its end given back with it
//! ([`Owner::finish`]); whatever else a call needs of its origin is one loan
//! ([`Owner::with`]). A loan ends before an `await`, before an event is delivered and before
//! a note is posted. An update that comes back on its own (a call's hold given back as its
//! future is dropped, a body's timer, a peer's note) goes through [`Owner::update`]; should
//! the registry be lent at that moment (a hook or a handler that reached it some other way),
//! the update is queued and applied, in order, as soon as the loan ends: in every build,
//! never dropped. What such an update would have told (a breaker transition) is not told.

use crate::breaker::{Permit, Transition};
use crate::origin::{Ask, EndRules, Finished, OriginState, Quota, Refusal, Ticket};
use crate::policy::Policy;
use crate::registry::{EntryId, Registry};
use std::cell::{Ref, RefCell, RefMut};
use std::ops::{Deref, DerefMut};

/// What comes back to an origin's entry on its own.
pub enum Returned {
    /// Budget tokens of a retry that was not sent, given back up to `capacity`.
    Refund {
        /// The tokens.
        cost: u32,
        /// The budget's capacity.
        capacity: u32,
    },
    /// A send pacing booked and the call did not make.
    Unbook(Ticket),
    /// A call's wait between two attempts is over.
    WaitEnds,
    /// An attempt's end, with its breaker permit ([`crate::origin::OriginState::finish`]).
    Ended {
        /// The permit `admit` gave it.
        permit: Option<Permit>,
        /// How it ended (its `quota` apart, owned).
        ended: Finished<'static>,
        /// Its rate-limit headers.
        quota: Option<Quota>,
        /// When.
        now: f64,
        /// Under which rules.
        rules: EndRules,
    },
    /// A response body cut off after its call resolved: a timeout.
    BodyTimedOut,
    /// A peer's note ([`Registry::hear`]; none without `share`, whose note cannot be made).
    Heard {
        /// The note.
        note: crate::share::Note,
        /// When it came.
        now: f64,
        /// The receiving client's policy.
        policy: std::rc::Rc<crate::policy::Policy>,
    },
    /// A call was served a kept answer instead of its failure (none without `stale`, whose
    /// [`crate::stale::Told`] cannot be made).
    ServedStale(crate::stale::Told),
}

/// A client's registry, owned: the one way to its origins' state.
#[derive(Debug)]
pub struct Owner {
    cell: RefCell<Registry>,
}

/// An admitted attempt's hold on its origin: the entry it was admitted on, its breaker
/// permit and whether pacing let it go as a probe window's send. Given back with its end
/// ([`Owner::finish`]).
#[derive(Debug)]
pub struct Lease {
    /// The origin's entry.
    pub id: EntryId,
    /// The breaker's permit (none with the breaker off).
    pub permit: Option<Permit>,
    /// Whether what its answer says goes to pacing as a probe's.
    pub probe: bool,
}

impl Owner {
    /// Owns `registry`.
    pub fn new(registry: Registry) -> Self {
        Owner {
            cell: RefCell::new(registry),
        }
    }

    /// Runs `f` on `origin`'s entry (made if new) and its id, the registry lent for it alone.
    #[inline(always)]
    pub fn with<R>(&self, origin: &str, f: impl FnOnce(EntryId, &mut OriginState) -> R) -> R {
        lend(&self.cell).with(origin, f)
    }

    /// Asks `origin`'s admission list whether an attempt may go (`ask`, at `now`, under
    /// `policy`): a lease and the breaker transition taking it made, or the refusal; the
    /// entry's id either way.
    #[inline(always)]
    pub fn admit(
        &self,
        origin: &str,
        ask: Ask,
        now: f64,
        policy: &Policy,
        random: &dyn Fn() -> f64,
    ) -> Result<(Lease, Option<Transition>), (Refusal, EntryId)> {
        let (id, admitted) = self.with(origin, |id, s| (id, s.admit(ask, now, policy, random)));
        match admitted {
            Ok(a) => Ok((
                Lease {
                    id,
                    permit: a.permit,
                    probe: a.probe,
                },
                a.transition,
            )),
            Err(refusal) => Err((refusal, id)),
        }
    }

    /// Gives back `lease` with its attempt's end (`ended`, at `now`, under `rules`): the
    /// breaker's transition, or queued while the registry is lent (`Some(None)`), or `None`
    /// when the origin's entry is gone.
    #[inline(always)]
    pub fn finish(
        &self,
        origin: &str,
        lease: Lease,
        ended: Finished<'_>,
        now: f64,
        rules: EndRules,
    ) -> Applied {
        let back = Returned::Ended {
            permit: lease.permit,
            ended: Finished {
                probe: lease.probe,
                quota: None,
                ..ended
            },
            quota: ended.quota.copied(),
            now,
            rules,
        };
        self.update(origin, Some(lease.id), back)
    }

    /// `what` comes back to `origin`'s entry `id` ([`update`]).
    #[inline(always)]
    pub fn update(&self, origin: &str, id: Option<EntryId>, what: Returned) -> Applied {
        update(&self.cell, origin, id, what)
    }

    /// The registry lent ([`lend`]).
    #[inline(always)]
    pub fn lend(&self) -> Lent<'_> {
        lend(&self.cell)
    }

    /// The registry lent, or `None` while it is lent elsewhere ([`free`]).
    #[inline(always)]
    pub fn free(&self) -> Option<Lent<'_>> {
        free(&self.cell)
    }

    /// The registry to read, what was queued for it applied first; `None` while it is lent.
    #[inline(always)]
    pub fn read(&self) -> Option<Ref<'_, Registry>> {
        apply_queued(&self.cell);
        self.cell.try_borrow().ok()
    }
}

/// An update that found its registry lent: the registry's address, the origin, its entry.
type Queued = (usize, String, Option<EntryId>, Returned);

thread_local! {
    /// The updates that found a registry lent, in the order they came.
    static QUEUED: RefCell<Vec<Queued>> = const { RefCell::new(Vec::new()) };
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
fn lend(cell: &RefCell<Registry>) -> Lent<'_> {
    Lent {
        registry: Some(cell.borrow_mut()),
        cell,
    }
}

/// The registry lent, or `None` while it is lent elsewhere (what was queued for it is
/// applied first).
fn free(cell: &RefCell<Registry>) -> Option<Lent<'_>> {
    apply_queued(cell);
    let registry = cell.try_borrow_mut().ok()?;
    Some(Lent {
        registry: Some(registry),
        cell,
    })
}

/// What an update did: `Some(transition)` when it was applied (or queued: then no
/// transition), `None` when the origin's entry `id` is gone (evicted meanwhile).
pub type Applied = Option<Option<Transition>>;

/// `what` comes back to `origin`'s entry `id` (`None`: whatever entry it has, made if new):
/// applied now, or, while the registry is lent, queued and applied when the loan ends.
fn update(cell: &RefCell<Registry>, origin: &str, id: Option<EntryId>, what: Returned) -> Applied {
    match free(cell) {
        Some(mut registry) => apply(&mut registry, origin, id, what),
        None => {
            queue((key(cell.as_ptr()), origin.to_owned(), id, what));
            Some(None)
        }
    }
}

#[cold]
#[inline(never)]
fn queue(update: Queued) {
    QUEUED.with(|q| q.borrow_mut().push(update));
}

/// The state of `origin`'s entry `id` (`None`: whatever entry it has, made if new); `None`
/// when that entry is gone.
fn entry<'r>(
    registry: &'r mut Registry,
    origin: &str,
    id: Option<EntryId>,
) -> Option<&'r mut OriginState> {
    let id = id.unwrap_or_else(|| registry.with(origin, |id, _| id));
    registry.get_mut(origin, id)
}

/// Applies `what` to `origin`'s entry `id`.
fn apply(registry: &mut Registry, origin: &str, id: Option<EntryId>, what: Returned) -> Applied {
    match what {
        Returned::Refund { cost, capacity } => entry(registry, origin, id)?.refund(cost, capacity),
        Returned::Unbook(ticket) => entry(registry, origin, id)?.unbook(ticket),
        Returned::WaitEnds => entry(registry, origin, id)?.wait_ends(),
        Returned::BodyTimedOut => entry(registry, origin, id)?.body_timed_out(),
        Returned::ServedStale(_) => entry(registry, origin, id)?.served_stale(),
        Returned::Ended {
            permit,
            ended,
            quota,
            now,
            rules,
        } => {
            let rank = registry.rank();
            let ended = Finished {
                quota: quota.as_ref(),
                ..ended
            };
            let state = entry(registry, origin, id)?;
            let (transition, notes) = state.finish(permit, ended, now, &rules, rank);
            registry.tell(origin, notes);
            return Some(transition);
        }
        Returned::Heard { note, now, policy } => {
            return Some(registry.hear(origin, note, now, &policy));
        }
    }
    Some(None)
}

/// Applies the updates queued for the registry in `cell`, in order, while it is not lent.
#[inline(never)]
fn apply_queued(cell: &RefCell<Registry>) {
    let key = key(cell.as_ptr());
    loop {
        let Ok(mut registry) = cell.try_borrow_mut() else {
            return;
        };
        let next = QUEUED.with(|q| {
            let mut q = q.borrow_mut();
            let at = q.iter().position(|u| u.0 == key)?;
            Some(q.remove(at))
        });
        let Some((_, origin, id, what)) = next else {
            return;
        };
        let _ = apply(&mut registry, &origin, id, what);
    }
}

/// A registry going away takes what was queued for it (here, not in `registry.rs`, which
/// imports nothing of its loans). Queued updates are keyed by where the registry lives: a
/// registry lent cannot move, and a loan's end applies what was queued.
impl Drop for Registry {
    fn drop(&mut self) {
        let key = key(self);
        // A registry dropped as its thread ends may outlive the queue: nothing is left then.
        let _ = QUEUED.try_with(|q| {
            if let Ok(mut q) = q.try_borrow_mut() {
                q.retain(|u| u.0 != key);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "https://a.test";

    fn timeouts(cell: &RefCell<Registry>) -> u64 {
        lend(cell).with(A, |_, s| s.stats().timeouts)
    }

    #[test]
    fn an_update_that_finds_the_registry_lent_is_applied_when_the_loan_ends() {
        let cell = RefCell::new(Registry::new(10));
        let loan = lend(&cell);
        assert!(free(&cell).is_none(), "lent");
        assert_eq!(update(&cell, A, None, Returned::BodyTimedOut), Some(None));
        assert_eq!(update(&cell, A, None, Returned::BodyTimedOut), Some(None));
        drop(loan);
        assert_eq!(timeouts(&cell), 2);
        assert_eq!(update(&cell, A, None, Returned::BodyTimedOut), Some(None));
        assert_eq!(timeouts(&cell), 3);
    }

    #[test]
    fn an_update_for_an_entry_that_is_gone_does_nothing() {
        let cell = RefCell::new(Registry::new(1));
        let id = lend(&cell).with(A, |id, _| id);
        lend(&cell).with("https://b.test", |_, _| ());
        assert_eq!(update(&cell, A, Some(id), Returned::WaitEnds), None);
    }

    #[test]
    fn queued_updates_stay_with_their_registry_and_go_with_it() {
        let (a, b) = (
            RefCell::new(Registry::new(10)),
            RefCell::new(Registry::new(10)),
        );
        let loan = lend(&a);
        update(&a, A, None, Returned::BodyTimedOut);
        drop(lend(&b));
        assert_eq!(timeouts(&b), 0, "b's loan applies only b's");
        drop(loan);
        assert_eq!(timeouts(&a), 1);
        // Where it lives (a client's is in its Rc): dropped there.
        let gone = Box::new(RefCell::new(Registry::new(10)));
        let key = key(gone.as_ptr());
        let loan = gone.borrow_mut();
        update(&gone, A, None, Returned::BodyTimedOut);
        drop(loan);
        drop(gone);
        let left = QUEUED.with(|q| q.borrow().iter().filter(|u| u.0 == key).count());
        assert_eq!(left, 0, "a dropped registry's queue goes with it");
    }
}

//! The bulkhead of one origin: at most `maxConcurrent` calls in flight, at most `maxQueue`
//! more waiting in a FIFO queue, the rest rejected at once.
//!
//! A [`BulkheadPermit`] holds a slot and gives it, on drop, straight to the first waiter.
//! Waiting is a plain future woken through its `Waker`; dropping it leaves the queue.
//!
//! A hedge (an optional extra attempt of a call that holds a slot already) takes a free
//! slot only, never a place in the queue, and none while calls wait ([`Bulkhead::hedge`]).
//! It never costs a call a slot: a call that finds every slot taken while hedges hold some
//! takes the youngest hedge's slot at once, and that hedge learns it
//! ([`HedgePermit::poll_taken`]) and is aborted. So calls queue, or are refused, only when
//! calls hold every slot.

use crate::policy::BulkheadPolicy;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// A handle to one origin's bulkhead; clones share it.
#[derive(Clone, Debug, Default)]
pub struct Bulkhead(Rc<RefCell<Slots>>);

#[derive(Debug, Default)]
struct Slots {
    /// Slots held, by permits and by waiters granted a slot but not yet polled.
    active: u32,
    /// Waiters, first in front. A `Vec`, not a `VecDeque`: far less code in the wasm, and
    /// taking the first waiter shifts at most `maxQueue` pointers.
    queue: Vec<Rc<Ticket>>,
    /// The slots hedges hold, youngest last (counted in `active`). None while calls wait:
    /// a call that would queue takes a hedge's slot instead. Always none without `hedge`
    /// ([`crate::hedge::Held`]).
    hedges: crate::hedge::Held<Rc<Ticket>>,
}

/// A waiter's place in the queue, or a hedge's slot.
#[derive(Debug, Default)]
struct Ticket {
    /// A waiter: a slot was granted to it. A hedge: a call took its slot.
    granted: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Ticket {
    /// Whether it was granted; if not, `cx`'s task is woken when it is.
    fn poll(&self, cx: &Context<'_>) -> bool {
        let granted = self.granted.get();
        if !granted {
            self.waker.replace(Some(cx.waker().clone()));
        }
        granted
    }

    /// Grants it; returns the task to wake (after any borrow of the slots ends, in case
    /// waking polls at once).
    fn grant(&self) -> Option<Waker> {
        self.granted.set(true);
        self.waker.take()
    }
}

/// The answer to [`Bulkhead::acquire`].
#[derive(Debug)]
pub enum Admission {
    /// A slot was free.
    Admitted(BulkheadPermit),
    /// All slots are taken; await this for one.
    Queued(Wait),
    /// All slots and the queue are taken.
    Full,
}

/// A slot, released when dropped.
#[derive(Debug)]
#[must_use = "dropping the permit releases the slot at once"]
pub struct BulkheadPermit(Bulkhead);

/// A hedge's slot, released when dropped unless a call took it meanwhile.
#[derive(Debug)]
#[must_use = "dropping the permit releases the slot at once"]
pub struct HedgePermit {
    bulkhead: Bulkhead,
    ticket: Rc<Ticket>,
}

/// A place in the queue; resolves to a permit. Dropping it leaves the queue.
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Wait {
    bulkhead: Bulkhead,
    /// `None` once the permit has been handed out.
    ticket: Option<Rc<Ticket>>,
}

impl Bulkhead {
    /// An empty bulkhead.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes a free slot, or the youngest hedge's, or a place in the queue, or none.
    /// Waiters come first: a new call does not overtake the queue.
    pub fn acquire(&self, policy: &BulkheadPolicy) -> Admission {
        let taken = {
            let mut slots = self.0.borrow_mut();
            if slots.active < policy.max_concurrent && slots.queue.is_empty() {
                slots.active += 1;
                return Admission::Admitted(BulkheadPermit(self.clone()));
            }
            // Hedges hold no slot while calls wait (they never take one then, and a call
            // that would wait takes theirs), so no waiter is overtaken here.
            match slots.hedges.youngest() {
                Some(hedge) => hedge,
                None if slots.queue.len() >= policy.max_queue as usize => return Admission::Full,
                None => {
                    let ticket = Rc::new(Ticket::default());
                    slots.queue.push(ticket.clone());
                    return Admission::Queued(Wait {
                        bulkhead: self.clone(),
                        ticket: Some(ticket),
                    });
                }
            }
        };
        // The hedge's slot changes hands (`active` stays).
        if let Some(waker) = taken.grant() {
            waker.wake();
        }
        Admission::Admitted(BulkheadPermit(self.clone()))
    }

    /// A free slot for a hedge now, or none: never a place in the queue, never while calls
    /// wait, and a call that finds no free slot may take it back (none without `hedge`).
    pub fn hedge(&self, policy: &BulkheadPolicy) -> Option<HedgePermit> {
        let mut slots = self.0.borrow_mut();
        if slots.active < policy.max_concurrent && slots.queue.is_empty() {
            let ticket = Rc::new(Ticket::default());
            if slots.hedges.add(ticket.clone()) {
                slots.active += 1;
                return Some(HedgePermit {
                    bulkhead: self.clone(),
                    ticket,
                });
            }
        }
        None
    }

    /// Slots held.
    pub fn active(&self) -> u32 {
        self.0.borrow().active
    }

    /// Calls waiting.
    pub fn queued(&self) -> usize {
        self.0.borrow().queue.len()
    }

    /// Gives a held slot to the first waiter, or frees it.
    fn release(&self) {
        let next = {
            let mut slots = self.0.borrow_mut();
            match (!slots.queue.is_empty()).then(|| slots.queue.remove(0)) {
                Some(ticket) => ticket.grant(),
                None => {
                    slots.active = slots.active.saturating_sub(1);
                    None
                }
            }
        };
        // Woken after the borrow ends, in case waking polls at once.
        if let Some(waker) = next {
            waker.wake();
        }
    }
}

impl Drop for BulkheadPermit {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl HedgePermit {
    /// Ready once a call took this slot: the hedge is to be aborted (its slot is the
    /// call's already).
    pub fn poll_taken(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.ticket.poll(cx) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for HedgePermit {
    fn drop(&mut self) {
        if self.ticket.granted.get() {
            // Taken: the slot is a call's now.
            return;
        }
        (self.bulkhead.0.borrow_mut().hedges).remove(|t| Rc::ptr_eq(t, &self.ticket));
        self.bulkhead.release();
    }
}

impl Future for Wait {
    type Output = BulkheadPermit;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<BulkheadPermit> {
        let this = self.get_mut();
        match &this.ticket {
            Some(ticket) if ticket.poll(cx) => {
                this.ticket = None;
                Poll::Ready(BulkheadPermit(this.bulkhead.clone()))
            }
            _ => Poll::Pending,
        }
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket.take() else {
            return;
        };
        if ticket.granted.get() {
            // Granted but never collected: pass the slot on.
            self.bulkhead.release();
        } else {
            let queue = &mut self.bulkhead.0.borrow_mut().queue;
            if let Some(at) = queue.iter().position(|t| Rc::ptr_eq(t, &ticket)) {
                queue.remove(at);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The bulkhead's tests; their helpers serve the hedges' slots' tests too (src/hedge/tests.rs).
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    pub(crate) struct Count(pub(crate) AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    pub(crate) fn policy(max_concurrent: u32, max_queue: u32) -> BulkheadPolicy {
        BulkheadPolicy {
            max_concurrent,
            max_queue,
        }
    }

    pub(crate) fn admitted(a: Admission) -> BulkheadPermit {
        match a {
            Admission::Admitted(p) => p,
            other => panic!("expected a slot, got {other:?}"),
        }
    }

    pub(crate) fn queued(a: Admission) -> Wait {
        match a {
            Admission::Queued(w) => w,
            other => panic!("expected a place in the queue, got {other:?}"),
        }
    }

    pub(crate) fn poll(w: &mut Wait, waker: &Waker) -> Option<BulkheadPermit> {
        match Pin::new(w).poll(&mut Context::from_waker(waker)) {
            Poll::Ready(p) => Some(p),
            Poll::Pending => None,
        }
    }

    #[test]
    fn admits_up_to_max_concurrent_then_rejects_without_a_queue() {
        let b = Bulkhead::new();
        let p = policy(2, 0);
        let first = admitted(b.acquire(&p));
        let _second = admitted(b.acquire(&p));
        assert!(matches!(b.acquire(&p), Admission::Full));
        drop(first);
        assert_eq!(b.active(), 1);
        let _third = admitted(b.acquire(&p));
    }

    #[test]
    fn queues_up_to_max_queue_then_rejects() {
        let b = Bulkhead::new();
        let p = policy(1, 2);
        let _held = admitted(b.acquire(&p));
        let _w1 = queued(b.acquire(&p));
        let _w2 = queued(b.acquire(&p));
        assert!(matches!(b.acquire(&p), Admission::Full));
        assert_eq!(b.queued(), 2);
    }

    #[test]
    fn a_released_slot_goes_to_the_first_waiter_and_wakes_it() {
        let b = Bulkhead::new();
        let p = policy(1, 2);
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let held = admitted(b.acquire(&p));
        let mut first = queued(b.acquire(&p));
        let mut second = queued(b.acquire(&p));
        assert!(poll(&mut first, &waker).is_none());
        assert!(poll(&mut second, &waker).is_none());
        drop(held);
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "exactly one waiter woken"
        );
        assert_eq!(b.active(), 1, "the slot passed on, not freed");
        assert!(
            poll(&mut second, &waker).is_none(),
            "FIFO: the second still waits"
        );
        let got = poll(&mut first, &waker).expect("first gets the slot");
        drop(got);
        assert!(poll(&mut second, &waker).is_some());
    }

    #[test]
    fn a_new_call_does_not_overtake_the_queue() {
        let b = Bulkhead::new();
        let _held = admitted(b.acquire(&policy(1, 2)));
        let _waiting = queued(b.acquire(&policy(1, 2)));
        // A call whose policy allows 2 at once sees a free slot, but someone waits for it.
        let _behind = queued(b.acquire(&policy(2, 2)));
        assert_eq!((b.active(), b.queued()), (1, 2));
    }

    #[test]
    fn a_waiter_dropped_while_queued_leaves_the_queue() {
        let b = Bulkhead::new();
        let p = policy(1, 2);
        let held = admitted(b.acquire(&p));
        let first = queued(b.acquire(&p));
        let mut second = queued(b.acquire(&p));
        drop(first);
        assert_eq!(b.queued(), 1);
        drop(held);
        let waker = Waker::noop();
        assert!(
            poll(&mut second, waker).is_some(),
            "the slot skips the dropped waiter"
        );
    }

    #[test]
    fn a_waiter_dropped_after_its_grant_passes_the_slot_on() {
        let b = Bulkhead::new();
        let p = policy(1, 2);
        let held = admitted(b.acquire(&p));
        let first = queued(b.acquire(&p));
        let mut second = queued(b.acquire(&p));
        drop(held);
        drop(first);
        let got = poll(&mut second, Waker::noop()).expect("the slot passed to the second");
        assert_eq!(b.active(), 1);
        drop(got);
        assert_eq!(b.active(), 0);
    }

    #[test]
    fn every_slot_comes_back() {
        let b = Bulkhead::new();
        let p = policy(2, 3);
        let a = admitted(b.acquire(&p));
        let c = admitted(b.acquire(&p));
        let mut w = queued(b.acquire(&p));
        let x = queued(b.acquire(&p));
        drop(a);
        let got = poll(&mut w, Waker::noop()).expect("granted");
        drop((c, got, x, w));
        assert_eq!((b.active(), b.queued()), (0, 0));
    }
}

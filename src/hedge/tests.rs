//! The bulkhead slots hedges hold ([`crate::bulkhead::Bulkhead::hedge`]), seen from the
//! bulkhead: a hedge takes a free slot only, and gives it up to a call that finds none.

use crate::bulkhead::tests::{Count, admitted, policy, poll, queued};
use crate::bulkhead::{Admission, Bulkhead, HedgePermit};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Waker};

fn taken(hedge: &HedgePermit, waker: &Waker) -> bool {
    hedge.poll_taken(&mut Context::from_waker(waker)).is_ready()
}

#[test]
fn a_hedge_takes_a_free_slot_and_never_queues_or_overtakes() {
    let b = Bulkhead::new();
    let p = policy(2, 5);
    let _call = admitted(b.acquire(&p));
    let hedge = b.hedge(&p).expect("a free slot");
    assert!(
        b.hedge(&p).is_none(),
        "full: no slot, and no place in the queue"
    );
    assert_eq!((b.active(), b.queued()), (2, 0));
    drop(hedge);
    assert_eq!(b.active(), 1, "its slot given back");
    let _second = admitted(b.acquire(&p));
    let _waiting = queued(b.acquire(&p));
    assert!(
        b.hedge(&policy(3, 5)).is_none(),
        "no hedge while a call waits, though a slot is free under its policy"
    );
}

#[test]
fn a_call_that_finds_every_slot_taken_takes_the_youngest_hedges() {
    let b = Bulkhead::new();
    let p = policy(3, 0);
    let count = Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    let _call = admitted(b.acquire(&p));
    let older = b.hedge(&p).expect("a free slot");
    let younger = b.hedge(&p).expect("a free slot");
    assert!(!taken(&older, &waker) && !taken(&younger, &waker));
    let second = admitted(b.acquire(&p));
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "the hedge was told");
    assert!(taken(&younger, &waker) && !taken(&older, &waker));
    assert_eq!(b.active(), 3, "the slot changed hands");
    drop(younger);
    assert_eq!(b.active(), 3, "a taken hedge gives nothing back");
    let third = admitted(b.acquire(&p));
    assert!(taken(&older, &waker));
    assert!(
        matches!(b.acquire(&p), Admission::Full),
        "calls hold every slot"
    );
    drop((older, second, third));
    assert_eq!(b.active(), 1);
}

#[test]
fn a_call_takes_a_hedges_slot_rather_than_wait_for_one() {
    let b = Bulkhead::new();
    let p = policy(1, 5);
    let hedge = b.hedge(&p).expect("a free slot");
    let call = admitted(b.acquire(&p));
    assert!(taken(&hedge, Waker::noop()) && b.queued() == 0);
    drop(hedge);
    let mut waiting = queued(b.acquire(&p));
    drop(call);
    let got = poll(&mut waiting, Waker::noop()).expect("the call's slot passed on");
    drop(got);
    assert_eq!((b.active(), b.queued()), (0, 0));
}

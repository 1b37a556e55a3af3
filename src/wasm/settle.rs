//! Awaiting an attempt's promise without two closures per await. `JsFuture` makes a resolve
//! and a reject closure for every promise (each a JS function, a finalizer registration and
//! a heap cell); an attempt is awaited on every call. Here the attempt's settlement comes
//! back through one long-lived callback, given to JS once, with the slot it belongs to:
//! js/send.js calls it with (slot, generation, fulfilled, value), and for an attempt's answer
//! also with what `statusOf` says of it (plus one), so that it is not asked for again. The
//! other way, a call's promise: made by JS and settled by it when the call's task ends
//! ([`promise_with`]).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::prelude::*;

use super::bindings::{call_promise, end_call, set_settler};

/// One awaited settlement.
enum Slot {
    /// Not in use.
    Free,
    /// Awaited; the task to wake once it settles.
    Waiting(Option<Waker>),
    /// Settled, not yet taken.
    Done(Settlement),
}

/// The slots, each with a generation so a late report for a reused slot is ignored.
#[derive(Default)]
struct Slots {
    slots: Vec<(u32, Slot)>,
    free: Vec<u32>,
}

/// How a promise settled, and what JS read of it then.
pub struct Settlement {
    /// What it fulfilled with, or rejected with.
    pub result: Result<JsValue, JsValue>,
    /// For an attempt's answer, what `statusOf` (js/send.js) says of it plus one; else 0.
    pub status: u32,
}

/// The settler: (slot, generation, fulfilled, value, status, _), see [`settle`]; JS passes all
/// six (wasm-bindgen's debug glue checks each number). Its sixth parameter, an `f64` JS passes
/// as 0, is there for size alone: with this crate's other closures,
/// a settler of these five parameters made wasm-bindgen keep about 1.3–1.8 KB more of closure
/// shims in the wasm (measured: lean 88 841 B raw with it, 90 647 B without; a settler of four
/// `u32, u32, u32, JsValue`, 90 130 B).
type Settler = dyn FnMut(u32, u32, bool, JsValue, u32, f64);

thread_local! {
    static SLOTS: RefCell<Slots> = RefCell::new(Slots::default());
    // Made on first use, never at module load; lives as long as the module.
    static SETTLER: Closure<Settler> = {
        let settler = Closure::new(settle);
        set_settler(settler.as_ref().unchecked_ref());
        settler
    };
}

/// Called from JS when the promise of `slot` (generation `generation`) settles; `status`: what
/// `statusOf` said of the answer plus one, 0 when it was not asked.
fn settle(slot: u32, generation: u32, fulfilled: bool, value: JsValue, status: u32, _: f64) {
    let waker = SLOTS.with(|slots| {
        let mut slots = slots.borrow_mut();
        let (current, state) = slots.slots.get_mut(slot as usize)?;
        if *current != generation || !matches!(state, Slot::Waiting(_)) {
            return None;
        }
        let Slot::Waiting(waker) = std::mem::replace(
            state,
            Slot::Done(Settlement {
                result: if fulfilled { Ok(value) } else { Err(value) },
                status,
            }),
        ) else {
            return None;
        };
        waker
    });
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// A settlement to await: its slot and generation go to JS with the send.
#[must_use = "dropping it frees the slot"]
pub struct Settled {
    slot: u32,
    generation: u32,
}

/// The settlement callback itself, for a JS module apart from js/send.js's that reports to it
/// (the CommonJS copy of a module imports a value, not a live binding, so it cannot import it).
#[cfg_attr(
    not(feature = "failover"),
    allow(
        dead_code,
        reason = "failover's (src/failover/shell.rs), which the lean build lacks"
    )
)]
pub(crate) fn settler() -> JsValue {
    SETTLER.with(|settler| settler.as_ref().clone())
}

impl Settled {
    /// Takes a slot (registering the callback with JS on first use).
    pub fn new() -> Self {
        SETTLER.with(|_| ());
        SLOTS.with(|slots| {
            let mut slots = slots.borrow_mut();
            let slot = match slots.free.pop() {
                Some(slot) => slot,
                None => {
                    slots.slots.push((0, Slot::Free));
                    (slots.slots.len() - 1) as u32
                }
            };
            let entry = &mut slots.slots[slot as usize];
            entry.1 = Slot::Waiting(None);
            Settled {
                slot,
                generation: entry.0,
            }
        })
    }

    /// The slot and generation JS reports with.
    pub fn id(&self) -> (u32, u32) {
        (self.slot, self.generation)
    }
}

impl Future for Settled {
    type Output = Settlement;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        SLOTS.with(|slots| {
            let mut slots = slots.borrow_mut();
            let Some((_, state)) = slots.slots.get_mut(self.slot as usize) else {
                return Poll::Ready(Settlement {
                    result: Err(JsValue::UNDEFINED),
                    status: 0,
                });
            };
            match std::mem::replace(state, Slot::Waiting(None)) {
                Slot::Done(settlement) => {
                    *state = Slot::Waiting(None);
                    Poll::Ready(settlement)
                }
                _ => {
                    *state = Slot::Waiting(Some(cx.waker().clone()));
                    Poll::Pending
                }
            }
        })
    }
}

impl Drop for Settled {
    fn drop(&mut self) {
        SLOTS.with(|slots| {
            // Never borrowed across a wake or a JS call, so this cannot fail in practice.
            if let Ok(mut slots) = slots.try_borrow_mut()
                && let Some(entry) = slots.slots.get_mut(self.slot as usize)
            {
                entry.0 = entry.0.wrapping_add(1);
                entry.1 = Slot::Free;
                slots.free.push(self.slot);
            }
        });
    }
}

thread_local! {
    /// The next call promise's id (js/send.js `CALLS`): even; js/request.js `readFirst` makes
    /// the odd ones.
    static NEXT_CALL: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The promise of the task `make` makes, given the promise's id: made by JS and settled by it
/// with what the task ends with, in one crossing each way (a `future_to_promise` takes three:
/// the promise, its executor, the resolve). A task that ends with `None` has had JS settle its
/// promise already (a call's answer, guarded and handed over in one crossing:
/// [`end_guarded`](super::bindings::end_guarded)).
pub fn promise_with<F>(make: impl FnOnce(u32) -> F) -> js_sys::Promise
where
    F: Future<Output: Into<Option<Result<JsValue, JsValue>>>> + 'static,
{
    let id = next_call();
    run_as(id, call_promise(id), make)
}

/// A new call promise's id.
pub fn next_call() -> u32 {
    NEXT_CALL.with(|next| {
        let id = next.get();
        next.set(id.wrapping_add(2));
        id
    })
}

/// As [`promise_with`], with `promise` the call promise `id` JS has made already (js/request.js
/// `readArguments` makes a call's with its arguments).
pub fn run_as<F>(id: u32, promise: js_sys::Promise, make: impl FnOnce(u32) -> F) -> js_sys::Promise
where
    F: Future<Output: Into<Option<Result<JsValue, JsValue>>>> + 'static,
{
    let future = make(id);
    wasm_bindgen_futures::spawn_local(async move {
        match future.await.into() {
            Some(Ok(value)) => end_call(id, true, &value),
            Some(Err(error)) => end_call(id, false, &error),
            None => {}
        }
    });
    promise
}

//! The caller's `AbortSignal`: one watcher for the whole call (js/body.js keeps one
//! listener per signal for all its watchers), removed when the call settles, that
//! aborts the attempt in flight and wakes any wait in progress; after the call, the
//! returned response's body stays linked to it (js/body.js). The waits use a one-shot
//! [`Latch`]. A signal may be a polyfill's: every read of
//! it goes through JS that cannot throw into the wasm.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

use super::bindings::{abort_reason, is_aborted, unwatch_signal, watch_signal};

/// A one-shot event: once fired it stays fired, and every future waiting on it
/// is woken.
#[derive(Default)]
pub struct Latch {
    fired: Cell<bool>,
    wakers: RefCell<Vec<Waker>>,
}

impl Latch {
    /// Fires the latch and wakes its waiters.
    pub fn fire(&self) {
        self.fired.set(true);
        for w in self.wakers.take() {
            w.wake();
        }
    }

    /// Whether it has fired.
    pub fn is_fired(&self) -> bool {
        self.fired.get()
    }

    /// Ready once fired; until then the task is woken when it fires.
    pub fn poll_fired(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.fired.get() {
            return Poll::Ready(());
        }
        let mut wakers = self.wakers.borrow_mut();
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Shared between the listener, the transport and the waits of one call.
pub struct AbortState {
    signal: Option<JsValue>,
    /// Fired by the listener when the caller aborts.
    aborted: Latch,
    /// The controllers of the attempts in flight (several when hedged), aborted with the
    /// caller's reason; each under the token `track` gave it, so that one is let go without
    /// asking JS which object is which.
    current: RefCell<Vec<(u32, AbortController)>>,
    /// The next controller's token.
    tokens: std::cell::Cell<u32>,
}

impl AbortState {
    /// True once the caller's signal has aborted.
    pub fn aborted(&self) -> bool {
        self.aborted.is_fired() || self.signal.as_ref().is_some_and(is_aborted)
    }

    /// The caller's abort reason (what `fetch` rejects with).
    pub fn reason(&self) -> JsValue {
        self.signal
            .as_ref()
            .map_or(JsValue::UNDEFINED, abort_reason)
    }

    /// The caller's signal, or undefined.
    pub fn signal(&self) -> JsValue {
        self.signal.clone().unwrap_or(JsValue::UNDEFINED)
    }

    /// A caller abort reaches `controller` from now on (at once if it has come already: while
    /// the controller's attempt was being sent), until [`AbortState::untrack`] is given the
    /// token this returns.
    pub fn track(&self, controller: &AbortController) -> u32 {
        if self.aborted.is_fired() {
            controller.abort_with_reason(&self.reason());
        }
        let token = self.tokens.get();
        self.tokens.set(token.wrapping_add(1));
        self.current.borrow_mut().push((token, controller.clone()));
        token
    }

    /// A caller abort no longer reaches the controller `track` gave `token` (its attempt has
    /// ended).
    pub fn untrack(&self, token: u32) {
        self.current.borrow_mut().retain(|(t, _)| *t != token);
    }

    /// Aborts the call: its waits end, and every attempt in flight is aborted (with the
    /// caller's reason). The caller's signal does it; so does a coalesced flight that every
    /// caller has left.
    pub fn fire(&self) {
        self.aborted.fire();
        let reason = self.reason();
        for (_, c) in self.current.take() {
            c.abort_with_reason(&reason);
        }
    }
}

/// Owns the listener on the caller's signal; dropping it removes the listener.
#[must_use = "dropping the guard removes the abort listener"]
pub struct AbortGuard {
    state: Rc<AbortState>,
    listener: Option<Closure<dyn FnMut()>>,
}

impl AbortGuard {
    /// Listens on `signal` (if any) for the duration of one call.
    pub fn new(signal: Option<JsValue>) -> Self {
        let state = Rc::new(AbortState {
            signal,
            aborted: Latch::default(),
            current: RefCell::new(Vec::new()),
            tokens: Default::default(),
        });
        let listener = state.signal.as_ref().map(|s| {
            let weak = Rc::downgrade(&state);
            let closure = Closure::<dyn FnMut()>::new(move || {
                if let Some(state) = weak.upgrade() {
                    state.fire();
                }
            });
            watch_signal(s, closure.as_ref().unchecked_ref());
            closure
        });
        AbortGuard { state, listener }
    }

    /// The state the rest of the call shares.
    pub fn state(&self) -> &Rc<AbortState> {
        &self.state
    }
}

impl Drop for AbortGuard {
    fn drop(&mut self) {
        if let (Some(signal), Some(closure)) = (&self.state.signal, &self.listener) {
            unwatch_signal(signal, closure.as_ref().unchecked_ref());
        }
    }
}

/// Resolves when the caller aborts; pending forever when there is no signal.
pub struct AbortWait(pub Rc<AbortState>);

impl Future for AbortWait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.aborted() {
            return Poll::Ready(());
        }
        self.0.aborted.poll_fired(cx)
    }
}

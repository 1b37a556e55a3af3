//! The caller's `AbortSignal`: one listener for the whole call, removed when
//! the call settles (a long-lived signal keeps nothing of ours), that aborts
//! the attempt in flight and wakes any wait in progress.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{AbortController, AbortSignal};

use super::bindings::abort_reason;

/// Shared between the listener, the transport and the waits of one call.
pub struct AbortState {
    signal: Option<AbortSignal>,
    fired: Cell<bool>,
    wakers: RefCell<Vec<Waker>>,
    /// The controller of the attempt in flight, aborted with the caller's reason.
    current: RefCell<Option<AbortController>>,
}

impl AbortState {
    /// True once the caller's signal has aborted.
    pub fn aborted(&self) -> bool {
        self.fired.get() || self.signal.as_ref().is_some_and(|s| s.aborted())
    }

    /// The caller's abort reason (what `fetch` rejects with).
    pub fn reason(&self) -> JsValue {
        self.signal
            .as_ref()
            .map_or(JsValue::UNDEFINED, abort_reason)
    }

    /// The signal an attempt's `fetch` gets: its own controller's, joined with
    /// the caller's through `AbortSignal.any` where the platform has it, so that
    /// aborting the caller's signal also stops reading the final response's
    /// body after the call has settled (as with `fetch`). `AbortSignal.any`
    /// holds the caller's signal weakly: no listener of ours stays on it.
    pub fn attempt_signal(&self, controller: &AbortController) -> AbortSignal {
        let own = controller.signal();
        match &self.signal {
            Some(caller) => abort_signal_any(&js_sys::Array::of2(caller, &own)).unwrap_or(own),
            None => own,
        }
    }

    /// Makes `controller` the one a caller abort reaches (None when idle).
    pub fn set_current(&self, controller: Option<AbortController>) {
        *self.current.borrow_mut() = controller;
    }

    fn fire(&self) {
        self.fired.set(true);
        if let Some(c) = self.current.borrow_mut().take() {
            c.abort_with_reason(&self.reason());
        }
        for w in self.wakers.borrow_mut().drain(..) {
            w.wake();
        }
    }
}

#[wasm_bindgen]
unsafe extern "C" {
    /// `AbortSignal.any(signals)`; throws where the platform lacks it (Node < 20.3).
    #[wasm_bindgen(js_namespace = AbortSignal, js_name = any, catch)]
    fn abort_signal_any(signals: &js_sys::Array) -> Result<AbortSignal, JsValue>;
}

/// Owns the listener on the caller's signal; dropping it removes the listener.
#[must_use = "dropping the guard removes the abort listener"]
pub struct AbortGuard {
    state: Rc<AbortState>,
    listener: Option<Closure<dyn FnMut()>>,
}

impl AbortGuard {
    /// Listens on `signal` (if any) for the duration of one call.
    pub fn new(signal: Option<AbortSignal>) -> Self {
        let state = Rc::new(AbortState {
            signal,
            fired: Cell::new(false),
            wakers: RefCell::new(Vec::new()),
            current: RefCell::new(None),
        });
        let listener = state.signal.as_ref().map(|s| {
            let weak = Rc::downgrade(&state);
            let closure = Closure::<dyn FnMut()>::new(move || {
                if let Some(state) = weak.upgrade() {
                    state.fire();
                }
            });
            // An AbortSignal is an EventTarget; adding a listener cannot fail.
            let _ = s.add_event_listener_with_callback("abort", closure.as_ref().unchecked_ref());
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
            let _ = signal
                .remove_event_listener_with_callback("abort", closure.as_ref().unchecked_ref());
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
        let mut wakers = self.0.wakers.borrow_mut();
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

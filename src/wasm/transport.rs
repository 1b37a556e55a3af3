//! One attempt over the platform `fetch`: a fresh `AbortController` per
//! attempt, a timer that aborts it when the limit runs out (so the socket is
//! really released), and the caller's abort routed to it.

use std::cell::Cell;
use std::rc::Rc;

use gloo_timers::callback::Timeout;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Request, RequestInit, Response};

use super::abort::AbortState;
use super::bindings::{global_fetch, make_timeout_error};
use super::call::keep_referrer;
use super::env::timer_ms;
use crate::engine::{AttemptLimit, AttemptOutcome, Transport};

/// Sends the call's request, cloned per attempt.
pub struct FetchTransport {
    /// The request as the caller described it, with the idempotency key set.
    pub request: Request,
    /// False when the body is a stream: then it is sent once, as is.
    pub replayable: bool,
    /// The caller's signal.
    pub abort: Rc<AbortState>,
    /// The policy's limits, for the timeout errors' messages.
    pub timeout_ms: f64,
    /// The whole call's limit.
    pub total_timeout_ms: f64,
    /// The previous attempt's response, whose body is cancelled once the
    /// core moves on to another attempt (so its connection is freed).
    previous: Option<Response>,
}

impl FetchTransport {
    /// A transport for one call.
    pub fn new(
        request: Request,
        replayable: bool,
        abort: Rc<AbortState>,
        timeout_ms: f64,
        total_timeout_ms: f64,
    ) -> Self {
        FetchTransport {
            request,
            replayable,
            abort,
            timeout_ms,
            total_timeout_ms,
            previous: None,
        }
    }

    /// Cancels the body of the last response, when the call ends without it.
    pub fn discard_previous(&mut self) {
        if let Some(previous) = self.previous.take() {
            discard(previous);
        }
    }

    fn timeout_error(&self, limit: &AttemptLimit) -> JsValue {
        if limit.is_deadline {
            make_timeout_error(true, self.total_timeout_ms)
        } else {
            make_timeout_error(false, self.timeout_ms)
        }
    }
}

/// Cancels a response body nobody will read; a failure to cancel is harmless.
fn discard(response: Response) {
    if let Some(body) = response.body().filter(|b| !b.locked()) {
        let done = JsFuture::from(body.cancel());
        wasm_bindgen_futures::spawn_local(async move {
            let _ = done.await;
        });
    }
}

impl Transport for FetchTransport {
    type Output = Result<JsValue, JsValue>;

    async fn send(&mut self, _attempt: u32, limit: AttemptLimit) -> (AttemptOutcome, Self::Output) {
        self.discard_previous();
        if self.abort.aborted() {
            return (AttemptOutcome::Aborted, Err(self.abort.reason()));
        }
        // A failure here is local, not the origin's: reported as `Aborted`, it is
        // neither retried nor counted against the breaker, and the call rejects with it.
        // `Request::clone` (the JS method) tees the body so it can be sent again;
        // a stream body is sent once, as is, and never retried. A request
        // without a body is not consumed by `fetch`: it is sent as it is.
        let request = if self.replayable && self.request.body().is_some() {
            match self.request.clone() {
                Ok(r) => r,
                Err(e) => return (AttemptOutcome::Aborted, Err(e)),
            }
        } else {
            Clone::clone(&self.request)
        };
        let controller = match AbortController::new() {
            Ok(c) => c,
            Err(e) => return (AttemptOutcome::Aborted, Err(e)),
        };
        let timed_out = Rc::new(Cell::new(false));
        let reason = self.timeout_error(&limit);
        let timer = {
            let (controller, timed_out, reason) =
                (controller.clone(), timed_out.clone(), reason.clone());
            Timeout::new(timer_ms(limit.timeout_ms), move || {
                timed_out.set(true);
                controller.abort_with_reason(&reason);
            })
        };
        self.abort.set_current(Some(controller.clone()));
        let init = RequestInit::new();
        init.set_signal(Some(&self.abort.attempt_signal(&controller)));
        let init_object: &js_sys::Object = init.as_ref();
        let result = match keep_referrer(init_object, &request)
            .and_then(|()| global_fetch(&request, &init))
        {
            Ok(promise) => JsFuture::from(promise).await,
            Err(e) => Err(e),
        };
        drop(timer);
        self.abort.set_current(None);

        match result {
            Ok(value) => {
                let response: Response = value.clone().unchecked_into();
                let retry_after = response.headers().get("retry-after").ok().flatten();
                let status = response.status();
                self.previous = Some(response);
                (
                    AttemptOutcome::Response {
                        status,
                        retry_after,
                    },
                    Ok(value),
                )
            }
            Err(_) if self.abort.aborted() => (AttemptOutcome::Aborted, Err(self.abort.reason())),
            Err(_) if timed_out.get() => (AttemptOutcome::Timeout, Err(reason)),
            Err(e) => (AttemptOutcome::NetworkError, Err(e)),
        }
    }
}

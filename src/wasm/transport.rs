//! One attempt over the platform `fetch`: a fresh `AbortController` per
//! attempt, a timer that aborts it when the limit runs out (so the socket is
//! really released), and the caller's abort routed to it.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

use super::abort::{AbortState, AbortWait};
use super::bindings::{
    ask_is_failure, ask_should_retry, discard_body, hook_context, is_local_error, is_timeout,
    limits_of, request_error, send, status_of,
};
use super::codes::{HookSaid, SendFlag, StatusFlag};
use super::env::timer_ms;
use super::options::Asked;
use super::settle::Settled;
use crate::engine::{
    AttemptLimit, AttemptOutcome, BreakerAnswer, Either, Ended, HookAnswer, Transport, race,
};
use crate::events::OutcomeKind;
use crate::pacing::Quota;
use crate::policy::Policy;

/// A response's `Retry-After` (read when `error`) and what its rate-limit headers say of
/// the quota (read when `rates`): one crossing to JS, none of the parsing there.
fn limits(response: &JsValue, error: bool, rates: bool) -> (Option<String>, Option<Quota>) {
    let read = limits_of(response, error, rates);
    let Some(values) = read.dyn_ref::<js_sys::Array>() else {
        return (None, None);
    };
    let retry_after = values.get(0).as_string();
    (retry_after, crate::pacing::shell::quota(values))
}

/// `sendAttempt`'s `how`: [`SendFlag`]s.
fn send_flags(replay: bool, hedge: bool, rates: bool) -> u32 {
    let flag = |on: bool, flag: SendFlag| if on { flag as u32 } else { 0 };
    flag(replay, SendFlag::Replay) | flag(hedge, SendFlag::Hedge) | flag(rates, SendFlag::Rates)
}

/// Where each attempt's `Request` comes from.
pub enum Source {
    /// The fast path (see `fastTarget` in js/request.js): an absolute URL string and an
    /// init whose body is a string or none, handed to `fetch` as they are;
    /// `fetch` builds the request.
    Direct {
        /// The URL.
        input: JsValue,
        /// The caller's init without its signal, plus our key header if any;
        /// each attempt sets its own signal on it.
        init: js_sys::Object,
    },
    /// The general path: the request built once from the caller's arguments (or the
    /// caller's own `Request`), cloned per attempt so that every retry sends exactly what
    /// the first attempt sent (its body teed); without a body it is sent as it is (`fetch`
    /// does not consume it). The cloning is `sendAttempt`'s (js/send.js).
    Template(JsValue),
}

/// Sends the call's request, afresh for every attempt.
pub struct FetchTransport {
    /// Where each attempt's request comes from.
    source: Source,
    /// The `fetch` to send with (undefined: the platform's, looked up at each attempt).
    fetch: JsValue,
    /// The chain of clients the call runs in (js/chain.js), given to each attempt.
    chain: JsValue,
    /// False when the body is a stream: then it is sent once, as is.
    replayable: bool,
    /// The caller's signal.
    abort: Rc<AbortState>,
    /// The policy's limits, for the timeout errors' messages.
    timeout_ms: f64,
    /// The whole call's limit.
    total_timeout_ms: f64,
    /// The caller's own decisions, and what they are told of the call.
    asking: Asking,
    /// Whether the rate-limit headers are read (policy `rateLimit`).
    paced: bool,
    /// The responses of ended attempts and their controllers, in the order they ended;
    /// their bodies are cancelled once the core moves on to a retry, and all but the call's
    /// answer when it ends (so their connections are freed).
    previous: RefCell<Vec<(JsValue, AbortController)>>,
    /// Attempts on the wire now (more than one when hedged).
    on_wire: std::cell::Cell<u32>,
    /// How the last attempt to end ended (a `shouldRetry` that threw: the caller's doing).
    last: std::cell::Cell<Option<OutcomeKind>>,
}

/// An attempt on the wire: aborted if dropped before it ends (a hedge that lost, a call
/// dropped), so its request is cancelled and its socket released.
struct OnWire<'a> {
    abort: &'a AbortState,
    count: &'a std::cell::Cell<u32>,
    controller: AbortController,
    /// What `abort.track` gave it.
    token: u32,
    ended: bool,
}

impl Drop for OnWire<'_> {
    fn drop(&mut self) {
        self.count.set(self.count.get() - 1);
        self.abort.untrack(self.token);
        if !self.ended {
            self.controller.abort();
        }
    }
}

impl FetchTransport {
    /// A transport for one call.
    pub fn new(
        source: Source,
        fetch: JsValue,
        chain: JsValue,
        replayable: bool,
        abort: Rc<AbortState>,
        policy: &Policy,
        asking: Asking,
    ) -> Self {
        FetchTransport {
            source,
            fetch,
            chain,
            replayable,
            abort,
            timeout_ms: f64::from(policy.timeout_ms),
            total_timeout_ms: f64::from(policy.total_timeout_ms),
            asking,
            paced: policy.paced(),
            previous: RefCell::new(Vec::new()),
            on_wire: std::cell::Cell::new(0),
            last: std::cell::Cell::new(None),
        }
    }

    /// On the fast path nothing validated the caller's init before `fetch`
    /// did: when `fetch` rejects, building the same request tells whether the
    /// arguments were bad (the error to reject with) or the network failed.
    fn invalid_direct_request(&self) -> Option<JsValue> {
        match &self.source {
            Source::Direct { input, init } => {
                Some(request_error(input, init)).filter(|e| !e.is_undefined())
            }
            Source::Template(_) => None,
        }
    }

    /// Cancels the bodies of the ended attempts' responses, when the call ends without them.
    pub fn discard_previous(&self) {
        for (previous, _) in self.previous.take() {
            discard_body(&previous);
        }
    }

    /// The controller of the attempt whose response the call resolves with (in a hedged
    /// race not always the last to end); the other responses' bodies are cancelled.
    pub fn controller_of(&self, answer: &JsValue) -> Option<AbortController> {
        let mut previous = self.previous.take();
        // Every response the call can resolve with is one of these (send_one keeps each): one
        // alone is the answer, with no need to ask JS whether two objects are the same.
        if previous.len() == 1 {
            return previous.pop().map(|(_, c)| c);
        }
        let mut controller = None;
        for (response, c) in previous {
            if response == *answer {
                controller = Some(c);
            } else {
                discard_body(&response);
            }
        }
        controller
    }

    /// How the last attempt to end ended, if one was sent.
    pub fn last_outcome(&self) -> Option<OutcomeKind> {
        self.last.get()
    }

    /// What the call sends: its request, or its URL and init (the outbox copies it), and
    /// whether its body is a stream.
    pub fn request(&self) -> (&JsValue, &JsValue, bool) {
        const NONE: &JsValue = &JsValue::UNDEFINED;
        match &self.source {
            Source::Direct { input, init } => (input, init.as_ref(), !self.replayable),
            Source::Template(request) => (request, NONE, !self.replayable),
        }
    }

    /// The same call's transport sending `request` instead (a resumed body's range request,
    /// src/resume/shell.rs), its attempts reached by the caller's abort through `abort`.
    pub fn resend(&self, request: JsValue, abort: Rc<AbortState>) -> FetchTransport {
        FetchTransport {
            source: Source::Template(request),
            fetch: self.fetch.clone(),
            chain: self.chain.clone(),
            replayable: true,
            abort,
            timeout_ms: self.timeout_ms,
            total_timeout_ms: self.total_timeout_ms,
            asking: Asking {
                hooks: self.asking.hooks.clone(),
                method: self.asking.method.clone(),
                key: self.asking.key.clone(),
            },
            paced: self.paced,
            previous: RefCell::new(Vec::new()),
            on_wire: std::cell::Cell::new(0),
            last: std::cell::Cell::new(None),
        }
    }

    /// The limit that applies and whether it is the whole call's.
    fn timeout_of(&self, limit: &AttemptLimit) -> (bool, f64) {
        if limit.is_deadline {
            (true, self.total_timeout_ms)
        } else {
            (false, self.timeout_ms)
        }
    }
}

/// The caller's `retry.shouldRetry` and `breaker.isFailure` (undefined when none), and
/// what their context tells of the call.
pub struct Asking {
    /// The hooks that apply.
    pub hooks: Asked,
    /// The call's method.
    pub method: String,
    /// The call's idempotency key, if any.
    pub key: Option<String>,
}

impl FetchTransport {
    /// The context the hooks see of an ended attempt.
    fn hook_context(&self, ended: &Ended<'_>, output: &Result<JsValue, JsValue>) -> JsValue {
        let (value, is_response) = match output {
            Ok(response) => (response, true),
            Err(error) => (error, false),
        };
        hook_context(
            ended.attempt,
            &self.asking.method,
            match &self.source {
                Source::Direct { input, .. } | Source::Template(input) => input,
            },
            value,
            is_response,
            ended.elapsed_ms,
            ended.remaining_ms,
            self.asking.key.clone(),
        )
    }
}

impl Transport for FetchTransport {
    type Output = Result<JsValue, JsValue>;

    fn is_failure(&self, ended: &Ended<'_>, output: &Self::Output) -> BreakerAnswer {
        let Some(hook) = &self.asking.hooks.is_failure else {
            return BreakerAnswer::Default;
        };
        match ask_is_failure(hook, &self.hook_context(ended, output)) {
            n if n == HookSaid::Yes as i32 => BreakerAnswer::Failure,
            n if n == HookSaid::No as i32 => BreakerAnswer::Success,
            _ => BreakerAnswer::Default,
        }
    }

    fn asks_should_retry(&self) -> bool {
        self.asking.hooks.should_retry.is_some()
    }

    fn should_retry<'t>(
        &'t self,
        ended: &Ended<'_>,
        output: &Self::Output,
    ) -> impl Future<Output = HookAnswer<Self::Output>> + use<'t> {
        let answer = self.asking.hooks.should_retry.as_ref().map(|hook| {
            let answer = Settled::new();
            let (slot, generation) = answer.id();
            ask_should_retry(hook, &self.hook_context(ended, output), slot, generation);
            answer
        });
        let last = &self.last;
        async move {
            match answer {
                None => HookAnswer::Default,
                Some(answer) => match answer.await.result {
                    Ok(v) if v.as_f64() == Some(f64::from(HookSaid::Yes as i8)) => {
                        HookAnswer::Retry
                    }
                    Ok(v) if v.as_f64() == Some(f64::from(HookSaid::No as i8)) => HookAnswer::Stop,
                    Ok(_) => HookAnswer::Default,
                    Err(thrown) => {
                        last.set(Some(OutcomeKind::InvalidRequest));
                        HookAnswer::Fail(Err(thrown))
                    }
                },
            }
        }
    }

    async fn send(
        &self,
        attempt: u32,
        limit: AttemptLimit,
        to: Option<crate::failover::Alternate<'_>>,
    ) -> (AttemptOutcome, Self::Output) {
        let _ = attempt;
        let sent = match to {
            None => self.send_one(limit, None).await,
            Some(to) => self.send_alternate(limit, to).await,
        };
        self.last.set(Some(sent.0.kind()));
        sent
    }
}

impl FetchTransport {
    /// An attempt to an alternate origin (`failover`): the call's request (or URL) made for that
    /// origin, then sent as the call's own would be. Never in a build without failover (no
    /// [`crate::failover::Alternate`] exists there).
    async fn send_alternate(
        &self,
        limit: AttemptLimit,
        to: crate::failover::Alternate<'_>,
    ) -> (AttemptOutcome, Result<JsValue, JsValue>) {
        let (Source::Direct { input, .. } | Source::Template(input)) = &self.source;
        match crate::failover::shell::at(input, to, self.replayable).await {
            Ok(made) => self.send_one(limit, Some(made)).await,
            // The caller's request, not the origin, is at fault.
            Err(e) => (AttemptOutcome::InvalidRequest, Err(e)),
        }
    }

    /// One attempt, of the call's request or, `instead`, of what was made for an alternate
    /// origin.
    async fn send_one(
        &self,
        limit: AttemptLimit,
        instead: Option<crate::failover::shell::Made>,
    ) -> (AttemptOutcome, Result<JsValue, JsValue>) {
        // Another attempt of the call still on the wire: this one is a hedge.
        let hedge = self.on_wire.get() > 0;
        // A retry: the ended attempts' bodies are not the call's answer. (A hedge goes
        // beside attempts of a race still going, and one that ended may still answer for
        // the call: the caller may be asked about it meanwhile.)
        if !hedge {
            self.discard_previous();
        }
        if self.abort.aborted() {
            return (AttemptOutcome::Aborted, Err(self.abort.reason()));
        }
        // The attempt's limit is a JS timer armed with the send (js/send.js): when it
        // runs out the controller is aborted and the attempt rejects with the TimeoutError,
        // made only then (an Error costs a stack capture, and almost every attempt ends
        // before its limit).
        let (deadline, limit_ms) = self.timeout_of(&limit);
        let ms = timer_ms(limit.timeout_ms);
        let settled = Settled::new();
        let (slot, generation) = settled.id();
        // The fast path sends its URL and init; a request of its own goes with no init (and
        // is cloned per attempt when it has a body to send again; a stream body is sent
        // once, as is: the core does not retry a call that is not replayable).
        let (input, init) = match &self.source {
            Source::Direct { input, init } => (input, init.as_ref()),
            Source::Template(request) => (request, &JsValue::UNDEFINED),
        };
        // An attempt to an alternate origin sends what was made for it.
        let input = instead
            .as_ref()
            .map_or(input, crate::failover::shell::Made::value);
        // The attempt's controller is made by its send, in the same crossing, and is ours
        // from then on: the caller's abort, a lost hedge or a dropped call aborts it.
        let sent = send(
            &self.fetch,
            input,
            init,
            send_flags(self.replayable, hedge, self.paced),
            &self.chain,
            ms,
            deadline,
            limit_ms,
            slot,
            generation,
        );
        let controller = match sent {
            Ok(controller) => controller,
            // The fetch threw instead of returning a promise (a mock), or no controller could
            // be made: the caller's setup, neither retried nor counted against the breaker.
            Err(e) => return (AttemptOutcome::InvalidRequest, Err(e)),
        };
        let token = self.abort.track(&controller);
        self.on_wire.set(self.on_wire.get() + 1);
        let mut wire = OnWire {
            abort: &self.abort,
            count: &self.on_wire,
            controller: controller.clone(),
            token,
            ended: false,
        };
        // The attempt ends when fetch settles, or when its limit runs out or the caller
        // aborts, whichever comes first: a fetch that ignores its signal (a mock, a
        // polyfill) cannot hold the call past its limit.
        let (result, told_status) = match race(settled, AbortWait(self.abort.clone())).await {
            Either::Left(settled) => (settled.result, settled.status.checked_sub(1)),
            Either::Right(()) => (Err(JsValue::UNDEFINED), None),
        };
        wire.ended = true;
        drop(wire);

        match result {
            Ok(value) => {
                // Not a Response (a mock or polyfill fetch): the caller's setup is at
                // fault, not the origin; rejected with a TypeError, not retried.
                // What statusOf said when the answer came (asked again only for what was no
                // Response, for its TypeError).
                let answer = match told_status.map_or_else(|| status_of(&value, self.paced), Ok) {
                    Ok(answer) => answer,
                    Err(e) => return (AttemptOutcome::InvalidResponse, Err(e)),
                };
                let limits_said = answer >= StatusFlag::Limits as u32;
                let status = (answer % StatusFlag::Limits as u32) as u16;
                // Only statuses retryOn may list can be retried: only then is Retry-After read.
                let error = u32::from(status) >= crate::policy::RETRY_ON_MIN;
                // Most answers say nothing of limits: then statusOf said so, and they are not read.
                let (retry_after, quota) = if limits_said {
                    limits(&value, error, self.paced)
                } else {
                    (None, None)
                };
                self.previous.borrow_mut().push((value.clone(), controller));
                (
                    AttemptOutcome::Response {
                        status,
                        retry_after,
                        quota,
                    },
                    Ok(value),
                )
            }
            Err(_) if self.abort.aborted() => (AttemptOutcome::Aborted, Err(self.abort.reason())),
            Err(e) if is_timeout(&e) => (AttemptOutcome::Timeout, Err(e)),
            // A call that sent through itself: passed on, not retried.
            Err(e) if is_local_error(&e) => (AttemptOutcome::InvalidRequest, Err(e)),
            Err(e) => match self.invalid_direct_request() {
                // The caller's arguments, not the origin, are at fault: not
                // retried, not held against the breaker, rejected with fetch's error.
                Some(error) => (AttemptOutcome::InvalidRequest, Err(error)),
                None => (AttemptOutcome::NetworkError, Err(e)),
            },
        }
    }
}

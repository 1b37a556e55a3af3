//! `events` on the JS platform: `client.events(input, init?, policy?)` and `resilientEvents`.
//! The loop is here: connect (a call through the client, so breaker, budget, pacing, bulkhead,
//! hooks and `onEvent` apply as to any call), read the body into the parser, and on a drop, an
//! idle gap or a retried status wait the reconnect delay with a timer and connect again with
//! `Last-Event-ID`; an answer that ends the stream ends it. The caller's signal and `close()`
//! abort one controller that stops the connection, its reads and every wait at once.
//! `events.js` is the object JS gets and the few reads of requests and responses.

use std::rc::Rc;

use gloo_timers::future::TimeoutFuture;
use js_sys::{Array, Promise, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

use super::{Answer, Ended, Item, Parser, answer, last_event_id_header, may_reconnect};
use super::{EventsPolicy, next_reconnect, reconnect_delay_ms};
use crate::engine::{Either, race};
use crate::wasm::abort::{AbortGuard, AbortState, AbortWait};
use crate::wasm::bindings::{abort_reason, is_aborted};
use crate::wasm::env::{random_unit, timer_ms};
use crate::wasm::resolve::resolve_policy;
use crate::wasm::settle::{Settled, Settlement};
use crate::wasm::{FetchInit, FetchInput, PolicyArg, ResilientClient};
use crate::wasm::{call, client};

#[wasm_bindgen(module = "/js/joined/site.js")]
unsafe extern "C" {
    #[wasm_bindgen(js_name = eventsOpen)]
    fn events_open(input: &JsValue, stop: &AbortController) -> JsValue;
    #[wasm_bindgen(js_name = eventsEmit)]
    fn events_emit(
        stream: &JsValue,
        kind: u8,
        data: &str,
        event: Option<&str>,
        id: Option<&str>,
        retry: f64,
    );
    #[wasm_bindgen(js_name = eventsEnd)]
    fn events_end(stream: &JsValue, error: &JsValue);
    #[wasm_bindgen(js_name = eventsConnect)]
    fn events_connect(
        input: &JsValue,
        init: &JsValue,
        policy: &JsValue,
        last_event_id: Option<String>,
        signal: &JsValue,
    ) -> Array;
    #[wasm_bindgen(js_name = eventsHead)]
    fn events_head(response: &JsValue) -> Array;
    #[wasm_bindgen(js_name = eventsRead)]
    fn events_read(reader: &JsValue, slot: u32, generation: u32);
    #[wasm_bindgen(js_name = eventsCancel)]
    fn events_cancel(reader: &JsValue);
    #[wasm_bindgen(js_name = eventsError)]
    fn events_error(code: &str, message: &str, status: u16) -> JsValue;
    #[wasm_bindgen(js_name = eventsFailure)]
    fn events_failure(error: &JsValue) -> f64;
}

#[wasm_bindgen(module = "/js/joined/arguments.js")]
unsafe extern "C" {
    /// Reports how `promise` settles to a [`Settled`]'s slot (js/send.js).
    #[wasm_bindgen(js_name = settleLater)]
    fn settle_later(promise: &Promise, slot: u32, generation: u32);
}

/// `eventsEmit`'s kinds (src/sse/events.js).
const EMIT_OPEN: u8 = 0;
const EMIT_EVENT: u8 = 1;
const EMIT_ERROR: u8 = 2;

/// Sends one connection: `(input, init, policy)` to a call through the client, never kept.
type Connect = Box<dyn Fn(JsValue, JsValue, JsValue) -> Promise>;

/// What one stream's loop holds.
struct Stream {
    connect: Connect,
    input: JsValue,
    init: JsValue,
    /// The caller's policy, laid over the client's for each connection as a call's is (with
    /// one attempt, as the loop is the retry, and no `bodyTimeoutMs`: the idle rule is the
    /// stream's; `eventsConnect`).
    policy: JsValue,
    /// The stream object JS has.
    target: JsValue,
    /// What `close()` and the caller's signal abort.
    stop: AbortController,
    events: Option<EventsPolicy>,
    /// The client's registry pays each reconnect from its origin's retry budget (`origin`:
    /// the registry's name for the stream's URL).
    client: Rc<crate::wasm::state::ClientInner>,
    origin: String,
    budget: Option<crate::policy::BudgetPolicy>,
    retry_on: Vec<u16>,
    base_delay_ms: u32,
    max_delay_ms: u32,
}

/// How one connection ended.
enum Outcome {
    /// It dropped, went idle, or failed to connect: reconnect (after `at_least` ms, if the
    /// client said when it would let a call go: an open breaker, a rate limit).
    Dropped { dispatched: bool, at_least: f64 },
    /// An answer ended the stream.
    Ended(Ended),
    /// `close()` or the caller's signal.
    Stopped,
}

/// A policy argument that is one (neither undefined nor null).
fn given(policy: &JsValue) -> Option<&JsValue> {
    Some(policy).filter(|p| !p.is_undefined() && !p.is_null())
}

/// Starts a stream through `client`; throws at once for a bad policy or request, as `fetch`
/// rejects at once.
fn open(
    client: &ResilientClient,
    connect: Connect,
    input: JsValue,
    init: JsValue,
    policy: JsValue,
) -> Result<JsValue, JsValue> {
    let resolved = resolve_policy(&client.inner, given(&policy))?;
    let said = crate::wasm::arguments::hand(&input, &init, client.inner.id, None)?;
    let args = crate::wasm::arguments::take(said)?;
    let signal = args.signal;
    if let Some(signal) = signal.as_ref().filter(|s| is_aborted(s)) {
        return Err(abort_reason(signal));
    }
    let stop = AbortController::new()?;
    let target = events_open(&input, &stop);
    let retry = resolved.policy.retry.as_ref();
    let defaults = crate::policy::defaults::BASE_DELAY_MS;
    let stream = Stream {
        connect,
        input,
        init,
        policy,
        target: target.clone(),
        stop,
        events: resolved.policy.events.clone(),
        client: client.inner.clone(),
        origin: args.origin,
        budget: resolved.policy.retry_budget.clone(),
        retry_on: retry.map_or(Vec::new(), |r| r.retry_on.clone()),
        base_delay_ms: retry.map_or(defaults, |r| r.base_delay_ms),
        max_delay_ms: retry.map_or(crate::policy::defaults::MAX_DELAY_MS, |r| r.max_delay_ms),
    };
    // The caller's signal aborts the stream's controller (its reason kept).
    let caller = AbortGuard::new(signal);
    caller.state().track(&stream.stop);
    wasm_bindgen_futures::spawn_local(async move {
        let _caller = caller;
        stream.run().await;
    });
    Ok(target)
}

impl Stream {
    async fn run(self) {
        let stopped = AbortGuard::new(Some(self.stop.signal().into()));
        let state = stopped.state().clone();
        let mut parser = Parser::new();
        let mut reconnect: Option<u32> = None;
        let mut told_id = String::new();
        let end = loop {
            let outcome = self.connection(&mut parser, &state, &mut told_id).await;
            parser.end_stream();
            let (dispatched, at_least) = match outcome {
                Outcome::Dropped {
                    dispatched,
                    at_least,
                } => (dispatched, at_least),
                Outcome::Ended(ended) => break Some(ended),
                Outcome::Stopped => break None,
            };
            let k = reconnect.map_or(0, |k| next_reconnect(k, dispatched));
            reconnect = Some(k);
            if let Err(ended) = may_reconnect(k, self.events.as_ref()) {
                break Some(ended);
            }
            // A reconnect is paid as a retry after a network error is.
            if let Some(b) = &self.budget {
                let cost = crate::budget::RetryBudget::cost(b, crate::vocab::RetryReason::Network);
                let paid =
                    (self.client.registry).with(&self.origin, |_, s| s.withdraw(cost, b.capacity));
                if !paid {
                    break Some(Ended::Budget);
                }
            }
            events_emit(&self.target, EMIT_ERROR, "", None, None, -1.0);
            let delay = reconnect_delay_ms(
                k,
                parser.reconnection_ms(),
                self.base_delay_ms,
                self.max_delay_ms,
                random_unit(),
            );
            let wait = TimeoutFuture::new(timer_ms(f64::from(delay).max(at_least)));
            if let Either::Right(()) = race(wait, AbortWait(state.clone())).await {
                break None;
            }
        };
        let error = match end {
            // After close() the stream is closed already and ignores this; the caller's
            // signal's reason ends it.
            None if state.aborted() => state.reason(),
            None => JsValue::UNDEFINED,
            Some(ended) => {
                let status = match ended {
                    Ended::Status(s) => s,
                    Ended::NoContent => 204,
                    _ => 0,
                };
                events_error(ended.code(), ended.message(), status)
            }
        };
        events_end(&self.target, &error);
        self.stop.abort();
    }

    /// One connection: connect, then read until it ends.
    /// `told_id`: the last event ID JS has (an event's crosses only when it changed).
    async fn connection(
        &self,
        parser: &mut Parser,
        state: &Rc<AbortState>,
        told_id: &mut String,
    ) -> Outcome {
        if state.aborted() {
            return Outcome::Stopped;
        }
        let id = last_event_id_header(parser.last_event_id());
        let signal: JsValue = self.stop.signal().into();
        let parts = events_connect(&self.input, &self.init, &self.policy, id, &signal);
        let sent = (self.connect)(parts.get(0), parts.get(1), parts.get(2));
        let answered = Settled::new();
        let (slot, generation) = answered.id();
        settle_later(&sent, slot, generation);
        let response = match race(answered, AbortWait(state.clone())).await {
            Either::Right(()) => return Outcome::Stopped,
            Either::Left(settled) => match settled.result {
                Ok(response) => response,
                Err(error) => {
                    // The ms to wait at least (an open breaker's, a rate limit's); < 0: stopped.
                    let at_least = events_failure(&error);
                    return if state.aborted() || at_least < 0.0 {
                        Outcome::Stopped
                    } else {
                        Outcome::Dropped {
                            dispatched: false,
                            at_least,
                        }
                    };
                }
            },
        };
        // Status, Content-Type and the body's reader (null: no body).
        let head = events_head(&response);
        let status = head.get(0).as_f64().unwrap_or(0.0) as u16;
        let content_type = head.get(1).as_string();
        let reader = head.get(2);
        let opened = answer(status, content_type.as_deref(), &self.retry_on);
        if opened != Answer::Open || reader.is_null() {
            if !reader.is_null() {
                events_cancel(&reader);
            }
            return match opened {
                Answer::End(ended) => Outcome::Ended(ended),
                _ => Outcome::Dropped {
                    dispatched: false,
                    at_least: 0.0,
                },
            };
        }
        events_emit(&self.target, EMIT_OPEN, "", None, None, -1.0);
        let idle_ms = self.events.as_ref().and_then(|e| e.idle_ms);
        let mut dispatched = false;
        loop {
            // The next chunk (undefined at the end), through the settler's slots (no closures).
            let read = Settled::new();
            let (slot, generation) = read.id();
            events_read(&reader, slot, generation);
            let stop = AbortWait(state.clone());
            let step = match idle_ms {
                Some(ms) => race(race(read, stop), TimeoutFuture::new(ms)).await,
                None => Either::Left(race(read, stop).await),
            };
            let chunk = match step {
                // Idle: no bytes (not even a comment) for longer than `events.idleMs`.
                Either::Right(()) => {
                    events_cancel(&reader);
                    return Outcome::Dropped {
                        dispatched,
                        at_least: 0.0,
                    };
                }
                Either::Left(Either::Right(())) => {
                    events_cancel(&reader);
                    return Outcome::Stopped;
                }
                Either::Left(Either::Left(Settlement {
                    result: Ok(chunk), ..
                })) if chunk.is_undefined() => {
                    return Outcome::Dropped {
                        dispatched,
                        at_least: 0.0,
                    };
                }
                Either::Left(Either::Left(Settlement {
                    result: Ok(chunk), ..
                })) => chunk,
                Either::Left(Either::Left(Settlement { result: Err(_), .. }))
                    if state.aborted() =>
                {
                    return Outcome::Stopped;
                }
                Either::Left(Either::Left(Settlement { result: Err(_), .. })) => {
                    return Outcome::Dropped {
                        dispatched,
                        at_least: 0.0,
                    };
                }
            };
            let bytes = chunk.unchecked_into::<Uint8Array>().to_vec();
            parser.feed(&bytes, &mut |item| {
                if let Item::Event(e) = item {
                    dispatched = true;
                    let retry = e.retry.map_or(-1.0, |ms| ms as f64);
                    let event = Some(e.event.as_str()).filter(|t| *t != "message");
                    let id = (e.id != *told_id).then_some(e.id.as_str());
                    events_emit(&self.target, EMIT_EVENT, &e.data, event, id, retry);
                    if id.is_some() {
                        told_id.clone_from(&e.id);
                    }
                }
            });
            if state.aborted() {
                events_cancel(&reader);
                return Outcome::Stopped;
            }
        }
    }
}

#[wasm_bindgen]
impl ResilientClient {
    /// Server-sent events of `input` through this client, reconnecting as EventSource does
    /// (policy `events`; `policy` overrides the client's, field by field).
    #[wasm_bindgen(unchecked_return_type = "EventStream")]
    pub fn events(
        &self,
        input: FetchInput,
        init: Option<FetchInit>,
        policy: Option<PolicyArg>,
    ) -> Result<JsValue, JsValue> {
        let inner = self.inner.clone();
        let connect: Connect = Box::new(move |input, init, policy| {
            call::start(inner.clone(), input, init, given(&policy).cloned(), false)
        });
        let init = init.map_or(JsValue::UNDEFINED, Into::into);
        let policy = policy.map_or(JsValue::UNDEFINED, Into::into);
        open(self, connect, input.into(), init, policy)
    }
}

/// Server-sent events of `input` through the module-wide client `resilientFetch` uses,
/// reconnecting as EventSource does (policy `events`).
#[wasm_bindgen(js_name = resilientEvents, unchecked_return_type = "EventStream")]
pub fn resilient_events(
    input: FetchInput,
    init: Option<FetchInit>,
    policy: Option<PolicyArg>,
) -> Result<JsValue, JsValue> {
    let inner = client::default_client()?;
    ResilientClient { inner }.events(input, init, policy)
}

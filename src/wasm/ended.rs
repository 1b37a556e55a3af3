//! How a call ended, mapped back to JS: the response with its body bounded, or the error
//! to reject with; and the end as the outbox sees it.

use wasm_bindgen::prelude::*;

use super::abort::AbortState;
use super::bindings::{
    end_guarded, guard_response, make_bulkhead_full_error, make_circuit_open_error,
    make_rate_limit_error, make_timeout_error,
};
use super::codes::TimeoutKind;
use super::resolve::Resolved;
use super::state::ClientInner;
use super::transport::FetchTransport;
use crate::engine::CallResult;
use crate::events::OutcomeKind;
use crate::outbox::End;
use crate::throttle::shell::throttled_error;

/// The `CircuitOpenError` of a call `origin`'s breaker refused: open, or half-open with its
/// probes out (told apart with no clock read). `origin_js`: the same origin as a JS string.
pub fn circuit_open_error(
    client: &ClientInner,
    origin: &str,
    origin_js: &JsValue,
    retry_after_ms: f64,
) -> JsValue {
    let half_open = client.registry.read().is_some_and(|r| {
        r.peek(origin)
            .is_some_and(|s| !s.breaker.is_closed() && s.breaker.open_until().is_none())
    });
    make_circuit_open_error(origin_js, retry_after_ms, half_open)
}

/// How a call ended, as the outbox sees it, and the attempts it made.
pub fn end_of(
    result: &CallResult<Result<JsValue, JsValue>>,
    transport: &FetchTransport,
) -> (End, u32) {
    match result {
        CallResult::Done {
            output: Ok(response),
            attempts,
        } => {
            let status = js_sys::Reflect::get(response, &"status".into())
                .ok()
                .and_then(|s| s.as_f64())
                .unwrap_or(0.0);
            (End::Answered(status as u16), *attempts)
        }
        CallResult::Done { attempts, .. } => (
            End::Failed(
                transport
                    .last_outcome()
                    .unwrap_or(OutcomeKind::InvalidRequest),
            ),
            *attempts,
        ),
        CallResult::ShortCircuited { .. } => (End::ShortCircuited, 0),
        CallResult::BulkheadFull => (End::BulkheadFull, 0),
        CallResult::Aborted => (End::Aborted, 0),
        CallResult::DeadlineExceeded => (End::Deadline, 0),
        CallResult::RateLimited { .. } => (End::RateLimited, 0),
        CallResult::Throttled(_) => (End::Throttled, 0),
    }
}

/// What mapping a call's result back to JS needs.
pub struct Reply<'a> {
    pub client: &'a ClientInner,
    pub resolved: &'a Resolved,
    pub origin: &'a str,
    /// The same origin as a JS string.
    pub origin_js: &'a JsValue,
    /// When the call started (`performance.now()`): its deadline bounds the body too.
    pub started: f64,
    /// The caller's signal, or undefined; null for a coalesced call (js/body.js `guardResponse`).
    pub signal: JsValue,
}

impl Reply<'_> {
    /// The call's result as `fetch` gives it: the response (its body bounded and still
    /// reached by the caller's signal), or the error to reject with. With `end`, the call's
    /// promise: a response to guard fulfils it (js/send.js `endGuarded`), and `None` says so.
    pub fn map(
        &self,
        result: CallResult<Result<JsValue, JsValue>>,
        transport: &FetchTransport,
        abort: &AbortState,
        end: Option<u32>,
    ) -> Option<Result<JsValue, JsValue>> {
        let policy = &self.resolved.policy;
        let result = match result {
            CallResult::Done {
                output: Ok(response),
                ..
            } => {
                return match transport.controller_of(&response) {
                    Some(controller) => self.guard_body(&response, &controller, end).map(Ok),
                    None => Some(Ok(response)),
                };
            }
            other => other,
        };
        // The call ends without a response: the bodies of the ones it got are cancelled.
        transport.discard_previous();
        Some(match result {
            CallResult::Done { output, .. } => output,
            CallResult::ShortCircuited { retry_after_ms } => Err(circuit_open_error(
                self.client,
                self.origin,
                self.origin_js,
                retry_after_ms,
            )),
            CallResult::BulkheadFull => Err(make_bulkhead_full_error(self.origin)),
            // Read only now: an AbortError is made when the signal has no reason, and making
            // one for every call that ends otherwise cost more than the call.
            CallResult::Aborted => Err(abort.reason()),
            CallResult::DeadlineExceeded => Err(make_timeout_error(
                TimeoutKind::Call as u8,
                f64::from(policy.total_timeout_ms),
            )),
            CallResult::RateLimited {
                retry_after_ms,
                reason,
            } => Err(make_rate_limit_error(
                self.origin,
                retry_after_ms,
                reason.as_str(),
            )),
            CallResult::Throttled(refused) => Err(throttled_error(refused, self.origin)),
        })
    }

    /// The response handed back: its body bounded by the call's deadline and
    /// `bodyTimeoutMs`, and stopped by the caller's signal (js/body.js); with `end`, handed
    /// over as call `end`'s answer at once (`None`).
    fn guard_body(
        &self,
        response: &JsValue,
        controller: &web_sys::AbortController,
        end: Option<u32>,
    ) -> Option<JsValue> {
        let policy = &self.resolved.policy;
        let (deadline, idle_ms) = match policy.body_timeout_ms {
            Some(ms) => (
                self.started + f64::from(policy.total_timeout_ms),
                f64::from(ms),
            ),
            None => (f64::INFINITY, 0.0),
        };
        let listener = self
            .resolved
            .on_event
            .as_ref()
            .map_or(JsValue::UNDEFINED, JsValue::from);
        let (total_ms, expire) = (
            f64::from(policy.total_timeout_ms),
            self.client.expire.as_ref().unchecked_ref(),
        );
        let Some(id) = end else {
            return Some(guard_response(
                response,
                controller,
                &self.signal,
                deadline,
                total_ms,
                idle_ms,
                expire,
                self.origin_js,
                &listener,
            ));
        };
        end_guarded(
            id,
            response,
            controller,
            &self.signal,
            deadline,
            total_ms,
            idle_ms,
            expire,
            self.origin_js,
            &listener,
        );
        None
    }
}

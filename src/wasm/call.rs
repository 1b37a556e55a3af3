//! One logical call: the request prepared once (URL checked, caller's signal
//! taken out, idempotency key set), then the core's retry loop over the
//! fetch transport, and its result mapped back to a `Response` or an error.

use std::rc::Rc;

use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;

use super::abort::{AbortGuard, AbortState};
use super::bindings::{
    abort_reason, cross_origin, flight_key, guard_response, header_of, is_aborted, join_flight,
    make_bulkhead_full_error, make_circuit_open_error, make_rate_limit_error, make_throttled_error,
    make_timeout_error, performance_now, read_arguments, send_local, set_key,
};
use super::client::ClientInner;
use super::env::{JsEnv, random_bytes};
use super::events::emit;
use super::options::{Hooks, decode, policy_error};
use super::transport::{Asking, FetchTransport, Source};
use crate::engine::{self, Call, CallResult};
use crate::events::OutcomeKind;
use crate::idempotency::{self, Key, KeyChoice};
use crate::outbox::{self, End};
use crate::policy::Policy;

fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// The policy a call runs under: its client's, or the call's laid over it.
struct Resolved {
    policy: Rc<Policy>,
    on_event: Option<Function>,
    /// The `fetch` to send with (undefined: the platform's).
    fetch: JsValue,
    /// The caller's own decisions (those of features turned off are dropped).
    hooks: Hooks,
}

/// A call ready to run: everything read from the caller's arguments at once,
/// as `fetch` reads them before it returns.
pub struct Ready {
    client: Rc<ClientInner>,
    resolved: Resolved,
    origin: String,
    /// The same origin as a JS string.
    origin_js: JsValue,
    method: String,
    key: Option<String>,
    replayable: bool,
    has_body: bool,
    transport: FetchTransport,
    guard: AbortGuard,
    /// With `coalesce`, the flight this call joins or starts.
    flight: Option<Flight>,
    /// Whether the client's outbox may keep it (not a replay of a kept one).
    keep: bool,
    /// Its place among the calls this realm's outboxes may keep (`outbox::order_now`).
    order: f64,
}

/// A read that may join an identical one in flight (policy `coalesce`). The call runs with
/// no signal of its own: it is aborted (`AbortState::fire`) when every caller has left.
struct Flight {
    /// What makes two calls the same request.
    key: String,
    /// The caller's signal (it detaches this caller only), or undefined.
    caller: JsValue,
}

/// Starts one call: reads the arguments, resolves the policy and attaches the key now
/// (synchronously, like `fetch`), then runs it; resolves like `fetch`.
/// `keep`: the client's outbox may keep the call (false for its replays).
pub fn start(
    client: Rc<ClientInner>,
    input: JsValue,
    init: JsValue,
    policy: JsValue,
    keep: bool,
) -> Promise {
    if let Some(sharing) = &client.sharing {
        sharing.poke();
    }
    match prepare(client, input, init, policy, keep) {
        Ok(Prepared::Run(mut ready)) => match ready.flight.take() {
            None => wasm_bindgen_futures::future_to_promise(ready.run()),
            Some(flight) => {
                let id = ready.client.id;
                // Called by joinFlight only when this call starts a flight: [its promise, a
                // function that aborts it]. A call that joins another's is dropped here, with
                // the handle (not left for the garbage collector).
                let start: Closure<dyn FnMut() -> js_sys::Array> = Closure::once(move || {
                    let state = ready.guard.state().clone();
                    let promise = wasm_bindgen_futures::future_to_promise(ready.run());
                    let abort = Closure::once_into_js(move || state.fire());
                    js_sys::Array::of2(&promise, &abort)
                });
                join_flight(id, &flight.key, &flight.caller, start.as_ref())
            }
        },
        Ok(Prepared::Local(promise)) => promise,
        Err(error) => Promise::reject(&error),
    }
}

/// What `prepare` made of a call.
// Made and taken apart once per call, on the stack: boxing the call would cost an
// allocation per call for nothing.
#[allow(clippy::large_enum_variant)]
enum Prepared {
    /// A call to a server, to run through the core.
    Run(Ready),
    /// A URL that is no server's, already handed to `fetch`.
    Local(Promise),
}

/// The client's policy, or the call's laid over it (checked, scope included).
fn resolve_policy(client: &ClientInner, policy: &JsValue) -> Result<Resolved, JsValue> {
    let (policy, on_event, fetch, hooks) = if policy.is_undefined() || policy.is_null() {
        (
            client.validated.clone(),
            client.on_event.clone(),
            client.fetch.clone(),
            client.hooks.clone(),
        )
    } else {
        let options = decode(policy)?;
        let merged = client.policy.merge(&options.input);
        let validated = Policy::from_input(&merged).map_err(|e| policy_error(&e))?;
        options
            .input
            .check_scope(true)
            .map_err(|e| policy_error(&e))?;
        let on_event = options.on_event.or_else(|| client.on_event.clone());
        let fetch = options.fetch.or_else(|| client.fetch.clone());
        let hooks = options.hooks.over(&client.hooks);
        (Rc::new(validated), on_event, fetch, hooks)
    };
    let function = |f: &JsValue, on: bool| f.dyn_ref::<Function>().filter(|_| on).cloned();
    Ok(Resolved {
        fetch: fetch.map_or(JsValue::UNDEFINED, Into::into),
        hooks: Hooks {
            should_retry: function(&hooks.should_retry, policy.retry.is_some())
                .map_or(JsValue::UNDEFINED, Into::into),
            is_failure: function(&hooks.is_failure, policy.breaker.is_some())
                .map_or(JsValue::UNDEFINED, Into::into),
        },
        policy,
        on_event,
    })
}

/// Reads and checks the caller's arguments (synchronously, like `fetch`): the
/// policy, the URL, the init, the signal, the idempotency key.
fn prepare(
    client: Rc<ClientInner>,
    input: JsValue,
    init: JsValue,
    policy: JsValue,
    keep: bool,
) -> Result<Prepared, JsValue> {
    let resolved = resolve_policy(&client, &policy)?;
    // [init copy without signal, signal, origin ("": no server's), method, body (0, 1, 2),
    //  chain, and off the fast path: the request]
    let args = read_arguments(&input, &init, client.id)?;
    let copy: Object = args.get(0).unchecked_into();
    // A signal of any realm, or a polyfill's: readArguments checked its shape.
    let signal = Some(args.get(1)).filter(|s| !s.is_undefined());
    if let Some(signal) = signal.as_ref().filter(|s| is_aborted(s)) {
        return Err(abort_reason(signal));
    }
    // The origin as a JS string too, for what the response keeps of the call (js/body.js).
    let origin_js = args.get(2);
    let origin = origin_js.as_string().unwrap_or_default();
    if origin.is_empty() {
        return send_local(&resolved.fetch, &input, &init).map(Prepared::Local);
    }
    let method = args.get(3).as_string().unwrap_or_default();
    // The body: 0 none, 1 one that can be sent again, 2 a stream (sent once).
    let body = args.get(4).as_f64().unwrap_or(0.0);
    let replayable = body != 2.0;
    let chain = args.get(5);
    // On the fast path the request is never built by us (fetch builds it), so a call an
    // open breaker rejects never pays for it.
    let request = Some(args.get(6)).filter(|r| !r.is_undefined());
    // A key header the caller set (the fast path has no headers of the caller's).
    let existing = request
        .as_ref()
        .and_then(|r| header_of(r, &resolved.policy.idempotency_header));
    let key = attach_key(
        &resolved.policy,
        &origin,
        &method,
        existing,
        request.as_ref(),
        &copy,
    )?;
    // A read identical to one in flight joins it; the call runs with no signal of its own
    // (every caller's signal detaches that caller only).
    let flight = if resolved.policy.coalesce && (method == "GET" || method == "HEAD") {
        let none = JsValue::UNDEFINED;
        Some(Flight {
            key: flight_key(&method, &input, &copy, request.as_ref().unwrap_or(&none)),
            caller: signal.clone().unwrap_or(none),
        })
    } else {
        None
    };
    let keep = keep && client.outbox.is_some();
    let order = if keep {
        super::outbox::order_now()
    } else {
        0.0
    };
    // A read that may join a flight on its way is not refused here; a write the outbox may
    // keep goes through the loop.
    if flight.is_none()
        && !(keep && key.is_some())
        && let Some(refused) = refused_at_once(&client, &resolved, &origin, key.as_deref())
    {
        return Err(refused);
    }
    let source = match request {
        Some(request) => Source::Template(request),
        None => Source::Direct { input, init: copy },
    };
    let guard = AbortGuard::new(if flight.is_some() { None } else { signal });
    let transport = FetchTransport::new(
        source,
        resolved.fetch.clone(),
        chain,
        replayable,
        guard.state().clone(),
        &resolved.policy,
        Asking {
            hooks: resolved.hooks.clone(),
            method: method.clone(),
            key: key.clone(),
        },
    );
    Ok(Prepared::Run(Ready {
        guard,
        client,
        resolved,
        origin,
        origin_js,
        method,
        key,
        replayable,
        has_body: body != 0.0,
        transport,
        flight,
        keep,
        order,
    }))
}

/// A replay of a kept request, through its client (breaker, budget, bulkhead), never kept again.
pub fn replay(client: Rc<ClientInner>, request: JsValue) -> Promise {
    start(
        client,
        request,
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
        false,
    )
}

/// The `CircuitOpenError` of a call its origin's open breaker refuses before anything else
/// could stand in its way (`engine::refused_at_once`): no transport, no future, no task, for
/// the one call that must be cheapest.
fn refused_at_once(
    client: &ClientInner,
    resolved: &Resolved,
    origin: &str,
    key: Option<&str>,
) -> Option<JsValue> {
    let ms = engine::refused_at_once(
        &client.registry,
        &resolved.policy,
        origin,
        &performance_now,
        &mut |event| {
            if let Some(f) = &resolved.on_event {
                emit(f, origin, key, event);
            }
        },
    )?;
    Some(circuit_open_error(client, origin, ms))
}

/// The idempotency key the call carries, if any (the caller's header `existing`, a given
/// string, or a fresh UUID), set on the request (or the fast path's init) where it is ours
/// to add.
fn attach_key(
    policy: &Policy,
    origin: &str,
    method: &str,
    existing: Option<String>,
    request: Option<&JsValue>,
    fast_init: &Object,
) -> Result<Option<String>, JsValue> {
    let unsafe_method = method.eq_ignore_ascii_case("POST") || method.eq_ignore_ascii_case("PATCH");
    // Asked only where it matters: an automatic key for an unsafe request.
    let cross = existing.is_none() && unsafe_method && cross_origin(origin);
    let Some(KeyChoice { key, add_header }) =
        idempotency::choose(&policy.idempotency_key, method, existing.as_deref(), cross)
    else {
        return Ok(None);
    };
    let key = match key {
        Key::Given(key) => key,
        Key::Generate => {
            // From the platform CSPRNG, 16 fresh bytes per key (never at module load).
            let bytes = random_bytes::<16>().map_err(|_| {
                type_error(
                    "resilientFetch: no CSPRNG (crypto.getRandomValues) for the idempotency key",
                )
            })?;
            idempotency::uuid_v4(bytes)
        }
    };
    // Under mode "no-cors" the header cannot be set: then there is no key, and the call
    // is not retried as if it had one (the fast path is never no-cors). A header the
    // caller set is there already.
    let none = JsValue::UNDEFINED;
    let request = request.unwrap_or(&none);
    let present = !add_header || set_key(request, fast_init, &policy.idempotency_header, &key)?;
    Ok(present.then_some(key))
}

impl Ready {
    /// Runs the call through the core's retry loop, then maps the result back.
    async fn run(self) -> Result<JsValue, JsValue> {
        let Ready {
            client,
            resolved,
            origin,
            origin_js,
            method,
            key,
            replayable,
            has_body,
            mut transport,
            guard,
            flight: _,
            keep,
            order,
        } = self;
        let env = JsEnv {
            abort: guard.state().clone(),
            started: Default::default(),
        };
        let call = Call {
            origin: &origin,
            method: &method,
            has_key: key.is_some(),
            replayable,
            has_body,
        };
        let mut on_event = |event: &crate::events::Event| {
            if let Some(f) = &resolved.on_event {
                emit(f, &origin, key.as_deref(), event);
            }
        };
        let result = engine::run(
            &client.registry,
            &resolved.policy,
            call,
            &mut transport,
            &env,
            &mut on_event,
        )
        .await;
        // The engine reads the clock first when the call starts.
        let started = env.started.get().unwrap_or_else(performance_now);
        let ended = Ended {
            client: &client,
            resolved: &resolved,
            origin: &origin,
            origin_js: &origin_js,
            started,
            signal: guard.state().signal(),
        };
        let end = keep.then(|| end_of(&result, &transport));
        let mapped = ended.map(result, &transport, guard.state());
        drop(guard);
        let keeps = end.and_then(|(end, attempts)| Some((outbox::keep(end)?, attempts)));
        match (keeps, &key, client.outbox.as_ref()) {
            (Some((reason, attempts)), Some(key), Some(outbox)) => {
                let (value, failed) = match &mapped {
                    Ok(response) => (response, false),
                    Err(error) => (error, true),
                };
                // The call adopts this promise: it settles once the request is stored.
                Ok(outbox
                    .keep(
                        transport.request(),
                        key,
                        &origin,
                        reason,
                        order,
                        attempts,
                        value,
                        failed,
                        resolved.on_event.as_ref(),
                    )
                    .into())
            }
            _ => mapped,
        }
    }
}

/// The `CircuitOpenError` of a call `origin`'s breaker refused: open, or half-open with its
/// probes out (told apart with no clock read).
fn circuit_open_error(client: &ClientInner, origin: &str, retry_after_ms: f64) -> JsValue {
    let half_open = client.registry.try_borrow().is_ok_and(|r| {
        r.peek(origin)
            .is_some_and(|s| !s.breaker.is_closed() && s.breaker.open_until().is_none())
    });
    make_circuit_open_error(origin, retry_after_ms, half_open)
}

/// How a call ended, as the outbox sees it, and the attempts it made.
fn end_of(result: &CallResult<Result<JsValue, JsValue>>, transport: &FetchTransport) -> (End, u32) {
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
        CallResult::Throttled => (End::Throttled, 0),
    }
}

/// What mapping a call's result back to JS needs.
struct Ended<'a> {
    client: &'a ClientInner,
    resolved: &'a Resolved,
    origin: &'a str,
    /// The same origin as a JS string.
    origin_js: &'a JsValue,
    /// When the call started (`performance.now()`): its deadline bounds the body too.
    started: f64,
    /// The caller's signal, or undefined.
    signal: JsValue,
}

impl Ended<'_> {
    /// The call's result as `fetch` gives it: the response (its body bounded and still
    /// reached by the caller's signal), or the error to reject with.
    fn map(
        &self,
        result: CallResult<Result<JsValue, JsValue>>,
        transport: &FetchTransport,
        abort: &AbortState,
    ) -> Result<JsValue, JsValue> {
        let policy = &self.resolved.policy;
        let result = match result {
            CallResult::Done {
                output: Ok(response),
                ..
            } => {
                return Ok(match transport.last_controller() {
                    Some(controller) => self.guard_body(&response, &controller),
                    None => response,
                });
            }
            other => other,
        };
        // The call ends without a response: the bodies of the ones it got are cancelled.
        transport.discard_previous();
        match result {
            CallResult::Done { output, .. } => output,
            CallResult::ShortCircuited { retry_after_ms } => {
                Err(circuit_open_error(self.client, self.origin, retry_after_ms))
            }
            CallResult::BulkheadFull => Err(make_bulkhead_full_error(self.origin)),
            // Read only now: an AbortError is made when the signal has no reason, and making
            // one for every call that ends otherwise cost more than the call.
            CallResult::Aborted => Err(abort.reason()),
            CallResult::DeadlineExceeded => {
                Err(make_timeout_error(1, f64::from(policy.total_timeout_ms)))
            }
            CallResult::RateLimited {
                retry_after_ms,
                reason,
            } => Err(make_rate_limit_error(
                self.origin,
                retry_after_ms,
                reason.as_str(),
            )),
            CallResult::Throttled => Err(make_throttled_error(self.origin)),
        }
    }

    /// The response handed back: its body bounded by the call's deadline and
    /// `bodyTimeoutMs`, and stopped by the caller's signal (js/body.js).
    fn guard_body(&self, response: &JsValue, controller: &web_sys::AbortController) -> JsValue {
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
        guard_response(
            response,
            controller,
            &self.signal,
            deadline,
            f64::from(policy.total_timeout_ms),
            idle_ms,
            self.client.expire.as_ref().unchecked_ref(),
            self.origin_js,
            &listener,
        )
    }
}

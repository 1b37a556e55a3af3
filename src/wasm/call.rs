//! One logical call: the request prepared once (URL checked, caller's signal
//! taken out, idempotency key set), then the core's retry loop over the
//! fetch transport, and its result mapped back to a `Response` or an error.

use std::rc::Rc;

use js_sys::{Object, Promise};
use wasm_bindgen::prelude::*;

use super::abort::AbortGuard;
use super::bindings::{
    abort_reason, header_of, is_aborted, performance_now, read_arguments, send_local,
};
#[cfg(feature = "coalesce")]
use super::bindings::{flight_key, join_flight};
use super::codes::{Arg, Body};
#[cfg(feature = "outbox")]
use super::ended::end_of;
use super::ended::{Ended, circuit_open_error};
use super::env::JsEnv;
use super::events::emit;
use super::key::attach_key;
use super::options::{policy_error, to_value};
use super::resolve::{Resolved, resolve_policy};
use super::state::ClientInner;
use super::transport::{Asking, FetchTransport, Source};
use crate::engine::{self, Call};
#[cfg(feature = "outbox")]
use crate::outbox;
use crate::policy::{Value, check_key};
#[cfg(feature = "coalesce")]
use crate::vocab::Method;

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
    /// Whether it may be coalesced: then each caller's signal reaches its own copy of the body
    /// (js/coalesce.js `joinFlight`), not the response the call resolves with.
    coalesced: bool,
    /// Whether the client's outbox may keep it (not a replay of a kept one).
    keep: bool,
    /// Its place among the calls this realm's outboxes may keep (`outbox::order_now`).
    order: f64,
}

/// A read that may join an identical one in flight: none without `coalesce`.
#[cfg(not(feature = "coalesce"))]
type Flight = crate::absent::Never;

/// A read that may join an identical one in flight (policy `coalesce`). The call runs with
/// no signal of its own: it is aborted (`AbortState::fire`) when every caller has left.
#[cfg(feature = "coalesce")]
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
            #[cfg(not(feature = "coalesce"))]
            Some(never) => match never {},
            #[cfg(feature = "coalesce")]
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
    let args = read_arguments(&input, &init, client.id)?;
    let arg = |slot: Arg| args.get(slot as u32);
    let copy: Object = arg(Arg::Copy).unchecked_into();
    // A signal of any realm, or a polyfill's: readArguments checked its shape.
    let signal = Some(arg(Arg::Signal)).filter(|s| !s.is_undefined());
    if let Some(signal) = signal.as_ref().filter(|s| is_aborted(s)) {
        return Err(abort_reason(signal));
    }
    // The origin as a JS string too, for what the response keeps of the call (js/body.js).
    let origin_js = arg(Arg::Origin);
    let origin = origin_js.as_string().unwrap_or_default();
    if origin.is_empty() {
        return send_local(&resolved.fetch, &input, &init).map(Prepared::Local);
    }
    let method = arg(Arg::Method).as_string().unwrap_or_default();
    // What the body is: a stream is sent once.
    let body = arg(Arg::Body).as_f64();
    let is = |what: Body| body == Some(f64::from(what as u8));
    let replayable = !is(Body::Stream);
    let chain = arg(Arg::Chain);
    // On the fast path the request is never built by us (fetch builds it), so a call an
    // open breaker rejects never pays for it.
    let request = Some(arg(Arg::Request)).filter(|r| !r.is_undefined());
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
    // The registry's name for the call (its breaker, budget, stats, events and errors): its
    // origin, or what `breaker.key` returns. The origin still decides where a key may go.
    let (origin_js, origin) = match resolved.hooks.key.dyn_ref::<js_sys::Function>() {
        None => (origin_js, origin),
        Some(name) => named(name, &input, request.as_ref(), &method)?,
    };
    // A read identical to one in flight joins it; the call runs with no signal of its own
    // (every caller's signal detaches that caller only).
    #[cfg(feature = "coalesce")]
    let flight = if resolved.policy.coalesce && Method(&method).may_coalesce() {
        let none = JsValue::UNDEFINED;
        Some(Flight {
            key: flight_key(&method, &input, &copy, request.as_ref().unwrap_or(&none)),
            caller: signal.clone().unwrap_or(none),
        })
    } else {
        None
    };
    #[cfg(not(feature = "coalesce"))]
    let flight: Option<Flight> = None;
    #[cfg(feature = "outbox")]
    let keep = keep && client.outbox.is_some();
    #[cfg(feature = "outbox")]
    let order = if keep {
        super::outbox::order_now()
    } else {
        0.0
    };
    #[cfg(not(feature = "outbox"))]
    let (keep, order) = {
        let _ = keep;
        (false, 0.0)
    };
    // A read that may join a flight on its way is not refused here; a write the outbox may
    // keep goes through the loop.
    if flight.is_none()
        && !(keep && key.is_some())
        && let Some(refused) =
            refused_at_once(&client, &resolved, &origin, &origin_js, key.as_deref())
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
        has_body: body.is_some_and(|b| b != f64::from(Body::None as u8)),
        transport,
        coalesced: flight.is_some(),
        flight,
        keep,
        order,
    }))
}

/// What `breaker.key` names a call by, for its URL and method: a string of 1 to 256 characters
/// (else a `TypeError` or `RangeError` naming the field); what it throws rejects the call.
fn named(
    name: &js_sys::Function,
    input: &JsValue,
    request: Option<&JsValue>,
    method: &str,
) -> Result<(JsValue, String), JsValue> {
    let url = match request {
        Some(request) => js_sys::Reflect::get(request, &JsValue::from_str("url"))?,
        None => input.clone(),
    };
    let got = name.call2(&JsValue::UNDEFINED, &url, &JsValue::from_str(method))?;
    let value = to_value(&got);
    check_key(&value).map_err(|e| policy_error(&e))?;
    // check_key accepts strings only.
    let text = match value {
        Value::String(text) => text,
        _ => String::new(),
    };
    Ok((got, text))
}

/// A replay of a kept request, through its client (breaker, budget, bulkhead), never kept again.
#[cfg(feature = "outbox")]
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
    origin_js: &JsValue,
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
    Some(circuit_open_error(client, origin, origin_js, ms))
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
            coalesced,
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
            kept: keep && key.is_some(),
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
            // A coalesced call's response is guarded with no signal yet: each caller links its own.
            signal: if coalesced {
                JsValue::NULL
            } else {
                guard.state().signal()
            },
        };
        #[cfg(feature = "outbox")]
        let end = keep.then(|| end_of(&result, &transport));
        let mapped = ended.map(result, &transport, guard.state());
        drop(guard);
        #[cfg(feature = "outbox")]
        let mapped = {
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
                            (
                                started + f64::from(resolved.policy.total_timeout_ms),
                                resolved.policy.total_timeout_ms,
                            ),
                            attempts,
                            value,
                            failed,
                            resolved.on_event.as_ref(),
                        )
                        .into())
                }
                _ => mapped,
            }
        };
        #[cfg(not(feature = "outbox"))]
        let _ = (keep, order, key);
        mapped
    }
}

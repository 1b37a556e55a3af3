//! One logical call: the request prepared once (URL checked, caller's signal
//! taken out, idempotency key set), then the core's retry loop over the
//! fetch transport, and its result mapped back to a `Response` or an error.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use super::abort::AbortGuard;
use super::arguments::{self, Args};
use super::bindings::{
    abort_reason, call_promise, end_call, header_of, is_aborted, performance_now, send_local,
};
use super::codes::Body;
use super::ended::{Reply, circuit_open_error, end_of};
use super::env::JsEnv;
use super::events::emit;
use super::key::attach_key;
use super::options::{policy_error, to_value};
use super::resolve::{Resolved, resolve_policy};
use super::settle::{next_call, promise_with, run_as};
use super::state::ClientInner;
use super::transport::{Asking, FetchTransport, Source};
use crate::coalesce::shell::{self as coalesce, Joinable};
use crate::engine::{self, Call};
use crate::outbox::{Keepable, Outbox};
use crate::policy::{Value, check_key};
use crate::resume::shell as resume;
use crate::stale::{self, Lookup};

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
    flight: Option<Joinable>,
    /// Whether it may be coalesced: then each caller's signal reaches its own copy of the body
    /// (src/coalesce/coalesce.js `joinFlight`), not the response the call resolves with.
    coalesced: bool,
    /// When the client's outbox may keep it (it has one, and this is not a replay of a kept
    /// call): what keeping it needs from its start. None without `outbox`.
    keepable: Option<Keepable>,
    /// With `stale` on: what keeping its answer, or serving a kept one, needs from its start.
    lookup: Option<Lookup>,
    /// Its URL's origin when the policy lists alternates for it (`failover`).
    failover: crate::failover::shell::Listed,
    /// When it was made (its arguments read).
    at: f64,
}

/// Starts one call: reads the arguments, resolves the policy and attaches the key now
/// (synchronously, like `fetch`), then runs it; resolves like `fetch`.
/// `keep`: the client's outbox may keep the call (false for its replays).
pub fn start(
    client: Rc<ClientInner>,
    input: JsValue,
    init: JsValue,
    policy: Option<JsValue>,
    keep: bool,
) -> Promise {
    start_as(
        client,
        input,
        init,
        Given::Unread { policy, keep },
        next_call(),
    )
}

/// Starts call `call` of `client`, whose arguments JS read before it entered (js/request.js
/// `readFirst`; no policy of its own): `said`, and the objects it has just handed the taker
/// (src/wasm/arguments.rs). JS made the call's promise and returns it: here it is undefined
/// (`made` below), and only settled.
pub fn start_read(client: Rc<ClientInner>, input: JsValue, init: JsValue, said: u32, call: u32) {
    let _settled_by_js = start_as(client, input, init, Given::Read(said), call);
}

/// What a call brings besides its input and init.
enum Given {
    /// Its arguments are to be read (after its policy, if any, is checked); `keep`: the
    /// client's outbox may keep the call (false for its replays).
    Unread { policy: Option<JsValue>, keep: bool },
    /// Its arguments, read by JS before it entered and kept (no policy of its own; the outbox
    /// may keep it): the numbers packed.
    Read(u32),
}

/// [`start`] for call `id`.
// Once, not inlined into both entries: the call's task is the wasm's largest function.
#[inline(never)]
fn start_as(
    client: Rc<ClientInner>,
    input: JsValue,
    init: JsValue,
    given: Given,
    id: u32,
) -> Promise {
    if let Some(sharing) = &client.sharing {
        sharing.poke();
    }
    // The call's promise, made by JS with its arguments (js/request.js `readArguments`): none
    // when they could not be read; undefined when JS returns it itself (`start_read`).
    let mut made = None;
    match prepare(client, input, init, given, id, &mut made) {
        Ok(Prepared::Run(mut ready)) => {
            let promise = made.unwrap_or_else(|| call_promise(id));
            match ready.flight.take() {
                None => run_as(id, promise, |id| ready.run(id)),
                // Run only when this call starts the flight; then every caller leaving aborts it.
                Some(flight) => {
                    let client = ready.client.id;
                    let joined = flight.join(client, move || {
                        let state = ready.guard.state().clone();
                        let promise = promise_with(|id| ready.run(id));
                        (promise, move || state.fire())
                    });
                    ended(id, Some(promise), Ok(joined.into()))
                }
            }
        }
        Ok(Prepared::Local(promise)) => ended(id, made, Ok(promise.into())),
        Err(error) => ended(id, made, Err(error)),
    }
}

/// Call `id`'s promise settled with `result` now: the one JS made with its arguments (`made`),
/// else a new one.
fn ended(id: u32, made: Option<Promise>, result: Result<JsValue, JsValue>) -> Promise {
    let Some(promise) = made else {
        return match result {
            Ok(value) => Promise::resolve(&value),
            Err(error) => Promise::reject(&error),
        };
    };
    match &result {
        Ok(value) => end_call(id, true, value),
        Err(error) => end_call(id, false, error),
    }
    promise
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
    given: Given,
    call: u32,
    made: &mut Option<Promise>,
) -> Result<Prepared, JsValue> {
    let (policy, said, keep) = match given {
        Given::Unread { policy, keep } => (policy, None, keep),
        Given::Read(said) => (None, Some(said), true),
    };
    let resolved = resolve_policy(&client, policy.as_ref())?;
    // The taker holds the objects JS read: before entering (read first), or when asked now.
    let said = match said {
        Some(said) => said,
        None => arguments::hand(&input, &init, client.id, Some(call))?,
    };
    let Args {
        copy,
        signal,
        origin,
        origin_js,
        method,
        body,
        chain,
        request,
        at,
        promise,
    } = arguments::take(said)?;
    *made = Some(promise.unchecked_into());
    // A signal of any realm, or a polyfill's: readArguments checked its shape.
    if let Some(signal) = signal.as_ref().filter(|s| is_aborted(s)) {
        return Err(abort_reason(signal));
    }
    if origin.is_empty() {
        return send_local(&resolved.fetch, &input, &init).map(Prepared::Local);
    }
    // What the body is: a stream is sent once.
    let replayable = !matches!(body, Body::Stream);
    // On the fast path the request is never built by us (fetch builds it), so a call an
    // open breaker rejects never pays for it.
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
    // (every caller's signal detaches that caller only). The request (its key header set)
    // makes the flight's key, whatever `breaker.key` names the call.
    let flight = coalesce::flight(
        &resolved.policy,
        &method,
        &input,
        &copy,
        request.as_ref(),
        signal.as_ref(),
    );
    // Alternate origins are listed by the URL's origin (`failover`), whatever names the call.
    let failover = crate::failover::shell::Listed::of(&resolved.policy, &origin);
    // The registry's name for the call (its breaker, budget, stats, events and errors): its
    // origin, or what `breaker.key` returns. The origin still decides where a key may go.
    // An attempt to an alternate is named by the alternate's origin.
    let (origin_js, origin) = match &resolved.hooks.key {
        None => (origin_js, origin),
        Some(name) => named(name, &input, request.as_ref(), &method)?,
    };
    let keepable = client
        .outbox
        .as_ref()
        .filter(|_| keep)
        .map(Outbox::may_keep);
    // A read that may join a flight on its way is not refused here; a write the outbox may
    // keep goes through the loop, and so do a read a kept answer may stand in for and a call
    // with alternates to go to.
    let through_loop = flight.is_some()
        || (keepable.is_some() && key.is_some())
        || stale::serves(&resolved.policy, &method)
        || failover.is_listed();
    if !through_loop
        && let Some(refused) =
            refused_at_once(&client, &resolved, &origin, &origin_js, key.as_deref(), at)
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
    let lookup = Lookup::of(&resolved.policy, &method, transport.request());
    Ok(Prepared::Run(Ready {
        lookup,
        guard,
        client,
        resolved,
        origin,
        origin_js,
        method,
        key,
        replayable,
        has_body: !matches!(body, Body::None),
        transport,
        coalesced: flight.is_some(),
        flight,
        keepable,
        failover,
        at,
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
pub fn replay(client: Rc<ClientInner>, request: JsValue) -> Promise {
    start(client, request, JsValue::UNDEFINED, None, false)
}

/// The `CircuitOpenError` of a call its origin's open breaker refuses before anything else
/// could stand in its way (`engine::refused_at_once`) at `at`, when the call was made: no
/// transport, no future, no task, no clock read of its own, for the one call that must be
/// cheapest.
fn refused_at_once(
    client: &ClientInner,
    resolved: &Resolved,
    origin: &str,
    origin_js: &JsValue,
    key: Option<&str>,
    at: f64,
) -> Option<JsValue> {
    let ms = engine::refused_at_once(
        &client.registry,
        &resolved.policy,
        origin,
        Default::default(),
        &|| at,
        &mut |event| {
            if let Some(f) = &resolved.on_event {
                emit(f, origin, key, event);
            }
        },
    )?;
    Some(circuit_open_error(client, origin, origin_js, ms))
}

impl Ready {
    /// Runs the call through the core's retry loop, then maps the result back; `None` when
    /// its promise (`id`) has been settled with its answer already.
    async fn run(self, id: u32) -> Option<Result<JsValue, JsValue>> {
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
            keepable,
            lookup,
            failover,
            at,
        } = self;
        let env = JsEnv {
            abort: guard.state().clone(),
            started: Default::default(),
            called: std::cell::Cell::new(Some(at)),
        };
        let alternates = failover.alternates(&resolved.policy);
        let call = Call {
            origin: &origin,
            alternates,
            method: &method,
            has_key: key.is_some(),
            replayable,
            has_body,
            kept: keepable.is_some() && key.is_some(),
        };
        let mut on_event = |event: &crate::events::Event| {
            if let Some(f) = &resolved.on_event {
                emit(f, &origin, key.as_deref(), event);
            }
        };
        let mut course = engine::Course::default();
        let result = engine::run_course(
            &client.registry,
            &resolved.policy,
            call,
            &mut transport,
            &env,
            &mut on_event,
            &mut course,
            None,
        )
        .await;
        let resumable = resume::wanted(&resolved.policy, &method, coalesced);
        // The engine reads the clock first when the call starts.
        let started = env.started.get().unwrap_or_else(performance_now);
        let ended = Reply {
            client: &client,
            resolved: &resolved,
            origin: &origin,
            origin_js: &origin_js,
            started,
            // A coalesced call's response is guarded with no signal yet: each caller links its own;
            // a resumable one is guarded with none (its body's reads go through the guard).
            signal: if coalesced {
                JsValue::NULL
            } else {
                resume::guarded_signal(resumable, guard.state().signal())
            },
        };
        let keeping = keepable.map(|k| (k, end_of(&result, &transport)));
        let failure = lookup
            .as_ref()
            .and_then(|l| l.after(&client.stale, &resolved.policy, &result, &transport));
        // An answer nothing is left to wrap (no outbox to keep it, no kept answer to serve, no
        // body to resume) is guarded and handed over in one crossing.
        let plain = keeping.is_none() && failure.is_none() && !resumable;
        let Some(mapped) = ended.map(result, &transport, guard.state(), plain.then_some(id)) else {
            drop(guard);
            return None;
        };
        // A call that failed may be answered by a kept answer (`stale`); one that did not may
        // have its body resumed if it breaks (`resume`).
        let serving = failure.is_some();
        let mapped = match (lookup, failure) {
            (Some(lookup), Some(failure)) => {
                let (counted, origin) = (client.clone(), origin.clone());
                let count = move |told| {
                    let back = crate::owner::Returned::ServedStale(told);
                    counted.registry.update(&origin, None, back);
                };
                lookup.serve(&client.stale, failure, &ended, mapped, count)
            }
            _ => mapped,
        };
        let answer = match (keeping, key.as_deref()) {
            (Some((keepable, end)), Some(key)) => {
                keepable.keep(end, &ended, transport.request(), key, mapped)
            }
            // A GET's body that breaks is asked for again from where it broke (`resume`).
            _ => resume::offered!(
                resumable && !serving,
                mapped,
                resume::Resumable {
                    client,
                    resolved,
                    origin,
                    origin_js,
                    method,
                    key,
                    transport,
                    course,
                    failover,
                    signal: guard.state().signal(),
                }
            ),
        };
        drop(guard);
        Some(answer)
    }
}

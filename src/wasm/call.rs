//! One logical call: the request prepared once (URL checked, caller's signal
//! taken out, idempotency key set), then the core's retry loop over the
//! fetch transport, and its result mapped back to a `Response` or an error.

use std::rc::Rc;

use js_sys::{Function, Object};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::abort::AbortGuard;
use super::bindings::{
    abort_reason, make_bulkhead_full_error, make_circuit_open_error, make_timeout_error,
    new_request, read_arguments, set_only_header,
};
use super::client::ClientInner;
use super::env::{JsEnv, random_bytes};
use super::events::emit;
use super::options::{check_scope, decode, policy_error};
use super::transport::{FetchTransport, Source};
use crate::engine::{self, Call, CallResult};
use crate::idempotency::{self, Key, KeyChoice};
use crate::policy::Policy;

/// The registry key of a request: its origin as the platform's URL parser
/// serialises it (lower-case host, default port dropped, IDNA applied), or,
/// for URLs with an opaque origin (`data:`, `blob:`, `file:`), the scheme.
pub fn origin_of(url: &str) -> Result<String, JsValue> {
    let url = web_sys::Url::new(url)?;
    let origin = url.origin();
    Ok(if origin == "null" {
        url.protocol()
    } else {
        origin
    })
}

fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// A call ready to run: everything read from the caller's arguments at once,
/// as `fetch` reads them before it returns.
pub struct Prepared {
    client: Rc<ClientInner>,
    policy: Rc<Policy>,
    on_event: Option<Function>,
    origin: String,
    method: String,
    key: Option<String>,
    replayable: bool,
    source: Source,
    guard: AbortGuard,
}

/// Reads and checks the caller's arguments (synchronously, like `fetch`): the
/// policy, the URL, the init, the signal, the idempotency key.
pub fn prepare(
    client: Rc<ClientInner>,
    input: JsValue,
    init: JsValue,
    policy: JsValue,
) -> Result<Prepared, JsValue> {
    let (policy, on_event) = if policy.is_undefined() || policy.is_null() {
        (client.validated.clone(), client.on_event.clone())
    } else {
        let options = decode(&policy)?;
        let merged = client.policy.merge(&options.input);
        let validated = Policy::from_input(&merged).map_err(|e| policy_error(&e))?;
        check_scope(&options.plain, true)?;
        let on_event: Option<Function> = options.on_event.or_else(|| client.on_event.clone());
        (Rc::new(validated), on_event)
    };

    // [init copy without signal, caller's signal, fast origin, fast method, stream body]
    let args = read_arguments(&input, &init)?;
    let init: Object = args.get(0).unchecked_into();
    // A signal of any realm, or a polyfill's: readArguments checked its shape.
    let signal = Some(args.get(1))
        .filter(|s| !s.is_undefined())
        .map(JsCast::unchecked_into::<AbortSignal>);
    if let Some(signal) = signal.as_ref().filter(|s| s.aborted()) {
        return Err(abort_reason(signal));
    }
    let replayable = !args.get(4).is_truthy();
    // On the fast path the request is never built by us (fetch builds it), so
    // a call an open breaker rejects never pays for it.
    let fast = args.get(2).as_string().zip(args.get(3).as_string());
    let (request, origin, method) = match fast {
        Some((origin, method)) => (None, origin, method),
        None => {
            let request = new_request(&input, &init)?;
            let origin = origin_of(&request.url())?;
            let method = request.method();
            (Some(request), origin, method)
        }
    };

    let header = policy.idempotency_header.as_str();
    let existing = request
        .as_ref()
        .and_then(|r| r.headers().get(header).ok().flatten());
    // The key this call carries, if any: the caller's header, a given string, or a fresh UUID.
    let key = match idempotency::choose(&policy.idempotency_key, &method, existing.as_deref()) {
        None => None,
        Some(KeyChoice { key, add_header }) => {
            let key = match key {
                Key::Given(key) => key,
                Key::Generate => {
                    // From the platform CSPRNG, 16 fresh bytes per key (never at module load).
                    let bytes = random_bytes::<16>().map_err(|_| {
                        type_error("resilientFetch: no CSPRNG (crypto.getRandomValues) for the idempotency key")
                    })?;
                    idempotency::uuid_v4(bytes)
                }
            };
            if add_header {
                match &request {
                    Some(request) => request.headers().set(header, &key)?,
                    // The fast path's init has no headers of the caller's: ours is the only one.
                    None => set_only_header(&init, header, &key),
                }
            }
            // Under mode "no-cors" the header cannot be set: then there is no key,
            // and the call is not retried as if it had one (the fast path is never no-cors).
            let present = request
                .as_ref()
                .is_none_or(|r| r.headers().get(header).ok().flatten().is_some());
            present.then_some(key)
        }
    };
    let source = match request {
        Some(request) => Source::Template(request),
        None => Source::Direct { input, init },
    };

    Ok(Prepared {
        guard: AbortGuard::new(signal),
        client,
        policy,
        on_event,
        origin,
        method,
        key,
        replayable,
        source,
    })
}

/// Runs a prepared call through the core's retry loop; resolves like `fetch`.
pub async fn execute(call: Prepared) -> Result<JsValue, JsValue> {
    let Prepared {
        client,
        policy,
        on_event,
        origin,
        method,
        key,
        replayable,
        source,
        guard,
    } = call;
    let has_key = key.is_some();
    let env = JsEnv {
        abort: guard.state().clone(),
    };
    let mut transport = FetchTransport::new(
        source,
        replayable,
        guard.state().clone(),
        f64::from(policy.timeout_ms),
        f64::from(policy.total_timeout_ms),
    );
    let call = Call {
        origin: &origin,
        method: &method,
        has_key,
        replayable,
    };
    let mut on_event = |event: &crate::events::Event| {
        if let Some(f) = &on_event {
            emit(f, &origin, key.as_deref(), event);
        }
    };
    let result = engine::run(
        &client.registry,
        &policy,
        call,
        &mut transport,
        &env,
        &mut on_event,
    )
    .await;
    let abort_reason = guard.state().reason();
    match &result {
        // The caller's signal keeps reaching the returned response's body.
        CallResult::Done {
            output: Ok(response),
            ..
        } => {
            if let Some(controller) = transport.last_controller() {
                guard.state().keep_abortable(controller, response);
            }
        }
        _ => transport.discard_previous(),
    }
    drop(guard);

    match result {
        CallResult::Done { output, .. } => output,
        CallResult::ShortCircuited { retry_after_ms } => {
            Err(make_circuit_open_error(&origin, retry_after_ms))
        }
        CallResult::BulkheadFull => Err(make_bulkhead_full_error(&origin)),
        CallResult::Aborted => Err(abort_reason),
        CallResult::DeadlineExceeded => {
            Err(make_timeout_error(true, f64::from(policy.total_timeout_ms)))
        }
    }
}

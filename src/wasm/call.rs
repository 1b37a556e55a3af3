//! One logical call: the request prepared once (URL checked, caller's signal
//! taken out, idempotency key set), then the core's retry loop over the
//! fetch transport, and its result mapped back to a `Response` or an error.

use std::rc::Rc;

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{AbortSignal, Request};

use super::abort::AbortGuard;
use super::bindings::{
    ReadableStream, make_bulkhead_full_error, make_circuit_open_error, make_timeout_error,
    new_request,
};
use super::client::ClientInner;
use super::env::JsEnv;
use super::events::emit;
use super::options::{check_scope, decode, policy_error};
use super::transport::FetchTransport;
use crate::engine::{self, Call, CallResult};
use crate::idempotency::{self, Key, KeyChoice};
use crate::policy::Policy;

fn get(object: &JsValue, key: &str) -> JsValue {
    if object.is_object() {
        Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// The caller's signal: `init.signal` unless undefined (null means none, as
/// in `fetch`), else the Request's own.
fn caller_signal(input: &JsValue, init: &JsValue) -> Option<AbortSignal> {
    let from_init = get(init, "signal");
    let signal = if !from_init.is_undefined() {
        from_init
    } else if input.is_instance_of::<Request>() {
        get(input, "signal")
    } else {
        JsValue::UNDEFINED
    };
    signal.dyn_into::<AbortSignal>().ok()
}

/// Sets `referrer` and `referrerPolicy` on `init` from `request` where `init`
/// has none: a non-empty init otherwise resets them (Fetch, Request
/// constructor), and a caller's "no-referrer" must survive our re-wrapping.
pub fn keep_referrer(init: &Object, request: &Request) -> Result<(), JsValue> {
    // Read reflectively: Workers have no referrer, and a getter that is missing
    // must not throw through the wasm.
    for field in ["referrer", "referrerPolicy"] {
        let value = get(request, field);
        if value.is_string() && get(init, field).is_undefined() {
            Reflect::set(init, &JsValue::from_str(field), &value)?;
        }
    }
    Ok(())
}

/// `init` without its signal: the core owns cancellation, so the request
/// itself must not follow the caller's (possibly long-lived) signal.
fn init_without_signal(input: &JsValue, init: &JsValue) -> Result<JsValue, JsValue> {
    let copy = Object::new();
    if init.is_object() {
        Object::assign(&copy, init.unchecked_ref());
    } else if !init.is_undefined() && !init.is_null() {
        return Err(js_sys::TypeError::new("init must be an object").into());
    }
    Reflect::set(&copy, &JsValue::from_str("signal"), &JsValue::NULL)?;
    if let Some(request) = input.dyn_ref::<Request>() {
        keep_referrer(&copy, request)?;
    }
    Ok(copy.into())
}

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

/// Runs one call through `client`; resolves like `fetch` would.
pub async fn run(
    client: Rc<ClientInner>,
    input: JsValue,
    init: JsValue,
    policy: JsValue,
) -> Result<JsValue, JsValue> {
    let (policy, on_event) = if policy.is_undefined() || policy.is_null() {
        (client.validated.clone(), client.on_event.clone())
    } else {
        let options = decode(&policy)?;
        let merged = client.policy.merge(&options.input);
        let validated = Policy::from_input(&merged).map_err(|e| policy_error(&e))?;
        check_scope(&policy, true)?;
        let on_event: Option<Function> = options.on_event.or_else(|| client.on_event.clone());
        (Rc::new(validated), on_event)
    };

    let signal = caller_signal(&input, &init);
    if let Some(signal) = signal.as_ref().filter(|s| s.aborted()) {
        return Err(signal.reason());
    }
    let request = new_request(&input, &init_without_signal(&input, &init)?)?;
    let replayable = !get(&init, "body").is_instance_of::<ReadableStream>();
    let origin = origin_of(&request.url())?;

    let method = request.method();
    let headers = request.headers();
    let header = policy.idempotency_header.as_str();
    let existing = headers.get(header).ok().flatten();
    // The key this call carries, if any: the caller's header, a given string, or a fresh UUID.
    let key = match idempotency::choose(&policy.idempotency_key, &method, existing.as_deref()) {
        None => None,
        Some(KeyChoice { key, add_header }) => {
            let key = match key {
                Key::Given(key) => key,
                Key::Generate => {
                    // Drawn per call from the platform CSPRNG, never at module load.
                    let mut bytes = [0u8; 16];
                    getrandom::fill(&mut bytes).map_err(|_| {
                        type_error("resilientFetch: no CSPRNG (crypto.getRandomValues) for the idempotency key")
                    })?;
                    idempotency::uuid_v4(bytes)
                }
            };
            if add_header {
                headers.set(header, &key)?;
            }
            // Under mode "no-cors" the header cannot be set: then there is no key,
            // and the call is not retried as if it had one.
            headers.get(header).ok().flatten().is_some().then_some(key)
        }
    };
    let has_key = key.is_some();

    let guard = AbortGuard::new(signal);
    let env = JsEnv {
        abort: guard.state().clone(),
    };
    let mut transport = FetchTransport::new(
        request,
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
    drop(guard);
    if !matches!(result, CallResult::Done { .. }) {
        transport.discard_previous();
    }

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

//! A call's idempotency key: the caller's header, a given string or a fresh UUID, set on
//! the request where it is ours to add (the rules are the core's, `crate::idempotency`).

use js_sys::Object;
use wasm_bindgen::prelude::*;

use super::bindings::{cross_origin, set_key};
use super::env::random_bytes;
use crate::idempotency::{self, Key, KeyChoice};
use crate::policy::Policy;
use crate::vocab::Method;

fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// The idempotency key the call carries, if any (the caller's header `existing`, a given
/// string, or a fresh UUID), set on the request (or the fast path's init) where it is ours
/// to add.
pub fn attach_key(
    policy: &Policy,
    origin: &str,
    method: &str,
    existing: Option<String>,
    request: Option<&JsValue>,
    fast_init: &Object,
) -> Result<Option<String>, JsValue> {
    let unsafe_method = Method(method).wants_key();
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

//! The stack's minimum: what any resilient fetch built on wasm-bindgen, wasm-bindgen-futures,
//! web-sys, gloo-timers, serde-wasm-bindgen and getrandom pays, with none of the package's
//! logic. One exported function: the policy decoded by serde-wasm-bindgen (when given), a
//! Rust future turned into the returned promise, an `AbortController` and a gloo timer per
//! attempt, the awaited `fetch`, and on a 503 one backoff sleep with a CSPRNG draw before
//! the single retry. No breaker, budget, classification, events, keys or argument checks.
//! Built and measured by bench/run.sh (size.mjs, overhead.mjs); never shipped.

use gloo_timers::callback::Timeout;
use gloo_timers::future::TimeoutFuture;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};
use web_sys::{AbortController, RequestInit, Response};

/// A policy of the usual shape, as serde-wasm-bindgen decodes one.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Policy {
    timeout_ms: u32,
    base_delay_ms: u32,
    retry_on: Vec<u16>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeout_ms: 10_000,
            base_delay_ms: 100,
            retry_on: vec![503],
        }
    }
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = fetch)]
    fn fetch_with(input: &JsValue, init: &RequestInit) -> js_sys::Promise;
}

async fn attempt(input: &JsValue, timeout_ms: u32) -> Result<Response, JsValue> {
    let controller = AbortController::new()?;
    let timer = {
        let controller = controller.clone();
        Timeout::new(timeout_ms, move || controller.abort())
    };
    let init = RequestInit::new();
    init.set_signal(Some(&controller.signal()));
    let response = JsFuture::from(fetch_with(input, &init)).await;
    drop(timer);
    Ok(response?.unchecked_into())
}

/// `fetch(input)` with a per-attempt timeout and one jittered retry on a listed status.
#[wasm_bindgen(js_name = minimumFetch)]
pub fn minimum_fetch(input: JsValue, policy: JsValue) -> js_sys::Promise {
    future_to_promise(async move {
        let policy: Policy = if policy.is_undefined() {
            Policy::default()
        } else {
            serde_wasm_bindgen::from_value(policy).map_err(JsValue::from)?
        };
        let response = attempt(&input, policy.timeout_ms).await?;
        if !policy.retry_on.contains(&response.status()) {
            return Ok(response.into());
        }
        let mut byte = [0u8; 1];
        getrandom::fill(&mut byte).map_err(|_| JsValue::from_str("no CSPRNG"))?;
        TimeoutFuture::new(policy.base_delay_ms * u32::from(byte[0]) / 255).await;
        Ok(attempt(&input, policy.timeout_ms).await?.into())
    })
}

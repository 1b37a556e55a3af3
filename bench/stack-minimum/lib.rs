//! The stack's minimum: what any resilient fetch built on wasm-bindgen, wasm-bindgen-futures,
//! js-sys, web-sys, gloo-timers and getrandom pays, with none of the package's logic, built as
//! the package is (talc as the allocator; bench/run.sh: wasm-opt, short names, stripped). One
//! exported function: the policy read field by field with `js_sys::Reflect` as the package
//! reads options (when given; with `--features serde`, decoded by serde-wasm-bindgen's
//! Deserializer instead), a Rust future turned into the returned promise, an `AbortController`
//! and a gloo timer per attempt, the awaited `fetch`, and on a 503 one backoff sleep with a
//! CSPRNG draw before the single retry. No breaker, budget, classification, events, keys or
//! argument checks. Built and measured by bench/run.sh (size.mjs, overhead.mjs, browser.mjs);
//! never shipped.

use gloo_timers::callback::Timeout;
use gloo_timers::future::TimeoutFuture;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};
use web_sys::{AbortController, RequestInit, Response};

/// The package's allocator (src/wasm/mod.rs): talc's wasm build.
#[global_allocator]
// SAFETY: the wasm module is single-threaded, which is what TalckWasm requires.
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

/// A policy of the usual shape.
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
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

/// The policy through serde-wasm-bindgen's Deserializer (built with `--features serde`).
#[cfg(feature = "serde")]
fn decode(policy: JsValue) -> Result<Policy, JsValue> {
    serde_wasm_bindgen::from_value(policy).map_err(JsValue::from)
}

/// The fields read one by one with `Reflect`, as the package reads options (the default).
#[cfg(not(feature = "serde"))]
fn decode(policy: JsValue) -> Result<Policy, JsValue> {
    let field = |name: &str| js_sys::Reflect::get(&policy, &JsValue::from_str(name));
    let number = |name: &str, default: u32| -> Result<u32, JsValue> {
        let v = field(name)?;
        if v.is_undefined() {
            return Ok(default);
        }
        v.as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(u32::MAX))
            .map(|n| n as u32)
            .ok_or_else(|| JsValue::from_str(name))
    };
    let defaults = Policy::default();
    let retry_on = match field("retryOn")? {
        v if v.is_undefined() => defaults.retry_on,
        v if js_sys::Array::is_array(&v) => js_sys::Array::from(&v)
            .iter()
            .map(|s| {
                s.as_f64()
                    .map(|n| n as u16)
                    .ok_or_else(|| JsValue::from_str("retryOn"))
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(JsValue::from_str("retryOn")),
    };
    Ok(Policy {
        timeout_ms: number("timeoutMs", defaults.timeout_ms)?,
        base_delay_ms: number("baseDelayMs", defaults.base_delay_ms)?,
        retry_on,
    })
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
        let policy = if policy.is_undefined() {
            Policy::default()
        } else {
            decode(policy)?
        };
        let response = attempt(&input, policy.timeout_ms).await?;
        if !policy.retry_on.contains(&response.status()) {
            return Ok(response.into());
        }
        let mut byte = [0u8; 1];
        getrandom::fill(&mut byte).map_err(|_| JsValue::from_str("no CSPRNG"))?;
        let delay_ms = u64::from(policy.base_delay_ms) * u64::from(byte[0]) / 255;
        TimeoutFuture::new(delay_ms as u32).await;
        Ok(attempt(&input, policy.timeout_ms).await?.into())
    })
}

//! Helpers shared by the wasm-bindgen test files (`wasm_api.rs`,
//! `wasm_browser.rs`): the fault server's origins, given at build time by
//! scripts/test.sh, its request log, and small JS conveniences.
#![allow(dead_code)] // each test file uses its own subset

use js_sys::{JSON, Promise, Reflect};
use resilient_fetch::{FetchInit, FetchInput, PolicyArg};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::Response;

const ORIGIN_A: Option<&str> = option_env!("RF_TEST_ORIGIN_A");
const ORIGIN_B: Option<&str> = option_env!("RF_TEST_ORIGIN_B");

pub fn origin_a() -> &'static str {
    ORIGIN_A.expect("RF_TEST_ORIGIN_A unset at build time: run through scripts/test.sh")
}
pub fn origin_b() -> &'static str {
    ORIGIN_B.expect("RF_TEST_ORIGIN_B unset at build time: run through scripts/test.sh")
}

pub fn uid(name: &str) -> String {
    format!("{name}-{}", (js_sys::Math::random() * 1e12) as u64)
}
pub fn json(text: &str) -> JsValue {
    JSON::parse(text).expect("valid JSON in test")
}
pub fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &key.into()).unwrap_or(JsValue::UNDEFINED)
}
pub fn s(v: &JsValue, key: &str) -> String {
    get(v, key).as_string().unwrap_or_default()
}
pub fn input(url: &str) -> FetchInput {
    JsValue::from_str(url).unchecked_into()
}
pub fn policy(text: &str) -> Option<PolicyArg> {
    Some(json(text).unchecked_into())
}
pub fn init(v: JsValue) -> Option<FetchInit> {
    Some(v.unchecked_into())
}
pub fn global(name: &str) -> JsValue {
    Reflect::get(&js_sys::global(), &name.into()).unwrap_or(JsValue::UNDEFINED)
}

pub async fn settle(p: Promise) -> Result<Response, JsValue> {
    JsFuture::from(p).await.map(|v| v.unchecked_into())
}

/// The fault server's log for one id, read with the plain platform fetch.
pub async fn server_log(origin: &str, id: &str) -> js_sys::Array {
    let f: js_sys::Function = global("fetch").unchecked_into();
    let url = JsValue::from_str(&format!("{origin}/log?id={id}"));
    let res: Response = JsFuture::from(
        f.call1(&JsValue::NULL, &url)
            .expect("fetch")
            .unchecked_into::<Promise>(),
    )
    .await
    .expect("log fetch")
    .unchecked_into();
    JsFuture::from(res.json().expect("json"))
        .await
        .expect("log json")
        .unchecked_into()
}

/// Waits (bounded) until the server saw the client hang up on request `index`.
pub async fn closed_early(origin: &str, id: &str) -> bool {
    for _ in 0..40 {
        let log = server_log(origin, id).await;
        if log.length() > 0 && get(&log.get(0), "closedEarly").as_bool() == Some(true) {
            return true;
        }
        JsFuture::from(Promise::new(&mut |resolve, _| {
            let set_timeout: js_sys::Function = global("setTimeout").unchecked_into();
            let _ = set_timeout.call2(&JsValue::NULL, &resolve, &JsValue::from(50));
        }))
        .await
        .expect("timer");
    }
    false
}

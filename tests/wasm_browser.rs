//! Browser-only tests: run in headless Chromium by wasm-bindgen-test-runner.
//! The first test fails anywhere but a real browser, so a misconfigured run
//! cannot quietly fall back to Node.
#![cfg(target_arch = "wasm32")]

use resilient_fetch::{FetchInput, resilient_fetch};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn global(name: &str) -> JsValue {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

#[wasm_bindgen_test]
fn runs_in_a_real_browser() {
    assert!(global("document").is_object(), "no document: not a browser");
    assert!(
        global("process").is_undefined(),
        "process is defined: this is Node"
    );
    let navigator = global("navigator");
    let agent = js_sys::Reflect::get(&navigator, &"userAgent".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    assert!(
        agent.contains("Chrome"),
        "user agent is not Chromium's: {agent}"
    );
}

const ORIGIN_A: Option<&str> = option_env!("RF_TEST_ORIGIN_A");

async fn first_log_entry(id: &str) -> JsValue {
    let origin = ORIGIN_A.expect("RF_TEST_ORIGIN_A unset at build time");
    let f: js_sys::Function = global("fetch").unchecked_into();
    let url = JsValue::from_str(&format!("{origin}/log?id={id}"));
    let res: web_sys::Response = JsFuture::from(
        f.call1(&JsValue::NULL, &url)
            .expect("fetch")
            .unchecked_into::<js_sys::Promise>(),
    )
    .await
    .expect("log")
    .unchecked_into();
    let log: js_sys::Array = JsFuture::from(res.json().expect("json"))
        .await
        .expect("json")
        .unchecked_into();
    log.get(0)
}

/// A browser sends a Referer by default; a Request's "no-referrer" policy must
/// survive resilientFetch's re-wrapping of the request (the Fetch standard
/// resets it when a non-empty init is given).
#[wasm_bindgen_test]
async fn a_requests_referrer_policy_is_kept() {
    let origin = ORIGIN_A.expect("RF_TEST_ORIGIN_A unset at build time");
    let id = format!("referrer-{}", (js_sys::Math::random() * 1e12) as u64);
    let init = web_sys::RequestInit::new();
    init.set_referrer_policy(web_sys::ReferrerPolicy::NoReferrer);
    let request = web_sys::Request::new_with_str_and_init(&format!("{origin}/ok?id={id}"), &init)
        .expect("request");
    let input: FetchInput = JsValue::from(request).unchecked_into();
    JsFuture::from(resilient_fetch(input, None, None))
        .await
        .expect("resolves");
    let entry = first_log_entry(&id).await;
    assert!(
        js_sys::Reflect::get(&entry, &"referer".into())
            .expect("field")
            .is_null(),
        "a Referer was sent"
    );

    // and by default the browser does send one, so the check above can fail
    let id2 = format!(
        "referrer-default-{}",
        (js_sys::Math::random() * 1e12) as u64
    );
    let input: FetchInput = JsValue::from_str(&format!("{origin}/ok?id={id2}")).unchecked_into();
    JsFuture::from(resilient_fetch(input, None, None))
        .await
        .expect("resolves");
    let entry = first_log_entry(&id2).await;
    assert!(
        js_sys::Reflect::get(&entry, &"referer".into())
            .expect("field")
            .is_string(),
        "no Referer by default"
    );
}

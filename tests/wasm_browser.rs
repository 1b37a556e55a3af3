//! Browser-only tests: run in headless Chromium by wasm-bindgen-test-runner.
//! The first test fails anywhere but a real browser, so a misconfigured run
//! cannot quietly fall back to Node.
#![cfg(target_arch = "wasm32")]

mod common;

use common::*;
use resilient_fetch::{FetchInput, ResilientClient, resilient_fetch};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

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

/// The Referer the fault server saw for one request made with `input`.
async fn referer_sent(input: FetchInput, id: &str) -> JsValue {
    JsFuture::from(resilient_fetch(input, None, None))
        .await
        .expect("resolves");
    get(&server_log(origin_a(), id).await.get(0), "referer")
}

/// A browser sends a Referer by default; a Request's "no-referrer" policy must
/// survive resilientFetch's re-wrapping of the request (the Fetch standard
/// resets it when a non-empty init is given).
#[wasm_bindgen_test]
async fn a_requests_referrer_policy_is_kept() {
    let id = uid("referrer");
    let init = web_sys::RequestInit::new();
    init.set_referrer_policy(web_sys::ReferrerPolicy::NoReferrer);
    let request =
        web_sys::Request::new_with_str_and_init(&format!("{}/ok?id={id}", origin_a()), &init)
            .expect("request");
    let sent = referer_sent(JsValue::from(request).unchecked_into(), &id).await;
    assert!(sent.is_null(), "a Referer was sent");

    // and by default the browser does send one, so the check above can fail
    let id = uid("referrer-default");
    let sent = referer_sent(input(&format!("{}/ok?id={id}", origin_a())), &id).await;
    assert!(sent.is_string(), "no Referer by default");
}

/// Under mode "no-cors" a browser drops the Idempotency-Key header: such a
/// POST has no key, so a network error must not make us send it again. (The
/// browser itself may resend a request whose reused connection broke, so the
/// attempts are counted on our side.)
#[wasm_bindgen_test]
async fn a_no_cors_post_carries_no_key_and_is_not_retried() {
    let id = uid("no-cors");
    let url = format!("{}/flaky?id={id}&fail=1&code=drop", origin_a());
    let client = ResilientClient::new(policy(r#"{"retry":{"baseDelayMs":1}}"#)).expect("policy");
    let call = client.fetch(
        input(&url),
        init(json(r#"{"method":"POST","mode":"no-cors","body":"x"}"#)),
        None,
    );
    assert!(
        settle(call).await.is_err(),
        "the dropped connection must reject"
    );
    let stats = get(&client.stats(), origin_a());
    assert_eq!(
        get(&stats, "attempts").as_f64(),
        Some(1.0),
        "a POST without a key was retried"
    );
    let log = server_log(origin_a(), &id).await;
    assert!(log.length() >= 1);
    assert!(
        log.iter().all(|e| get(&e, "key").is_null()),
        "the key header got through no-cors"
    );
}

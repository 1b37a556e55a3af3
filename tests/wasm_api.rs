//! The JS API (`resilientFetch`, `ResilientClient`) against the fault server
//! on 127.0.0.1, through the real platform `fetch`. Runs in Node, and in
//! headless Chromium with `WASM_BINDGEN_USE_BROWSER=1` (scripts/test.sh does
//! both); `runs_where_expected` proves which.
#![cfg(target_arch = "wasm32")]

mod common;

use common::*;
use js_sys::Reflect;
use resilient_fetch::{ResilientClient, resilient_fetch};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::AbortController;

#[wasm_bindgen_test]
fn runs_where_expected() {
    let in_browser = global("document").is_object();
    match option_env!("RF_EXPECT_RUNTIME") {
        Some("browser") => assert!(in_browser, "expected a browser, but there is no document"),
        Some("node") => assert!(
            !in_browser && global("process").is_object(),
            "expected Node"
        ),
        other => panic!("RF_EXPECT_RUNTIME must be node or browser at build time, got {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn flaky_5xx_is_retried_until_success() {
    let id = uid("flaky");
    let url = format!("{}/flaky?id={id}&fail=2&code=503", origin_a());
    let res = settle(resilient_fetch(
        input(&url),
        None,
        policy(r#"{"retry":{"baseDelayMs":1}}"#),
    ))
    .await
    .expect("resolves");
    assert_eq!(res.status(), 200);
    assert_eq!(server_log(origin_a(), &id).await.length(), 3);
}

#[wasm_bindgen_test]
async fn final_5xx_resolves_once_retries_are_spent() {
    let id = uid("spent");
    let url = format!("{}/flaky?id={id}&fail=9&code=500", origin_a());
    let res = settle(resilient_fetch(
        input(&url),
        None,
        policy(r#"{"retry":{"baseDelayMs":1,"maxAttempts":2}}"#),
    ))
    .await
    .expect("a final 5xx resolves, as fetch does");
    assert_eq!(res.status(), 500);
    assert_eq!(server_log(origin_a(), &id).await.length(), 2);
}

#[wasm_bindgen_test]
async fn attempt_timeout_aborts_the_request() {
    let id = uid("hang");
    let url = format!("{}/hang?id={id}", origin_a());
    let err = settle(resilient_fetch(
        input(&url),
        None,
        policy(r#"{"timeoutMs":100,"retry":false}"#),
    ))
    .await
    .expect_err("times out");
    assert_eq!(s(&err, "name"), "TimeoutError");
    assert!(err.is_instance_of::<js_sys::Error>());
    assert!(
        closed_early(origin_a(), &id).await,
        "the server never saw the request aborted"
    );
}

#[wasm_bindgen_test]
async fn post_keeps_one_idempotency_key_across_retries() {
    let id = uid("effect");
    let url = format!("{}/effect?id={id}&drop=1", origin_a());
    let res = settle(resilient_fetch(
        input(&url),
        init(json(r#"{"method":"POST","body":"charge"}"#)),
        // The fault server accepts the header under CORS: in a browser, where it is another
        // origin than the page, automatic keys go there only when asked for.
        policy(r#"{"idempotencyKey":true,"retry":{"baseDelayMs":1}}"#),
    ))
    .await
    .expect("the retry succeeds");
    assert_eq!(res.status(), 201);
    let log = server_log(origin_a(), &id).await;
    assert_eq!(log.length(), 2);
    let (k1, k2) = (s(&log.get(0), "key"), s(&log.get(1), "key"));
    assert_eq!(k1, k2, "the retry must carry the same key");
    let uuid_v4 = js_sys::RegExp::new(
        "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        "",
    );
    assert!(uuid_v4.test(&k1), "not a UUID v4: {k1}");
}

#[wasm_bindgen_test]
async fn post_without_key_is_not_retried() {
    let id = uid("nokey");
    let url = format!("{}/flaky?id={id}&fail=1&code=503", origin_a());
    let res = settle(resilient_fetch(
        input(&url),
        init(json(r#"{"method":"POST","body":"x"}"#)),
        policy(r#"{"idempotencyKey":false,"retry":{"baseDelayMs":1}}"#),
    ))
    .await
    .expect("resolves with the 503");
    assert_eq!(res.status(), 503);
    assert_eq!(server_log(origin_a(), &id).await.length(), 1);
}

#[wasm_bindgen_test]
async fn breaker_opens_per_origin_and_short_circuits() {
    let client = ResilientClient::new(policy(
        r#"{"retry":false,"breaker":{"failureThreshold":2,"cooldownMs":60000}}"#,
    ))
    .expect("valid policy");
    let id = uid("breaker");
    let url = format!("{}/status?id={id}&code=503", origin_a());
    for _ in 0..2 {
        let res = settle(client.fetch(input(&url), None, None))
            .await
            .expect("503 resolves");
        assert_eq!(res.status(), 503);
    }
    assert_eq!(
        client.breaker_state(origin_a().into()).expect("origin"),
        "open"
    );
    let err = settle(client.fetch(input(&url), None, None))
        .await
        .expect_err("short-circuits");
    assert_eq!(s(&err, "name"), "CircuitOpenError");
    assert_eq!(s(&err, "origin"), origin_a());
    assert!(get(&err, "retryAfterMs").as_f64().unwrap_or(0.0) > 0.0);
    assert_eq!(
        server_log(origin_a(), &id).await.length(),
        2,
        "nothing is sent while open"
    );
    // The other origin is untouched.
    assert_eq!(
        client.breaker_state(origin_b().into()).expect("origin"),
        "closed"
    );
    let ok = settle(client.fetch(input(&format!("{}/ok", origin_b())), None, None))
        .await
        .expect("b works");
    assert_eq!(ok.status(), 200);
}

#[wasm_bindgen_test]
async fn caller_abort_rejects_with_its_reason_and_aborts_the_request() {
    let id = uid("abort");
    let url = format!("{}/hang?id={id}", origin_a());
    let controller = AbortController::new().expect("controller");
    let init_obj = js_sys::Object::new();
    Reflect::set(&init_obj, &"signal".into(), &controller.signal()).expect("set");
    let p = resilient_fetch(input(&url), init(init_obj.into()), None);
    // Abort once the server has the request.
    for _ in 0..40 {
        if server_log(origin_a(), &id).await.length() > 0 {
            break;
        }
    }
    controller.abort();
    let err = settle(p).await.expect_err("aborted");
    assert_eq!(s(&err, "name"), "AbortError");
    assert!(
        closed_early(origin_a(), &id).await,
        "the request was not aborted"
    );
    assert_eq!(
        server_log(origin_a(), &id).await.length(),
        1,
        "no attempt after the abort"
    );
}

#[wasm_bindgen_test]
async fn invalid_policy_rejects_before_any_request() {
    let id = uid("invalid");
    let url = format!("{}/ok?id={id}", origin_a());
    let err = settle(resilient_fetch(
        input(&url),
        None,
        policy(r#"{"retry":{"maxAttempts":0}}"#),
    ))
    .await
    .expect_err("rejects");
    assert!(
        err.is_instance_of::<js_sys::RangeError>(),
        "not a RangeError"
    );
    assert!(
        s(&err, "message").contains("retry.maxAttempts"),
        "message must name the field"
    );
    assert_eq!(server_log(origin_a(), &id).await.length(), 0);
}

#[wasm_bindgen_test]
async fn invalid_url_rejects_with_type_error() {
    let err = settle(resilient_fetch(input("http://[bad"), None, None))
        .await
        .expect_err("rejects");
    assert!(err.is_instance_of::<js_sys::TypeError>());
}

#[wasm_bindgen_test]
async fn retry_after_too_long_hands_back_the_response() {
    let id = uid("ra-long");
    let url = format!("{}/retry-after?id={id}&value=3600&code=429", origin_a());
    // rateLimit off for this call: its 429 would otherwise hold the origin (for
    // maxRetryAfterMs) for every other test of the shared client.
    let res = settle(resilient_fetch(
        input(&url),
        None,
        policy(r#"{"rateLimit":false}"#),
    ))
    .await
    .expect("resolves with the 429");
    assert_eq!(res.status(), 429);
    assert_eq!(server_log(origin_a(), &id).await.length(), 1);
}

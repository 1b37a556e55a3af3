//! Browser-only tests: run in headless Chromium by wasm-bindgen-test-runner.
//! The first test fails anywhere but a real browser, so a misconfigured run
//! cannot quietly fall back to Node.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsValue;
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

//! Stale answers (policy `stale`) on the JS platform. The decisions are the core's (this
//! folder's rules: which answers are kept and under which key, whether a kept one may be served
//! for a failure, its `Age`); `stale.js` does the I/O (the stores, the tee, the served
//! `Response`). Here: a client's store ([`Store`], opened on first use), and what a call with
//! `stale` on carries from its start ([`Lookup`]): after the engine's result it keeps the
//! answer (or, for a write, forgets what its URL kept), and for a failure it serves a kept
//! answer within its window.

use std::cell::OnceCell;

use js_sys::{Array, Date, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::cache_control::CacheControl;
use super::keep::{self, Request, Response};
use super::section::StalePolicy;
use super::serve::{Failure, Kept, Told, servable, window_ms};
use crate::engine::CallResult;
use crate::events::{Event, OutcomeKind};
use crate::policy::Policy;
use crate::wasm::bindings::performance_now;
use crate::wasm::ended::Reply;
use crate::wasm::events::emit;
use crate::wasm::transport::FetchTransport;

#[wasm_bindgen(module = "/js/joined/site.js")]
unsafe extern "C" {
    /// `[store, shared]`: `given`, else the runtime's (Cache API or memory), and whether the
    /// runtime's store is shared.
    #[wasm_bindgen(js_name = staleOpen)]
    fn stale_open(given: &JsValue, max_entries: u32, max_bytes: u32) -> Array;
    /// `[url, ...header names and values]` of what the call sends.
    #[wasm_bindgen(js_name = staleRequest, catch)]
    fn stale_request(source: &JsValue, init: &JsValue) -> Result<Array, JsValue>;
    /// `[status, ...header names and values]` of an answer.
    #[wasm_bindgen(js_name = staleHeaders)]
    fn stale_headers(response: &JsValue) -> Array;
    /// Keeps a copy of `response` (never awaited by the call).
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = staleKeep)]
    fn stale_keep(
        store: &JsValue,
        response: &JsValue,
        key: &str,
        base: &str,
        vary: &str,
        sent: f64,
        shared: bool,
        limit: u32,
        max_age_s: f64,
        ms: f64,
    );
    /// The answer kept under `key`, or undefined, within `ms`.
    #[wasm_bindgen(js_name = staleGet)]
    fn stale_get(store: &JsValue, key: &str, ms: f64) -> Promise;
    /// The kept answer `entry` as served.
    #[wasm_bindgen(js_name = staleServe)]
    fn stale_serve(entry: &Array, age: u32, reason: &str, replaced: &JsValue) -> JsValue;
    /// Deletes what is kept under `keys`.
    #[wasm_bindgen(js_name = staleDelete)]
    fn stale_delete(store: &JsValue, keys: Array, ms: f64);
}

/// The longest any store call may take, in ms: a store that does not answer costs a call this
/// much at most, and never more than its deadline leaves.
const STORE_MS: f64 = 1000.0;
/// The least a lookup is given once the deadline has passed (a deadline is one of the failures a
/// kept answer stands in for): an in-memory store answers within it.
const STORE_MIN_MS: f64 = 20.0;

/// `stale.store` as given (undefined when not).
#[derive(Default)]
pub struct Held(JsValue);

impl Held {
    /// What `read` gives.
    #[inline]
    pub fn new(read: impl FnOnce() -> JsValue) -> Held {
        Held(read())
    }

    /// Whether a store was given (to one call: refused, it is a client's).
    pub fn given(&self) -> bool {
        !self.0.is_undefined() && !self.0.is_null()
    }
}

/// An opened store.
pub struct Stale {
    /// The store's object: `get`, `put`, `delete` (src/stale/stale.js).
    store: JsValue,
    /// Whether the runtime's store is shared (a Worker's cache, a server's memory).
    shared: bool,
}

/// A client's store of kept answers, opened on its first use (a call may turn `stale` on where
/// its client did not: the client's store then, with its bounds).
pub struct Store {
    given: JsValue,
    /// `stale.maxEntries` and `stale.maxBytes` of the client.
    bounds: (u32, u32),
    opened: OnceCell<Stale>,
}

impl Store {
    /// The store of a client of `policy` (its `stale`, if any), over `held` (`stale.store`).
    pub fn new(policy: Option<&StalePolicy>, held: Held) -> Store {
        let d = StalePolicy::default();
        let p = policy.unwrap_or(&d);
        Store {
            given: held.0,
            bounds: (p.max_entries, p.max_bytes),
            opened: OnceCell::new(),
        }
    }

    fn get(&self) -> &Stale {
        self.opened.get_or_init(|| {
            let opened = stale_open(&self.given, self.bounds.0, self.bounds.1);
            Stale {
                store: opened.get(0),
                shared: opened.get(1).as_bool().unwrap_or(true),
            }
        })
    }
}

/// Whether a call of `method` under `policy` may be served a kept answer (then an open breaker
/// does not refuse it on the fast path: the answer is served without sending).
#[inline]
pub fn serves(policy: &Policy, method: &str) -> bool {
    policy.stale.is_some() && is_read(method)
}

fn is_read(method: &str) -> bool {
    method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD")
}

/// A flat `[name, value, ...]` list from `from` on, as pairs.
fn pairs(list: &Array, from: u32) -> Vec<(String, String)> {
    let text = |i| list.get(i).as_string().unwrap_or_default();
    (from..list.length().saturating_sub(1))
        .step_by(2)
        .map(|i| (text(i), text(i + 1)))
        .collect()
}

fn borrowed(owned: &[(String, String)]) -> Vec<(&str, &str)> {
    owned
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

/// What a call with `stale` on carries from its start.
pub struct Lookup {
    /// Its method, in upper case.
    method: String,
    /// Its URL (`href`).
    url: String,
    /// Its header fields.
    headers: Vec<(String, String)>,
    /// When it started, in Unix ms (`request_time`).
    sent_ms: f64,
}

impl Lookup {
    /// For a call under `policy` with `stale` on, of `method`, sending `request` (its source and
    /// init): what keeping and serving need. None with `stale` off.
    #[inline]
    pub fn of(
        policy: &Policy,
        method: &str,
        request: (&JsValue, &JsValue, bool),
    ) -> Option<Lookup> {
        policy.stale.as_ref()?;
        let (source, init, _) = request;
        let read = stale_request(source, init).ok()?;
        Some(Lookup {
            method: method.to_ascii_uppercase(),
            url: read.get(0).as_string()?,
            headers: pairs(&read, 1),
            sent_ms: Date::now(),
        })
    }

    /// After the engine's `result`: a read's keepable answer is kept, a write's success makes
    /// what its URL kept out of date; and the failure a kept answer may stand in for, if the
    /// call ends in one.
    pub fn after(
        &self,
        store: &Store,
        policy: &Policy,
        result: &CallResult<Result<JsValue, JsValue>>,
        transport: &FetchTransport,
    ) -> Option<Failure> {
        let stale = policy.stale.as_ref()?;
        let read = is_read(&self.method);
        let failure = match result {
            CallResult::Done {
                output: Ok(response),
                ..
            } => {
                let answer = stale_headers(response);
                let status = answer.get(0).as_f64().unwrap_or(0.0) as u16;
                if !read {
                    if keep::invalidates(&self.method, status) {
                        let keys: Array = ["GET", "HEAD"]
                            .iter()
                            .map(|m| JsValue::from(keep::base_key(m, &self.url)))
                            .collect();
                        stale_delete(&store.get().store, keys, STORE_MS);
                    }
                    return None;
                }
                let retryable = match &policy.retry {
                    Some(retry) => retry.retry_on.contains(&status),
                    None => crate::policy::defaults::RETRY_ON.contains(&status),
                };
                if retryable {
                    return Some(Failure::Status(status));
                }
                self.keep(store.get(), stale, response, &pairs(&answer, 1), status);
                return None;
            }
            CallResult::Done { .. } => match transport.last_outcome() {
                Some(OutcomeKind::NetworkError) => Failure::Network,
                Some(OutcomeKind::Timeout) => Failure::Timeout,
                _ => return None,
            },
            CallResult::ShortCircuited { .. } => Failure::BreakerOpen,
            CallResult::Throttled(_) => Failure::Throttled,
            CallResult::RateLimited { .. } => Failure::RateLimited,
            CallResult::DeadlineExceeded => Failure::Deadline,
            CallResult::BulkheadFull | CallResult::Aborted => return None,
        };
        read.then_some(failure)
    }

    /// Keeps `response` (of `status`, with `headers`) if the rules let the store keep it.
    fn keep(
        &self,
        stale: &Stale,
        policy: &StalePolicy,
        response: &JsValue,
        headers: &[(String, String)],
        status: u16,
    ) {
        let (req_headers, res_headers) = (borrowed(&self.headers), borrowed(headers));
        let req = Request {
            method: &self.method,
            url: &self.url,
            headers: &req_headers,
        };
        let body_bytes = if self.method == "HEAD" {
            Some(0)
        } else {
            // Digits, saturating at 2^31: past any limit alike.
            keep::field(&res_headers, "content-length")
                .and_then(|n| super::cache_control::delta_seconds(&n))
                .map(u64::from)
        };
        let res = Response {
            status,
            headers: &res_headers,
            body_bytes,
        };
        let shared = policy.shared(stale.shared);
        if keep::may_keep(&req, &res, policy, shared).is_err() {
            return;
        }
        let Some(vary) = keep::vary_names(&res_headers) else {
            return;
        };
        let now = Date::now();
        let kept = Kept::new(self.sent_ms, now, &res_headers, shared);
        let window = window_ms(&kept, policy, &CacheControl::default());
        let max_age_s = ((kept.lifetime_ms() + window) / 1000.0).ceil() + 1.0;
        let base = keep::base_key(&self.method, &self.url);
        let key = keep::key(&self.method, &self.url, &vary, &req_headers);
        // The names, comma-separated (no `join`, no string pattern: each is kilobytes of wasm).
        let mut names = String::new();
        for name in &vary {
            if !names.is_empty() {
                names.push(',');
            }
            names.push_str(name);
        }
        stale_keep(
            &stale.store,
            response,
            &key,
            &base,
            &names,
            self.sent_ms,
            shared,
            policy.max_body_bytes,
            max_age_s,
            STORE_MS,
        );
    }

    /// The call's result for `failure`: the promise of a kept answer within its window, with
    /// its `Age`, a `stale` event and `count` (the origin's `stale` counter); else of
    /// `mapped`, as without `stale`. Every store call is bounded by what the deadline leaves
    /// (at most [`STORE_MS`]). A task of its own, not a part of the call's future: the call's
    /// future stays as it is for every call.
    pub fn serve(
        self,
        store: &Store,
        failure: Failure,
        reply: &Reply<'_>,
        mapped: Result<JsValue, JsValue>,
        count: impl FnOnce(Told) + 'static,
    ) -> Result<JsValue, JsValue> {
        let policy = &reply.resolved.policy;
        let Some(stale) = policy.stale.clone() else {
            return mapped;
        };
        let deadline = reply.started + f64::from(policy.total_timeout_ms);
        let store = store.get().store.clone();
        let listener = reply.resolved.on_event.clone();
        let origin = reply.origin.to_owned();
        let task = async move {
            let served = self.find(&store, failure, &stale, deadline).await;
            let Some((entry, age_s, age_ms)) = served else {
                return mapped;
            };
            let replaced = match &mapped {
                Ok(response) => response.clone(),
                Err(_) => JsValue::UNDEFINED,
            };
            let response = stale_serve(&entry, age_s, failure.as_str(), &replaced);
            let told = Told {
                age_ms,
                reason: failure,
            };
            count(told);
            if let Some(listener) = &listener {
                emit(listener, &origin, None, &Event::Stale(told));
            }
            Ok(response)
        };
        Ok(crate::wasm::settle::promise_with(|_| task).into())
    }

    /// The kept answer that may stand in for `failure` now, with its `Age` (s) and age (ms).
    async fn find(
        &self,
        store: &JsValue,
        failure: Failure,
        stale: &StalePolicy,
        deadline: f64,
    ) -> Option<(Array, u32, f64)> {
        let ms = || (deadline - performance_now()).clamp(STORE_MIN_MS, STORE_MS);
        let base = keep::base_key(&self.method, &self.url);
        let mut entry = found(store, &base, ms()).await?;
        // [copy, sent, received, shared, vary, status, statusText, ...headers]
        let vary = entry.get(4).as_string().unwrap_or_default();
        if !vary.is_empty() {
            let names: Vec<String> = vary.split(',').map(str::to_owned).collect();
            let headers = borrowed(&self.headers);
            let key = keep::key(&self.method, &self.url, &names, &headers);
            entry = found(store, &key, ms()).await?;
        }
        let number = |i| entry.get(i).as_f64().unwrap_or(f64::NAN);
        let own = pairs(&entry, 7);
        let kept = Kept::new(
            number(1),
            number(2),
            &borrowed(&own),
            entry.get(3).as_bool().unwrap_or(true),
        );
        let asked = CacheControl::parse(keep::lines(&borrowed(&self.headers), "cache-control"));
        let now = Date::now();
        let served = servable(&kept, now, failure, stale, &asked).ok()?;
        Some((entry, served.age_s, kept.age_ms(now)))
    }
}

/// The entry under `key` in `store`, within `ms`, if one of ours is there.
async fn found(store: &JsValue, key: &str, ms: f64) -> Option<Array> {
    let got = JsFuture::from(stale_get(store, key, ms)).await.ok()?;
    got.dyn_into::<Array>().ok()
}

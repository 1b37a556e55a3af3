//! The shell's part of resumed downloads (wasm only): a GET's response whose policy resumes
//! gets a resumer (`attachResume`, resume.js); when a read of its body breaks, the resumer
//! asks the engine for one more attempt of the call ([`crate::engine::run_course`]) with `Range`
//! and `If-Range`, judges the answer ([`super::Body::check`]) and hands its body back to be
//! read on. And the TypeScript declarations of the option.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::engine::Course;
use crate::policy::Policy;
use crate::wasm::resolve::Resolved;
use crate::wasm::state::ClientInner;
use crate::wasm::transport::FetchTransport;

/// What a call hands over for its body to be resumed: what one more attempt of it needs.
#[cfg_attr(
    not(feature = "resume"),
    allow(dead_code, reason = "read by the resumer only")
)]
pub(crate) struct Resumable {
    /// Its client (registry, events).
    pub client: Rc<ClientInner>,
    /// The policy it ran under.
    pub resolved: Resolved,
    /// Its registry name.
    pub origin: String,
    /// The same origin as a JS string.
    pub origin_js: JsValue,
    /// Its method.
    pub method: String,
    /// Its idempotency key, if any.
    pub key: Option<String>,
    /// Its transport: its request, and how it sends.
    pub transport: FetchTransport,
    /// Where the call stands: when it started, its attempts, its last backoff.
    pub course: Course,
    /// Its URL's origin when the policy lists alternates for it (`failover`): a resume goes
    /// where a retry of the call would.
    pub failover: crate::failover::shell::Listed,
    /// The caller's signal, or undefined.
    pub signal: JsValue,
}

/// Whether a call's body may be resumed: its policy resumes, it is a GET and it was not
/// coalesced (a coalesced response's copies are read apart). Never without `resume`.
#[inline(always)]
pub(crate) fn wanted(policy: &Policy, method: &str, coalesced: bool) -> bool {
    cfg!(feature = "resume")
        && policy.resume.is_some()
        && !coalesced
        && method.eq_ignore_ascii_case("GET")
}

/// The signal a call's response is guarded with: the caller's, or none yet (null) for a
/// resumable one without a signal, whose reads must go through the guard (js/body.js).
#[inline(always)]
pub(crate) fn guarded_signal(resumable: bool, signal: JsValue) -> JsValue {
    if resumable && signal.is_undefined() {
        JsValue::NULL
    } else {
        signal
    }
}

#[cfg(feature = "resume")]
pub(crate) use on::offer;

/// `$mapped`, a call's result, with its body made resumable ([`offer`], the call's parts
/// `$call`: a [`Resumable`]) when `$wanted`.
#[cfg(feature = "resume")]
macro_rules! offered {
    ($wanted:expr, $mapped:expr, $call:expr) => {
        if $wanted {
            $crate::resume::shell::offer($mapped, $call)
        } else {
            $mapped
        }
    };
}

/// `$mapped`, a call's result, as it is: nothing resumes in this build ([`wanted`] is never
/// true). `$call` is not even built: the call's parts are not moved (a move in a branch never
/// taken still costs the lean wasm 125 B gz).
#[cfg(not(feature = "resume"))]
macro_rules! offered {
    ($wanted:expr, $mapped:expr, $call:expr) => {{
        let _: bool = $wanted;
        $mapped
    }};
}

pub(crate) use offered;

#[cfg(feature = "resume")]
mod on {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use js_sys::{Array, Promise};
    use wasm_bindgen::prelude::*;

    use super::Resumable;
    use crate::engine::{self, AttemptOutcome, Call, CallResult};
    use crate::events::{Event, GiveUpReason};
    use crate::resume::{Body, Broke, Head, Refusal, ResumePolicy, may_resume};
    use crate::wasm::abort::{AbortGuard, AbortState};
    use crate::wasm::bindings::{discard_body, make_timeout_error, performance_now};
    use crate::wasm::codes::TimeoutKind;
    use crate::wasm::ended::circuit_open_error;
    use crate::wasm::env::JsEnv;
    use crate::wasm::events::emit;

    // Resumed downloads (src/resume/resume.js, joined into js/joined/arguments.js).
    #[wasm_bindgen(module = "/js/joined/arguments.js")]
    unsafe extern "C" {
        /// `[status, ETag, Last-Modified, Date, Content-Encoding, Accept-Ranges,
        /// Content-Range, Content-Length]` of `response` (undefined where absent).
        #[wasm_bindgen(js_name = resumeHead)]
        fn resume_head(response: &JsValue) -> Array;
        /// The call's request (`input`, the fast path's `init`) with `Range` and `If-Range`.
        #[wasm_bindgen(js_name = rangeRequest, catch)]
        fn range_request(
            input: &JsValue,
            init: &JsValue,
            range: &str,
            if_range: &str,
        ) -> Result<JsValue, JsValue>;
        /// Makes a broken read of `response`'s body go on through `resumer` (a [`BodyResumer`]).
        #[wasm_bindgen(js_name = attachResume)]
        fn attach_resume(response: &JsValue, resumer: JsValue);
        /// The `TypeError` of a body that could not be resumed: `message`, `reason` its code,
        /// `cause` the failure it could not resume.
        #[wasm_bindgen(js_name = resumeError)]
        fn resume_error(message: &str, reason: &str, cause: &JsValue) -> JsValue;
    }

    /// The call's response, its body made resumable: one that may not be (no validator, an
    /// encoding) errors, when it breaks, naming why. Other results as they are.
    pub(crate) fn offer(
        mapped: Result<JsValue, JsValue>,
        call: Resumable,
    ) -> Result<JsValue, JsValue> {
        let (Ok(response), Some(policy)) = (&mapped, call.resolved.policy.resume.clone()) else {
            return mapped;
        };
        let values = resume_head(response);
        let fields: Vec<Option<String>> = (1..8).map(|i| values.get(i).as_string()).collect();
        let body = Body::from_first(&call.method, &head(&values, &fields));
        let state = State {
            call,
            policy,
            body,
            resumes: 0,
        };
        let resumer = BodyResumer {
            state: Rc::new(RefCell::new(Some(state))),
            running: Rc::default(),
        };
        attach_resume(response, resumer.into());
        mapped
    }

    /// The head a resume reads, from [`resume_head`]'s values (`fields`: its strings).
    fn head<'a>(values: &Array, fields: &'a [Option<String>]) -> Head<'a> {
        let field = |i: usize| fields.get(i).and_then(|f| f.as_deref());
        Head {
            status: values.get(0).as_f64().unwrap_or(0.0) as u16,
            etag: field(0),
            last_modified: field(1),
            date: field(2),
            content_encoding: field(3),
            accept_ranges: field(4),
            content_range: field(5),
            content_length: field(6),
        }
    }

    /// A response's resumer, held by its body's guard (js/body.js): freed with it.
    #[wasm_bindgen(skip_typescript)]
    pub struct BodyResumer {
        /// Taken out while a resume runs (one at a time: a body is read in order).
        state: Rc<RefCell<Option<State>>>,
        /// The running resume's abort, fired when the body is cancelled meanwhile.
        running: Rc<RefCell<Option<Rc<AbortState>>>>,
    }

    #[wasm_bindgen]
    impl BodyResumer {
        /// Resumes the body after `bytes` reached the caller, its read having failed with
        /// `cause` (`gap`: no chunk came for `bodyTimeoutMs`): resolves with `[answer, its
        /// AbortController]` whose body is the rest, or null when nothing is left; rejects
        /// with why not.
        #[wasm_bindgen(skip_typescript)]
        pub fn resume(&self, bytes: f64, cause: JsValue, gap: bool) -> Promise {
            let (cell, running) = (self.state.clone(), self.running.clone());
            crate::wasm::settle::promise_with(|_| async move {
                let Some(mut state) = cell.borrow_mut().take() else {
                    let busy = "the body is being resumed already";
                    return Err(resume_error(busy, "busy", &cause));
                };
                let result = state.next(bytes as u64, cause, gap, &running).await;
                *cell.borrow_mut() = Some(state);
                result
            })
        }

        /// The body was cancelled: a resume under way stops (its wait, its attempt).
        #[wasm_bindgen(skip_typescript)]
        pub fn cancel(&self) {
            let running = self.running.borrow_mut().take();
            if let Some(abort) = running {
                abort.fire();
            }
        }
    }

    /// What a resumer keeps between resumes.
    struct State {
        call: Resumable,
        policy: ResumePolicy,
        /// The body the first response holds, or why it cannot be resumed.
        body: Result<Body, Refusal>,
        /// Resumes made.
        resumes: u32,
    }

    /// The error of a resume `refusal`, with the failure it could not resume as its cause.
    fn refused(refusal: Refusal, cause: &JsValue) -> JsValue {
        resume_error(refusal.message(), refusal.code(), cause)
    }

    impl State {
        /// One resume after `bytes`: decided, sent and judged (see [`BodyResumer::resume`]).
        async fn next(
            &mut self,
            bytes: u64,
            cause: JsValue,
            gap: bool,
            running: &RefCell<Option<Rc<AbortState>>>,
        ) -> Result<JsValue, JsValue> {
            let body = self.body.as_ref().map_err(|r| refused(*r, &cause))?;
            may_resume(self.resumes, &self.policy).map_err(|r| refused(r, &cause))?;
            let asked = match body.request(bytes) {
                Ok(Some(asked)) => asked,
                Ok(None) => return Ok(JsValue::NULL),
                Err(r) => return Err(refused(r, &cause)),
            };
            let call = &self.call;
            let (input, init, _) = call.transport.request();
            let request = range_request(input, init, &asked.range, &asked.if_range)?;
            self.resumes += 1;
            let signal = Some(call.signal.clone()).filter(|s| !s.is_undefined() && !s.is_null());
            let guard = AbortGuard::new(signal);
            *running.borrow_mut() = Some(guard.state().clone());
            let mut transport = call.transport.resend(request, guard.state().clone());
            let env = JsEnv {
                abort: guard.state().clone(),
                started: Default::default(),
                called: Default::default(),
            };
            let gave_up = Cell::new(None);
            let mut on_event = |event: &Event| {
                if let Event::GiveUp { reason, .. } = event {
                    gave_up.set(Some(*reason));
                }
                if let Some(f) = &call.resolved.on_event {
                    emit(f, &call.origin, call.key.as_deref(), event);
                }
            };
            let policy = &call.resolved.policy;
            let broke = if gap {
                AttemptOutcome::Timeout
            } else {
                AttemptOutcome::NetworkError
            };
            let attempt = Call {
                origin: &call.origin,
                alternates: call.failover.alternates(policy),
                method: &call.method,
                has_key: call.key.is_some(),
                replayable: true,
                has_body: false,
                kept: false,
            };
            let mut course = call.course;
            let broke = Broke::new(broke, Err(cause.clone()));
            let result = engine::run_course(
                &call.client.registry,
                policy,
                attempt,
                &mut transport,
                &env,
                &mut on_event,
                &mut course,
                Some(broke),
            )
            .await;
            running.borrow_mut().take();
            let total_ms = f64::from(policy.total_timeout_ms);
            let timed_out = || make_timeout_error(TimeoutKind::Call as u8, total_ms);
            let told = match result {
                CallResult::Done {
                    output: Ok(answer), ..
                } => {
                    let controller = transport.controller_of(&answer);
                    let values = resume_head(&answer);
                    let fields: Vec<Option<String>> =
                        (1..8).map(|i| values.get(i).as_string()).collect();
                    let checked = body.check(bytes, &head(&values, &fields));
                    match (checked, controller) {
                        (Ok(splice), Some(controller)) => {
                            if let Ok(body) = self.body.as_mut() {
                                body.learn(&splice);
                            }
                            Ok(Array::of2(&answer, &controller).into())
                        }
                        (Err(r), _) => {
                            discard_body(&answer);
                            Err(refused(r, &cause))
                        }
                        (Ok(_), None) => Err(refused(Refusal::BadContentRange, &cause)),
                    }
                }
                CallResult::Done {
                    output: Err(error), ..
                } => Err(match gave_up.get() {
                    Some(GiveUpReason::Deadline) => timed_out(),
                    // Refused as a call its breaker refuses is (it would be open when the wait ended).
                    Some(GiveUpReason::BreakerOpen) => {
                        let until = (call.client.registry.read())
                            .and_then(|r| r.peek(&call.origin)?.breaker.open_until());
                        let ms = until.map_or(0.0, |until| (until - performance_now()).max(0.0));
                        circuit_open_error(&call.client, &call.origin, &call.origin_js, ms)
                    }
                    reason => gave_up_error(reason, &error),
                }),
                CallResult::Aborted => Err(guard.state().reason()),
                CallResult::DeadlineExceeded => Err(timed_out()),
                CallResult::ShortCircuited { retry_after_ms } => Err(circuit_open_error(
                    &call.client,
                    &call.origin,
                    &call.origin_js,
                    retry_after_ms,
                )),
                _ => Err(gave_up_error(None, &cause)),
            };
            self.call.course = course;
            told
        }
    }

    /// The error of a resume the call gave up on (`reason`, its `giveUp` event's), with the
    /// last failure as its cause.
    fn gave_up_error(reason: Option<GiveUpReason>, cause: &JsValue) -> JsValue {
        let (code, message) = match reason {
            Some(GiveUpReason::MaxAttempts) => (
                "maxAttempts",
                "the body could not be resumed: the call has no attempts left (retry.maxAttempts)",
            ),
            Some(GiveUpReason::Budget) => (
                "budget",
                "the body could not be resumed: the origin's retry budget is spent",
            ),
            Some(GiveUpReason::NotRetryable) => (
                "notRetryable",
                "the body could not be resumed: retries are off (policy retry), and each resume is an attempt",
            ),
            Some(reason) => (
                reason.as_str(),
                "the body could not be resumed: the call gave up",
            ),
            None => ("failed", "the body could not be resumed"),
        };
        resume_error(message, code, cause)
    }
}

/// The options of resumed downloads (feature `resume`): merged into `Policy` in the builds
/// that have it.
#[cfg(feature = "resume")]
#[wasm_bindgen(typescript_custom_section)]
const RESUME_TYPES: &str = r#"
export interface Policy {
  /**
   * Resumed downloads: when reading a GET's body fails (a network error, a bodyTimeoutMs gap)
   * after N bytes reached the caller, the rest is asked for (Range: bytes=N-, If-Range: the first
   * response's strong ETag, else its Last-Modified) and a 206 starting at N is read on in the same
   * stream. Each resume is an attempt of the call (retry.maxAttempts, totalTimeoutMs, the retry
   * budget, the breaker, its backoff). A body that cannot be resumed (a 200 answer, a changed
   * validator, none, a Content-Encoding) errors with a TypeError whose reason names why.
   * @default false (off)
   */
  resume?: boolean | ResumePolicy;
}

export interface ResumePolicy {
  /** Resumes of one body at most (1..=20). @default 5 */
  maxResumes?: number;
}
"#;

/// `resume` in a build without `resume`: `false` (off) only.
#[cfg(not(feature = "resume"))]
#[wasm_bindgen(typescript_custom_section)]
const NO_RESUME_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: resumed downloads is in resilient-fetch/full. `false` (off) is accepted. */
  resume?: false;
}
"#;

//! The outbox (policy `outbox`) on the JS platform. The decisions are the core's
//! (`rules.rs`): which calls are kept, what each replay's answer does, an entry's expiry, the
//! waits between replays; `outbox.js` does the I/O (the store, the replay order, the lock,
//! the `online` event, the timer) and asks them through three functions made here (`core`). A replay
//! goes through the same client (breaker, budget, bulkhead), with the entry's key. Here too:
//! what a call that may be kept carries ([`Keepable`]), `client.outbox`, and the outbox's
//! events as JS gets them.

use std::cell::Cell;
use std::rc::{Rc, Weak};

use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::{DeadReason, End, EntryId, OutboxPolicy, Reason, Replay};
use crate::events::Event;
use crate::wasm::ResilientClient;
use crate::wasm::bindings::performance_now;
use crate::wasm::codes::{DeadN, Judged, Keep, ReplayStatus, Told};
use crate::wasm::ended::Reply;
use crate::wasm::env::random_unit;
use crate::wasm::events::{emit, to_js};

#[wasm_bindgen(module = "/js/joined/site.js")]
unsafe extern "C" {
    /// The outbox `name` over `store` (undefined: the built-in one), asking `core`.
    #[wasm_bindgen(js_name = outboxOpen)]
    fn outbox_open(name: &str, store: &JsValue, on_replay: &JsValue, core: &Object) -> JsValue;
    /// Stops its timer and listener.
    #[wasm_bindgen(js_name = outboxClose)]
    fn outbox_close(outbox: &JsValue);
    /// Keeps a call's request, then settles the call (a `QueuedError` once kept).
    #[wasm_bindgen(js_name = outboxKeep)]
    fn outbox_keep(
        outbox: &JsValue,
        keep: &Array,
        value: &JsValue,
        failed: bool,
        listener: &JsValue,
        event: &JsValue,
    ) -> Promise;
}

/// What an outbox reaches of its client (held weakly): the client implements it, so that
/// this module need not name the client or its calls.
pub trait Host {
    /// A replay of a kept request through the client, never kept again.
    fn replay(self: Rc<Self>, request: JsValue) -> Promise;
    /// The client's outbox.
    fn outbox(&self) -> Option<&Outbox>;
    /// The client's `onEvent`.
    fn on_event(&self) -> Option<&Function>;
}

/// What src/outbox/outbox.js asks the core (each holds its client weakly).
struct Core {
    /// `judge(firstAttemptAt, status)`, a [`Judged`]: for [`ReplayStatus::Unsent`], expired or
    /// send; for [`ReplayStatus::NoAnswer`], wait; for a status, delivered, wait or refused.
    /// (src/outbox/outbox-replay.js adds [`Judged::Unsendable`].)
    _judge: Closure<dyn Fn(f64, i32) -> u32>,
    /// `tell(kind, origin, id, n)`, `kind` a [`Told`]: replayed (n: attempts), delivered (n:
    /// status), dead-lettered (n: the status or a [`DeadN`]) to `onEvent`; a replay round
    /// ended with n entries waiting: the ms until the next (-1: none), the rounds backing off
    /// while entries wait; the ms until the next replay at the current round (after a keep, a
    /// failed replay or take-back, or another replayer at work).
    _tell: Closure<dyn Fn(u32, String, String, i32) -> f64>,
    /// `send(request)`: the replay through the client.
    _send: Closure<dyn Fn(JsValue) -> Promise>,
}

/// A client's outbox.
pub struct Outbox {
    /// Its settings.
    pub policy: OutboxPolicy,
    /// src/outbox/outbox.js's side of it.
    io: JsValue,
    /// `client.outbox`: list, deadLetters, flush, retry, discard (src/outbox/outbox.js).
    pub api: JsValue,
    /// Replay rounds since one left nothing waiting (the timer's backoff).
    round: Cell<u32>,
    _core: Core,
}

impl Drop for Outbox {
    fn drop(&mut self) {
        outbox_close(&self.io);
    }
}

impl Outbox {
    /// The outbox of the client `weak` names, over `outbox.store` (undefined: the built-in
    /// one), with `outbox.onReplay`.
    #[inline]
    pub fn open<C: Host + 'static>(policy: OutboxPolicy, held: Held, weak: Weak<C>) -> Outbox {
        let Held(store, on_replay) = held;
        let max_age_ms = policy.max_age_ms;
        let judge = Closure::<dyn Fn(f64, i32) -> u32>::new(move |first: f64, status: i32| {
            (match status {
                s if s == ReplayStatus::Unsent as i32 => {
                    if super::expired(first, js_sys::Date::now(), max_age_ms) {
                        Judged::Expired
                    } else {
                        Judged::Send
                    }
                }
                s if s == ReplayStatus::NoAnswer as i32 => Judged::Wait,
                status => match Replay::of(status as u16) {
                    Replay::Delivered => Judged::Delivered,
                    Replay::Wait => Judged::Wait,
                    Replay::Dead => Judged::Refused,
                },
            }) as u32
        });
        let client = weak.clone();
        let tell = Closure::<dyn Fn(u32, String, String, i32) -> f64>::new(
            move |kind: u32, origin: String, id: String, n: i32| match client.upgrade() {
                Some(client) => tell(&*client, kind, &origin, &id, n),
                None => -1.0,
            },
        );
        let send = Closure::<dyn Fn(JsValue) -> Promise>::new(move |request: JsValue| {
            match weak.upgrade() {
                Some(client) => client.replay(request),
                None => Promise::reject(&JsValue::UNDEFINED),
            }
        });
        let core = Object::new();
        for (name, f) in [
            ("judge", judge.as_ref()),
            ("tell", tell.as_ref()),
            ("send", send.as_ref()),
        ] {
            let _ = Reflect::set(&core, &name.into(), f);
        }
        let io = outbox_open(&policy.name, &store, &on_replay, &core);
        Outbox {
            api: Reflect::get(&io, &"api".into()).unwrap_or_default(),
            io,
            policy,
            round: Cell::new(0),
            _core: Core {
                _judge: judge,
                _tell: tell,
                _send: send,
            },
        }
    }

    /// What a call the outbox may keep carries: its place, taken now ([`order_now`]).
    pub fn may_keep(&self) -> Keepable {
        Keepable { order: order_now() }
    }

    /// Keeps a call that started at `order` ([`order_now`]) and ended (`value`: its
    /// response, or its error when `failed`) for `reason`, then settles it: the promise the
    /// call resolves like. `deadline`: the call's (`performance.now()` ms) and the
    /// `totalTimeoutMs` that set it; keeping it ends by [`super::keep_until`].
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn keep(
        &self,
        request: (&JsValue, &JsValue, bool),
        key: &str,
        origin: &str,
        reason: Reason,
        order: f64,
        deadline: (f64, u32),
        attempts: u32,
        value: &JsValue,
        failed: bool,
        listener: Option<&Function>,
    ) -> Promise {
        let (source, init, stream) = request;
        let (deadline, total_timeout_ms) = deadline;
        let until = super::keep_until(deadline, performance_now());
        let p = &self.policy;
        // In the order of the `Keep` slots (`KEEP_ORDER`).
        let keep: Array = [
            JsValue::from(p.max_entries),
            source.clone(),
            init.clone(),
            key.into(),
            origin.into(),
            p.max_body_bytes.into(),
            stream.into(),
            reason.as_str().into(),
            order.into(),
            attempts.into(),
            until.into(),
            total_timeout_ms.into(),
        ]
        .iter()
        .collect();
        let (listener, event) = match listener {
            Some(f) => (
                f.into(),
                to_js(
                    origin,
                    Some(key),
                    &Event::Queued {
                        id: EntryId(key),
                        reason,
                    },
                ),
            ),
            None => (JsValue::UNDEFINED, JsValue::UNDEFINED),
        };
        outbox_keep(&self.io, &keep, value, failed, &listener, &event)
    }
}

/// The slots of what `keep` hands src/outbox/outbox.js, in the order it writes them: each its own index.
const KEEP_ORDER: [Keep; Keep::Slots as usize] = [
    Keep::MaxEntries,
    Keep::Source,
    Keep::Init,
    Keep::Key,
    Keep::Origin,
    Keep::MaxBodyBytes,
    Keep::Stream,
    Keep::Reason,
    Keep::Order,
    Keep::Attempts,
    Keep::Until,
    Keep::TotalTimeoutMs,
];
const _: () = {
    let mut i = 0;
    while i < KEEP_ORDER.len() {
        assert!(KEEP_ORDER[i] as usize == i, "KEEP_ORDER is Keep's order");
        i += 1;
    }
};

thread_local! {
    static LAST_ORDER: Cell<f64> = const { Cell::new(f64::NEG_INFINITY) };
}

/// A call's place among the calls this realm's outboxes may keep, taken when it starts:
/// `performance.now()`, or just after the one before when the clock reads the same (a
/// browser's clock is coarse: 5 µs to 1 ms), so that calls made one after another replay in
/// that order.
fn order_now() -> f64 {
    let now = performance_now();
    LAST_ORDER.with(|last| {
        let order = if now > last.get() {
            now
        } else {
            last.get() + 0.001
        };
        last.set(order);
        order
    })
}

/// What src/outbox/outbox.js tells of a replay (see [`Core`]).
#[inline]
fn tell(client: &impl Host, kind: u32, origin: &str, id: &str, n: i32) -> f64 {
    let told = |what: Told| kind == what as u32;
    let event = match kind {
        _ if told(Told::Replayed) => Event::Replayed {
            id: EntryId(id),
            attempt: n as u32,
        },
        _ if told(Told::Delivered) => Event::Delivered {
            id: EntryId(id),
            status: n as u16,
        },
        _ if told(Told::DeadLettered) => Event::DeadLettered {
            id: EntryId(id),
            reason: match n {
                n if n == DeadN::Expired as i32 => DeadReason::Expired,
                n if n == DeadN::Invalid as i32 => DeadReason::Invalid,
                _ => DeadReason::Status,
            },
            status: u16::try_from(n).ok(),
        },
        _ => {
            let Some(outbox) = client.outbox() else {
                return -1.0;
            };
            let round = outbox.round.get();
            if told(Told::RoundEnded) {
                // A round ended: the next one backs off while entries wait.
                outbox
                    .round
                    .set(if n == 0 { 0 } else { round.saturating_add(1) });
                if n == 0 {
                    return -1.0;
                }
            }
            return super::next_flush_ms(round, random_unit());
        }
    };
    if let Some(listener) = client.on_event() {
        emit(listener, origin, None, &event);
    }
    0.0
}

/// `outbox.store` and `outbox.onReplay`, as given (undefined when not).
#[derive(Default)]
pub struct Held(JsValue, JsValue);

impl Held {
    /// What `read` gives: the store, then `onReplay`.
    #[inline]
    pub fn new(read: impl FnOnce() -> (JsValue, JsValue)) -> Held {
        let (store, on_replay) = read();
        Held(store, on_replay)
    }
}

/// A call its client's outbox may keep (a keyed call that is not a replay), from its start.
pub struct Keepable {
    /// Its place among the calls this realm's outboxes may keep ([`order_now`]).
    order: f64,
}

impl Keepable {
    /// The call's result once it `end`ed so (with its attempts): `mapped` as it is, or, when
    /// the end is one the outbox keeps, the promise that settles once `request` is stored
    /// under `key` (a `QueuedError`).
    #[inline]
    pub fn keep(
        self,
        end: (End, u32),
        ended: &Reply,
        request: (&JsValue, &JsValue, bool),
        key: &str,
        mapped: Result<JsValue, JsValue>,
    ) -> Result<JsValue, JsValue> {
        let (end, attempts) = end;
        let (Some(reason), Some(outbox)) = (super::keep(end), ended.client.outbox.as_ref()) else {
            return mapped;
        };
        let (value, failed) = match &mapped {
            Ok(response) => (response, false),
            Err(error) => (error, true),
        };
        let total_timeout_ms = ended.resolved.policy.total_timeout_ms;
        // The call adopts this promise: it settles once the request is stored.
        Ok(outbox
            .keep(
                request,
                key,
                ended.origin,
                reason,
                self.order,
                (
                    ended.started + f64::from(total_timeout_ms),
                    total_timeout_ms,
                ),
                attempts,
                value,
                failed,
                ended.resolved.on_event.as_ref(),
            )
            .into())
    }
}

#[wasm_bindgen]
impl ResilientClient {
    /// The client's outbox (policy `outbox`), or undefined when it has none.
    #[wasm_bindgen(getter, unchecked_return_type = "Outbox | undefined")]
    pub fn outbox(&self) -> JsValue {
        self.inner
            .outbox
            .as_ref()
            .map_or(JsValue::UNDEFINED, |o| o.api.clone())
    }
}

//! The codes that cross between the wasm and js/: each a `#[repr]` enum here, written once.
//! js/errors.js holds their table (`const TIMEOUT_KIND_CALL = 1;`, the enum's and the
//! variant's names in upper snake case), generated from this file by scripts/codes.mjs
//! (which scripts/join-js.mjs runs; `tests/js_joined.rs` fails when the table is stale):
//! js/errors.js because it is the snippet every other one imports from, and a module of
//! its own would be one more for a page to load. Minified, the constants are inlined:
//! they cost no byte.
//!
//! The generator reads this file as text: each enum is `#[repr(<int>)]` then `pub enum`,
//! and every variant has its value written out (`Name = 3,`).
#![allow(
    dead_code,
    reason = "a code only js/ makes is written here all the same, so that it is written once"
)]

/// Which limit a `TimeoutError` (js/errors.js `makeTimeoutError`) is of.
#[repr(u8)]
#[derive(Clone, Copy)]
pub enum TimeoutKind {
    /// An attempt's `timeoutMs`.
    Attempt = 0,
    /// The call's `totalTimeoutMs`.
    Call = 1,
    /// `bodyTimeoutMs` between two chunks of the body.
    Body = 2,
}

/// What `readArguments` (js/request.js) read of a call, packed into the one number it returns
/// (the objects it read go to the wasm in one call of the taker, src/wasm/arguments.rs): the
/// [`Body`] code, plus the [`Method`] code times `Method`, plus the origin's slot times `Slot`,
/// plus each flag that holds. An origin the wasm has been told is named by its slot (one of
/// `Told / Slot`), so its text crosses once, not on every call.
#[repr(u32)]
#[derive(Clone, Copy)]
pub enum Read {
    /// The multiplier of the method's code.
    Method = 4,
    /// The multiplier of the origin's slot.
    Slot = 32,
    /// The slot is told anew: the origin argument is its text.
    Told = 1024,
    /// A URL that is no server's (data:, blob:): it has no origin, nor slot.
    Local = 2048,
    /// The caller gave a signal.
    Signal = 4096,
    /// Off the fast path: the request was built, once.
    Request = 8192,
}

/// A call's method, as `readArguments` codes it ([`Read::Method`]).
#[repr(u8)]
#[derive(Clone, Copy)]
pub enum Method {
    /// `GET`.
    Get = 0,
    /// `HEAD`.
    Head = 1,
    /// `POST`.
    Post = 2,
    /// `PUT`.
    Put = 3,
    /// `DELETE`.
    Delete = 4,
    /// `OPTIONS`.
    Options = 5,
    /// `PATCH`.
    Patch = 6,
    /// Any other: its text is the method argument.
    Other = 7,
}

/// What a call's body is (the remainder of what `readArguments` returns, by [`Read::Method`]).
#[repr(u8)]
#[derive(Clone, Copy)]
pub enum Body {
    /// No body.
    None = 0,
    /// One that can be sent again.
    Replayable = 1,
    /// A stream: sent once.
    Stream = 2,
}

/// How `sendAttempt` (js/send.js) sends an attempt: flags, or-ed.
#[repr(u8)]
#[derive(Clone, Copy)]
pub enum SendFlag {
    /// The request is cloned first when it has a body (other attempts may send it again).
    Replay = 1,
    /// Another attempt of the call is on the wire: the HTTP cache is bypassed.
    Hedge = 2,
    /// The rate-limit headers are read (policy `rateLimit`): `statusOf`'s `rates`.
    Rates = 4,
}

/// Added to the status `statusOf` (js/send.js) answers.
#[repr(u32)]
#[derive(Clone, Copy)]
pub enum StatusFlag {
    /// The response says something of its origin's limits: `limitsOf` reads them.
    Limits = 0x10000,
}

/// What `breaker.isFailure` and `retry.shouldRetry` answered (js/hooks.js).
#[repr(i8)]
#[derive(Clone, Copy)]
pub enum HookSaid {
    /// `false`.
    No = 0,
    /// `true`.
    Yes = 1,
    /// Anything else (or it threw, for `isFailure`): the built-in rule.
    Default = -1,
}

/// The slots of what the outbox keeps of a call (`outboxKeep`, src/outbox/outbox.js).
#[repr(u8)]
#[derive(Clone, Copy)]
pub enum Keep {
    /// `outbox.maxEntries`.
    MaxEntries = 0,
    /// The request (or the fast path's URL).
    Source = 1,
    /// The fast path's init, or undefined.
    Init = 2,
    /// The idempotency key (the entry's id).
    Key = 3,
    /// The origin.
    Origin = 4,
    /// `outbox.maxBodyBytes`.
    MaxBodyBytes = 5,
    /// Whether the body is a stream.
    Stream = 6,
    /// Why it is kept.
    Reason = 7,
    /// The call's place among the calls kept (`performance.now()` ms).
    Order = 8,
    /// The attempts made.
    Attempts = 9,
    /// When keeping it must be done (`performance.now()` ms).
    Until = 10,
    /// The call's `totalTimeoutMs`.
    TotalTimeoutMs = 11,
    /// How many slots there are.
    Slots = 12,
}

/// The outbox's `judge(firstAttemptAt, status)`: its answer.
#[repr(u8)]
#[derive(Clone, Copy)]
pub enum Judged {
    /// The replay was delivered.
    Delivered = 0,
    /// The entry waits for the next replay.
    Wait = 1,
    /// Its origin refused it: dead-lettered.
    Refused = 2,
    /// Too old: dead-lettered.
    Expired = 3,
    /// To be sent.
    Send = 4,
    /// The stored request cannot be sent (src/outbox/outbox-replay.js's own verdict).
    Unsendable = 5,
}

/// The `status` `judge` is asked about when it is no status.
#[repr(i8)]
#[derive(Clone, Copy)]
pub enum ReplayStatus {
    /// Before the entry is sent: is it too old?
    Unsent = -2,
    /// The replay had no answer.
    NoAnswer = -1,
    /// The stored request cannot be sent (src/outbox/outbox-replay.js only).
    Unsendable = -3,
}

/// The outbox's `tell(kind, origin, id, n)`: what it tells.
#[repr(u8)]
#[derive(Clone, Copy)]
pub enum Told {
    /// An entry is replayed (`n`: its attempts).
    Replayed = 0,
    /// An entry is delivered (`n`: the status).
    Delivered = 1,
    /// An entry is dead-lettered (`n`: the status, or a [`DeadN`]).
    DeadLettered = 2,
    /// A replay round ended with `n` entries waiting: the ms until the next (negative: none).
    RoundEnded = 3,
    /// The ms until the next replay at the current round.
    NextReplay = 4,
}

/// The `n` of [`Told::DeadLettered`] when it is no status.
#[repr(i8)]
#[derive(Clone, Copy)]
pub enum DeadN {
    /// The entry is too old.
    Expired = -1,
    /// The stored request cannot be sent.
    Invalid = -2,
}

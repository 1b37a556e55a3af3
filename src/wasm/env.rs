//! The core's [`Env`](crate::engine::Env) on the JS platform: `performance.now()`,
//! `Date.now()`, `crypto.getRandomValues` (through getrandom, drawn in batches
//! on first use, never at module load) and `setTimeout` (through gloo-timers).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;

use gloo_timers::future::TimeoutFuture;

use super::abort::{AbortState, AbortWait};
use super::bindings::{is_offline, online_wait, performance_now};
use super::settle::Settled;
use crate::engine::Env;
use crate::entropy::EntropyPool;

/// The environment of one call.
pub struct JsEnv {
    /// The caller's signal, shared with the transport.
    pub abort: Rc<AbortState>,
    /// The first clock read of the call (the engine's first read is when the call
    /// started): kept so the shell needs no read of its own.
    pub started: Cell<Option<f64>>,
    /// When the call was made, if the shell knows (read with its arguments): the engine's
    /// first read, the call's start, is this rather than a read of the clock of its own.
    pub called: Cell<Option<f64>>,
}

/// Milliseconds as `setTimeout` takes them (whole, non-negative, in range).
pub fn timer_ms(ms: f64) -> u32 {
    if ms.is_nan() || ms <= 0.0 {
        0
    } else {
        ms.ceil().min(i32::MAX as f64) as u32
    }
}

thread_local! {
    static ENTROPY: RefCell<EntropyPool> = RefCell::new(EntropyPool::default());
}

/// `N` bytes from the platform CSPRNG (`crypto.getRandomValues` through getrandom),
/// drawn in batches on first use (see [`crate::entropy`]).
pub fn random_bytes<const N: usize>() -> Result<[u8; N], getrandom::Error> {
    ENTROPY.with(|pool| pool.borrow_mut().take(getrandom::fill))
}

/// A uniform draw in [0, 1) from the platform CSPRNG.
pub fn random_unit() -> f64 {
    let Ok(bytes) = random_bytes::<8>() else {
        // No CSPRNG: jitter still spreads by Math.random; keys never come from here.
        return js_sys::Math::random();
    };
    // 53 random bits, as a double's mantissa holds.
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

impl Env for JsEnv {
    fn now_ms(&self) -> f64 {
        let now = self.called.take().unwrap_or_else(performance_now);
        if self.started.get().is_none() {
            self.started.set(Some(now));
        }
        now
    }

    fn unix_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    fn random(&self) -> f64 {
        random_unit()
    }

    fn sleep(&self, ms: f64) -> impl Future<Output = ()> {
        TimeoutFuture::new(timer_ms(ms))
    }

    fn aborted(&self) -> bool {
        self.abort.aborted()
    }

    fn abort_wait(&self) -> impl Future<Output = ()> {
        AbortWait(self.abort.clone())
    }

    fn offline(&self) -> bool {
        is_offline()
    }

    fn online_wait(&self) -> impl Future<Output = ()> {
        let back = Settled::new();
        let (slot, generation) = back.id();
        online_wait(slot, generation);
        async move {
            let _ = back.await;
        }
    }
}

/// Monotonic now, for reads outside a call (breaker state, stats).
pub fn now() -> f64 {
    performance_now()
}

//! The caller's arguments, read once in JS (js/request.js `readArguments`) and brought into the
//! wasm in two crossings, whatever they hold: the call to `readArguments`, which returns the
//! numbers it read packed into one ([`Read`]), and its call of the taker, a callback given to JS
//! once, with the objects it read (and the time it read them) as the callback's arguments. A
//! call with no policy of its own reads them before it enters the wasm (js/request.js
//! `readFirst`), hands the taker what it read and then enters ([`take`]): one crossing fewer. An
//! origin crosses as text only the first time JS names it by a slot; after that, the slot names
//! it.

use std::cell::RefCell;

use js_sys::Object;
use wasm_bindgen::prelude::*;

use super::bindings::{read_arguments, set_taker};
use super::codes::{Body, Method, Read};

/// What a call's arguments held, as `fetch` would read them.
pub struct Args {
    /// The init, copied, without its signal.
    pub copy: Object,
    /// The caller's signal.
    pub signal: Option<JsValue>,
    /// The origin, "" for a URL that is no server's (data:, blob:).
    pub origin: String,
    /// The same origin as a JS string (for what the response keeps of the call, js/body.js).
    pub origin_js: JsValue,
    /// The method, as fetch sends it.
    pub method: String,
    /// What the body is.
    pub body: Body,
    /// The call's chain (calls sending through calls).
    pub chain: JsValue,
    /// Off the fast path: the request, built once.
    pub request: Option<JsValue>,
    /// When they were read (`performance.now()` ms): when the call was made.
    pub at: f64,
    /// The call's promise, when asked for (undefined otherwise).
    pub promise: JsValue,
}

/// What the taker was handed: (copy, signal, origin, method, chain, request, at, promise).
type Taken = (
    JsValue,
    JsValue,
    JsValue,
    JsValue,
    JsValue,
    JsValue,
    f64,
    JsValue,
);

/// The taker: it is handed [`Taken`].
type Taker = dyn FnMut(JsValue, JsValue, JsValue, JsValue, JsValue, JsValue, f64, JsValue);

/// What the taker keeps.
struct Kept {
    /// What the taker was handed by the `readArguments` that has just returned.
    taken: Option<Taken>,
    /// The origins JS has told, by slot (js/request.js `TOLD`).
    told: [String; SLOTS],
}

/// How many slots name origins.
const SLOTS: usize = (Read::Told as u32 / Read::Slot as u32) as usize;

/// The methods by their [`Method`] codes (`Other` is none of them).
const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];
// The table is in the codes' order (checked when compiled).
const _: () = {
    let codes = [
        Method::Get,
        Method::Head,
        Method::Post,
        Method::Put,
        Method::Delete,
        Method::Options,
        Method::Patch,
    ];
    let mut i = 0;
    while i < codes.len() {
        assert!(codes[i] as usize == i);
        i += 1;
    }
    assert!(Method::Other as usize == METHODS.len());
};

thread_local! {
    static KEPT: RefCell<Kept> = const {
        RefCell::new(Kept { taken: None, told: [const { String::new() }; SLOTS] })
    };
    // Made on first use, never at module load; lives as long as the module.
    static TAKER: Closure<Taker> = {
        let taker = Closure::new(|copy, signal, origin, method, chain, request, at, promise| {
            KEPT.with(|kept| {
                kept.borrow_mut().taken =
                    Some((copy, signal, origin, method, chain, request, at, promise));
            });
        });
        set_taker(taker.as_ref().unchecked_ref());
        taker
    };
}

/// Reads `input` and `init` for a call of client `client` (its id), and with `call` (an id)
/// makes that call's promise too; throws what `fetch` would throw for them (and a `TypeError`
/// for a call that sends through itself), and then makes no promise. Returns the numbers
/// packed; the objects are the taker's, for [`take`].
pub fn hand(
    input: &JsValue,
    init: &JsValue,
    client: u32,
    call: Option<u32>,
) -> Result<u32, JsValue> {
    give_taker();
    read_arguments(input, init, client, call)
}

/// Gives JS the taker, if it has not been given yet.
pub fn give_taker() {
    TAKER.with(|_| ());
}

/// The arguments `said` (the numbers packed) and what the taker was handed last (the objects)
/// describe.
pub fn take(said: u32) -> Result<Args, JsValue> {
    let taken = KEPT.with(|kept| kept.borrow_mut().taken.take());
    let has = |flag: Read| said & flag as u32 != 0;
    let slot = (said / Read::Slot as u32) as usize % SLOTS;
    // readArguments hands the taker what it read last, after every getter of the init has
    // run (a getter that makes a call of its own has had its arguments taken before).
    let origin = KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        match &taken {
            _ if has(Read::Local) => String::new(),
            Some((_, _, text, ..)) if has(Read::Told) => {
                let text = text.as_string().unwrap_or_default();
                kept.told[slot].clone_from(&text);
                text
            }
            _ => kept.told[slot].clone(),
        }
    });
    let Some((copy, signal, origin_js, method_js, chain, request, at, promise)) = taken else {
        return Err(js_sys::TypeError::new("resilientFetch: the arguments were not read").into());
    };
    let code = ((said / Read::Method as u32) % (Read::Slot as u32 / Read::Method as u32)) as usize;
    let method = match METHODS.get(code) {
        Some(method) => (*method).to_owned(),
        None => method_js.as_string().unwrap_or_default(),
    };
    let body = match said % Read::Method as u32 {
        b if b == Body::Stream as u32 => Body::Stream,
        b if b == Body::Replayable as u32 => Body::Replayable,
        _ => Body::None,
    };
    Ok(Args {
        copy: copy.unchecked_into(),
        signal: has(Read::Signal).then_some(signal),
        origin,
        origin_js,
        method,
        body,
        chain,
        request: has(Read::Request).then_some(request),
        at,
        promise,
    })
}

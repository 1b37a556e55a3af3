//! Shared origin health (policy `share`) on the JS platform: a client's channel to its
//! peers (`share.js` beside this file: a `BroadcastChannel`, or in Cloudflare Workers a
//! Durable Object's channel, pkg-template/full/edge.js), the notes its registry tells them,
//! and theirs applied to it (the rules are the core's, [`crate::share`]); and `share`'s
//! TypeScript options.

use std::rc::{Rc, Weak};

use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::events::Event;
use crate::policy::Policy;
use crate::registry::Registry;
use crate::share::Note;
use crate::share::Share;
use crate::wasm::env::{now, random_unit};
use crate::wasm::events::emit;

/// What a channel reaches of its client (held weakly): the client implements it, so that
/// this module need not name the client.
pub trait Peer {
    /// The client's per-origin state, which peers' notes update.
    fn registry(&self) -> &crate::owner::Owner;
    /// The client's policy, validated.
    fn policy(&self) -> &Rc<Policy>;
    /// The client's `onEvent`.
    fn on_event(&self) -> Option<&Function>;
}

#[wasm_bindgen(module = "/js/joined/site.js")]
unsafe extern "C" {
    /// The channel of share `name` (over `durable_object` when it is given), calling
    /// `hear(kind, origin, monotonicMs, rank)` with each well-formed note; undefined where
    /// there is no `BroadcastChannel`.
    #[wasm_bindgen(js_name = shareOpen)]
    fn share_open(name: &str, hear: &Function, durable_object: &JsValue) -> JsValue;
    /// Tells a channel that asks for it (one with a `poke`: a Durable Object's) that a call
    /// starts: it may refresh its view in the background. Never throws.
    #[wasm_bindgen(js_name = sharePoke)]
    fn share_poke(channel: &JsValue);
    /// Sends a note (`at`: monotonic ms); never throws.
    #[wasm_bindgen(js_name = shareSend)]
    fn share_send(channel: &JsValue, kind: u32, origin: &str, at: f64, rank: u32);
    /// Closes the channel.
    #[wasm_bindgen(js_name = shareClose)]
    fn share_close(channel: &JsValue);
}

/// A sharing client's channel; closed when the client is dropped (freed, or collected).
pub struct Sharing {
    channel: JsValue,
    _hear: Closure<dyn Fn(u32, String, f64, u32)>,
}

impl Sharing {
    /// A call of the client starts.
    pub fn poke(&self) {
        share_poke(&self.channel);
    }
}

impl Drop for Sharing {
    fn drop(&mut self) {
        share_close(&self.channel);
    }
}

/// `share.durableObject`, as given (undefined when not).
#[derive(Default)]
pub struct DurableObject(JsValue);

impl DurableObject {
    /// `share.durableObject` from the policy argument: `read` gives it.
    pub fn read(read: impl FnOnce() -> JsValue) -> Self {
        DurableObject(read())
    }
}

/// Opens the share `policy` names, if it names one (over `durable_object`, unless
/// undefined), for the client `weak` names, whose registry is `registry`, and says hello
/// (its peers answer with what they know). None where the platform has no channel.
pub fn open<C: Peer + 'static>(
    policy: &Policy,
    durable_object: DurableObject,
    weak: &Weak<C>,
    registry: &mut Registry,
) -> Option<Sharing> {
    let name = policy.share.as_deref()?;
    let weak = weak.clone();
    let hear = Closure::<dyn Fn(u32, String, f64, u32)>::new(
        move |kind: u32, origin: String, at: f64, rank: u32| {
            if let (Some(client), Some(note)) = (weak.upgrade(), Note::decode(kind, at, rank)) {
                hear(&*client, &origin, note);
            }
        },
    );
    let channel = share_open(name, hear.as_ref().unchecked_ref(), &durable_object.0);
    if channel.is_undefined() {
        return None;
    }
    let out = channel.clone();
    registry.share_with(Share {
        // A rank only breaks ties between two breakers that open at once.
        rank: (random_unit() * 4_294_967_296.0) as u32,
        send: Box::new(move |origin, note| {
            let (kind, at, rank) = note.encode();
            share_send(&out, kind, origin, at, rank);
        }),
    });
    registry.tell("", [Some(Note::Hello), None]);
    Some(Sharing {
        channel,
        _hear: hear,
    })
}

/// A peer's note, applied to the client's registry; a breaker transition it causes goes
/// to the client's `onEvent`. Notes come as messages, never while the registry is in use
/// (a note told to the peers is posted, not delivered at once).
fn hear(client: &impl Peer, origin: &str, note: Note) {
    // Applied when the registry's loan ends, should it be lent: the transition then untold.
    let policy = Rc::clone(client.policy());
    let heard = crate::owner::Returned::Heard {
        note,
        now: now(),
        policy,
    };
    let transition = client.registry().update(origin, None, heard).flatten();
    if let (Some(t), Some(listener)) = (transition, client.on_event()) {
        let event = Event::BreakerTransition {
            origin,
            from: t.from,
            to: t.to,
            reason: t.reason,
        };
        emit(listener, origin, None, &event);
    }
}

/// The options of shared origin health (feature `share`): merged into `Policy` in the builds that have it.
#[wasm_bindgen(typescript_custom_section)]
const SHARE_TYPES: &str = r#"
export interface Policy {
  /**
   * Client only. Clients with the same name in any tab, iframe or worker of the site (and
   * worker_threads of one Node process) share, per origin, their breakers' state, one half-open
   * probe per cooldown, and origin-wide waits (Retry-After, rate limits), over a BroadcastChannel.
   * Only origins, states and times cross. Where there is no BroadcastChannel it does nothing.
   * In Cloudflare Workers, `{ name, durableObject }` shares across every isolate through a
   * Durable Object (the package's `OriginHealth`), in the background.
   * (a name of 1 to 64 characters, an object { name, durableObject }, or false) @default false
   */
  share?: string | false | SharePolicy;
}

/** `share` across the isolates of a Cloudflare Worker, through a Durable Object. */
export interface SharePolicy {
  /** The share name: clients of one name share (a name of 1 to 64 characters). */
  name?: string;
  /** The binding of a Durable Object namespace of the package's `OriginHealth` class (`env.RF_HEALTH`). */
  durableObject?: { idFromName(name: string): unknown; get(id: any): any };
}
"#;

//! Idempotency keys: which key, if any, a call sends so that retrying it is safe.
//!
//! A key lets the server recognise a repeated request and answer it once
//! (draft-ietf-httpapi-idempotency-key-header), so a POST or PATCH with a key may be retried.

use crate::policy::IdempotencyKey;
use crate::vocab::Method;

/// The key a call sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyChoice {
    /// Where the key comes from.
    pub key: Key,
    /// Whether the shell must add the header (false when the caller already set it).
    pub add_header: bool,
}

/// Where a key comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// The shell must make a fresh UUID with [`uuid_v4`] from 16 random bytes.
    Generate,
    /// This key.
    Given(String),
}

/// The key for a call: a header the caller set wins and is kept (whatever the policy),
/// unless it is blank, which is no key at all (the request is sent as given and never
/// repeated); `Auto` adds a fresh key to POST and PATCH where CORS lets it go
/// (`cross_origin`: a browser request to another origin, whose server may refuse a
/// preflight for the header); `On` adds it to POST and PATCH everywhere; `Fixed` adds its
/// key to any method; `Off` adds none.
pub fn choose(
    policy_key: &IdempotencyKey,
    method: &str,
    caller_header: Option<&str>,
    cross_origin: bool,
) -> Option<KeyChoice> {
    if let Some(value) = caller_header {
        return (!value.trim().is_empty()).then(|| KeyChoice {
            key: Key::Given(value.to_owned()),
            add_header: false,
        });
    }
    let unsafe_method = Method(method).wants_key();
    let key = match policy_key {
        IdempotencyKey::Off => return None,
        IdempotencyKey::Auto if unsafe_method && !cross_origin => Key::Generate,
        IdempotencyKey::On if unsafe_method => Key::Generate,
        IdempotencyKey::Auto | IdempotencyKey::On => return None,
        IdempotencyKey::Fixed(key) => Key::Given(key.clone()),
    };
    Some(KeyChoice {
        key,
        add_header: true,
    })
}

/// A version 4 (random) UUID from 16 random bytes, lower-case `8-4-4-4-12` (RFC 9562).
pub fn uuid_v4(bytes: [u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut bytes = bytes;
    bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // variant 10xx
    let mut out = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn generated() -> Option<KeyChoice> {
        Some(KeyChoice {
            key: Key::Generate,
            add_header: true,
        })
    }

    #[test]
    fn auto_keys_post_and_patch_only() {
        assert_eq!(
            choose(&IdempotencyKey::Auto, "POST", None, false),
            generated()
        );
        assert_eq!(
            choose(&IdempotencyKey::Auto, "patch", None, false),
            generated()
        );
        for m in ["GET", "PUT", "DELETE", "HEAD", "OPTIONS"] {
            assert_eq!(choose(&IdempotencyKey::Auto, m, None, false), None, "{m}");
        }
    }

    #[test]
    fn a_fixed_key_applies_to_any_method() {
        let fixed = IdempotencyKey::Fixed("order-42".into());
        for m in ["POST", "GET", "PUT"] {
            assert_eq!(
                choose(&fixed, m, None, false),
                Some(KeyChoice {
                    key: Key::Given("order-42".into()),
                    add_header: true
                })
            );
        }
    }

    #[test]
    fn off_sends_none() {
        assert_eq!(choose(&IdempotencyKey::Off, "POST", None, false), None);
    }

    #[test]
    fn the_callers_header_wins_and_is_kept() {
        let kept = Some(KeyChoice {
            key: Key::Given("mine".into()),
            add_header: false,
        });
        assert_eq!(
            choose(&IdempotencyKey::Auto, "POST", Some("mine"), false),
            kept
        );
        assert_eq!(
            choose(
                &IdempotencyKey::Fixed("policy".into()),
                "POST",
                Some("mine"),
                false
            ),
            kept
        );
        assert_eq!(
            choose(&IdempotencyKey::Off, "POST", Some("mine"), false),
            kept
        );
    }

    #[test]
    fn a_blank_header_is_no_key() {
        for blank in ["", "  ", "\t"] {
            for policy in [
                IdempotencyKey::Auto,
                IdempotencyKey::On,
                IdempotencyKey::Off,
            ] {
                assert_eq!(
                    choose(&policy, "POST", Some(blank), false),
                    None,
                    "{blank:?}"
                );
            }
        }
    }

    #[test]
    fn automatic_keys_stay_on_the_same_origin_unless_asked_for() {
        assert_eq!(choose(&IdempotencyKey::Auto, "POST", None, true), None);
        assert_eq!(choose(&IdempotencyKey::On, "POST", None, true), generated());
        assert_eq!(choose(&IdempotencyKey::On, "GET", None, true), None);
        let fixed = IdempotencyKey::Fixed("k".into());
        assert!(choose(&fixed, "POST", None, true).is_some());
        let mine = choose(&IdempotencyKey::Auto, "POST", Some("mine"), true);
        assert_eq!(mine.map(|k| k.key), Some(Key::Given("mine".into())));
    }

    #[test]
    fn uuid_known_value() {
        assert_eq!(uuid_v4([0; 16]), "00000000-0000-4000-8000-000000000000");
        assert_eq!(uuid_v4([0xff; 16]), "ffffffff-ffff-4fff-bfff-ffffffffffff");
        let bytes = [
            0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
            0xde, 0xf0,
        ];
        assert_eq!(uuid_v4(bytes), "12345678-9abc-4ef0-9234-56789abcdef0");
    }

    proptest! {
        #[test]
        fn uuid_shape(bytes in any::<[u8; 16]>()) {
            let id = uuid_v4(bytes);
            let groups: Vec<usize> = id.split('-').map(str::len).collect();
            prop_assert_eq!(groups, vec![8, 4, 4, 4, 12]);
            prop_assert!(id.bytes().all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            prop_assert_eq!(&id[14..15], "4");
            prop_assert!("89ab".contains(&id[19..20]));
        }
    }
}

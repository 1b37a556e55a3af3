use super::*;

const T0: f64 = 1_700_000_000_000.0;
const DATE_T0: &str = "Tue, 14 Nov 2023 22:13:20 GMT"; // T0

fn kept(headers: Headers, shared: bool) -> Kept {
    Kept::new(T0 - 2000.0, T0, headers, shared)
}

#[test]
fn age_is_the_larger_of_date_and_age_plus_delay_and_residence() {
    // No Date: the Age the origin gave, the 2 s the answer took, then the time since.
    let k = kept(&[("Age", "10")], false);
    assert_eq!(k.age_ms(T0), 12_000.0);
    assert_eq!(k.age_ms(T0 + 5000.0), 17_000.0);
    // A Date 60 s before it arrived wins over a small Age.
    let k = kept(
        &[("Date", "Tue, 14 Nov 2023 22:12:20 GMT"), ("Age", "1")],
        false,
    );
    assert_eq!(k.date_ms, Some(T0 - 60_000.0));
    assert_eq!(k.age_ms(T0 + 1000.0), 61_000.0);
    // A Date in the future (clock skew) counts as none; an invalid Age as 0.
    let k = kept(
        &[("Date", "Tue, 14 Nov 2023 23:13:20 GMT"), ("Age", "x")],
        false,
    );
    assert_eq!(k.age_ms(T0), 2000.0);
    // A clock that went back adds no residence.
    assert_eq!(k.age_ms(T0 - 10_000.0), 2000.0);
    // A Date older than the reach counts as that far back: too old anyway.
    let k = kept(&[("Date", "Mon, 01 Jan 1990 00:00:00 GMT")], false);
    assert_eq!(k.age_ms(T0), 400.0 * 86_400_000.0);
    assert_eq!(kept(&[("Date", "12")], false).date_ms, None);
}

#[test]
fn lifetime_reads_s_maxage_in_shared_stores_then_max_age_then_expires() {
    let h: Headers = &[("Cache-Control", "max-age=60, s-maxage=5")];
    assert_eq!(kept(h, true).lifetime_ms(), 5000.0);
    assert_eq!(kept(h, false).lifetime_ms(), 60_000.0);
    let h: Headers = &[
        ("Date", DATE_T0),
        ("Expires", "Tue, 14 Nov 2023 22:14:20 GMT"),
    ];
    assert_eq!(kept(h, false).lifetime_ms(), 60_000.0);
    let h: Headers = &[("Expires", "0")];
    assert_eq!(kept(h, false).lifetime_ms(), 0.0);
    assert_eq!(kept(&[], false).lifetime_ms(), 0.0);
}

fn serve(k: &Kept, at: f64, p: &StalePolicy) -> Result<Served, Refused> {
    servable(k, at, Failure::Network, p, &CacheControl::default())
}

#[test]
fn served_within_its_own_stale_if_error_else_the_policy_window_capped() {
    let p = StalePolicy {
        max_stale_ms: 10_000,
        cap_ms: 100_000,
        ..StalePolicy::default()
    };
    // Fresh for 60 s, then 30 s of stale-if-error: age 2 s at arrival.
    let k = kept(&[("Cache-Control", "max-age=60, stale-if-error=30")], false);
    assert_eq!(
        serve(&k, T0 + 1000.0, &p),
        Ok(Served {
            age_s: 3,
            stale_ms: 0.0
        })
    );
    assert_eq!(
        serve(&k, T0 + 88_000.0, &p),
        Ok(Served {
            age_s: 90,
            stale_ms: 30_000.0
        })
    );
    assert_eq!(serve(&k, T0 + 88_001.0, &p), Err(Refused::TooStale));
    // Without its own: the policy's 10 s.
    let k = kept(&[], false);
    assert!(serve(&k, T0 + 8000.0, &p).is_ok());
    assert_eq!(serve(&k, T0 + 8001.0, &p), Err(Refused::TooStale));
    // Never more than the cap.
    let k = kept(&[("Cache-Control", "stale-if-error=86400")], false);
    assert!(serve(&k, T0 + 98_000.0, &p).is_ok());
    assert_eq!(serve(&k, T0 + 98_001.0, &p), Err(Refused::TooStale));
    // The request's own stale-if-error narrows it.
    let asked = cc(&["stale-if-error=1"]);
    let r = servable(&k, T0 + 3001.0, Failure::Timeout, &p, &asked);
    assert_eq!(r, Err(Refused::TooStale));
    assert_eq!(window_ms(&k, &p, &asked), 1000.0);
    assert_eq!(serve(&k, f64::NAN, &p), Err(Refused::TooStale));
}

#[test]
fn revalidation_directives_and_non_failures_refuse() {
    let p = StalePolicy::default();
    let k = kept(&[("Cache-Control", "no-cache, stale-if-error=60")], false);
    assert_eq!(serve(&k, T0, &p), Err(Refused::Revalidate));
    let k = kept(&[("Cache-Control", "max-age=10, must-revalidate")], false);
    assert!(serve(&k, T0 + 8000.0, &p).is_ok(), "fresh");
    assert_eq!(serve(&k, T0 + 8001.0, &p), Err(Refused::Revalidate));
    for h in ["max-age=10, proxy-revalidate", "s-maxage=10"] {
        let shared = kept(&[("Cache-Control", h)], true);
        assert_eq!(serve(&shared, T0 + 9000.0, &p), Err(Refused::Revalidate));
        let private = kept(&[("Cache-Control", h)], false);
        assert!(serve(&private, T0 + 9000.0, &p).is_ok(), "{h}");
    }
    let k = kept(&[], false);
    let asked = cc(&["no-cache"]);
    let r = servable(&k, T0, Failure::Deadline, &p, &asked);
    assert_eq!(r, Err(Refused::Asked));
    for status in [200, 304, 399] {
        let r = servable(
            &k,
            T0,
            Failure::Status(status),
            &p,
            &CacheControl::default(),
        );
        assert_eq!(r, Err(Refused::NotAFailure));
    }
    for failure in [
        Failure::Network,
        Failure::Timeout,
        Failure::BreakerOpen,
        Failure::Throttled,
        Failure::RateLimited,
        Failure::BudgetSpent,
        Failure::Deadline,
        Failure::Status(503),
        Failure::Status(429),
    ] {
        let r = servable(&k, T0, failure, &p, &CacheControl::default());
        assert!(r.is_ok(), "{failure:?}");
    }
    assert!(Failure::BreakerOpen.before_sending() && !Failure::Timeout.before_sending());
}

proptest! {
    #[test]
    fn age_grows_with_time_and_the_age_header_is_its_whole_seconds(
        age in 0u32..100_000, wait in 0.0f64..1e9, more in 0.0f64..1e9,
    ) {
        let line = age.to_string();
        let k = kept(&[("Age", &line)], false);
        let p = StalePolicy { max_stale_ms: 2_147_483_647, cap_ms: 2_147_483_647,
            ..StalePolicy::default() };
        let (a, b) = (k.age_ms(T0 + wait), k.age_ms(T0 + wait + more));
        prop_assert!(a <= b);
        if let Ok(s) = serve(&k, T0 + wait, &p) {
            prop_assert_eq!(f64::from(s.age_s), (a / 1000.0).floor());
        }
    }
}

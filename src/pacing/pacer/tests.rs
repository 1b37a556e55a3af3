use super::*;

const ANY: f64 = f64::INFINITY;

/// When a booked send is due, if the call was booked.
fn due(admit: Admit) -> Option<f64> {
    match admit {
        Admit::Booked { due, .. } => Some(due),
        _ => None,
    }
}

fn quota(remaining: u32, reset_ms: f64) -> Quota {
    Quota {
        remaining,
        reset_ms,
        limit: None,
        window_ms: None,
    }
}

fn limited(remaining: u32, reset_ms: f64, limit: u32, window_ms: f64) -> Quota {
    Quota {
        remaining,
        reset_ms,
        limit: Some(limit),
        window_ms: Some(window_ms),
    }
}

#[test]
fn a_fresh_origin_never_waits() {
    let mut p = Pacer::default();
    assert_eq!(p.admit(0.0, 0.0, None), Admit::Go);
    p.take(0.0);
    assert_eq!(p.remaining(0.0), None);
}

#[test]
fn each_send_takes_one_and_none_left_waits_for_the_reset() {
    let mut p = Pacer::default();
    p.learn(&quota(2, 1_000.0), 0.0, ANY);
    assert_eq!(p.admit(10.0, ANY, None), Admit::Go);
    p.take(10.0);
    assert_eq!(p.remaining(10.0), Some(1));
    p.take(20.0);
    // The limit is unknown: wait for the reset, then ask again.
    assert_eq!(p.admit(30.0, ANY, None), Admit::Wait(970.0, Why::Quota));
    assert_eq!(p.wait(30.0), Some((970.0, Why::Quota)));
    assert_eq!(
        p.admit(30.0, 900.0, None),
        Admit::TooLong(970.0, Why::Quota)
    );
    assert_eq!(p.admit(1_000.0, ANY, None), Admit::Go);
}

#[test]
fn without_a_stated_limit_the_next_window_holds_the_most_seen_left() {
    let mut p = Pacer::default();
    p.learn(&quota(4, 500.0), 0.0, ANY); // 5 at most before that answer
    p.learn(&quota(0, 500.0), 10.0, ANY);
    assert!(p.wait(100.0).is_some());
    // At the reset, not everyone at once: five, then a wait of a second or until an answer.
    for t in [600.0, 601.0, 602.0, 603.0, 604.0] {
        assert_eq!(p.admit(t, ANY, None), Admit::Go);
        p.take(t);
    }
    assert_eq!(p.admit(605.0, ANY, None), Admit::Wait(995.0, Why::Quota));
    // An answer of the server's new window says how much is really left.
    p.learn(&quota(40, 59_000.0), 650.0, ANY);
    assert_eq!(p.admit(651.0, ANY, None), Admit::Go);
    assert_eq!(p.remaining(651.0), Some(40));
}

#[test]
fn calls_that_find_the_quota_spent_are_booked_in_order_into_the_next_windows() {
    let mut p = Pacer::default();
    p.learn(&limited(0, 1_000.0, 3, 1_000.0), 0.0, ANY);
    // Three sends fit the next window, the fourth the one after.
    for _ in 0..3 {
        assert_eq!(due(p.admit(0.0, ANY, None)), Some(1_000.0));
    }
    assert_eq!(due(p.admit(0.0, ANY, None)), Some(2_000.0));
    // Too long for this call: nothing booked for it.
    assert_eq!(
        p.admit(0.0, 1_500.0, None),
        Admit::TooLong(2_000.0, Why::Quota)
    );
    // At the reset the booked sends own the new window: a newcomer is booked behind them.
    assert_eq!(due(p.admit(1_000.0, ANY, None)), Some(1_000.0));
    assert_eq!(due(p.admit(1_000.0, ANY, None)), Some(1_000.0));
    assert_eq!(due(p.admit(1_000.0, ANY, None)), Some(2_000.0));
    // Far later: nothing booked is left, the new window starts at the send.
    assert_eq!(p.admit(50_000.0, ANY, None), Admit::Go);
    p.take(50_000.0);
    assert_eq!(p.remaining(50_000.0), Some(2));
}

#[test]
fn a_limit_without_a_window_length_assumes_a_second() {
    let mut p = Pacer::default();
    p.learn(
        &Quota {
            remaining: 0,
            reset_ms: 300.0,
            limit: Some(1),
            window_ms: None,
        },
        0.0,
        ANY,
    );
    p.take(300.0);
    assert_eq!(p.wait(300.0), Some((SAME_WINDOW_MS, Why::Quota)));
    assert_eq!(due(p.admit(300.0, ANY, None)), Some(SAME_WINDOW_MS));
}

#[test]
fn a_limit_of_zero_never_books() {
    let mut p = Pacer::default();
    p.learn(&limited(0, 1_000.0, 0, 1_000.0), 0.0, ANY);
    assert_eq!(p.admit(0.0, ANY, None), Admit::Wait(1_000.0, Why::Quota));
    assert_eq!(
        p.admit(1_000.0, ANY, None),
        Admit::Go,
        "forgotten at the reset"
    );
}

#[test]
fn reports_of_one_window_keep_the_lower_remaining_and_earlier_reset() {
    let mut p = Pacer::default();
    p.learn(&quota(5, 1_000.0), 0.0, ANY);
    p.learn(&quota(7, 1_500.0), 100.0, ANY); // same window (within 1 s), later report says more
    assert_eq!(p.remaining(200.0), Some(5));
    p.learn(&quota(0, 900.0), 150.0, ANY);
    assert_eq!(p.wait(200.0), Some((800.0, Why::Quota)));
}

#[test]
fn a_stale_report_is_ignored_and_a_later_window_replaces() {
    let mut p = Pacer::default();
    p.learn(&quota(0, 0.0), 0.0, ANY);
    assert_eq!(p.wait(0.0), None, "reset already past");
    p.learn(&quota(1, 1_000.0), 0.0, ANY);
    p.learn(&quota(9, 5_000.0), 10.0, ANY); // a new window
    assert_eq!(p.remaining(20.0), Some(9));
    p.learn(&quota(10, 100.0), 20.0, ANY); // an earlier reset, more left: an older report, ours kept
    assert_eq!(p.remaining(30.0), Some(9));
    p.learn(&quota(0, 100.0), 20.0, ANY); // an earlier reset, less left: the careful answer wins
    assert_eq!(p.wait(30.0), Some((90.0, Why::Quota)));
}

#[test]
fn a_later_window_goes_first_to_the_sends_booked() {
    let mut p = Pacer::default();
    p.learn(&limited(0, 1_000.0, 10, 1_000.0), 0.0, ANY);
    for _ in 0..4 {
        p.admit(0.0, ANY, None);
    }
    // A report of a window later than ours (the server's windows are longer).
    p.learn(&limited(6, 3_000.0, 10, 1_000.0), 500.0, ANY);
    assert_eq!(p.remaining(500.0), Some(2));
}

/// Books a send for a newcomer at `now`: its ticket and when it is due.
fn book(p: &mut Pacer, now: f64) -> (Ticket, f64) {
    match p.admit(now, ANY, None) {
        Admit::Booked { ticket, due, .. } => (ticket, due),
        other => panic!("not booked: {other:?}"),
    }
}

#[test]
fn a_booking_not_used_is_given_back() {
    let mut p = Pacer::default();
    p.learn(&limited(0, 1_000.0, 2, 1_000.0), 0.0, ANY);
    let (first, _) = book(&mut p, 0.0);
    let (second, _) = book(&mut p, 0.0);
    // The first caller aborts before its slot: a newcomer gets it.
    p.unbook(first);
    let (third, due) = book(&mut p, 10.0);
    assert_eq!(due, 990.0);
    // In its window, a booked send refused by the breaker gives its request back.
    assert_eq!(p.admit(1_000.0, ANY, Some(second)), Admit::Go);
    assert_eq!(book(&mut p, 1_000.0).1, 1_000.0);
    assert_eq!(p.admit(1_000.0, ANY, Some(third)), Admit::Go);
    p.unbook(third);
    assert_eq!(p.admit(1_001.0, ANY, None), Admit::Go);
}

#[test]
fn ticket_numbers_wrap() {
    let mut p = Pacer::default();
    p.queue.issued = u32::MAX;
    p.queue.served_from = u32::MAX;
    p.learn(&limited(0, 1_000.0, 1, 1_000.0), 0.0, ANY);
    let (last, _) = book(&mut p, 0.0);
    let (first, due) = book(&mut p, 0.0);
    assert_eq!((last, first, due), (Ticket(u32::MAX), Ticket(0), 2_000.0));
    // Served into [1 000, 2 000), then refused: that window gets its request back.
    assert_eq!(p.admit(1_000.0, ANY, Some(last)), Admit::Go);
    p.unbook(last);
    assert_eq!(p.remaining(1_000.0), Some(1));
    // Still waiting: given back, it leaves the queue.
    p.unbook(first);
    assert!(p.queue.waiting.is_empty());
    assert_eq!(p.remaining(1_000.0), Some(1));
}

#[test]
fn a_booking_given_back_moves_the_ones_behind_it_up() {
    let mut p = Pacer::default();
    p.learn(&limited(0, 1_000.0, 2, 1_000.0), 0.0, ANY);
    let tickets: Vec<(Ticket, f64)> = (0..3).map(|_| book(&mut p, 0.0)).collect();
    let dues: Vec<f64> = tickets.iter().map(|t| t.1).collect();
    assert_eq!(dues, [1_000.0, 1_000.0, 2_000.0]);
    // Each asks again at the next reset, not at its own window.
    assert!(matches!(
        p.admit(30.0, ANY, Some(tickets[2].0)),
        Admit::Booked {
            due: 1_970.0,
            wake: 970.0,
            ..
        }
    ));
    p.unbook(tickets[0].0);
    // At the reset the third goes in the first's place, beside the second.
    assert_eq!(p.admit(1_000.0, ANY, Some(tickets[1].0)), Admit::Go);
    assert_eq!(p.admit(1_000.0, ANY, Some(tickets[2].0)), Admit::Go);
    assert_eq!(p.remaining(1_000.0), Some(0));
    // A newcomer waits for the window after, not one more.
    assert_eq!(book(&mut p, 1_000.0).1, 1_000.0);
    assert_eq!(book(&mut p, 1_500.0).1, 500.0);
    assert_eq!(book(&mut p, 1_500.0).1, 1_500.0);
    // Given back at once, nothing is lost: the queue was two, it is two.
    let (late, _) = book(&mut p, 1_500.0);
    p.unbook(late);
    assert_eq!(book(&mut p, 1_500.0).1, 1_500.0);
}

#[test]
fn a_report_of_an_earlier_reset_with_less_left_wins_over_an_assumed_window() {
    let mut p = Pacer::default();
    p.learn(&limited(0, 5_000.0, 5, 10_000.0), 0.0, ANY);
    // The pacer assumes the next window is [5 000, 15 000) and lets sends go at 11 000...
    assert_eq!(p.admit(11_000.0, ANY, None), Admit::Go);
    p.take(11_000.0);
    // ...but the server's window runs to 16 000 and is spent.
    p.learn(&limited(0, 5_000.0, 5, 10_000.0), 11_000.0, ANY);
    assert_eq!(
        p.wait(11_000.0),
        Some((4_000.0, Why::Quota)),
        "15 000 assumed, server's 16 000 later: ours kept"
    );
    // A report whose reset comes before the assumed one, with less left, wins.
    let mut q = Pacer::default();
    q.learn(&limited(3, 5_000.0, 5, 10_000.0), 0.0, ANY);
    q.learn(&limited(0, 2_000.0, 5, 10_000.0), 10.0, ANY);
    assert_eq!(q.wait(10.0), Some((2_000.0, Why::Quota)));
}

/// A spent quota of 60 whose reset is claimed a day ahead; a fresh one; the cap.
const FAR: Quota = Quota {
    remaining: 0,
    reset_ms: crate::pacing::rate_limit::MAX_RESET_MS,
    limit: Some(60),
    window_ms: None,
};
const FRESH: Quota = Quota {
    remaining: 58,
    reset_ms: 4_000.0,
    limit: Some(60),
    window_ms: None,
};
const CAP: f64 = 5_000.0;

#[test]
fn a_reset_further_than_the_cap_holds_at_most_the_cap_then_one_call_asks() {
    let mut p = Pacer::default();
    p.learn(&FAR, 0.0, CAP);
    assert_eq!(p.wait(0.0), Some((CAP, Why::Quota)));
    // Nothing is booked into windows that are only claimed: the calls wait and ask again.
    assert_eq!(p.admit(0.0, ANY, None), Admit::Wait(CAP, Why::Quota));
    // At the cap one call goes to ask; the others wait for its answer, asking each second.
    assert_eq!(p.admit(CAP, ANY, None), Admit::Go);
    assert!(p.take(CAP), "the probe");
    assert_eq!(p.admit(CAP, ANY, None), Admit::Wait(1_000.0, Why::Quota));
    assert_eq!(
        p.admit(6_500.0, ANY, None),
        Admit::Wait(1_000.0, Why::Quota)
    );
    // Its answer tells: taken as it is.
    p.heard((true, Some(&FRESH)), true, 6_600.0, CAP);
    assert_eq!(p.admit(6_600.0, ANY, None), Admit::Go);
    assert!(!p.take(6_600.0), "not a probe");
    assert_eq!(p.remaining(6_600.0), Some(57));
}

#[test]
fn a_server_still_limited_answers_the_probe_with_a_fresh_far_reset() {
    let mut p = Pacer::default();
    p.learn(&FAR, 0.0, CAP);
    assert!(p.take(CAP));
    p.heard((true, Some(&FAR)), true, 5_100.0, CAP);
    assert_eq!(p.wait(5_100.0), Some((CAP, Why::Quota)), "a cap more");
    assert_eq!(p.admit(10_100.0, ANY, None), Admit::Go);
    assert!(p.take(10_100.0), "the next probe");
}

#[test]
fn a_probe_without_an_answer_lets_the_next_call_ask() {
    let mut p = Pacer::default();
    p.learn(&FAR, 0.0, CAP);
    assert!(p.take(CAP));
    // Another attempt's end (not the probe's) tells nothing.
    p.heard((false, None), false, 5_100.0, CAP);
    assert_eq!(p.admit(5_100.0, ANY, None), Admit::Wait(900.0, Why::Quota));
    // The probe timed out, failed or was aborted.
    p.heard((false, None), true, 5_200.0, CAP);
    assert_eq!(p.admit(5_200.0, ANY, None), Admit::Go);
    assert!(p.take(5_200.0));
}

#[test]
fn an_answer_without_headers_to_a_probe_forgets_the_quota() {
    let mut p = Pacer::default();
    p.learn(&FAR, 0.0, CAP);
    assert!(p.take(CAP));
    p.heard((true, None), true, 5_100.0, CAP);
    assert!(p.is_quiet(5_100.0));
    assert_eq!(p.admit(5_100.0, ANY, None), Admit::Go);
}

#[test]
fn a_reset_within_the_cap_is_honoured_as_told() {
    let mut p = Pacer::default();
    p.learn(&limited(0, CAP, 2, CAP), 0.0, CAP);
    assert_eq!(due(p.admit(0.0, ANY, None)), Some(CAP));
    // Bookings were made in a window a response told of: they own the next window.
    let mut q = Pacer::default();
    q.learn(&limited(0, 1_000.0, 2, 1_000.0), 0.0, CAP);
    let (ticket, _) = book(&mut q, 0.0);
    q.learn(&FAR, 10.0, CAP);
    assert!(matches!(
        q.admit(10.0, ANY, Some(ticket)),
        Admit::Wait(ms, Why::Quota) if ms == CAP
    ));
    // The probe's answer serves the booked first.
    assert!(q.take(CAP + 10.0));
    q.heard((true, Some(&FRESH)), true, CAP + 20.0, CAP);
    assert_eq!(q.admit(CAP + 20.0, ANY, Some(ticket)), Admit::Go);
    assert_eq!(q.remaining(CAP + 20.0), Some(57));
}

#[test]
fn the_cap_does_not_touch_a_window_with_requests_left() {
    let mut p = Pacer::default();
    // 58 left until a reset a minute away: believed for 5 s, spent only after 58 sends.
    p.learn(&limited(58, 60_000.0, 60, 60_000.0), 0.0, CAP);
    for i in 0..58 {
        let now = f64::from(i) * 500.0;
        assert_eq!(p.admit(now, ANY, None), Admit::Go, "send {i}");
        assert!(!p.take(now));
    }
    assert_eq!(p.remaining(29_000.0), Some(0));
    // Spent and told 29 s ago (no answer since): one call asks, not a wait to 60 s.
    assert_eq!(p.admit(29_000.0, ANY, None), Admit::Go);
    assert!(p.take(29_000.0), "the probe");
    assert_eq!(p.wait(29_000.0), Some((1_000.0, Why::Quota)));
}

#[test]
fn a_hold_delays_every_send_until_it_ends() {
    let mut p = Pacer::default();
    p.hold(2_000.0);
    p.hold(1_000.0); // a shorter hold does not shorten it
    assert_eq!(
        p.admit(500.0, ANY, None),
        Admit::Wait(1_500.0, Why::RetryAfter)
    );
    assert_eq!(
        p.admit(500.0, 1_000.0, None),
        Admit::TooLong(1_500.0, Why::RetryAfter)
    );
    assert_eq!(p.admit(2_000.0, 0.0, None), Admit::Go);
    p.reset();
    assert_eq!(p, Pacer::default());
}

mod properties;

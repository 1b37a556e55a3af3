//! Pacing as an origin stage: an attempt waits for the origin's quota or `Retry-After`
//! hold (told how long, or booked into a later window), or is rejected when that wait is
//! longer than it may take; a hedge and the fast path go only where nothing would hold
//! them. A send takes a request of the quota; an answer's headers are learnt.

use super::{Admit, Pacer};
use crate::policy::Policy;
use crate::stage::{Admitted, Ask, Cx, Heard, Refusal, Stage};
use crate::vocab::Why;

impl Stage for Pacer {
    /// The longest hold an answer may set, in ms, when pacing is on.
    type Rules = Option<f64>;

    fn rules(policy: &Policy) -> Self::Rules {
        policy
            .paced()
            .then(|| f64::from(policy.max_retry_after_ms()))
    }

    #[inline(always)]
    fn check(&mut self, ask: Ask, cx: &mut Cx<'_>, _: &mut Admitted) -> Result<(), Refusal> {
        if !cx.policy.paced() {
            return Ok(());
        }
        let now = cx.now;
        match ask {
            Ask::Attempt {
                booked, max_wait, ..
            } => match self.admit(now, max_wait, booked) {
                Admit::Go => Ok(()),
                Admit::Wait(ms, why) => Err(Refusal::Pace {
                    wait_ms: ms,
                    sleep_ms: ms,
                    why,
                    booked: None,
                }),
                Admit::Booked { ticket, due, wake } => Err(Refusal::Pace {
                    wait_ms: due,
                    sleep_ms: wake,
                    why: Why::Quota,
                    booked: Some(ticket),
                }),
                Admit::TooLong(ms, why) => {
                    cx.stats.rate_limited += 1;
                    Err(Refusal::RateLimit(ms, why))
                }
            },
            // Neither waits: an origin that asks for a wait is not theirs to send to. A
            // hedge asks as an attempt that may not wait (so a window served to booked
            // calls, or a probe's, is not its), and is refused quietly.
            Ask::Hedge if self.admit(now, 0.0, None) != Admit::Go => Err(Refusal::Quiet),
            Ask::AtOnce if !self.is_quiet(now) => Err(Refusal::Quiet),
            Ask::Hedge | Ask::AtOnce => Ok(()),
        }
    }

    #[inline(always)]
    fn take(&mut self, ask: Ask, cx: &mut Cx<'_>, leave: &mut Admitted) {
        let booked = matches!(
            ask,
            Ask::Attempt {
                booked: Some(_),
                ..
            }
        );
        leave.probe = cx.policy.paced() && !booked && Pacer::take(self, cx.now);
    }

    #[inline(always)]
    fn heard(&mut self, heard: &mut Heard<'_>, rules: &Self::Rules) {
        let Some(cap) = *rules else {
            return;
        };
        let f = &heard.finished;
        self.heard((f.answered, f.quota), f.probe, heard.now, cap);
        if let Some(until) = f.hold_until {
            self.hold(until);
        }
    }

    fn reset(&mut self) {
        Pacer::reset(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::OriginState;
    use crate::policy::PolicyInput;
    use crate::rate_limit::Quota;

    fn policy(json: serde_json::Value) -> Policy {
        let input: PolicyInput = serde_json::from_value(json).unwrap_or_default();
        Policy::from_input(&input).unwrap_or_else(|e| panic!("{}", e.message))
    }

    #[test]
    fn a_hedge_never_takes_a_window_served_to_a_booked_call() {
        let p = policy(serde_json::json!({"breaker": false}));
        let mut s = OriginState::default();
        let spent = Quota {
            remaining: 0,
            reset_ms: 500.0,
            limit: Some(1),
            window_ms: None,
        };
        s.pacer.learn(&spent, 0.0, 30_000.0);
        // A call finds the quota spent and is booked into the next window.
        let ask = Ask::Attempt {
            retry: false,
            booked: None,
            max_wait: 5_000.0,
        };
        assert!(matches!(
            s.admit(ask, 100.0, &p, &|| 0.5),
            Err(Refusal::Pace {
                booked: Some(_),
                ..
            })
        ));
        // Just after the reset, before the booked call asks again, a hedge is due: the
        // window's one request is the booked call's, so the hedge does not go, quietly.
        assert_eq!(
            s.admit(Ask::Hedge, 600.0, &p, &|| 0.5).map(|_| ()),
            Err(Refusal::Quiet)
        );
        let stats = s.stats();
        assert_eq!(
            (stats.attempts, stats.hedges, stats.rate_limited),
            (0, 0, 0)
        );
    }
}

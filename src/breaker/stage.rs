//! The breaker as an origin stage: the open-breaker fast path is refused (and counted) at
//! once, a hedge goes only while it is closed, an attempt takes a permit (the last check, so
//! its permit is taken as it checks); an attempt's end is recorded against its permit.

use super::Breaker;
use crate::policy::{BreakerPolicy, Policy};
use crate::stage::{Admitted, Ask, Cx, Heard, Refusal, Stage};
use crate::vocab::BreakerState;

impl Stage for Breaker {
    type Rules = Option<BreakerPolicy>;

    fn rules(policy: &Policy) -> Self::Rules {
        policy.breaker.clone()
    }

    #[inline(always)]
    fn check(&mut self, ask: Ask, cx: &mut Cx<'_>, leave: &mut Admitted) -> Result<(), Refusal> {
        let Some(b) = cx.policy.breaker.as_ref() else {
            // Off: nothing to refuse at once; the fast path is not its.
            return if ask == Ask::AtOnce {
                Err(Refusal::Quiet)
            } else {
                Ok(())
            };
        };
        match ask {
            Ask::AtOnce => {
                let retry_after_ms = self.refusal(cx.now, b).ok_or(Refusal::Quiet)?;
                cx.stats.short_circuits += 1;
                return Err(Refusal::Breaker(retry_after_ms));
            }
            // A probe is never hedged.
            Ask::Hedge if self.state(cx.now) != BreakerState::Closed => {
                return Err(Refusal::Quiet);
            }
            _ => {}
        }
        match self.try_acquire(cx.now, b, cx.random) {
            Err(rejected) => {
                cx.stats.short_circuits += 1;
                Err(Refusal::Breaker(rejected.retry_after_ms))
            }
            Ok(permit) => {
                leave.transition = permit.transition();
                leave.permit = Some(permit);
                Ok(())
            }
        }
    }

    #[inline(always)]
    fn heard(&mut self, heard: &mut Heard<'_>, rules: &Self::Rules) {
        let (Some(permit), Some(p)) = (heard.permit.take(), rules) else {
            return;
        };
        let slow = p
            .slow_call_ms()
            .is_some_and(|ms| heard.finished.duration_ms > f64::from(ms));
        heard.transition = self.record(permit, heard.finished.judgement, slow, heard.now, p);
    }

    fn reset(&mut self) {
        Breaker::reset(self);
    }
}

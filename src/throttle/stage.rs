//! Adaptive throttling as an origin stage: an attempt is refused locally at the probability
//! the origin's recent accepts give (counted and told); a hedge goes only while nothing is
//! refused; the fast path is never its (a refusal drawn at random is the attempt's own).
//! Every judged end counts as a request, accepted or not.

use super::Throttle;
use crate::policy::{Policy, ThrottlePolicy};
use crate::stage::{Admitted, Ask, Cx, Heard, Refusal, Stage};
use crate::vocab::Judgement;

impl Stage for Throttle {
    type Rules = Option<ThrottlePolicy>;

    fn rules(policy: &Policy) -> Self::Rules {
        policy.throttle
    }

    #[inline(always)]
    fn check(&mut self, ask: Ask, cx: &mut Cx<'_>, _: &mut Admitted) -> Result<(), Refusal> {
        let Some(t) = &cx.policy.throttle else {
            return Ok(());
        };
        match ask {
            Ask::AtOnce => Err(Refusal::Quiet),
            Ask::Hedge if self.reject_probability(cx.now, t) > 0.0 => Err(Refusal::Quiet),
            Ask::Hedge => Ok(()),
            Ask::Attempt { .. } => match self.refuse(cx.now, cx.random, t) {
                Some(probability) => {
                    cx.stats.throttled += 1;
                    Err(Refusal::Throttled(probability))
                }
                None => Ok(()),
            },
        }
    }

    #[inline(always)]
    fn heard(&mut self, heard: &mut Heard<'_>, rules: &Self::Rules) {
        let judgement = heard.finished.judgement;
        if let Some(t) = rules
            && judgement != Judgement::Unjudged
        {
            self.record(heard.now, judgement == Judgement::Success, t);
        }
    }

    fn reset(&mut self) {
        *self = Default::default();
    }
}

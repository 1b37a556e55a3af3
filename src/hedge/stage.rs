//! The latency sample hedging reads, as an origin stage: it refuses nothing and learns how
//! long each answer took, when the attempt's policy hedges.

use super::Latency;
use crate::policy::Policy;
use crate::stage::{Heard, Stage};

impl Stage for Latency {
    type Rules = ();

    fn rules(_: &Policy) {}

    #[inline(always)]
    fn heard(&mut self, heard: &mut Heard<'_>, _: &()) {
        if let Some(ms) = heard.finished.latency_ms {
            self.record(ms);
        }
    }

    fn reset(&mut self) {
        *self = Latency::default();
    }
}

impl crate::origin::OriginState {
    /// How long a call waits before it hedges an attempt to this origin.
    pub fn hedge_delay(&self, policy: &crate::policy::HedgePolicy) -> f64 {
        super::delay_ms(policy, &self.latency)
    }
}

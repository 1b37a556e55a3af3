//! A body that broke, as the engine hears it: one more attempt of its call follows
//! ([`crate::engine::run_course`]).

use crate::classify::AttemptOutcome;

/// How a response's body broke (a network error, or a timeout: no chunk for
/// `bodyTimeoutMs`) and the output it leaves the caller if no attempt follows.
pub struct Broke<O> {
    outcome: AttemptOutcome,
    output: O,
}

impl<O> Broke<O> {
    /// A body that broke with `outcome` (`AttemptOutcome::Timeout` for a gap), leaving `output`.
    pub fn new(outcome: AttemptOutcome, output: O) -> Self {
        Broke { outcome, output }
    }

    /// Its outcome and output.
    #[inline(always)]
    pub fn parts(self) -> (AttemptOutcome, O) {
        (self.outcome, self.output)
    }
}

//! Pacing (`pacing`): its folder. The pacer ([`Pacer`]) and the rate-limit headers' parser
//! ([`rate_limit`]).

mod pacer;
pub mod rate_limit;

pub use pacer::*;

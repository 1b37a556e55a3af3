//! Each capability's part of the policy, one file each: its types, its defaults (written
//! once, gathered in [`crate::policy::defaults`]), its checks and their tests. The schema
//! (`schema.rs`) holds each field's row; `check.rs` calls each section's check in turn.

pub mod breaker;
pub mod bulkhead;
pub mod idempotency;
pub mod retry;
pub mod retry_budget;

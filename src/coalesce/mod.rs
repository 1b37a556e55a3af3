//! Coalescing (Cargo feature and policy option `coalesce`): a GET or HEAD identical to one in
//! flight on the same client joins it instead of being sent again.
//!
//! | part | file |
//! | --- | --- |
//! | its policy section: default, check | `section.rs` |
//! | what makes two calls the same request; joining a flight | `coalesce.js`, joined into `js/joined/arguments.js` (`scripts/join-js.mjs`) |

mod section;

pub use section::*;

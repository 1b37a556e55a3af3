//! Which origin each attempt of a call goes to: the call's own (the primary) and its
//! alternates, in the policy's order, asked whether their breakers are open.
//!
//! The first attempt goes to the primary unless its breaker is open, then to the first
//! alternate whose breaker is not; a retry after a retryable failure goes to the next origin
//! of the list, wrapping to the primary, past open ones. When every other origin's breaker
//! is open a retry stays where it is (if that one is not open), and a first attempt whose
//! origins are all open goes to the primary, which refuses it as it does without failover:
//! failover never makes a call fail differently.

use std::cell::Cell;

/// The alternates of a call's origin, in the order they are tried (none: no failover).
pub type AlternateOrigins<'a> = &'a [String];

/// Where in its route a call's current attempt goes (index 0: its own origin), and that
/// origin (asked for at every step of an attempt: kept, not looked up).
#[derive(Debug)]
pub struct At<'a> {
    i: Cell<usize>,
    origin: Cell<&'a str>,
}

impl<'a> At<'a> {
    /// At the start of `route`: its primary.
    #[inline(always)]
    pub fn new(route: &Route<'a>) -> Self {
        At {
            i: Cell::new(0),
            origin: Cell::new(route.primary),
        }
    }

    /// The index.
    #[inline(always)]
    pub fn get(&self) -> usize {
        self.i.get()
    }

    /// Moves to the origin at `i` of `route`.
    #[inline(always)]
    pub fn set(&self, route: &Route<'a>, i: usize) {
        self.i.set(i);
        self.origin.set(route.origin(i));
    }

    /// The origin it is at (of the `route` it was made for).
    #[inline(always)]
    pub fn origin(&self, _route: &Route<'a>) -> &'a str {
        self.origin.get()
    }
}

/// An alternate origin an attempt goes to instead of the call's own URL's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alternate<'a>(&'a str);

impl<'a> Alternate<'a> {
    /// The origin, normalised.
    pub fn origin(self) -> &'a str {
        self.0
    }
}

/// A call's origins: index 0 the primary, `i` the alternate `i - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route<'a> {
    primary: &'a str,
    alternates: &'a [String],
}

impl<'a> Route<'a> {
    /// The origins of a call to `primary` with these `alternates` (none: no failover).
    pub fn new(primary: &'a str, alternates: &'a [String]) -> Self {
        Route {
            primary,
            alternates,
        }
    }

    /// Origins in the route, the primary included.
    pub fn len(&self) -> usize {
        1 + self.alternates.len()
    }

    /// Whether it has no alternates (every attempt goes to the primary).
    pub fn is_empty(&self) -> bool {
        self.alternates.is_empty()
    }

    /// The origin at `i` (the primary for 0, and for an index past the end).
    pub fn origin(&self, i: usize) -> &'a str {
        match i.checked_sub(1).and_then(|a| self.alternates.get(a)) {
            Some(alternate) => alternate,
            None => self.primary,
        }
    }

    /// The alternate at `i` (`None` for the primary, and for an index past the end): where
    /// an attempt that does not go to the call's own URL goes.
    pub fn alternate(&self, i: usize) -> Option<Alternate<'a>> {
        let alternate = self.alternates.get(i.checked_sub(1)?)?;
        Some(Alternate(alternate))
    }

    /// Where the first attempt goes, given `is_open(origin)`: whether that origin's breaker
    /// is open (would refuse an attempt now).
    pub fn first(&self, is_open: impl Fn(&str) -> bool) -> usize {
        (0..self.len())
            .find(|&i| !is_open(self.origin(i)))
            .unwrap_or(0)
    }

    /// Where a retry goes after a retryable failure at `current`: the next origin after it
    /// (wrapping to the primary) whose breaker is not open; else `current` if its breaker is
    /// not open, else the primary.
    pub fn after(&self, current: usize, is_open: impl Fn(&str) -> bool) -> usize {
        let n = self.len();
        let current = if current < n { current } else { 0 };
        (1..n)
            .map(|step| (current + step) % n)
            .find(|&i| !is_open(self.origin(i)))
            .unwrap_or(if is_open(self.origin(current)) {
                0
            } else {
                current
            })
    }
}

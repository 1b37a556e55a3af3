//! `failover`: backup origins, tried when an origin's breaker is open or an attempt to it
//! fails (issue #41). Everything here is of the `failover` feature: the lean build compiles
//! none of it.

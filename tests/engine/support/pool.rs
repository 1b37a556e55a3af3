//! Concurrent calls: a small executor that polls a call only after its waker fired, and
//! requests that wait until the test answers them by name (`Board`, `Hand`).

use super::*;
use resilient_fetch::engine::{self, AttemptLimit, AttemptOutcome, CallResult, Transport};
use resilient_fetch::policy::Policy;
use std::cell::RefCell;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

pub struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

pub type CallFuture<'a> = Pin<Box<dyn Future<Output = CallResult<u32>> + 'a>>;

/// A tiny single-threaded executor that polls a call only after its waker fired.
pub struct Pool<'a> {
    pub tasks: Vec<(CallFuture<'a>, Arc<Flag>, Option<CallResult<u32>>)>,
}

impl<'a> Pool<'a> {
    pub fn new() -> Self {
        Pool { tasks: Vec::new() }
    }

    pub fn spawn(&mut self, future: impl Future<Output = CallResult<u32>> + 'a) {
        self.tasks.push((
            Box::pin(future),
            Arc::new(Flag(AtomicBool::new(true))),
            None,
        ));
    }

    pub fn run_until_stalled(&mut self) {
        loop {
            let mut progressed = false;
            for (future, flag, result) in &mut self.tasks {
                if result.is_none() && flag.0.swap(false, Ordering::SeqCst) {
                    progressed = true;
                    let waker = Waker::from(flag.clone());
                    if let Poll::Ready(r) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
                        *result = Some(r);
                    }
                }
            }
            if !progressed {
                return;
            }
        }
    }

    pub fn result(&self, i: usize) -> Option<&CallResult<u32>> {
        self.tasks.get(i).and_then(|t| t.2.as_ref())
    }

    pub fn drop_task(&mut self, i: usize) {
        drop(self.tasks.remove(i));
    }
}

/// Requests that wait until the test answers them by name.
#[derive(Default)]
pub struct Board {
    pub sent: RefCell<Vec<&'static str>>,
    pub answers: RefCell<Vec<(&'static str, u16)>>,
    pub wakers: RefCell<Vec<Waker>>,
}

impl Board {
    pub fn answer(&self, name: &'static str, status: u16) {
        self.answers.borrow_mut().push((name, status));
        std::mem::take(&mut *self.wakers.borrow_mut())
            .into_iter()
            .for_each(Waker::wake);
    }
}

pub struct Hand<'b> {
    pub board: &'b Board,
    pub name: &'static str,
}

impl Transport for Hand<'_> {
    type Output = u32;

    fn send(
        &self,
        attempt: u32,
        _: AttemptLimit,
        _: Option<resilient_fetch::failover::Alternate<'_>>,
    ) -> impl Future<Output = (AttemptOutcome, u32)> {
        self.board.sent.borrow_mut().push(self.name);
        let (board, name) = (self.board, self.name);
        poll_fn(move |cx| {
            let mut answers = board.answers.borrow_mut();
            match answers.iter().position(|(n, _)| *n == name) {
                Some(i) => {
                    let (_, status) = answers.remove(i);
                    Poll::Ready((
                        AttemptOutcome::Response {
                            status,
                            retry_after: None,
                            quota: None,
                        },
                        attempt,
                    ))
                }
                None => {
                    board.wakers.borrow_mut().push(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
    }
}

pub fn spawn_call<'a>(
    pool: &mut Pool<'a>,
    reg: &'a Owner,
    policy: &'a Policy,
    clock: &'a Clock,
    board: &'a Board,
    name: &'static str,
) {
    spawn_call_to(pool, reg, policy, clock, board, A, name);
}

pub fn spawn_call_to<'a>(
    pool: &mut Pool<'a>,
    reg: &'a Owner,
    policy: &'a Policy,
    clock: &'a Clock,
    board: &'a Board,
    origin: &'static str,
    name: &'static str,
) {
    pool.spawn(async move {
        let mut transport = Hand { board, name };
        engine::run(reg, policy, get(origin), &mut transport, clock, &mut |_| {}).await
    });
}

//! Stopping a run from outside: a [`Cancel`] flag that the interpreter
//! checks at every loop iteration and every SOAC element (plain and AD
//! evaluation), and [`Watchdog`], which sets it when a time limit passes.
//! A stopped run ends with a [`crate::RuntimeError`] at the statement it
//! was executing; the flag stays set until [`Cancel::reset`].

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// Why a run was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// An interrupt (Ctrl-C).
    Interrupted,
    /// A time limit passed.
    TimeLimit,
}

const RUNNING: u8 = 0;
const INTERRUPTED: u8 = 1;
const TIME_LIMIT: u8 = 2;

/// A shared flag that stops the runs that check it. Cloning shares the flag.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicU8>);

impl Cancel {
    /// A flag that is not set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Sets the flag: runs checking it stop at their next loop iteration or
    /// SOAC element. The first reason given is kept.
    pub fn cancel(&self, reason: CancelReason) {
        let code = match reason {
            CancelReason::Interrupted => INTERRUPTED,
            CancelReason::TimeLimit => TIME_LIMIT,
        };
        let _ = self
            .0
            .compare_exchange(RUNNING, code, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Clears the flag (for the next run).
    pub fn reset(&self) {
        self.0.store(RUNNING, Ordering::SeqCst);
    }

    /// Why the flag was set, if it is.
    #[inline]
    pub fn reason(&self) -> Option<CancelReason> {
        match self.0.load(Ordering::Relaxed) {
            RUNNING => None,
            INTERRUPTED => Some(CancelReason::Interrupted),
            _ => Some(CancelReason::TimeLimit),
        }
    }

    /// Sets the flag with [`CancelReason::TimeLimit`] once `limit` has
    /// passed, unless the returned [`Watchdog`] is dropped before.
    pub fn after(&self, limit: Duration) -> Watchdog {
        let (done, wait) = mpsc::channel::<()>();
        let flag = self.clone();
        let thread = std::thread::Builder::new()
            .name("nabla-watchdog".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(limit) {
                    flag.cancel(CancelReason::TimeLimit);
                }
            })
            .ok();
        Watchdog {
            done: Some(done),
            thread,
        }
    }
}

/// The message of a run stopped for `reason`.
pub(crate) fn stopped_message(reason: CancelReason) -> &'static str {
    match reason {
        CancelReason::Interrupted => "interrupted",
        CancelReason::TimeLimit => "stopped: the time limit was exceeded",
    }
}

/// Sets a [`Cancel`] flag when its time limit passes (see [`Cancel::after`]);
/// dropping it first disarms it.
pub struct Watchdog {
    done: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watchdog_sets_the_flag_after_its_limit_only() {
        let c = Cancel::new();
        // Disarmed long before its limit (dropping joins its thread, so
        // nothing can set the flag afterwards).
        drop(c.after(Duration::from_secs(3600)));
        assert_eq!(c.reason(), None);
        // A limit that has passed as soon as the watchdog starts: wait for
        // the flag itself (the minute bounds a broken watchdog; the test
        // does not depend on any timing).
        let w = c.after(Duration::ZERO);
        let start = std::time::Instant::now();
        while c.reason().is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the watchdog never fired"
            );
            std::thread::yield_now();
        }
        assert_eq!(c.reason(), Some(CancelReason::TimeLimit));
        drop(w);
        c.cancel(CancelReason::Interrupted);
        assert_eq!(c.reason(), Some(CancelReason::TimeLimit));
        c.reset();
        assert_eq!(c.reason(), None);
    }
}

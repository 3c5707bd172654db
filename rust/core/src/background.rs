//! Work handed to the thread pool while the caller goes on with something else.
//!
//! A question runs its modalities one after another on the caller's thread; the text modality's
//! counting needs nothing from the others, so it can run on another core meanwhile. [`start`]
//! hands a job to rayon's pool and returns at once; [`Background::wait`] gives its value, or
//! the panic it raised.

use std::sync::mpsc;

/// A job running on the thread pool.
pub struct Background<T> {
    done: mpsc::Receiver<std::thread::Result<T>>,
}

/// Starts `job` on rayon's pool and returns without waiting for it.
pub fn start<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Background<T> {
    let (sender, done) = mpsc::sync_channel(1);
    rayon::spawn(move || {
        let value = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        // The receiver may be gone: nobody wants the value any more.
        let _ = sender.send(value);
    });
    Background { done }
}

impl<T> Background<T> {
    /// The job's value, once it has finished; a panic in the job is raised here again.
    pub fn wait(self) -> T {
        match self.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// The job's value once it has finished, or the panic it raised, as a value (for a caller
    /// that must not unwind, such as a destructor).
    pub fn join(self) -> std::thread::Result<T> {
        // The pool dropping the job without running it (which rayon never does) is reported as
        // a panic of the job.
        self.done.recv().unwrap_or_else(|_| Err(Box::new("a background job was dropped before it ran")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn the_job_runs_while_the_caller_goes_on() {
        // The job waits for the caller to say it went on: it must not run on the caller's thread.
        let caller_went_on = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&caller_went_on);
        let caller = std::thread::current().id();
        let job = start(move || {
            while !seen.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            (std::thread::current().id() != caller, 6 * 7)
        });
        caller_went_on.store(true, Ordering::Release);
        assert_eq!(job.wait(), (true, 42));
    }

    #[test]
    fn a_panic_in_the_job_is_raised_by_wait_and_returned_by_join() {
        let job = start(|| -> u32 { panic!("the job failed") });
        let raised = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.wait())).unwrap_err();
        assert_eq!(raised.downcast_ref::<&str>(), Some(&"the job failed"));
        let joined = start(|| -> u32 { panic!("the job failed again") }).join().unwrap_err();
        assert_eq!(joined.downcast_ref::<&str>(), Some(&"the job failed again"));
        assert_eq!(start(|| 7).join().ok(), Some(7));
    }
}

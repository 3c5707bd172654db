//! Whether a query's work is worth the thread pool, and running it either way.
//!
//! Handing work to rayon's pool from a thread outside it wakes a worker and waits for it; on a
//! busy two-core machine that costs tens of microseconds, more than a small repository's whole
//! search. Query work is therefore measured first, in bytes of verification it is worth, and
//! run on the calling thread below [`PARALLEL_MIN_WORK`]. The answers are the same either way:
//! every collection keeps its input's order.

use rayon::prelude::*;

/// Query work worth fewer verified bytes than this runs on the calling thread. SIMD
/// verification reads about 12 bytes a nanosecond, so this is some 80 µs of one core: below
/// it, a second core saves less than waking it costs.
pub(crate) const PARALLEL_MIN_WORK: usize = 1 << 20;

/// Whether work worth `bytes` verified bytes goes to the thread pool.
pub(crate) fn parallel(bytes: usize) -> bool {
    bytes >= PARALLEL_MIN_WORK
}

/// `f` of each of `items`, collected in order: on the thread pool when `parallel`, else here.
pub(crate) fn map_collect<'a, T, R, C>(parallel: bool, items: &'a [T], f: impl Fn(&'a T) -> R + Sync + Send) -> C
where
    T: Sync,
    R: Send,
    C: FromIterator<R> + FromParallelIterator<R>,
{
    if parallel {
        items.par_iter().map(f).collect()
    } else {
        items.iter().map(f).collect()
    }
}

/// The `Some` values of `f` over `items`, in order: on the thread pool when `parallel`, else here.
pub(crate) fn filter_map_collect<'a, T, R>(parallel: bool, items: &'a [T], f: impl Fn(&'a T) -> Option<R> + Sync + Send) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    if parallel {
        items.par_iter().filter_map(f).collect()
    } else {
        items.iter().filter_map(f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways_give_the_same_values_in_the_same_order() {
        let items: Vec<u32> = (0..10_000).rev().collect();
        let square = |&x: &u32| u64::from(x) * u64::from(x);
        let odd = |&x: &u32| (x % 2 == 1).then_some(x * 3);
        assert_eq!(map_collect::<_, _, Vec<u64>>(true, &items, square), map_collect::<_, _, Vec<u64>>(false, &items, square));
        assert_eq!(filter_map_collect(true, &items, odd), filter_map_collect(false, &items, odd));
        let failing = |&x: &u32| if x == 17 { Err(x) } else { Ok(x) };
        assert_eq!(map_collect::<_, _, Result<Vec<u32>, u32>>(true, &items, failing), Err(17));
        assert_eq!(map_collect::<_, _, Result<Vec<u32>, u32>>(false, &items, failing), Err(17));
    }

    #[test]
    fn small_work_stays_on_the_calling_thread() {
        assert!(!parallel(0));
        assert!(!parallel(PARALLEL_MIN_WORK - 1));
        assert!(parallel(PARALLEL_MIN_WORK));
        let caller = std::thread::current().id();
        let threads: Vec<_> = map_collect(false, &[1, 2, 3], |_| std::thread::current().id());
        assert!(threads.iter().all(|&id| id == caller));
    }
}

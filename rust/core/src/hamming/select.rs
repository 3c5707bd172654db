//! A bounded max-heap that keeps the `k` smallest neighbours seen.

use super::Neighbor;
use std::collections::BinaryHeap;

/// Keeps the `k` smallest [`Neighbor`]s offered to it (by distance, then row).
pub(crate) struct BoundedHeap {
    k: usize,
    heap: BinaryHeap<Neighbor>,
    /// A candidate must compare below this key to enter: the worst kept one once the heap is
    /// full, or above every key before. Kept as one integer so that the scan's test for the
    /// common case (a row that loses) is a single comparison.
    bound: u64,
}

/// Orders neighbours as (distance, row) do, as one integer.
#[inline(always)]
pub(crate) fn key(distance: u32, row: u32) -> u64 {
    (u64::from(distance) << 32) | u64::from(row)
}

impl BoundedHeap {
    pub(crate) fn new(k: usize) -> Self {
        let bound = if k == 0 { 0 } else { u64::MAX };
        BoundedHeap { k, heap: BinaryHeap::with_capacity(k + 1), bound }
    }

    /// The key a candidate must be below to be kept.
    #[inline(always)]
    pub(crate) fn bound(&self) -> u64 {
        self.bound
    }

    /// Considers one neighbour. Kept out of line: a scan's loop tests every row against
    /// `bound` and calls this for the few that enter, so its body stays out of the hot loop.
    #[inline(never)]
    pub(crate) fn offer(&mut self, candidate: Neighbor) {
        if key(candidate.distance, candidate.row) >= self.bound {
            return;
        }
        if self.heap.len() == self.k {
            self.heap.pop();
        }
        self.heap.push(candidate);
        if self.heap.len() == self.k {
            let worst = self.heap.peek().expect("a full heap of k > 0 has a top");
            self.bound = key(worst.distance, worst.row);
        }
    }

    pub(crate) fn merge(&mut self, other: BoundedHeap) {
        for candidate in other.heap {
            self.offer(candidate);
        }
    }

    /// The kept neighbours, nearest first.
    pub(crate) fn into_sorted(self) -> Vec<Neighbor> {
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_smallest_in_order() {
        let mut heap = BoundedHeap::new(3);
        for (distance, row) in [(5, 0), (1, 1), (9, 2), (1, 3), (0, 4), (1, 0)] {
            heap.offer(Neighbor { distance, row });
        }
        let kept: Vec<_> = heap.into_sorted().iter().map(|n| (n.distance, n.row)).collect();
        assert_eq!(kept, vec![(0, 4), (1, 0), (1, 1)]);
    }

    #[test]
    fn zero_capacity_keeps_nothing() {
        let mut heap = BoundedHeap::new(0);
        heap.offer(Neighbor { distance: 0, row: 0 });
        assert!(heap.into_sorted().is_empty());
    }
}

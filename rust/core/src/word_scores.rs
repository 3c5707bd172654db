//! The question words of a structural search summed over the symbols' word postings.
//!
//! Each question word is a term: its own posting (the symbols whose name, qualifier, path,
//! signature or docstring hold it, with a weight each) and the postings of the name words it
//! expands to, scaled down. A symbol's term value is the best of its forms; its total is the
//! sum of its term values, and its coverage the sum of the weights of the terms it has. The
//! work is proportional to the postings read, not to the symbols of the index: a symbol's sums
//! live in a list of the symbols reached, found through a per-thread table of slots that is
//! touched only where a posting points.
//!
//! The sums are added term by term in the question's order, so each is the same float, to the
//! bit, as numpy's `total[ids] += values` done term by term.

use crate::{Error, Result};

/// One form of a term: a posting (symbol ids and their values, same length) and the factor its
/// values are scaled by (1 for the word itself).
#[derive(Clone, Copy, Debug)]
pub struct Form<'a> {
    /// Symbol ids, each at most once.
    pub ids: &'a [i64],
    /// The value of the word for each symbol of `ids`: finite and not negative.
    pub values: &'a [f64],
    /// What the values are multiplied by.
    pub factor: f64,
}

/// A question word: its forms, and the weight its presence adds to a symbol's coverage.
#[derive(Clone, Debug)]
pub struct Term<'a> {
    /// The weight of the word (its inverse document frequency).
    pub weight: f64,
    /// The word's own posting alone (`direct`), taken as it is; otherwise each symbol takes the
    /// best of its scaled values over the forms.
    pub forms: Vec<Form<'a>>,
    /// Whether `forms` is the word's own posting alone, whose values are taken unscaled.
    pub direct: bool,
}

/// The symbols the terms reach, in the order they are first reached (term by term, and within a
/// term form by form, in posting order), with their sums.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reached {
    /// Symbol ids.
    pub symbols: Vec<i64>,
    /// For each, the sum of its term values.
    pub total: Vec<f64>,
    /// For each, the sum of the weights of the terms it has.
    pub covered: Vec<f64>,
}

/// The sums of `terms` over `count` symbols; only the symbols `within` keeps (a mask over all
/// symbols) are reached when it is given. Fails when a posting names a symbol past `count`,
/// or its ids and values differ in length.
pub fn accumulate(count: usize, terms: &[Term<'_>], within: Option<&[bool]>) -> Result<Reached> {
    if count >= NO_SLOT as usize {
        return Err(Error::InvalidArgument(format!("{count} symbols are more than a question can sum over")));
    }
    if let Some(mask) = within {
        if mask.len() != count {
            return Err(Error::InvalidArgument(format!("a mask of {} symbols for {count} symbols", mask.len())));
        }
    }
    for form in terms.iter().flat_map(|t| &t.forms) {
        if form.ids.len() != form.values.len() {
            return Err(Error::InvalidArgument(format!(
                "a posting of {} symbols with {} values",
                form.ids.len(),
                form.values.len()
            )));
        }
        if let Some(&bad) = form.ids.iter().find(|&&id| id < 0 || id as u64 >= count as u64) {
            return Err(Error::RowOutOfRange { row: bad as u64, rows: count });
        }
    }
    let kept = |id: usize| within.is_none_or(|mask| mask[id]);
    SLOTS.with(|slots| {
        let mut slots = slots.borrow_mut();
        if slots.len() < count {
            slots.resize(count, NO_SLOT);
        }
        let mut reached: Vec<Entry> = Vec::new();
        // The slots of the symbols one term of several forms reaches, in the order first met.
        let mut in_term: Vec<u32> = Vec::new();
        for (t, term) in terms.iter().enumerate() {
            let t = t as u32;
            for form in &term.forms {
                for (&id, &value) in form.ids.iter().zip(form.values) {
                    let id = id as usize;
                    if !kept(id) {
                        continue;
                    }
                    let slot = match slots[id] {
                        NO_SLOT => {
                            slots[id] = reached.len() as u32;
                            reached.push(Entry { id, total: 0.0, covered: 0.0, best: 0.0, term: NO_SLOT });
                            reached.len() - 1
                        }
                        slot => slot as usize,
                    };
                    let entry = &mut reached[slot];
                    if term.direct {
                        entry.total += value;
                        entry.covered += term.weight;
                        continue;
                    }
                    if entry.term != t {
                        entry.term = t;
                        entry.best = 0.0;
                        in_term.push(slot as u32);
                    }
                    // numpy's maximum against the table's 0 start: a finite, non-negative value wins.
                    let scaled = value * form.factor;
                    if scaled > entry.best {
                        entry.best = scaled;
                    }
                }
            }
            for &slot in &in_term {
                let entry = &mut reached[slot as usize];
                entry.total += entry.best;
                entry.covered += term.weight;
            }
            in_term.clear();
        }
        for entry in &reached {
            slots[entry.id] = NO_SLOT;
        }
        Ok(Reached {
            symbols: reached.iter().map(|e| e.id as i64).collect(),
            total: reached.iter().map(|e| e.total).collect(),
            covered: reached.iter().map(|e| e.covered).collect(),
        })
    })
}

/// No symbol's slot.
const NO_SLOT: u32 = u32::MAX;

thread_local! {
    /// Per symbol, its place in the list of symbols reached by the question being summed on this
    /// thread, or `NO_SLOT`: kept between questions, and cleared by the symbols reached alone, so
    /// that a question touches no more of it than its postings point to.
    static SLOTS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A symbol reached: its sums, and its best value in the last term of several forms to reach it.
struct Entry {
    id: usize,
    total: f64,
    covered: f64,
    best: f64,
    term: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form<'a>(ids: &'a [i64], values: &'a [f64], factor: f64) -> Form<'a> {
        Form { ids, values, factor }
    }

    #[test]
    fn a_symbol_sums_its_terms_and_is_listed_where_first_reached() {
        let terms = [
            Term { weight: 2.0, forms: vec![form(&[3, 1], &[0.5, 0.25], 1.0)], direct: true },
            Term { weight: 1.0, forms: vec![form(&[1, 4], &[1.0, 0.125], 1.0)], direct: true },
        ];
        let reached = accumulate(5, &terms, None).unwrap();
        assert_eq!(reached.symbols, [3, 1, 4]);
        assert_eq!(reached.total, [0.5, 1.25, 0.125]);
        assert_eq!(reached.covered, [2.0, 3.0, 1.0]);
    }

    #[test]
    fn a_term_of_several_forms_counts_each_symbol_once_at_its_best() {
        // The word itself gives symbol 2 0.25; an expansion, halved, gives it 0.4 and symbol 0 0.3.
        let terms = [Term {
            weight: 1.5,
            forms: vec![form(&[2], &[0.25], 1.0), form(&[0, 2], &[0.6, 0.8], 0.5)],
            direct: false,
        }];
        let reached = accumulate(3, &terms, None).unwrap();
        assert_eq!(reached.symbols, [2, 0]);
        assert_eq!(reached.total, [0.4, 0.3]);
        assert_eq!(reached.covered, [1.5, 1.5]);
    }

    #[test]
    fn a_term_s_best_values_do_not_leak_into_the_next_term() {
        let terms = [
            Term { weight: 1.0, forms: vec![form(&[0], &[0.9], 1.0), form(&[0], &[0.1], 1.0)], direct: false },
            Term { weight: 1.0, forms: vec![form(&[0], &[0.2], 1.0), form(&[1], &[0.3], 1.0)], direct: false },
        ];
        let reached = accumulate(2, &terms, None).unwrap();
        assert_eq!(reached.total, [0.9 + 0.2, 0.3]);
    }

    #[test]
    fn a_mask_keeps_the_others_sums_unchanged() {
        let terms = [
            Term { weight: 1.0, forms: vec![form(&[0, 1, 2], &[0.1, 0.2, 0.3], 1.0)], direct: true },
            Term { weight: 0.5, forms: vec![form(&[2, 0], &[0.7, 0.4], 1.0)], direct: true },
        ];
        let all = accumulate(3, &terms, None).unwrap();
        let masked = accumulate(3, &terms, Some(&[true, false, true])).unwrap();
        assert_eq!(masked.symbols, [0, 2]);
        assert_eq!(masked.total, [all.total[0], all.total[2]]);
        assert_eq!(masked.covered, [all.covered[0], all.covered[2]]);
    }

    #[test]
    fn postings_past_the_symbols_or_of_unequal_lengths_are_refused() {
        let past = [Term { weight: 1.0, forms: vec![form(&[5], &[0.1], 1.0)], direct: true }];
        assert!(matches!(accumulate(5, &past, None), Err(Error::RowOutOfRange { row: 5, rows: 5 })));
        let uneven = [Term { weight: 1.0, forms: vec![form(&[0, 1], &[0.1], 1.0)], direct: true }];
        assert!(matches!(accumulate(5, &uneven, None), Err(Error::InvalidArgument(_))));
        assert!(matches!(accumulate(5, &[], Some(&[true])), Err(Error::InvalidArgument(_))));
    }
}

//! What one file may expand into while it loads, counted as the text and
//! structure it produces rather than the bytes it inflates: a small file
//! can reference one part thousands of times (a workbook's cells sharing
//! one string, a PDF drawing one form on every page) and never inflate
//! past the decompression budget, yet produce gigabytes.
//!
//! [`within`] gives the file being loaded on this thread a number of bytes
//! to produce. Every node a loader adds to its [`StructureTree`] costs its
//! text plus the node itself, and loaders that gather text before they make
//! nodes (a sheet's rows, a PDF page's glyphs) [`charge`] it as they
//! gather. A copy a loader keeps beside another (a sheet's rows while its
//! nodes are made from them) counts again, since both are held: the meter
//! bounds what the file holds, not a notion of its size. Once the file is
//! over, charges fail and nodes are dropped, so memory stops growing;
//! [`within`] says so, and the file is refused with the reason. A
//! thread-local keeps the meter out of every loader's signature: a file
//! loads on one thread, start to end.
//!
//! [`StructureTree`]: crate::structure_tree::StructureTree

use std::cell::Cell;

thread_local! {
    /// Bytes the file loading on this thread may still produce, and
    /// whether it went over; `None` when no file is being loaded.
    static LEFT: Cell<Option<(u64, bool)>> = const { Cell::new(None) };
}

/// The file went over what it may produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Over;

/// Runs `load` with `limit` bytes of text and structure to produce, and
/// says whether it went over.
pub fn within<T>(limit: u64, load: impl FnOnce() -> T) -> (T, bool) {
    /// Restores the outer meter (none, as a rule), even if `load` panics.
    struct Restore(Option<(u64, bool)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            LEFT.with(|left| left.set(self.0));
        }
    }
    let outer = Restore(LEFT.with(|left| left.replace(Some((limit, false)))));
    let loaded = load();
    let over = over();
    drop(outer);
    (loaded, over)
}

/// Counts `bytes` against the file being loaded. Fails once the file is
/// over, and from then on; outside [`within`] nothing is counted.
pub fn charge(bytes: u64) -> Result<(), Over> {
    LEFT.with(|left| match left.get() {
        None => Ok(()),
        Some((_, true)) => Err(Over),
        Some((rest, false)) => match rest.checked_sub(bytes) {
            Some(rest) => {
                left.set(Some((rest, false)));
                Ok(())
            }
            None => {
                left.set(Some((0, true)));
                Err(Over)
            }
        },
    })
}

/// What the file being loaded may still produce; unlimited outside
/// [`within`]. A reader that must allocate before it can charge (a zip
/// member it inflates) reads no more than this.
pub fn left() -> u64 {
    LEFT.with(|left| match left.get() {
        None => u64::MAX,
        Some((_, true)) => 0,
        Some((rest, false)) => rest,
    })
}

/// Whether the file being loaded went over. Nothing a loader makes from
/// then on is kept, so loops over parts and elements stop early.
pub fn over() -> bool {
    LEFT.with(|left| left.get()).is_some_and(|(_, over)| over)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_count_down_and_fail_for_good_once_over() {
        let ((), over) = within(100, || {
            assert_eq!(charge(60), Ok(()));
            assert_eq!(left(), 40);
            assert_eq!(charge(40), Ok(()));
            assert!(!super::over());
            assert_eq!(charge(1), Err(Over));
            assert_eq!(charge(0), Err(Over), "over stays over");
            assert_eq!(left(), 0);
        });
        assert!(over);
        assert_eq!(left(), u64::MAX);
        let ((), over) = within(100, || assert_eq!(charge(100), Ok(())));
        assert!(!over);
        assert_eq!(charge(u64::MAX), Ok(()), "nothing counts outside a load");
    }

    #[test]
    fn a_panicking_load_leaves_no_meter_behind() {
        let caught = std::panic::catch_unwind(|| within(1, || panic!("loader bug")));
        assert!(caught.is_err());
        assert_eq!(charge(u64::MAX), Ok(()));
    }
}

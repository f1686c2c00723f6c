//! Which earlier prompts the embedded model keeps in its KV cache, and how
//! many cells they hold: the bookkeeping behind `cache_prefix`, apart from
//! llama.cpp so it can be tested without a model.
//!
//! Contract:
//! - Every request is computed in sequence 0; slot `i` keeps one earlier
//!   prompt in sequence `i + 1`, with the part of its answer that was
//!   computed (a chat that goes on from that answer repeats it). A request
//!   starts from the longest prefix it shares with any kept prompt, less
//!   its last token (whose logits the first sample needs).
//! - The cache is unified, so copying a prompt between sequences tags the
//!   same cells: a prompt that grew from a kept one shares its cells for
//!   the common beginning. [`PrefixCache::cells`] counts every distinct
//!   cell exactly that way, and [`PrefixCache::plan`] evicts the least
//!   recently used prompts until the request's own cells fit beside them.
//! - A kept prompt that a newer one extends is replaced by it; a full set
//!   of slots gives up its least recently used.

use std::collections::HashMap;

/// Earlier prompts kept beside the one being computed. Four covers a
/// method's distinct prompt families (RDR²'s routing instructions, its
/// reading prompt, a thread's rewrite) without filling a 4k context.
pub const KEPT_PROMPTS: usize = 4;

/// A run of cells made by one request: positions `start..end` of the
/// prompt that request computed. Prompts that share a prefix share runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    id: u64,
    start: usize,
    end: usize,
}

#[derive(Debug, Clone)]
struct Kept<T> {
    tokens: Vec<T>,
    runs: Vec<Run>,
    used: u64,
}

/// What the worker does to the KV cache before computing a request, in
/// this order: clear sequence 0, copy `from`'s first `shared` cells into
/// it, then clear the `evict` slots (cells sequence 0 now shares stay).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Slots whose sequences are cleared first, to make room.
    pub evict: Vec<usize>,
    /// The slot whose first `shared` cells sequence 0 starts from.
    pub from: Option<usize>,
    /// Tokens of the prompt already in the cache.
    pub shared: usize,
}

/// What the worker does after a request, to keep its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// The slot that receives sequence 0's prompt (cleared first).
    pub slot: usize,
}

#[derive(Debug)]
pub struct PrefixCache<T> {
    slots: Vec<Option<Kept<T>>>,
    /// The runs sequence 0 holds while a request is computed.
    current: Vec<Run>,
    capacity: usize,
    next_run: u64,
    clock: u64,
}

impl<T: PartialEq + Clone> PrefixCache<T> {
    /// A cache of `capacity` cells (the context size) with nothing kept.
    pub fn new(capacity: usize) -> PrefixCache<T> {
        PrefixCache {
            slots: vec![None; KEPT_PROMPTS],
            current: Vec::new(),
            capacity,
            next_run: 0,
            clock: 0,
        }
    }

    /// Forgets every kept prompt; the worker clears the whole cache.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.current.clear();
    }

    /// Readies the bookkeeping for a request of `tokens` that may write
    /// `answer_room` more, and says what to do to the cache. With `reuse`
    /// off nothing is kept and the worker clears the whole cache, so the
    /// request is computed exactly as in a fresh context.
    pub fn plan(&mut self, tokens: &[T], answer_room: usize, reuse: bool) -> Plan {
        self.current.clear();
        if !reuse {
            self.clear();
            return Plan {
                evict: (0..KEPT_PROMPTS).collect(),
                from: None,
                shared: 0,
            };
        }
        self.clock += 1;
        let best = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|k| (i, common_prefix(&k.tokens, tokens))))
            .max_by_key(|&(i, shared)| (shared, std::cmp::Reverse(i)))
            .filter(|&(_, shared)| shared > 0);
        let (from, shared) = match best {
            Some((i, shared)) => {
                let shared = shared.min(tokens.len().saturating_sub(1));
                let kept = self.slots[i].as_mut().expect("a slot just found");
                kept.used = self.clock;
                self.current = truncated(&kept.runs, shared);
                (Some(i), shared)
            }
            None => (None, 0),
        };
        let run = self.fresh_run(shared, tokens.len() + answer_room);
        self.current.push(run);
        let mut evict = Vec::new();
        while self.cells() > self.capacity {
            let Some(lru) = self.least_recently_used() else {
                break;
            };
            self.slots[lru] = None;
            evict.push(lru);
        }
        if let Some(last) = self.current.last_mut() {
            last.end = tokens.len();
        }
        Plan {
            evict,
            from,
            shared,
        }
    }

    /// After a request whose prompt and computed answer, `tokens`, sequence
    /// 0 still holds (within the answer room [`Self::plan`] was given): the
    /// slot to keep them in.
    pub fn keep(&mut self, tokens: Vec<T>) -> Keep {
        let mut runs = std::mem::take(&mut self.current);
        if let Some(last) = runs.last_mut() {
            last.end = last.end.max(tokens.len());
        }
        let slot = self
            .slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|k| tokens.starts_with(&k.tokens)))
            .or_else(|| self.slots.iter().position(Option::is_none))
            .or_else(|| self.least_recently_used())
            .unwrap_or(0);
        self.slots[slot] = Some(Kept {
            tokens,
            runs,
            used: self.clock,
        });
        Keep { slot }
    }

    /// Every cell the kept prompts and sequence 0 hold, counting each run
    /// once however many prompts share it.
    pub fn cells(&self) -> usize {
        let mut ends: HashMap<u64, (usize, usize)> = HashMap::new();
        let kept = self.slots.iter().flatten().flat_map(|k| k.runs.iter());
        for run in kept.chain(&self.current) {
            let entry = ends.entry(run.id).or_insert((run.start, run.end));
            entry.1 = entry.1.max(run.end);
        }
        ends.values().map(|(start, end)| end - start).sum()
    }

    /// How many prompts are kept.
    pub fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn fresh_run(&mut self, start: usize, end: usize) -> Run {
        self.next_run += 1;
        Run {
            id: self.next_run,
            start,
            end: end.max(start),
        }
    }

    fn least_recently_used(&self) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|k| (i, k.used)))
            .min_by_key(|&(_, used)| used)
            .map(|(i, _)| i)
    }
}

fn common_prefix<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The runs that hold the first `len` positions of a prompt held by `runs`.
fn truncated(runs: &[Run], len: usize) -> Vec<Run> {
    runs.iter()
        .filter(|r| r.start < len)
        .map(|r| Run {
            end: r.end.min(len),
            ..*r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(prefix: &[u32], rest: std::ops::Range<u32>) -> Vec<u32> {
        prefix.iter().copied().chain(rest).collect()
    }

    /// A request of `tokens` with no answer room that finishes and is kept.
    fn answered(cache: &mut PrefixCache<u32>, tokens: &[u32]) -> (Plan, Keep) {
        let plan = cache.plan(tokens, 0, true);
        (plan, cache.keep(tokens.to_vec()))
    }

    #[test]
    fn nothing_is_shared_until_a_prompt_is_kept() {
        let mut cache = PrefixCache::new(4096);
        let a = prompt(&[], 0..100);
        let plan = cache.plan(&a, 50, true);
        assert_eq!((plan.from, plan.shared), (None, 0));
        // The answer's room counted while planning; the answer is not kept.
        assert_eq!(cache.cells(), 100);
        cache.keep(a.clone());
        assert_eq!(cache.cells(), 100);
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_request_starts_from_the_longest_shared_prefix_of_any_kept_prompt() {
        let mut cache = PrefixCache::new(4096);
        let head: Vec<u32> = (0..60).collect();
        let a = prompt(&head, 1000..1100);
        let b = prompt(&[7, 7, 7], 2000..2300);
        for p in [&a, &b] {
            answered(&mut cache, p);
        }
        // b was computed last, yet a follow-on of a finds a's slot.
        let c = prompt(&head, 1000..1050)
            .into_iter()
            .chain(3000..3010)
            .collect::<Vec<_>>();
        let plan = cache.plan(&c, 10, true);
        assert_eq!(plan.from, Some(0));
        assert_eq!(plan.shared, 110);
        assert!(plan.evict.is_empty());
    }

    #[test]
    fn a_chat_that_goes_on_from_a_kept_answer_starts_after_it() {
        let mut cache = PrefixCache::new(4096);
        let question: Vec<u32> = (0..100).collect();
        cache.plan(&question, 40, true);
        // The prompt and the 30 answer tokens computed after it.
        let answered: Vec<u32> = (0..130).collect();
        cache.keep(answered);
        assert_eq!(cache.cells(), 130);
        let going_on: Vec<u32> = (0..130).chain(500..520).collect();
        let plan = cache.plan(&going_on, 10, true);
        assert_eq!((plan.from, plan.shared), (Some(0), 130));
        // The kept cells are shared, not counted again: 130 and 20 new.
        assert_eq!(cache.cells(), 150);
    }

    #[test]
    fn the_last_token_is_always_computed_again() {
        let mut cache = PrefixCache::new(4096);
        let a: Vec<u32> = (0..50).collect();
        answered(&mut cache, &a);
        let plan = cache.plan(&a, 10, true);
        assert_eq!(plan.shared, 49);
    }

    #[test]
    fn shared_cells_are_counted_once() {
        let mut cache = PrefixCache::new(4096);
        let head: Vec<u32> = (0..500).collect();
        let a = prompt(&head, 1000..1100);
        answered(&mut cache, &a);
        let b = prompt(&head, 2000..2200);
        let (plan, keep) = answered(&mut cache, &b);
        assert_eq!(plan.shared, 500);
        assert_ne!(keep.slot, 0, "b does not extend a, so a stays");
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.cells(), 500 + 100 + 200);
    }

    #[test]
    fn a_prompt_that_extends_a_kept_one_replaces_it() {
        let mut cache = PrefixCache::new(4096);
        let a: Vec<u32> = (0..100).collect();
        answered(&mut cache, &a);
        let longer: Vec<u32> = (0..180).collect();
        let (_, keep) = answered(&mut cache, &longer);
        assert_eq!(keep.slot, 0);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.cells(), 180);
    }

    #[test]
    fn kept_prompts_are_evicted_oldest_first_until_the_request_fits() {
        let mut cache = PrefixCache::new(1000);
        let prompts: Vec<Vec<u32>> = (0..3)
            .map(|i| prompt(&[i], 100 * i..100 * i + 250))
            .collect();
        for p in &prompts {
            assert!(answered(&mut cache, p).0.evict.is_empty());
        }
        assert_eq!(cache.cells(), 3 * 251);
        // 300 cells of prompt and answer beside 753 kept: the oldest goes.
        let d = prompt(&[9], 5000..5200);
        let plan = cache.plan(&d, 99, true);
        assert_eq!(plan.evict, vec![0]);
        assert!(cache.cells() <= 1000);
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_full_set_of_slots_gives_up_the_least_recently_used() {
        let mut cache = PrefixCache::new(100_000);
        let prompts: Vec<Vec<u32>> = (0..KEPT_PROMPTS as u32 + 1)
            .map(|i| prompt(&[i], 0..10))
            .collect();
        for p in &prompts[..KEPT_PROMPTS] {
            answered(&mut cache, p);
        }
        // Using the first again makes the second the least recent.
        answered(&mut cache, &prompts[0]);
        let (_, keep) = answered(&mut cache, &prompts[KEPT_PROMPTS]);
        assert_eq!(keep.slot, 1);
        assert_eq!(cache.len(), KEPT_PROMPTS);
    }

    #[test]
    fn without_reuse_everything_is_forgotten() {
        let mut cache = PrefixCache::new(4096);
        let a: Vec<u32> = (0..100).collect();
        answered(&mut cache, &a);
        let plan = cache.plan(&a, 0, false);
        assert_eq!((plan.from, plan.shared), (None, 0));
        assert!(cache.is_empty());
        assert_eq!(cache.cells(), 0);
    }
}

//! `folio_bm25`: FTS5's BM25, scoring only the query's first phrases, with
//! their document frequencies given by the caller.
//!
//! `folio_bm25(chunks_fts, w_text, w_heading, k, df₀, …, dfₙ₋₁)` ranks a
//! row as FTS5's `bm25(chunks_fts, w_text, w_heading)` would, over phrases
//! 0..n of the query and no others: same k₁ (1.2), b (0.75), IDF floor and
//! length normalisation (the row's tokens against the table's average).
//! Three things follow that the built-in function cannot do:
//!
//! - A query may end in phrases that only restrict which rows match. A
//!   query `(a OR b OR c) AND (a)` scores the rows holding `a` exactly as
//!   `a OR b OR c` would score them, without scoring the many rows that
//!   hold only `b` or `c`. That is how `retrieve::bm25` keeps a large
//!   library's frequent words in the ranking at a bounded cost.
//! - The built-in function counts each phrase's matching rows by walking
//!   its whole posting list once per query. The caller has counted them
//!   already (that is how it picks the words to keep), so it passes them.
//! - A row's length is a lookup in FTS5's table of row sizes, a B-tree read
//!   per row and most of the cost of ranking a large library (a profile of
//!   hybrid search over 1M chunks spent 37% of its time there). With `k`
//!   above zero, the function keeps the best `k` scores it has given so
//!   far; a row whose score cannot reach them whatever its length (the
//!   score with a length of zero bounds it) gets that bound instead, and
//!   its length is never read. The bound is below the `k`-th best, so the
//!   row stays out of the top `k`; the query must ask for `LIMIT k` (or
//!   fewer) rows ordered by this score, and then every row it returns has
//!   its exact score.
//!
//! A wrong count makes wrong scores, never unsafe ones: the counts come
//! from the store's own `term_matches`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;

use libsqlite3_sys as ffi;

const NAME: &CStr = c"folio_bm25";
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// FTS5's floor for a phrase in more than half of the rows.
const IDF_FLOOR: f64 = 1e-6;
/// The two column weights come first…
const WEIGHTS: usize = 2;
/// …then the number of rows the query keeps (0: score every row exactly)…
const KEPT_ARG: usize = WEIGHTS;
/// …then the counts.
const COUNTS_FROM: usize = KEPT_ARG + 1;

/// Registers `folio_bm25` on `db`; called for every new connection (as an
/// SQLite auto extension, beside sqlite-vec).
///
/// # Safety
/// `db` must be a valid, open connection; SQLite passes one.
pub(super) unsafe extern "C" fn register(
    db: *mut ffi::sqlite3,
    _error: *mut *mut c_char,
    _api: *const ffi::sqlite3_api_routines,
) -> c_int {
    let api = fts5_api(db);
    if api.is_null() {
        return ffi::SQLITE_ERROR;
    }
    match (*api).xCreateFunction {
        Some(create) => create(api, NAME.as_ptr(), ptr::null_mut(), Some(rank), None),
        None => ffi::SQLITE_ERROR,
    }
}

/// FTS5's registration interface on `db`, as its documentation says to
/// obtain it: `SELECT fts5(?1)` with a pointer bound to receive it.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> *mut ffi::fts5_api {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    if ffi::sqlite3_prepare_v2(
        db,
        c"SELECT fts5(?1)".as_ptr(),
        -1,
        &mut stmt,
        ptr::null_mut(),
    ) == ffi::SQLITE_OK
    {
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
    }
    ffi::sqlite3_finalize(stmt);
    api
}

/// What one query needs for every row: computed at its first row.
struct QueryData {
    idf: Vec<f64>,
    avgdl: f64,
    /// Scratch for one row's weighted phrase frequencies.
    freq: Vec<f64>,
    /// Rows the query keeps; 0 scores every row exactly.
    kept: usize,
    /// The best `kept` exact scores given so far, worst on top.
    best: BinaryHeap<Reverse<Score>>,
}

/// A score in `f64::total_cmp`'s order, which every comparison below uses
/// so that equality and both orderings agree.
struct Score(f64);

impl PartialEq for Score {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl QueryData {
    /// The score no row below the best `kept` can beat, once there are
    /// that many.
    fn floor(&self) -> Option<f64> {
        (self.kept > 0 && self.best.len() == self.kept)
            .then(|| self.best.peek().map(|Reverse(s)| s.0))
            .flatten()
    }

    fn record(&mut self, score: f64) {
        if self.kept == 0 {
            return;
        }
        if self.best.len() < self.kept {
            self.best.push(Reverse(Score(score)));
        } else if self.floor().is_some_and(|floor| score > floor) {
            self.best.pop();
            self.best.push(Reverse(Score(score)));
        }
    }
}

unsafe extern "C" fn drop_query_data(p: *mut c_void) {
    drop(Box::from_raw(p.cast::<QueryData>()));
}

unsafe extern "C" fn rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    let args: &[*mut ffi::sqlite3_value] = if n_val > 0 && !values.is_null() {
        std::slice::from_raw_parts(values, n_val as usize)
    } else {
        &[]
    };
    match score(&*api, fts, args) {
        Ok(s) => ffi::sqlite3_result_double(ctx, -s),
        Err(Failure::Code(code)) => ffi::sqlite3_result_error_code(ctx, code),
        Err(Failure::Usage(message)) => {
            ffi::sqlite3_result_error(ctx, message.as_ptr(), -1);
        }
    }
}

enum Failure {
    Code(c_int),
    Usage(&'static CStr),
}

fn check(rc: c_int) -> Result<(), Failure> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(Failure::Code(rc))
    }
}

/// Returns the function FTS5 must provide, or fails the call.
fn needed<T>(f: Option<T>) -> Result<T, Failure> {
    f.ok_or(Failure::Code(ffi::SQLITE_MISUSE))
}

/// The row's BM25 over the counted phrases (higher is better).
unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> Result<f64, Failure> {
    let mut weights = [1.0; WEIGHTS];
    for (w, v) in weights.iter_mut().zip(args) {
        *w = ffi::sqlite3_value_double(*v);
    }
    let data = query_data(api, fts, args)?;
    data.freq.iter_mut().for_each(|f| *f = 0.0);
    let mut instances: c_int = 0;
    check(needed(api.xInstCount)?(fts, &mut instances))?;
    let inst = needed(api.xInst)?;
    for i in 0..instances {
        let (mut phrase, mut column, mut offset) = (0, 0, 0);
        check(inst(fts, i, &mut phrase, &mut column, &mut offset))?;
        if let Some(f) = data.freq.get_mut(phrase as usize) {
            *f += weights.get(column as usize).copied().unwrap_or(1.0);
        }
    }
    // The score with a row length of zero: no longer row scores more.
    let bound: f64 = term_scores(data, K1 * (1.0 - B)).sum();
    if data.floor().is_some_and(|floor| bound < floor) {
        return Ok(bound);
    }
    let mut tokens: c_int = 0;
    check(needed(api.xColumnSize)?(fts, -1, &mut tokens))?;
    let exact = term_scores(data, K1 * (1.0 - B + B * f64::from(tokens) / data.avgdl)).sum();
    data.record(exact);
    Ok(exact)
}

/// Each counted phrase's part of the score, `norm` being k₁ scaled for
/// the row's length.
fn term_scores(data: &QueryData, norm: f64) -> impl Iterator<Item = f64> + '_ {
    data.idf
        .iter()
        .zip(&data.freq)
        .map(move |(idf, f)| idf * (f * (K1 + 1.0)) / (f + norm))
}

/// This query's IDFs and average row length, made at its first row and
/// kept by FTS5 until the query ends.
unsafe fn query_data<'q>(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> Result<&'q mut QueryData, Failure> {
    let existing = needed(api.xGetAuxdata)?(fts, 0).cast::<QueryData>();
    if !existing.is_null() {
        return Ok(&mut *existing);
    }
    let counts = args.get(COUNTS_FROM..).unwrap_or(&[]);
    let phrases = needed(api.xPhraseCount)?(fts);
    if counts.is_empty() || counts.len() > phrases.max(0) as usize {
        return Err(Failure::Usage(
            c"folio_bm25 needs two weights, the rows kept, and a match count for each scored phrase (no more counts than phrases)",
        ));
    }
    let (mut rows, mut total_tokens) = (0i64, 0i64);
    check(needed(api.xRowCount)?(fts, &mut rows))?;
    check(needed(api.xColumnTotalSize)?(fts, -1, &mut total_tokens))?;
    let rows = rows.max(1) as f64;
    let idf = counts
        .iter()
        .map(|v| {
            let hits = ffi::sqlite3_value_int64(*v) as f64;
            let idf = ((rows - hits + 0.5) / (hits + 0.5)).ln();
            if idf > 0.0 {
                idf
            } else {
                IDF_FLOOR
            }
        })
        .collect::<Vec<_>>();
    let kept = ffi::sqlite3_value_int64(args[KEPT_ARG]).max(0) as usize;
    let data = Box::new(QueryData {
        freq: vec![0.0; idf.len()],
        idf,
        kept,
        best: BinaryHeap::with_capacity(kept.min(1 << 16)),
        avgdl: (total_tokens as f64 / rows).max(f64::MIN_POSITIVE),
    });
    let raw = Box::into_raw(data);
    let rc = needed(api.xSetAuxdata)?(fts, raw.cast::<c_void>(), Some(drop_query_data));
    if rc != ffi::SQLITE_OK {
        // FTS5 frees what it was given even when it fails to keep it.
        return Err(Failure::Code(rc));
    }
    Ok(&mut *raw)
}

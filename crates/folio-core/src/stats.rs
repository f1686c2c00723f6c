//! Order statistics shared by benchmarks and evaluations, so a p95 means the
//! same in every table Folio prints.

/// Nearest-rank percentile of `samples` (any order), `p` in 0..=100: always
/// one of the samples, never an interpolation between two.
pub fn percentile(samples: &[f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let s = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&s, 50.0), 3.0);
        assert_eq!(percentile(&s, 95.0), 5.0);
        assert_eq!(percentile(&s, 0.0), 1.0);
        assert!(percentile(&[], 50.0).is_nan());
    }
}

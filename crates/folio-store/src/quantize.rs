//! How vectors are stored: int8, one byte a dimension, a quarter of f32's
//! size on disk and in memory.
//!
//! Every vector Folio stores is unit length, so its components have a
//! root mean square of `1/√dim`. One scale per dimension count maps
//! ±`CLIP_RMS/√dim` onto ±127 and clips the rare component beyond it;
//! because the scale is the same for every vector, int8 distances rank
//! like the real ones, which sqlite-vec's int8 scan relies on, and no
//! per-vector state is kept.
//!
//! `CLIP_RMS` was chosen on the HotpotQA corpus (8,094 passages, the kit's
//! model) with a one-off numpy sweep over its vectors: the largest component
//! is 5.1 RMS, and clipping at 4.5 touches 0.0007% of components while
//! keeping recall@10 against exact f32 at 0.994 for the 200 dev questions;
//! clipping lower (3) loses more to clipped outliers (0.972), higher (8) to
//! coarser steps (0.986). `folio bench search` checks the chosen value
//! (README, "Benchmarks").

/// Clip at this many times a unit vector's root-mean-square component.
const CLIP_RMS: f32 = 4.5;

/// The factor from a real component to its int8 value for vectors of
/// `dim` dimensions.
pub fn scale(dim: usize) -> f32 {
    127.0 * (dim.max(1) as f32).sqrt() / CLIP_RMS
}

/// `v` as int8 at [`scale`]`(v.len())`.
pub fn quantize(v: &[f32]) -> Vec<i8> {
    let s = scale(v.len());
    v.iter()
        .map(|x| (x * s).round().clamp(-127.0, 127.0) as i8)
        .collect()
}

/// The real vector an int8 one stands for.
pub fn dequantize(v: &[i8]) -> Vec<f32> {
    let s = scale(v.len());
    v.iter().map(|&x| f32::from(x) / s).collect()
}

/// The bytes sqlite-vec stores for `v` (`vec_int8` reads them back).
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    quantize(v).into_iter().map(|x| x as u8).collect()
}

/// The int8 values of a stored blob.
pub fn from_blob(blob: &[u8]) -> Vec<i8> {
    blob.iter().map(|&b| b as i8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_vector_comes_back_within_half_a_step_and_clips_outliers() {
        let dim = 384;
        let raw: Vec<f32> = (0..dim)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 1000.0)
            .collect();
        let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
        let mut v: Vec<f32> = raw.iter().map(|x| x / norm).collect();
        v[7] = 0.9;
        let back = dequantize(&quantize(&v));
        let step = 1.0 / scale(dim);
        for (i, (a, b)) in v.iter().zip(&back).enumerate() {
            if i == 7 {
                assert_eq!(*b, 127.0 / scale(dim), "clipped at the top");
            } else {
                assert!((a - b).abs() <= step / 2.0 + 1e-7, "{i}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn blobs_round_trip_signs() {
        let v = [-10.0, -0.01, 0.0, 0.01, 10.0];
        let q = quantize(&v);
        assert_eq!(from_blob(&to_blob(&v)), q);
        assert_eq!(q[0], -127, "clipped, not wrapped");
        assert_eq!(q[4], 127);
        assert!(q[1] < 0 && q[3] > 0);
    }
}

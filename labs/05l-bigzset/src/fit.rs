//! Least squares of `latency = a + b·log2 N`: the straight line through
//! (log2 N, latency) that minimises the squared vertical distances, and R², the
//! share of the latencies' variance the line explains (1 = every point on it).

/// A fitted `a + b·log2 N`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogFit {
    pub a: f64,
    pub b: f64,
    pub r2: f64,
    /// How many sizes the fit rests on.
    pub points: usize,
}

impl LogFit {
    /// Fits `(N, latency)` pairs; None with fewer than two distinct sizes.
    pub fn of(samples: &[(f64, f64)]) -> Option<LogFit> {
        let xs: Vec<f64> = samples.iter().map(|(n, _)| n.log2()).collect();
        let ys: Vec<f64> = samples.iter().map(|(_, y)| *y).collect();
        let k = xs.len() as f64;
        let (mx, my) = (xs.iter().sum::<f64>() / k, ys.iter().sum::<f64>() / k);
        let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
        if xs.len() < 2 || sxx == 0.0 {
            return None;
        }
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let b = sxy / sxx;
        let a = my - b * mx;
        let ss_tot: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
        let ss_res: f64 = xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| (y - (a + b * x)).powi(2))
            .sum();
        // All latencies equal: a flat line explains them entirely.
        let r2 = if ss_tot == 0.0 {
            1.0
        } else {
            1.0 - ss_res / ss_tot
        };
        Some(LogFit {
            a,
            b,
            r2,
            points: xs.len(),
        })
    }

    /// The line's latency at `n` members (an extrapolation beyond the sizes run).
    pub fn at(&self, n: f64) -> f64 {
        self.a + self.b * n.log2()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_an_exact_logarithm() {
        let samples: Vec<(f64, f64)> = [1e4, 1e5, 1e6, 1e7]
            .iter()
            .map(|&n: &f64| (n, 2.0 + 0.5 * n.log2()))
            .collect();
        let fit = LogFit::of(&samples).unwrap();
        assert!((fit.a - 2.0).abs() < 1e-9 && (fit.b - 0.5).abs() < 1e-9);
        assert!((fit.r2 - 1.0).abs() < 1e-12);
        assert!((fit.at(1e8) - (2.0 + 0.5 * 1e8f64.log2())).abs() < 1e-9);
    }

    #[test]
    fn r2_drops_with_scatter_and_one_size_is_no_fit() {
        let fit = LogFit::of(&[(1e4, 1.0), (1e5, 3.0), (1e6, 1.0), (1e7, 3.0)]).unwrap();
        assert!(fit.r2 < 0.3, "{fit:?}");
        assert_eq!(LogFit::of(&[(1e4, 1.0), (1e4, 2.0)]), None);
        assert_eq!(LogFit::of(&[(1e4, 1.0)]), None);
    }
}

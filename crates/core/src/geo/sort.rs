//! The sorts behind ASC/DESC, which decide where equal distances end up.
//!
//! Redis sorts its result array with the C library's `qsort` when every result is
//! returned, and with its own partial quicksort `pqsort` (Bentley–McIlroy, from
//! NetBSD) when COUNT keeps fewer than were found: `pqsort` only finishes sorting
//! the part of the array that will be returned. Neither is specified to keep equal
//! elements in order, and points with equal distances (the same coordinates under
//! several names, which GEOADD allows) come out in whatever order the algorithm
//! leaves them. glibc's `qsort` (2.36, the one the reference Redis links) is a
//! top-down merge sort, stable; `pqsort` is not. Both are reproduced step for step,
//! including how they behave with a comparator that answers -1 for NaN.

/// Redis's comparator results: `1`, `0` or `-1`.
pub type Cmp<T> = fn(&T, &T) -> i32;

/// glibc's `msort_with_tmp`: split in halves (the first has `n / 2`), sort each,
/// merge taking from the left while `cmp(left, right) <= 0`.
pub fn glibc_qsort<T: Clone>(items: &mut [T], cmp: Cmp<T>) {
    if items.len() <= 1 {
        return;
    }
    let n1 = items.len() / 2;
    glibc_qsort(&mut items[..n1], cmp);
    glibc_qsort(&mut items[n1..], cmp);
    let mut merged = Vec::with_capacity(items.len());
    let (mut i, mut j) = (0, n1);
    while i < n1 && j < items.len() {
        if cmp(&items[i], &items[j]) <= 0 {
            merged.push(items[i].clone());
            i += 1;
        } else {
            merged.push(items[j].clone());
            j += 1;
        }
    }
    merged.extend_from_slice(&items[i..n1]);
    merged.extend_from_slice(&items[j..]);
    items.clone_from_slice(&merged);
}

/// Redis's `pqsort(a, n, es, cmp, lrange, rrange)`: sorts enough of `items` that
/// positions `lrange..=rrange` hold what a full sort would put there (for equal
/// elements, whatever this algorithm puts there).
pub fn pqsort<T>(items: &mut [T], cmp: Cmp<T>, lrange: usize, rrange: usize) {
    pqsort_at(items, 0, items.len(), cmp, lrange as isize, rrange as isize);
}

fn med3<T>(v: &[T], a: usize, b: usize, c: usize, cmp: Cmp<T>) -> usize {
    if cmp(&v[a], &v[b]) < 0 {
        if cmp(&v[b], &v[c]) < 0 {
            b
        } else if cmp(&v[a], &v[c]) < 0 {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]) > 0 {
        b
    } else if cmp(&v[a], &v[c]) < 0 {
        a
    } else {
        c
    }
}

fn vecswap<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        v.swap(a + i, b + i);
    }
}

/// `_pqsort` on `v[base..base + n]`, in element indices rather than byte pointers.
/// A sub-array `[s, s + m)` is skipped when the wanted range lies wholly before or
/// wholly after it.
fn pqsort_at<T>(v: &mut [T], mut base: usize, mut n: usize, cmp: Cmp<T>, l: isize, r: isize) {
    loop {
        if n < 7 {
            for pm in base + 1..base + n {
                let mut pl = pm;
                while pl > base && cmp(&v[pl - 1], &v[pl]) > 0 {
                    v.swap(pl, pl - 1);
                    pl -= 1;
                }
            }
            return;
        }
        let a = base;
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(v, pm - d, pm, pm + d, cmp);
                pn = med3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(v, pl, pm, pn, cmp);
        }
        v.swap(a, pm);
        let (mut pa, mut pb) = (a + 1, a + 1);
        // pc and pd may step below `a + 1`; keep them signed.
        let (mut pc, mut pd) = ((a + n - 1) as isize, (a + n - 1) as isize);
        loop {
            while pb as isize <= pc {
                let c = cmp(&v[pb], &v[a]);
                if c > 0 {
                    break;
                }
                if c == 0 {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb as isize <= pc {
                let c = cmp(&v[pc as usize], &v[a]);
                if c < 0 {
                    break;
                }
                if c == 0 {
                    v.swap(pc as usize, pd as usize);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb as isize > pc {
                break;
            }
            v.swap(pb, pc as usize);
            pb += 1;
            pc -= 1;
        }
        let pn = a + n;
        let r1 = (pa - a).min(pb - pa);
        vecswap(v, a, pb - r1, r1);
        let r2 = ((pd - pc) as usize).min(pn - pd as usize - 1);
        vecswap(v, pb, pn - r2, r2);

        let skip = |s: usize, m: usize| {
            let (s, e) = (s as isize, (s + m) as isize);
            (l < s && r < s) || (l >= e && r >= e)
        };
        let left = pb - pa;
        if left > 1 && !skip(a, left) {
            pqsort_at(v, a, left, cmp, l, r);
        }
        let right = (pd - pc) as usize;
        if right > 1 {
            base = pn - right;
            n = right;
            if !skip(base, n) {
                continue;
            }
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_first(a: &(f64, u32), b: &(f64, u32)) -> i32 {
        if a.0 > b.0 {
            1
        } else if a.0 == b.0 {
            0
        } else {
            -1
        }
    }

    #[test]
    fn qsort_is_stable_and_pqsort_sorts_the_prefix() {
        let mut v: Vec<(f64, u32)> = (0..200).map(|i| (((i * 37) % 23) as f64, i)).collect();
        let mut expected = v.clone();
        expected.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        let mut full = v.clone();
        glibc_qsort(&mut full, by_first);
        assert_eq!(full, expected);
        pqsort(&mut v, by_first, 0, 9);
        let firsts: Vec<f64> = v[..10].iter().map(|p| p.0).collect();
        let want: Vec<f64> = expected[..10].iter().map(|p| p.0).collect();
        assert_eq!(firsts, want);
    }
}

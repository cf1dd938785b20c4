//! Size distributions (issue 50 item 3): `radius_distribution` of a `[[cloud]]` or an
//! `[[inserter]]`, a lognormal law or a tabulated cumulative curve by number or by mass
//! (a sieve curve). The radii drawn follow the law (Kolmogorov–Smirnov on 10⁴ radii),
//! a by-mass table puts the right fraction of the mass in each of its intervals, and
//! the law survives `run.toml` and checkpoints.

use std::path::Path;

use varidem::backend::Backend;
use varidem::checkpoint::Checkpoint;
use varidem::cpu::CpuBackend;
use varidem::io::{parse_scene, scene_to_toml};
use varidem::model::sizes::{RadiusDistribution, SizeBasis};
use varidem::model::Scene;

/// 10 000 radii, the reserve of one inserter (drawn at set-up from its stream 0).
const N: usize = 10_000;

/// The Kolmogorov–Smirnov critical value at significance 0.001 for `n` samples,
/// `1.949/√n` (the asymptotic Kolmogorov distribution; 0.0195 at 10⁴): a sample that
/// follows the law exceeds it once in a thousand seeds.
fn ks_critical(n: usize) -> f64 {
    1.949 / (n as f64).sqrt()
}

/// The largest gap between the empirical distribution of `r` and the law's number
/// distribution.
fn ks(mut r: Vec<f64>, law: &RadiusDistribution) -> f64 {
    r.sort_by(f64::total_cmp);
    let n = r.len() as f64;
    r.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = law.number_cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

/// The run, the Hertz law and the glass both generators use.
const HEADER: &str = r#"
[simulation]
dt = 1e-5
steps = 10
[contact]
law = "hertz"
[[material]]
name = "glass"
young = 1e7
poisson = 0.3
density = 2500.0
restitution = 0.5
friction_static = 0.5
friction_dynamic = 0.4
"#;

/// A scene whose inserter reserves `N` spheres of `law` (a `radius_distribution` value).
fn inserter(law: &str) -> String {
    format!(
        "{HEADER}[[inserter]]\nbox = {{ min = [0.0, 0.0, 0.0], max = [0.5, 0.5, 0.5] }}\ncount = {N}\ninterval = 1.0\nradius_distribution = {law}\nmaterial = \"glass\"\nseed = 7\n"
    )
}

/// A cloud of `N` spheres of `law` in a large box (random sequential addition).
fn cloud(law: &str) -> String {
    format!(
        "{HEADER}[[cloud]]\nmin = [0.0, 0.0, 0.0]\nmax = [0.6, 0.6, 0.3]\ncount = {N}\nradius_distribution = {law}\nmaterial = \"glass\"\nseed = 5\n"
    )
}

fn scene(text: &str) -> Scene {
    parse_scene(text).unwrap_or_else(|e| panic!("{e}"))
}

const LOGNORMAL: &str = "{ lognormal = { median = 0.002, sigma = 0.25 } }";
const SIEVE: &str =
    "{ table = [[0.001, 0.0], [0.0015, 0.1], [0.002, 0.5], [0.003, 1.0]], by = \"mass\" }";
const BY_NUMBER: &str =
    "{ table = [[0.001, 0.0], [0.0015, 0.1], [0.002, 0.5], [0.003, 1.0]], by = \"number\" }";

/// The law of an inserter's scene.
fn law_of(s: &Scene) -> RadiusDistribution {
    s.model.inserters[0].distribution.clone().unwrap()
}

/// Every law, drawn by an inserter and by a cloud: the radii pass Kolmogorov–Smirnov
/// at 0.001 against the law's number distribution, and stay within its range.
#[test]
fn radii_follow_the_law() {
    for text in [LOGNORMAL, SIEVE, BY_NUMBER] {
        let s = scene(&inserter(text));
        let law = law_of(&s);
        let r = s.model.particles.radius.clone();
        assert_eq!(r.len(), N);
        let (lo, hi) = (law.min_radius(), law.max_radius());
        assert!(r.iter().all(|&x| (lo..=hi).contains(&x)), "{text}");
        let d = ks(r, &law);
        eprintln!("inserter {text}: D = {d:.4}");
        assert!(d < ks_critical(N), "inserter {text}: D = {d}");
    }
    for text in [LOGNORMAL, SIEVE] {
        let law = law_of(&scene(&inserter(text)));
        let s = scene(&cloud(text));
        let d = ks(s.model.particles.radius.clone(), &law);
        eprintln!("cloud {text}: D = {d:.4}");
        assert!(d < ks_critical(N), "cloud {text}: D = {d}");
    }
    // Kolmogorov–Smirnov above checks the draws against `number_cdf`; these check the
    // lognormal law itself, independently of it. ln r has median ln 2 mm (to 1 %: the
    // sample median's standard error is 1.25 σ/√N = 0.3 %); a standard deviation of
    // 0.9866 σ (a normal truncated at ±3σ: √(1 − 6φ(3)/(Φ(3) − Φ(−3)))), to 2 % (its
    // standard error is under 0.75 %); and (Φ(1) − Φ(−3))/(Φ(3) − Φ(−3)) = 0.84226 of
    // the radii below median·e^σ, to 0.012 (three binomial standard errors).
    let s = scene(&inserter(LOGNORMAL));
    let mut ln: Vec<f64> = s.model.particles.radius.iter().map(|r| r.ln()).collect();
    ln.sort_by(f64::total_cmp);
    let median = ln[N / 2].exp();
    assert!((median / 0.002 - 1.0).abs() < 0.01, "{median}");
    let mean = ln.iter().sum::<f64>() / N as f64;
    let sd = (ln.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (N - 1) as f64).sqrt();
    assert!((sd / (0.9866 * 0.25) - 1.0).abs() < 0.02, "{sd}");
    let below = ln.iter().filter(|&&x| x < (0.002f64).ln() + 0.25).count() as f64 / N as f64;
    assert!((below - 0.84226).abs() < 0.012, "{below}");
}

/// A sieve curve (by mass): the mass in each of the table's intervals is its rise of
/// the cumulative fraction, 0.1, 0.4 and 0.5, to 0.02. (The estimate's spread: each
/// interval holds over a thousand spheres whose masses vary by at most 3.4× within it,
/// so a fraction's standard error is under 0.007; 0.02 is three of them.) By number the
/// same table puts its fractions on the counts instead.
#[test]
fn a_sieve_curve_gives_its_mass_fractions() {
    let edges = [0.001, 0.0015, 0.002, 0.003];
    let rises = [0.1, 0.4, 0.5];
    let share = |r: &[f64], weight: fn(f64) -> f64| -> Vec<f64> {
        let total: f64 = r.iter().map(|&x| weight(x)).sum();
        (0..3)
            .map(|k| {
                (r.iter())
                    .filter(|&&x| x >= edges[k] && x <= edges[k + 1])
                    .map(|&x| weight(x))
                    .sum::<f64>()
                    / total
            })
            .collect()
    };
    let s = scene(&inserter(SIEVE));
    // Mass ∝ r³ at one density.
    let by_mass = share(&s.model.particles.radius, |x| x * x * x);
    for (got, want) in by_mass.iter().zip(rises) {
        assert!((got - want).abs() < 0.02, "mass fractions {by_mass:?}");
    }
    let s = scene(&inserter(BY_NUMBER));
    let by_count = share(&s.model.particles.radius, |_| 1.0);
    for (got, want) in by_count.iter().zip(rises) {
        assert!((got - want).abs() < 0.02, "number fractions {by_count:?}");
    }
    // The same curve by mass holds far more small spheres than by number.
    let small = |s: &Scene| {
        s.model
            .particles
            .radius
            .iter()
            .filter(|&&x| x < 0.0015)
            .count()
    };
    assert!(small(&scene(&inserter(SIEVE))) > 2 * small(&scene(&inserter(BY_NUMBER))));
}

/// Bad laws are named errors.
#[test]
fn bad_laws_are_named() {
    let error = |text: String| match parse_scene(&text) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(e) => e.to_string(),
    };
    let cases = [
        (
            "{ lognormal = { median = 0.002, sigma = 0.0 } }",
            "inserter[0].radius_distribution.lognormal.sigma = 0e0: must be > 0",
        ),
        (
            "{ lognormal = { median = -1.0, sigma = 0.2 } }",
            "lognormal.median = -1e0: must be > 0",
        ),
        (
            "{ table = [[0.001, 0.0], [0.002, 1.0]] }",
            "inserter[0].radius_distribution.by: missing",
        ),
        (
            "{ table = [[0.001, 0.0], [0.002, 1.0]], by = \"volume\" }",
            "by = \"volume\": unknown basis",
        ),
        (
            "{ table = [[0.002, 0.0], [0.001, 1.0]], by = \"mass\" }",
            "table[1]: radius 1e-3 must be above the previous one",
        ),
        (
            "{ table = [[0.001, 0.0], [0.002, 0.6], [0.003, 0.5], [0.004, 1.0]], by = \"mass\" }",
            "table[2]: fraction 0.5 falls below the previous one",
        ),
        (
            "{ table = [[0.001, 0.1], [0.002, 1.0]], by = \"number\" }",
            "the fractions run from 0.1 to 1; they must run from 0 to 1",
        ),
        (
            "{ table = [[0.001, 0.0]], by = \"number\" }",
            "1 point(s); give at least two",
        ),
        (
            "{ lognormal = { median = 0.002, sigma = 0.2 }, table = [[0.001, 0.0], [0.002, 1.0]], by = \"number\" }",
            "give exactly one law",
        ),
        (
            "{ lognormal = { median = 0.002, sigma = 0.2 }, by = \"mass\" }",
            "only a table takes it",
        ),
    ];
    for (law, expected) in cases {
        let e = error(inserter(law));
        assert!(e.contains(expected), "{law}: {e}");
    }
    let e = error(
        inserter(LOGNORMAL).replace("radius_distribution", "radius = 0.002\nradius_distribution"),
    );
    assert!(
        e.contains("give radius (with radius_jitter) or radius_distribution, not both"),
        "{e}"
    );
    let e = error(cloud(LOGNORMAL).replace(
        "radius_distribution = ",
        "radius_jitter = 0.1\nradius_distribution = ",
    ));
    assert!(
        e.contains("cloud[0].radius_distribution: give radius"),
        "{e}"
    );
}

/// The law comes back from `run.toml` (the resolved scene) and from a checkpoint.
#[test]
fn laws_survive_run_toml_and_checkpoints() {
    for text in [LOGNORMAL, SIEVE] {
        let s = scene(&inserter(text).replace("count = 10000", "count = 50"));
        let back = scene(&scene_to_toml(&s));
        assert_eq!(back.model, s.model, "{text}");
        let mut b = CpuBackend::new(&s).unwrap();
        b.advance(5).unwrap();
        let c = Checkpoint::take(&s, &mut b, None).unwrap();
        let read = Checkpoint::from_bytes(&c.to_bytes(), Path::new("memory")).unwrap();
        assert_eq!(read.scene.model.inserters, s.model.inserters, "{text}");
    }
    assert_eq!(
        law_of(&scene(&inserter(SIEVE))),
        RadiusDistribution::Table {
            radius: vec![0.001, 0.0015, 0.002, 0.003],
            fraction: vec![0.0, 0.1, 0.5, 1.0],
            by: SizeBasis::Mass,
        }
    );
}

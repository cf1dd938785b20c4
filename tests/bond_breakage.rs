//! Bond breakage (issue 47) on the CPU reference backend: a bond loaded dynamically
//! breaks at its strength and survives just below it, for each load term alone
//! (tension, shear, bend, twist); after the break it carries nothing; `e_total +
//! e_broken` is continuous at a break and conserved after it; strengths that are
//! never reached leave a run's bits as they are without them.
//!
//! The single-bond cases are conservative one-degree-of-freedom oscillators whose
//! peak load follows from energy: ½ m v² (or ½ I ω²) = U at the turning point. The
//! variational integrator at ω₀h = 10⁻³ reaches that peak to O((ω₀h)²) ≈ 10⁻⁶ and
//! samples it at steps to (ω₀h)²/8, so strengths 10⁻⁴ above and below the peak
//! bracket it with a margin of 100.

use varidem::backend::{Backend, BondBreak};
use varidem::cpu::CpuBackend;
use varidem::io::parse_scene;
use varidem::model::Scene;

/// Stiffness of the one term each single-bond case sets (J, or N m/rad² for K^m).
const K: f64 = 100.0;
/// h = 10⁻⁴ s: ω₀ = √(K/m) = 10 rad/s, ω₀h = 10⁻³.
const DT: f64 = 1e-4;

/// Two unit spheres 1 m apart on x (mass 1, inertia 1), bonded with `[k_bend, k_axial,
/// k_shear]` and the `strength` keys, particle 0 held still; particle 1 moves with `v`
/// and spins with `w` (its position held when `held`).
fn pair(k: [f64; 3], strength: &str, held: bool, v: [f64; 3], w: [f64; 3], steps: u64) -> Scene {
    let text = format!(
        "[simulation]\ndt = {DT:?}\nsteps = {steps}\noutput_every = 100\n\
         [binder]\nk_bend = {:?}\nk_axial = {:?}\nk_shear = {:?}\n{strength}\n\
         [[particle]]\nposition = [0.0, 0.0, 0.0]\nradius = 0.5\nmass = 1.0\ninertia = 1.0\n\
         hold_position = true\nhold_rotation = true\n\
         [[particle]]\nposition = [1.0, 0.0, 0.0]\nradius = 0.5\nmass = 1.0\ninertia = 1.0\n\
         hold_position = {held}\nvelocity = {v:?}\nangular_velocity = {w:?}\n\
         [[bond]]\ni = 0\nj = 1\n",
        k[0], k[1], k[2]
    );
    parse_scene(&text).unwrap()
}

/// The breaks of a run of `scene` to its end.
fn breaks_of(scene: &Scene) -> (CpuBackend, Vec<BondBreak>) {
    let mut b = CpuBackend::new(scene).unwrap();
    b.advance(scene.simulation.steps()).unwrap();
    let breaks = b.bond_breaks(0).unwrap();
    (b, breaks)
}

/// One load case: the stiffnesses, how particle 1 moves, the strength key, the
/// analytic peak of that load and how to read it from a break's loads.
struct Case {
    name: &'static str,
    k: [f64; 3],
    held: bool,
    v: [f64; 3],
    w: [f64; 3],
    key: &'static str,
    peak: f64,
    load: fn(&BondBreak) -> f64,
}

fn cases() -> [Case; 4] {
    // Shear alone: particle 1 turns about z at ω = 1 in place, U^s = ½K^s(1 − cos φ)²;
    // at the turning point 1 − cos φ_m = ω√(I/K^s), and the shear force
    // K^s(1 − cos φ) sin φ / L₀ grows up to φ = 2π/3, so it peaks there.
    let c = (1.0f64 / K).sqrt();
    let shear_peak = K * c * (1.0 - (1.0 - c) * (1.0 - c)).sqrt();
    [
        // Tension alone: peak K^a ΔL/L₀² = v √(m K^a)/L₀ = 10 N.
        Case {
            name: "tension",
            k: [0.0, K, 0.0],
            held: false,
            v: [1.0, 0.0, 0.0],
            w: [0.0; 3],
            key: "break_tension",
            peak: K.sqrt(),
            load: |b| b.loads.tension,
        },
        Case {
            name: "shear",
            k: [0.0, 0.0, K],
            held: true,
            v: [0.0; 3],
            w: [0.0, 0.0, 1.0],
            key: "break_shear",
            peak: shear_peak,
            load: |b| b.loads.shear,
        },
        // Bending alone: a turn about z, across the bond: peak ω √(I K^m) = 10 N m.
        Case {
            name: "bend",
            k: [K, 0.0, 0.0],
            held: true,
            v: [0.0; 3],
            w: [0.0, 0.0, 1.0],
            key: "break_bend",
            peak: K.sqrt(),
            load: |b| b.loads.bend,
        },
        // Twist alone: the same turn about the bond axis x.
        Case {
            name: "twist",
            k: [K, 0.0, 0.0],
            held: true,
            v: [0.0; 3],
            w: [1.0, 0.0, 0.0],
            key: "break_twist",
            peak: K.sqrt(),
            load: |b| b.loads.twist.abs(),
        },
    ]
}

/// Each load term alone: a strength 10⁻⁴ above the analytic peak holds for a whole
/// period; 10⁻⁴ below it, the bond breaks once, at a load between the strength and the
/// peak (to 10⁻⁵), with the other three loads zero (to 10⁻¹² of the peak).
#[test]
fn each_load_breaks_at_its_strength_and_not_below() {
    for c in cases() {
        let steps = 20_000; // 2 s: past the first turning point of every case.
        let scene = |s: f64| pair(c.k, &format!("{} = {s:?}", c.key), c.held, c.v, c.w, steps);
        let (_, held) = breaks_of(&scene(c.peak * (1.0 + 1e-4)));
        assert!(
            held.is_empty(),
            "{}: broke above its peak: {held:?}",
            c.name
        );
        let strength = c.peak * (1.0 - 1e-4);
        let (_, broke) = breaks_of(&scene(strength));
        assert_eq!(broke.len(), 1, "{}: {broke:?}", c.name);
        let b = &broke[0];
        let load = (c.load)(b);
        assert!(
            load >= strength && load <= c.peak * (1.0 + 1e-5),
            "{}: broke at {load}, strength {strength}, peak {}",
            c.name,
            c.peak
        );
        let others = [
            b.loads.tension.abs(),
            b.loads.shear,
            b.loads.bend,
            b.loads.twist.abs(),
        ]
        .iter()
        .sum::<f64>()
            - load;
        assert!(
            others.abs() <= 1e-12 * c.peak,
            "{}: other loads {others:e}",
            c.name
        );
        assert_eq!((b.bond, b.i, b.j), (0, 0, 1));
    }
}

/// After the break the bond carries nothing: particle 1 flies on at the velocity it
/// had at the break (no contact law in the scene), bit for bit at every later step.
#[test]
fn a_broken_bond_carries_nothing() {
    let c = &cases()[0];
    let scene = pair(
        c.k,
        &format!("break_tension = {:?}", 0.5 * c.peak),
        false,
        c.v,
        c.w,
        1,
    );
    let mut b = CpuBackend::new(&scene).unwrap();
    let mut broke_at = None;
    for _ in 0..3000 {
        b.advance(1).unwrap();
        if broke_at.is_none() && !b.bond_breaks(0).unwrap().is_empty() {
            broke_at = Some(b.step_count());
            break;
        }
    }
    let at = broke_at.expect("the bond breaks at half its peak");
    let v = b.particles().unwrap().velocity[1];
    for _ in 0..100 {
        b.advance(1).unwrap();
        assert_eq!(
            b.particles().unwrap().velocity[1],
            v,
            "step {}",
            b.step_count()
        );
    }
    assert_eq!(
        b.bond_breaks(0).unwrap().len(),
        1,
        "broken once, at step {at}"
    );
}

/// `e_total + e_broken` across a break: continuous (the bond's energy at the break's
/// state moves to `e_broken`, and the kick of that state still holds its force), and
/// after it within the integrator's bounded energy error of the run without the
/// break (measured 2.0·10⁻⁷ of the energy; bound 10⁻⁶).
#[test]
fn energy_with_the_broken_bonds_is_conserved() {
    let c = &cases()[0];
    let scene = pair(
        c.k,
        &format!("break_tension = {:?}", 0.9 * c.peak),
        false,
        c.v,
        c.w,
        1,
    );
    let mut b = CpuBackend::new(&scene).unwrap();
    let e0 = b.diagnostics().unwrap().e_total();
    let mut worst = 0.0f64;
    let mut e_broken = 0.0;
    for _ in 0..5000 {
        b.advance(1).unwrap();
        let d = b.diagnostics().unwrap();
        worst = worst.max((d.e_total() + d.e_broken - e0).abs() / e0);
        e_broken = d.e_broken;
    }
    let broke = b.bond_breaks(0).unwrap();
    assert_eq!(broke.len(), 1);
    assert_eq!(e_broken, broke[0].energy);
    // The bond held 0.81 of the energy at the break (tension 0.9 of the peak).
    assert!((e_broken / e0 - 0.81).abs() < 1e-3, "e_broken {e_broken}");
    eprintln!("e_total + e_broken drifted by {worst:e} of E0");
    assert!(
        worst < 1e-6,
        "e_total + e_broken drifted by {worst:e} of E0"
    );
}

/// `scenes/block-impact.toml` cut to an `n`³ block and `steps` steps (energy rows every
/// 10), with `extra` `[binder]` keys: a bonded block of binder spheres at 1 m/s into a
/// wall, undamped (the binder contact law is conservative).
fn impact(n: usize, steps: u64, extra: &str) -> Scene {
    let text = format!(
        "[simulation]\ndt = 5e-4\nsteps = {steps}\noutput_every = 10\n\
         [binder]\nk_bend = 10.0\nk_axial = 200.0\nk_shear = 200.0\n{extra}\n\
         [contact]\nlaw = \"binder\"\nk_pp = 2100.0\n\
         [[block]]\norigin = [0.1075, 0.0, 0.0]\ncounts = [{n}, {n}, {n}]\nspacing = 0.105\n\
         radius = 0.05\nradius_jitter = 0.05\ndensity = 1000.0\nvelocity = [-1.0, 0.0, 0.0]\n\
         bond_cutoff = 0.11\nseed = 2026\n\
         [[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\n"
    );
    parse_scene(&text).unwrap()
}

/// Strengths that no load reaches leave the run as it is without them, bit for bit
/// (the block's impact, 400 steps), and a scene without `break_*` keys has no
/// strengths at all.
#[test]
fn strengths_never_reached_change_nothing() {
    let base = impact(6, 400, "");
    assert!(base.model.bond_strength.is_empty() && !base.model.breakable());
    let strong = impact(6, 400, "break_tension = 1e30\nbreak_bend = 1e30\n");
    assert!(strong.model.breakable());
    let (mut a, _) = breaks_of(&base);
    let (mut b, broke) = breaks_of(&strong);
    assert!(broke.is_empty());
    let (pa, pb) = (a.particles().unwrap(), b.particles().unwrap());
    assert_eq!(pa.position, pb.position);
    assert_eq!(pa.velocity, pb.velocity);
    assert_eq!(pa.angular_velocity, pb.angular_velocity);
    let (da, db) = (a.diagnostics().unwrap(), b.diagnostics().unwrap());
    assert_eq!(da.csv_row(), db.csv_row());
}

/// Breaks lose no energy and name their bonds: the block's impact with bonds weak
/// enough that many break conserves `e_total + e_broken` as well as its unbreakable
/// twin conserves `e_total` (bound: 2× the twin's largest drift), and every break is
/// listed once, in step then bond order.
#[test]
fn a_broken_block_keeps_its_energy_accounts() {
    let mut drift = [0.0f64; 2];
    let mut broken = Vec::new();
    for (k, extra) in ["", "break_tension = 2.0\nbreak_shear = 2.0\n"]
        .iter()
        .enumerate()
    {
        let scene = impact(6, 600, extra);
        let mut b = CpuBackend::new(&scene).unwrap();
        let e0 = b.diagnostics().unwrap().e_total();
        for _ in 0..60 {
            b.advance(10).unwrap();
            let d = b.diagnostics().unwrap();
            drift[k] = drift[k].max((d.e_total() + d.e_broken - e0).abs() / e0);
        }
        broken = b.bond_breaks(0).unwrap();
    }
    eprintln!(
        "{} of the block's bonds broke; drift of e_total + e_broken {:e}, of the unbreakable block's e_total {:e}",
        broken.len(),
        drift[1],
        drift[0]
    );
    assert!(broken.len() >= 10, "{} bonds broke", broken.len());
    let order: Vec<(u64, u32)> = broken.iter().map(|b| (b.step, b.bond)).collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "step then bond order"
    );
    let mut bonds: Vec<u32> = order.iter().map(|k| k.1).collect();
    bonds.sort_unstable();
    bonds.dedup();
    assert_eq!(bonds.len(), order.len(), "each bond breaks once");
    assert!(
        drift[1] <= 2.0 * drift[0],
        "with breaks {:e}, without {:e}",
        drift[1],
        drift[0]
    );
}

/// The keys: `[binder]` defaults, `[[bond]]` overrides term by term, `[[block]]`
/// bonds scattered uniformly within `1 ± break_scatter` from the block's seed (the same
/// seed, the same strengths), every strength written back by `scene_to_toml`.
#[test]
fn strength_keys_defaults_overrides_and_scatter() {
    let text = |scatter: &str, seed: u64| {
        format!(
            "[simulation]\ndt = 1e-4\nsteps = 1\n\
             [binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n\
             break_tension = 10.0\nbreak_bend = 2.0\n\
             [[block]]\ncounts = [4, 4, 4]\nspacing = 1.0\nradius = 0.5\ndensity = 1.0\n\
             bond_cutoff = 1.1\nseed = {seed}\n{scatter}\n\
             [[particle]]\nposition = [10.0, 0.0, 0.0]\nradius = 0.5\nmass = 1.0\n\
             [[particle]]\nposition = [11.0, 0.0, 0.0]\nradius = 0.5\nmass = 1.0\n\
             [[bond]]\ni = 0\nj = 1\nbreak_tension = 3.0\nbreak_twist = 4.0\n"
        )
    };
    let s = parse_scene(&text("break_scatter = 0.2", 5)).unwrap();
    let m = &s.model;
    assert_eq!(m.bond_strength.len(), m.bonds.len());
    let explicit = m.bond_strength.last().unwrap();
    assert_eq!(explicit.values(), [Some(3.0), None, Some(2.0), Some(4.0)]);
    let block = &m.bond_strength[..m.bonds.len() - 1];
    assert_eq!(block.len(), 144);
    let mut factors: Vec<f64> = Vec::new();
    for b in block {
        let f = b.tension.unwrap() / 10.0;
        assert!((0.8..1.2).contains(&f), "{f}");
        // One factor per bond for every term.
        assert!((b.bend.unwrap() / 2.0 - f).abs() < 1e-15);
        assert!(b.shear.is_none() && b.twist.is_none());
        factors.push(f);
    }
    let mean = factors.iter().sum::<f64>() / factors.len() as f64;
    // Uniform in ±0.2: the mean of 144 draws is within 4σ = 4·0.2/√(3·144) of 1.
    assert!(
        (mean - 1.0).abs() < 4.0 * 0.2 / (3.0f64 * 144.0).sqrt(),
        "{mean}"
    );
    // The same seed draws the same strengths; another seed others.
    assert_eq!(parse_scene(&text("break_scatter = 0.2", 5)).unwrap(), s);
    assert_ne!(
        parse_scene(&text("break_scatter = 0.2", 6))
            .unwrap()
            .model
            .bond_strength,
        s.model.bond_strength
    );
    // Without scatter, every block bond has the [binder] strength exactly.
    let plain = parse_scene(&text("", 5)).unwrap();
    assert!(plain.model.bond_strength[..144]
        .iter()
        .all(|b| b.values() == [Some(10.0), None, Some(2.0), None]));
    // The way back keeps every bond's own strength.
    let back = parse_scene(&varidem::io::scene_to_toml(&s)).unwrap();
    assert_eq!(back.model.bond_strength, s.model.bond_strength);
}

/// Bad strengths are named errors.
#[test]
fn bad_strengths_are_named() {
    let base = "[simulation]\ndt = 1e-4\nsteps = 1\n\
        [binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n";
    let block = "[[block]]\ncounts = [2, 1, 1]\nspacing = 1.0\nradius = 0.5\ndensity = 1.0\n\
        bond_cutoff = 1.1\n";
    let pair = "[[particle]]\nposition = [0.0, 0.0, 0.0]\nradius = 0.5\nmass = 1.0\n\
        [[particle]]\nposition = [1.0, 0.0, 0.0]\nradius = 0.5\nmass = 1.0\n";
    let cases = [
        (
            format!("{base}break_tension = 0.0\n{block}"),
            "binder.break_tension = 0",
        ),
        (
            format!("{base}break_shear = -1.0\n{block}"),
            "binder.break_shear = -1",
        ),
        (
            format!("{base}break_bend = 1.0\nbreak_scatter = 1.0\n{block}"),
            "binder.break_scatter = 1",
        ),
        (
            format!("{base}break_scatter = 0.1\n{block}"),
            "binder.break_scatter = 0.1",
        ),
        (
            format!("{base}{block}break_scatter = 0.1\n"),
            "block[0].break_scatter = 0.1",
        ),
        (
            format!("{base}{pair}[[bond]]\ni = 0\nj = 1\nbreak_twist = inf\n"),
            "bond[0].break_twist = inf",
        ),
        (
            format!(
                "{}integrator = \"campello-trapezoidal\"\n{}break_tension = 1.0\n{block}",
                "[simulation]\ndt = 1e-4\nsteps = 1\n",
                "[binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n"
            ),
            "campello-trapezoidal",
        ),
    ];
    for (text, named) in cases {
        let e = parse_scene(&text).unwrap_err().to_string();
        assert!(e.contains(named), "{named}: {e}");
    }
}

/// `[[block]] cylinder` keeps the lattice sites within its radius of its axis, and
/// bonds only those: a disc of radius 2.5 spacings cut from a 7 × 7 × 2 block keeps
/// the 21 sites of each layer within 2.5 of the centre (|i|,|j| ≤ 3 with i² + j² ≤
/// 6.25), and bonds them to their lattice neighbours within the disc.
#[test]
fn a_block_cut_to_a_disc() {
    let text = "[simulation]\ndt = 1e-4\nsteps = 1\n\
        [binder]\nk_bend = 1.0\nk_axial = 1.0\nk_shear = 1.0\n\
        [[block]]\norigin = [-3.0, -3.0, 0.0]\ncounts = [7, 7, 2]\nspacing = 1.0\nradius = 0.5\n\
        density = 1.0\nbond_cutoff = 1.1\nradius_jitter = 0.1\nseed = 9\n\
        cylinder = { center = [0.0, 0.0, 0.0], axis = [0.0, 0.0, 2.0], radius = 2.5 }\n";
    let s = parse_scene(text).unwrap();
    let inside: Vec<(i32, i32)> = (-3..=3)
        .flat_map(|i| (-3..=3).map(move |j| (i, j)))
        .filter(|&(i, j)| i * i + j * j <= 6)
        .collect();
    assert_eq!(inside.len(), 21);
    let p = &s.model.particles;
    assert_eq!(p.len(), 2 * inside.len());
    for x in &p.position {
        assert!(x.x * x.x + x.y * x.y <= 6.25 + 1e-12);
    }
    // Neighbours within the disc: per layer, pairs one apart in x or y, both inside;
    // plus one bond between the layers per site.
    let within = |i: i32, j: i32| i * i + j * j <= 6;
    let per_layer = inside
        .iter()
        .map(|&(i, j)| u32::from(within(i + 1, j)) + u32::from(within(i, j + 1)))
        .sum::<u32>() as usize;
    assert_eq!(s.model.bonds.len(), 2 * per_layer + inside.len());
    // The jitter is drawn for every site, kept or not: the cut block's radii are the
    // full block's at the kept sites.
    let full = parse_scene(&text.replace(
        "cylinder = { center = [0.0, 0.0, 0.0], axis = [0.0, 0.0, 2.0], radius = 2.5 }\n",
        "",
    ))
    .unwrap();
    let fp = &full.model.particles;
    for (x, r) in p.position.iter().zip(&p.radius) {
        let k = fp.position.iter().position(|y| y == x).unwrap();
        assert_eq!(fp.radius[k], *r);
    }
    let e = parse_scene(&text.replace("axis = [0.0, 0.0, 2.0]", "axis = [0.0, 0.0, 0.0]"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("block[0].cylinder.axis"), "{e}");
}

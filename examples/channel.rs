//! The figures of Preclik, Eibl & Rüde §4.3 (Table 2, Figs. 10–12) from a channel run
//! (issue 48): run `scenes/channel-small.toml` (or `channel.toml`), then
//!
//! ```sh
//! cargo run --release --example channel -- DIR [--since T] [--cell 1e-3]
//! ```
//!
//! writes into `DIR/channel/`:
//! - `table2.csv`: `step,t,particles,solid_fraction,contacts_per_particle,active_per_particle,max_penetration`
//!   at every output frame (the scenes write one every 10 ms, Table 2's sampling);
//! - `maps.csv` and `velocity.png`, `angular_velocity.png`: the mean |v| and |Ω| in
//!   square x–y cells (1 mm, the paper's) over the frames from `--since` on (default:
//!   the last frame only, as the paper's Figs. 10–11);
//! - `rdf.csv`: `r,g` near the outflow (the last fifth of the channel) at the last frame;
//!
//! and prints Table 2's rows averaged over the samples from `--since` on. With
//! `--compare OTHER` (another run of the same scene: the other friction model, or
//! another seed) it prints the relative L2 distance of the two runs' maps and the
//! relative differences of their Table 2 means.

use std::path::PathBuf;

use varidem::io::channel::{radial_distribution, samples, Channel, Maps};
use varidem::io::vtk_reader::{frame_steps, load_frame, run_scene};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let (mut since, mut cell, mut other) = (None, 1e-3, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--compare" => other = Some(PathBuf::from(args.next().ok_or("--compare DIR")?)),
            "--since" => since = Some(args.next().ok_or("--since T")?.parse::<f64>()?),
            "--cell" => cell = args.next().ok_or("--cell EDGE")?.parse::<f64>()?,
            _ => dir = Some(PathBuf::from(a)),
        }
    }
    let dir = dir.ok_or("usage: channel DIR [--since T] [--cell EDGE]")?;
    let out = dir.join("channel");
    std::fs::create_dir_all(&out)?;
    let scene = run_scene(&dir)?;
    let channel = Channel::of(&scene)?;

    let rows = samples(&dir)?;
    let mut csv = String::from(
        "step,t,particles,solid_fraction,contacts_per_particle,active_per_particle,max_penetration\n",
    );
    for s in &rows {
        csv += &format!(
            "{},{:.6e},{},{:.6e},{:.6e},{:.6e},{:.6e}\n",
            s.step,
            s.t,
            s.particles,
            s.solid_fraction,
            s.contacts_per_particle,
            s.active_per_particle,
            s.max_penetration
        );
    }
    std::fs::write(out.join("table2.csv"), csv)?;

    let dt = scene.simulation.dt;
    let frames = frames_since(&dir, since, dt)?;
    let maps = Maps::of(&frames, &channel, cell);
    maps.write_csv(&out.join("maps.csv"))?;
    let top = |v: &[f64]| {
        v.iter()
            .copied()
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max)
    };
    maps.plot(
        (&maps.speed, top(&maps.speed)),
        varidem::render::colormap,
        "mean |v| (m/s)",
        &out.join("velocity.png"),
    )?;
    maps.plot(
        (&maps.spin, top(&maps.spin)),
        varidem::render::colormap,
        "mean |Ω| (rad/s)",
        &out.join("angular_velocity.png"),
    )?;

    let frame = frames.last().ok_or("no frame")?;
    let d = 2.0 * frame.radius.iter().copied().fold(0.0, f64::max);
    let x1 = channel.max.x;
    let x0 = x1 - 0.2 * (channel.max.x - channel.min.x);
    let g = radial_distribution(frame, &channel, (x0, x1), 4.0 * d, 80);
    let mut csv = String::from("r,g\n");
    for (r, v) in &g {
        csv += &format!("{r:.6e},{v:.6e}\n");
    }
    std::fs::write(out.join("rdf.csv"), csv)?;

    let t0 = since.unwrap_or(0.0);
    let kept: Vec<_> = rows.iter().filter(|s| s.t >= t0 - 0.5 * dt).collect();
    let n = kept.len().max(1) as f64;
    let mean = |f: &dyn Fn(&varidem::io::channel::Sample) -> f64| {
        kept.iter().map(|s| f(s)).sum::<f64>() / n
    };
    let r = 0.5 * d;
    println!("Table 2 over {} samples from t = {t0} s:", kept.len());
    println!("| quantity | value |\n|---|---|");
    println!(
        "| particles in the channel | {:.1} |",
        mean(&|s| s.particles as f64)
    );
    println!(
        "| solid volume fraction | {:.4} |",
        mean(&|s| s.solid_fraction)
    );
    println!(
        "| contacts per particle (2 N_c / N_p) | {:.4} |",
        mean(&|s| s.contacts_per_particle)
    );
    println!(
        "| with an impulse | {:.4} |",
        mean(&|s| s.active_per_particle)
    );
    let pen = kept.iter().map(|s| s.max_penetration).fold(0.0, f64::max);
    println!(
        "| largest penetration | {:.3e} m ({:.2} % of r) |",
        pen,
        100.0 * pen / r
    );
    let peak = (0..maps.speed.len())
        .filter(|&k| maps.count[k] >= 3)
        .map(|k| maps.speed[k])
        .fold(0.0, f64::max);
    println!("| peak cell speed (≥ 3 particles) | {peak:.3} m/s |");
    let first_peak = g
        .iter()
        .copied()
        .fold((0.0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
    println!(
        "| g(r) peak | {:.2} at r = {:.3} d |",
        first_peak.1,
        first_peak.0 / d
    );
    println!("figures in {}", out.display());
    if let Some(other) = other {
        compare(&dir, &other, &channel, (since, cell))?;
    }
    Ok(())
}

/// The frames of the run in `dir` from time `since` on (the last one without).
fn frames_since(
    dir: &std::path::Path,
    since: Option<f64>,
    dt: f64,
) -> Result<Vec<varidem::io::vtk_reader::ParticleFrame>, Box<dyn std::error::Error>> {
    let steps = frame_steps(dir);
    let chosen: Vec<u64> = match since {
        Some(t) => steps
            .iter()
            .copied()
            .filter(|&s| s as f64 * dt >= t - 0.5 * dt)
            .collect(),
        None => steps.last().copied().into_iter().collect(),
    };
    Ok(chosen
        .iter()
        .map(|&s| load_frame(dir, Some(s)))
        .collect::<Result<Vec<_>, _>>()?)
}

/// Prints how far the runs in `a` and `b` are apart: the maps' relative L2 distances
/// over cells where both count at least 5 particles, and Table 2's means.
fn compare(
    a: &std::path::Path,
    b: &std::path::Path,
    channel: &Channel,
    (since, cell): (Option<f64>, f64),
) -> Result<(), Box<dyn std::error::Error>> {
    let dt = run_scene(a)?.simulation.dt;
    let (ma, mb) = (
        Maps::of(&frames_since(a, since, dt)?, channel, cell),
        Maps::of(&frames_since(b, since, dt)?, channel, cell),
    );
    let counts = (ma.count.as_slice(), mb.count.as_slice());
    println!("\n{} against {}:", a.display(), b.display());
    println!(
        "| map distance |v| | {:.4} |",
        Maps::distance(&ma.speed, &mb.speed, counts, 5)
    );
    println!(
        "| map distance |Ω| | {:.4} |",
        Maps::distance(&ma.spin, &mb.spin, counts, 5)
    );
    let t0 = since.unwrap_or(0.0);
    let mean = |rows: &[varidem::io::channel::Sample],
                f: &dyn Fn(&varidem::io::channel::Sample) -> f64| {
        let kept: Vec<_> = rows.iter().filter(|s| s.t >= t0 - 0.5 * dt).collect();
        kept.iter().map(|s| f(s)).sum::<f64>() / kept.len().max(1) as f64
    };
    let (ra, rb) = (samples(a)?, samples(b)?);
    for (name, f) in [
        (
            "particles",
            &(|s: &varidem::io::channel::Sample| s.particles as f64) as &dyn Fn(&_) -> f64,
        ),
        ("solid fraction", &|s: &varidem::io::channel::Sample| {
            s.solid_fraction
        }),
        (
            "contacts per particle",
            &|s: &varidem::io::channel::Sample| s.contacts_per_particle,
        ),
    ] {
        let (x, y) = (mean(&ra, f), mean(&rb, f));
        println!(
            "| {name} | {x:.4} vs {y:.4} ({:+.2} %) |",
            200.0 * (x - y) / (x + y)
        );
    }
    Ok(())
}

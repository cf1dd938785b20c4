//! The figures of Preclik, Eibl & Rüde §4.3 from a channel run's outputs (issue 48):
//! Table 2's quantities sampled at every output frame (particles in the channel, solid
//! fraction, contacts per particle, largest penetration), the x–y maps of mean
//! velocity and angular velocity (the paper's Figs. 10–11: every particle of a frame
//! binned in square cells, z ignored) and the radial distribution function near the
//! outflow (Fig. 12). `examples/channel.rs` writes them for a run directory; the claim
//! test (`tests/channel.rs`) compares two runs with them.
//!
//! The channel is read from the run's scene (`run.toml`): the domain's box clipped by
//! every axis-aligned plane at its rest pose (the side walls, floor, lid and the
//! inflow plane's start), less the volume of the closed meshes inside (the obstacle).

use std::path::Path;

use glam::DVec3;
use plotters::prelude::*;

use super::vtk_reader::{frame_steps, load_frame, run_scene, ParticleFrame};
use crate::error::{Error, Result};
use crate::model::Scene;

/// The channel's box and fluid volume (its box less the obstacles').
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Channel {
    /// The box's lower corner (m).
    pub min: DVec3,
    /// The box's upper corner (m).
    pub max: DVec3,
    /// The volume particles can fill: the box less the meshes' volumes (m³).
    pub volume: f64,
}

impl Channel {
    /// The channel of `scene`: its `[domain]` clipped by the axis-aligned planes; an
    /// error without a domain.
    pub fn of(scene: &Scene) -> Result<Self> {
        let m = &scene.model;
        let d = m.domain.ok_or_else(|| {
            Error::Backend("the channel's figures need a [domain] (the box the flow fills)".into())
        })?;
        let (mut min, mut max) = (d.min, d.max);
        for w in &m.walls {
            for a in 0..3 {
                let n = w.normal[a];
                let others = (0..3).filter(|&b| b != a).all(|b| w.normal[b] == 0.0);
                if others && n > 0.0 {
                    min[a] = min[a].max(w.point[a]);
                } else if others && n < 0.0 {
                    max[a] = max[a].min(w.point[a]);
                }
            }
        }
        let mut volume = (max - min).max(DVec3::ZERO).element_product();
        for mesh in &m.meshes {
            volume -= closed_volume(&mesh.mesh.vertices, &mesh.mesh.triangles);
        }
        Ok(Self { min, max, volume })
    }

    /// Whether `x` lies in the channel's box.
    pub fn contains(&self, x: DVec3) -> bool {
        x.cmpge(self.min).all() && x.cmple(self.max).all()
    }
}

/// The volume a closed triangle mesh encloses (divergence theorem; orientation-free:
/// the absolute value of the signed sum).
pub fn closed_volume(vertices: &[DVec3], triangles: &[[u32; 3]]) -> f64 {
    let signed: f64 = triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|k| vertices[k as usize]);
            a.dot(b.cross(c)) / 6.0
        })
        .sum();
    signed.abs()
}

/// One sample of Table 2's quantities (a frame and the solver rows up to it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The frame's step.
    pub step: u64,
    /// Its time (s).
    pub t: f64,
    /// Particles in the channel.
    pub particles: usize,
    /// Their volume over the channel's fluid volume.
    pub solid_fraction: f64,
    /// 2 × the step's contacts (touching and speculative, walls included) / particles:
    /// the paper's "contacts per particle" (2 N_c / N_p).
    pub contacts_per_particle: f64,
    /// The same with the contacts that carry an impulse only.
    pub active_per_particle: f64,
    /// The largest penetration of any contact in the steps since the last sample (m).
    pub max_penetration: f64,
}

/// `solver.csv`'s columns the figures use, by step.
#[derive(Clone, Debug, Default)]
struct SolverRows {
    step: Vec<u64>,
    contacts: Vec<f64>,
    active: Vec<f64>,
    penetration: Vec<f64>,
}

fn invalid(path: &Path, msg: String) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::InvalidData, msg),
    )
}

fn read_solver(path: &Path) -> Result<SolverRows> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| invalid(path, format!("no column {name:?} in solver.csv")))
    };
    let [step, contacts, sticking, sliding, pen] = [
        col("step")?,
        col("contacts")?,
        col("sticking")?,
        col("sliding")?,
        col("max_penetration")?,
    ];
    let mut out = SolverRows::default();
    for (k, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let num = |c: usize| {
            f.get(c)
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| invalid(path, format!("line {}: {line:?}", k + 2)))
        };
        out.step.push(num(step)? as u64);
        out.contacts.push(num(contacts)?);
        out.active.push(num(sticking)? + num(sliding)?);
        out.penetration.push(num(pen)?);
    }
    Ok(out)
}

/// Table 2's quantities at every output frame of the run in `dir` after step 0.
pub fn samples(dir: &Path) -> Result<Vec<Sample>> {
    let scene = run_scene(dir)?;
    let channel = Channel::of(&scene)?;
    let solver = read_solver(&dir.join(super::SOLVER_CSV))?;
    let mut out = Vec::new();
    let mut since = 0;
    for step in frame_steps(dir).into_iter().filter(|&s| s > 0) {
        let frame = load_frame(dir, Some(step))?;
        let inside: Vec<usize> = (0..frame.len())
            .filter(|&i| channel.contains(frame.position[i]))
            .collect();
        let n = inside.len();
        let solid: f64 = inside
            .iter()
            .map(|&i| 4.0 / 3.0 * std::f64::consts::PI * frame.radius[i].powi(3))
            .sum();
        let row = solver.step.binary_search(&step).ok();
        let (c, a) = row.map_or((0.0, 0.0), |r| (solver.contacts[r], solver.active[r]));
        let upto = row.map_or(since, |r| r + 1);
        let pen = solver.penetration[since.min(upto)..upto]
            .iter()
            .copied()
            .fold(0.0, f64::max);
        since = upto;
        let per = |x: f64| if n > 0 { 2.0 * x / n as f64 } else { 0.0 };
        out.push(Sample {
            step,
            t: frame.time.unwrap_or(step as f64 * scene.simulation.dt),
            particles: n,
            solid_fraction: solid / channel.volume,
            contacts_per_particle: per(c),
            active_per_particle: per(a),
            max_penetration: pen,
        });
    }
    Ok(out)
}

/// Cell means over the x–y plane (z ignored): particles per cell and the mean speed
/// |v| and angular speed |Ω| of those in it (NaN in empty cells), row-major in x.
#[derive(Clone, Debug, PartialEq)]
pub struct Maps {
    /// The maps' lower corner (x, y) (m).
    pub origin: [f64; 2],
    /// The cells' edge (m).
    pub cell: f64,
    /// Cells along x and y.
    pub size: [usize; 2],
    /// Particles counted in each cell.
    pub count: Vec<u32>,
    /// Mean |v| in each cell (m/s).
    pub speed: Vec<f64>,
    /// Mean |Ω| in each cell (rad/s).
    pub spin: Vec<f64>,
}

impl Maps {
    /// The maps of the particles of `frames` in `channel`, in cells of edge `cell`
    /// (the paper's are 1 mm: 150 × 65 over 15 × 6.5 cm).
    pub fn of(frames: &[ParticleFrame], channel: &Channel, cell: f64) -> Self {
        let span = channel.max - channel.min;
        let size = [
            ((span.x / cell).round() as usize).max(1),
            ((span.y / cell).round() as usize).max(1),
        ];
        let cells = size[0] * size[1];
        let (mut count, mut speed, mut spin) =
            (vec![0u32; cells], vec![0.0; cells], vec![0.0; cells]);
        for f in frames {
            for i in 0..f.len() {
                let x = f.position[i];
                if !channel.contains(x) {
                    continue;
                }
                let a = (((x.x - channel.min.x) / cell) as usize).min(size[0] - 1);
                let b = (((x.y - channel.min.y) / cell) as usize).min(size[1] - 1);
                let k = b * size[0] + a;
                count[k] += 1;
                speed[k] += f.velocity[i].length();
                spin[k] += f.angular_velocity[i].length();
            }
        }
        for k in 0..cells {
            let n = f64::from(count[k]);
            speed[k] = if n > 0.0 { speed[k] / n } else { f64::NAN };
            spin[k] = if n > 0.0 { spin[k] / n } else { f64::NAN };
        }
        Self {
            origin: [channel.min.x, channel.min.y],
            cell,
            size,
            count,
            speed,
            spin,
        }
    }

    /// The relative L2 distance of two maps of the same grid over the cells both count
    /// at least `min_count` particles in: `‖a − b‖ / ‖(a + b)/2‖`.
    pub fn distance(a: &[f64], b: &[f64], counts: (&[u32], &[u32]), min_count: u32) -> f64 {
        let (mut d, mut s) = (0.0, 0.0);
        for k in 0..a.len().min(b.len()) {
            if counts.0[k] >= min_count && counts.1[k] >= min_count {
                d += (a[k] - b[k]).powi(2);
                s += (0.5 * (a[k] + b[k])).powi(2);
            }
        }
        if s > 0.0 {
            (d / s).sqrt()
        } else {
            0.0
        }
    }

    /// Writes `x,y,count,speed,spin` rows (cell centres).
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        let mut s = String::from("x,y,count,speed,spin\n");
        for b in 0..self.size[1] {
            for a in 0..self.size[0] {
                let k = b * self.size[0] + a;
                let x = self.origin[0] + (a as f64 + 0.5) * self.cell;
                let y = self.origin[1] + (b as f64 + 0.5) * self.cell;
                s += &format!(
                    "{x:.6e},{y:.6e},{},{:.6e},{:.6e}\n",
                    self.count[k], self.speed[k], self.spin[k]
                );
            }
        }
        std::fs::write(path, s).map_err(|e| Error::io(path, e))
    }

    /// Draws one map (`values`, one per cell) as a PNG heat map with its colour scale
    /// from 0 to `top` in `colormap` (of `t ∈ [0, 1]`; `render::colormap` for the
    /// viewer's); empty cells white.
    pub fn plot(
        &self,
        (values, top): (&[f64], f64),
        colormap: impl Fn(f64) -> [u8; 3],
        title: &str,
        path: &Path,
    ) -> Result<()> {
        super::plot::register_font();
        let px = 8u32;
        let legend = 90u32;
        let (w, h) = (self.size[0] as u32 * px, self.size[1] as u32 * px);
        let root = BitMapBackend::new(path, (w + legend + 20, h + 60)).into_drawing_area();
        let draw = |e: &dyn std::fmt::Display| invalid(path, format!("drawing: {e}"));
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        root.draw(&Text::new(
            title.to_owned(),
            (10, 10),
            ("sans-serif", 18).into_font(),
        ))
        .map_err(|e| draw(&e))?;
        let color = |v: f64| {
            let t = (v / top).clamp(0.0, 1.0);
            let [r, g, b] = colormap(t);
            RGBColor(r, g, b)
        };
        for b in 0..self.size[1] {
            for a in 0..self.size[0] {
                let v = values[b * self.size[0] + a];
                if v.is_nan() {
                    continue;
                }
                // y up: the first row at the bottom.
                let (x0, y0) = (
                    (a as u32 * px) as i32,
                    40 + (h - (b as u32 + 1) * px) as i32,
                );
                root.draw(&Rectangle::new(
                    [(x0, y0), (x0 + px as i32, y0 + px as i32)],
                    color(v).filled(),
                ))
                .map_err(|e| draw(&e))?;
            }
        }
        // The colour scale: 0 at the bottom, `top` at the top.
        let x = (w + 20) as i32;
        for k in 0..h {
            let v = top * f64::from(h - k) / f64::from(h);
            root.draw(&Rectangle::new(
                [(x, 40 + k as i32), (x + 20, 41 + k as i32)],
                color(v).filled(),
            ))
            .map_err(|e| draw(&e))?;
        }
        for (v, y) in [(top, 40), (0.0, 40 + h as i32 - 12)] {
            root.draw(&Text::new(
                format!("{v:.3}"),
                (x + 24, y),
                ("sans-serif", 14).into_font(),
            ))
            .map_err(|e| draw(&e))?;
        }
        root.present().map_err(|e| draw(&e))
    }
}

/// The radial distribution function g(r) of the particles of `frame` in the slab
/// `x ∈ [x0, x1]` of `channel`: reference particles at least `r_max` from the slab's
/// x faces and the channel's y and z faces (so every shell lies in the channel), their
/// neighbours anywhere, in `bins` shells up to `r_max`, normalised by the slab's
/// number density. Returns `(r, g)` at the shells' mid-radii.
pub fn radial_distribution(
    frame: &ParticleFrame,
    channel: &Channel,
    (x0, x1): (f64, f64),
    r_max: f64,
    bins: usize,
) -> Vec<(f64, f64)> {
    let in_slab = |x: DVec3| channel.contains(x) && x.x >= x0 && x.x <= x1;
    let slab: Vec<DVec3> = (0..frame.len())
        .map(|i| frame.position[i])
        .filter(|&x| in_slab(x))
        .collect();
    let volume = (x1 - x0) * (channel.max.y - channel.min.y) * (channel.max.z - channel.min.z);
    let density = slab.len() as f64 / volume;
    let lo = DVec3::new(x0 + r_max, channel.min.y + r_max, channel.min.z + r_max);
    let hi = DVec3::new(x1 - r_max, channel.max.y - r_max, channel.max.z - r_max);
    let reference: Vec<DVec3> = (slab.iter().copied())
        .filter(|x| x.cmpge(lo).all() && x.cmple(hi).all())
        .collect();
    let dr = r_max / bins as f64;
    let mut hist = vec![0u64; bins];
    // Every reference against every slab particle (the slab holds thousands at most).
    for &a in &reference {
        for &b in &slab {
            let d = a.distance(b);
            if d > 0.0 && d < r_max {
                hist[((d / dr) as usize).min(bins - 1)] += 1;
            }
        }
    }
    (0..bins)
        .map(|k| {
            let (r0, r1) = (k as f64 * dr, (k + 1) as f64 * dr);
            let shell = 4.0 / 3.0 * std::f64::consts::PI * (r1.powi(3) - r0.powi(3));
            let ideal = reference.len() as f64 * density * shell;
            let g = if ideal > 0.0 {
                hist[k] as f64 / ideal
            } else {
                0.0
            };
            (0.5 * (r0 + r1), g)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_box_mesh_encloses_its_volume() {
        let c = crate::model::shapes::Cylinder {
            center: DVec3::new(0.04, 0.04, 0.01),
            axis: DVec3::Z,
            radius: 0.01,
            length: 0.02,
            segments: 128,
            box_side: Some(DVec3::X),
        };
        let mesh = c.mesh().unwrap();
        // A half disc (faceted) and a square, times the length.
        let half = 0.5 * 128.0 * 0.5 * 0.01f64.powi(2) * (std::f64::consts::TAU / 128.0).sin();
        let expected = (half + 2.0 * 0.01 * 0.01) * 0.02;
        let v = closed_volume(&mesh.vertices, &mesh.triangles);
        assert!((v - expected).abs() < 1e-18, "{v} vs {expected}");
    }
}

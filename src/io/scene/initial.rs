//! Checks of the state at t = 0 that need the whole model: every particle's and clump's
//! energy is finite (issue 49: a velocity of 1e160 passes every value check, but its
//! ½ m v² overflows and the run's energy is infinite from its first row), named by the
//! section that made the particle.

use glam::DVec3;

use super::checks::scene_error;
use crate::error::Result;
use crate::model::Model;

/// The section that made a run of particles or clumps.
#[derive(Clone, Debug)]
enum Source {
    /// An explicit list (`[[particle]]`, `[[clump]]`): the item is its own key,
    /// `particle[k]`.
    Listed(&'static str),
    /// A generator (`ring[0]`, `block[2]`, `cloud[1]`).
    Section(String),
}

/// Where each particle and clump of a model came from: `(first index, source)`, the
/// first indices ascending, recorded by [`Origins::mark`] before each section adds its
/// items.
#[derive(Clone, Debug, Default)]
pub(super) struct Origins {
    particles: Vec<(usize, Source)>,
    clumps: Vec<(usize, Source)>,
}

impl Origins {
    /// The items `model` gets from now on come from the generator `who`.
    pub(super) fn mark(&mut self, model: &Model, who: &str) {
        self.particles
            .push((model.particles.len(), Source::Section(who.to_owned())));
        self.clumps
            .push((model.clumps.len(), Source::Section(who.to_owned())));
    }

    /// The items `model` gets from now on are the explicit list `[[what]]`.
    pub(super) fn mark_listed(&mut self, model: &Model, what: &'static str) {
        let (list, len) = match what {
            "clump" => (&mut self.clumps, model.clumps.len()),
            _ => (&mut self.particles, model.particles.len()),
        };
        list.push((len, Source::Listed(what)));
    }

    /// How an error names item `i` of `list` (`kind` "particle" or "clump"), and the
    /// prefix of its keys: `particle[3].` for listed items, `its ` for generated ones.
    fn name(list: &[(usize, Source)], kind: &str, i: usize) -> (String, String) {
        let origin = list.iter().rev().find(|(start, _)| *start <= i);
        match origin {
            Some((start, Source::Listed(what))) => {
                let key = format!("{what}[{}]", i - start);
                (key.clone(), format!("{key}."))
            }
            Some((_, Source::Section(who))) => (format!("{kind} {i} (of {who})"), "its ".into()),
            None => (format!("{kind} {i}"), "its ".into()),
        }
    }
}

/// Formats a vector as the scene file writes it.
fn vec_text(v: DVec3) -> String {
    format!("[{:e}, {:e}, {:e}]", v.x, v.y, v.z)
}

/// Refuses a model whose energy at t = 0 is not finite: a particle's or clump's kinetic
/// or rotational energy, or its energy `−m g·x` in the gravity field, naming the item
/// (by its key where it has one) and the value that overflows.
pub(super) fn check_initial_energy(model: &Model, origins: &Origins) -> Result<()> {
    let g = model.gravity;
    let refuse = |name: &str, what: &str, energy: f64, key: String, value: DVec3| {
        Err(scene_error(format!(
            "{name}: its {what} at t = 0 is {energy:e}, not finite ({key} = {}): the run's energy would be infinite from its first row",
            vec_text(value)
        )))
    };
    let p = &model.particles;
    for i in 0..p.len() {
        let (name, prefix) = Origins::name(&origins.particles, "particle", i);
        let m = p.mass[i];
        let kinetic = 0.5 * m * p.velocity[i].length_squared();
        if !kinetic.is_finite() {
            let key = format!("{prefix}velocity");
            return refuse(&name, "kinetic energy ½ m v²", kinetic, key, p.velocity[i]);
        }
        let spin = 0.5 * p.inertia[i] * p.angular_velocity[i].length_squared();
        if !spin.is_finite() {
            let key = format!("{prefix}angular_velocity");
            let w = p.angular_velocity[i];
            return refuse(&name, "rotational energy ½ I ω²", spin, key, w);
        }
        let field = m * g.dot(p.position[i]);
        if !field.is_finite() {
            return refuse(
                &name,
                "field energy m g·x",
                field,
                "simulation.gravity".into(),
                g,
            );
        }
    }
    for (c, clump) in model.clumps.iter().enumerate() {
        let (name, prefix) = Origins::name(&origins.clumps, "clump", c);
        let kind = &model.clump_types[clump.kind as usize];
        let kinetic = 0.5 * kind.mass * clump.velocity.length_squared();
        if !kinetic.is_finite() {
            let key = format!("{prefix}velocity");
            return refuse(&name, "kinetic energy ½ m v²", kinetic, key, clump.velocity);
        }
        // ½ Ωᵀ J Ω ≤ ½ tr(J) |Ω|² for J positive semi-definite: finite bound, finite energy.
        let j = kind.inertia.body;
        let spin =
            0.5 * (j.x_axis.x + j.y_axis.y + j.z_axis.z) * clump.angular_velocity.length_squared();
        if !spin.is_finite() {
            let key = format!("{prefix}angular_velocity");
            let w = clump.angular_velocity;
            return refuse(&name, "rotational energy ½ Ω·JΩ", spin, key, w);
        }
        let field = kind.mass * g.dot(clump.position);
        if !field.is_finite() {
            return refuse(
                &name,
                "field energy m g·x",
                field,
                "simulation.gravity".into(),
                g,
            );
        }
    }
    check_initial_sums(model, origins)
}

/// Refuses a scene whose first `energy.csv` row would not be finite although every
/// particle's terms are: the sums (and the squared momenta the run checks) overflow,
/// as 80 particles of mass 1e308 moving at 0.1 m/s do. Names the particle with the
/// largest momentum and its mass.
fn check_initial_sums(model: &Model, origins: &Origins) -> Result<()> {
    let (e_kin, e_rot, p, l, e_field) =
        crate::diagnostics::kinematic(&model.particles, model.gravity);
    let parts = [
        ("kinetic energy", e_kin),
        ("rotational energy", e_rot),
        ("field energy", e_field),
        ("linear momentum (its square)", p.length_squared()),
        ("angular momentum (its square)", l.length_squared()),
    ];
    let Some(&(what, value)) = parts.iter().find(|(_, v)| !v.is_finite()) else {
        return Ok(());
    };
    let q = &model.particles;
    let momentum = |i: usize| q.mass[i] * (q.velocity[i].length() + q.angular_velocity[i].length());
    let largest = (0..q.len()).max_by(|&a, &b| momentum(a).total_cmp(&momentum(b)));
    let culprit = largest.map_or_else(String::new, |i| {
        let (name, prefix) = Origins::name(&origins.particles, "particle", i);
        format!(" ({name}, {prefix}mass = {:e})", q.mass[i])
    });
    Err(scene_error(format!(
        "the initial state's total {what} is {value:e}, not finite: masses, velocities or positions too large for 64-bit floats{culprit}"
    )))
}

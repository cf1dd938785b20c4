//! The scene file as written: every section and key, with serde's unknown-key check.
//! Values are checked and turned into model values elsewhere (`sections`, `generators`,
//! `build`).

use serde::Deserialize;

/// A vector as written in the file.
pub(super) type Vec3 = [f64; 3];

/// Exactly `N` values (serde's fixed-size arrays read the first `N` and ignore the rest,
/// so `position = [0.3, 0.0, 0.1, 5.0]` would pass as its first three): too long is
/// refused like too short, with serde's "invalid length" naming the value.
fn exact<'de, D, T, const N: usize>(d: D) -> Result<[T; N], D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let v: Vec<T> = Vec::deserialize(d)?;
    let len = v.len();
    v.try_into().map_err(|_| {
        serde::de::Error::invalid_length(len, &format!("an array of length {N}").as_str())
    })
}

/// [`exact`] for an optional key.
fn exact_opt<'de, D, T, const N: usize>(d: D) -> Result<Option<[T; N]>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    exact(d).map(Some)
}

/// [`exact`] for every entry of an optional list (mesh vertices and triangles).
fn exact_opt_vec<'de, D, T, const N: usize>(d: D) -> Result<Option<Vec<[T; N]>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let rows: Vec<Vec<T>> = Vec::deserialize(d)?;
    rows.into_iter()
        .map(|v| {
            let len = v.len();
            v.try_into().map_err(|_| {
                serde::de::Error::invalid_length(len, &format!("an array of length {N}").as_str())
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SceneFile {
    pub(super) simulation: SimulationSection,
    #[serde(default)]
    pub(super) binder: Option<BinderSection>,
    #[serde(default)]
    pub(super) contact: Option<ContactSection>,
    #[serde(default, rename = "particle")]
    pub(super) particles: Vec<ParticleSection>,
    #[serde(default, rename = "bond")]
    pub(super) bonds: Vec<BondSection>,
    #[serde(default, rename = "wall")]
    pub(super) walls: Vec<WallSection>,
    #[serde(default, rename = "mesh")]
    pub(super) meshes: Vec<MeshSection>,
    #[serde(default, rename = "ring")]
    pub(super) rings: Vec<RingSection>,
    #[serde(default, rename = "block")]
    pub(super) blocks: Vec<BlockSection>,
    #[serde(default, rename = "cloud")]
    pub(super) clouds: Vec<CloudSection>,
    #[serde(default, rename = "material")]
    pub(super) materials: Vec<MaterialSection>,
    #[serde(default, rename = "interaction")]
    pub(super) interactions: Vec<InteractionSection>,
    #[serde(default)]
    pub(super) drag: Option<DragSection>,
    #[serde(default)]
    pub(super) near_field: Option<NearFieldSection>,
    #[serde(default)]
    pub(super) domain: Option<DomainSection>,
    #[serde(default, rename = "clump_type")]
    pub(super) clump_types: Vec<ClumpTypeSection>,
    #[serde(default, rename = "clump")]
    pub(super) clumps: Vec<ClumpSection>,
    #[serde(default, rename = "inserter")]
    pub(super) inserters: Vec<InserterSection>,
    /// `[run]`: how a run ran, in the `run.toml` record it writes (version, backend,
    /// identity); read by resume and render, ignored as a scene (issue 49: `run.toml`
    /// is a scene file as it is).
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "accepted so that a run.toml parses as a scene; its values are read elsewhere"
    )]
    pub(super) run: Option<toml::Table>,
}

/// `[[inserter]]`: particles added over time in a box or disc region.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InserterSection {
    #[serde(default, rename = "box")]
    pub(super) box_region: Option<BoxRegion>,
    #[serde(default)]
    pub(super) disc: Option<DiscRegion>,
    #[serde(default)]
    pub(super) grid: Option<GridRegion>,
    #[serde(default)]
    pub(super) rate: Option<f64>,
    #[serde(default)]
    pub(super) count: Option<i64>,
    #[serde(default)]
    pub(super) interval: Option<f64>,
    #[serde(default)]
    pub(super) start: Option<f64>,
    #[serde(default)]
    pub(super) stop: Option<f64>,
    #[serde(default)]
    pub(super) material: Option<String>,
    #[serde(default)]
    pub(super) clump_type: Option<String>,
    #[serde(default)]
    pub(super) radius: Option<f64>,
    #[serde(default)]
    pub(super) radius_jitter: f64,
    #[serde(default)]
    pub(super) radius_distribution: Option<RadiusDistributionSection>,
    #[serde(default)]
    pub(super) density: Option<f64>,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) velocity: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) velocity_perturbation: Option<Vec3>,
    #[serde(default)]
    pub(super) seed: i64,
    #[serde(default)]
    pub(super) capacity: Option<i64>,
    #[serde(default)]
    pub(super) attempts: Option<i64>,
}

/// `box = { min, max }` of an inserter.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BoxRegion {
    #[serde(deserialize_with = "exact")]
    pub(super) min: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) max: Vec3,
}

/// `cylinder = { center, axis, radius, length, segments, box_side }` of a `[[mesh]]`:
/// a generated cylinder (issue 48's obstacle).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CylinderSection {
    #[serde(deserialize_with = "exact")]
    pub(super) center: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) axis: Vec3,
    pub(super) radius: f64,
    pub(super) length: f64,
    #[serde(default)]
    pub(super) segments: Option<i64>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) box_side: Option<Vec3>,
}

/// `grid = { origin, spacing, counts }` of an inserter: a layer (or block) of sites.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GridRegion {
    #[serde(deserialize_with = "exact")]
    pub(super) origin: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) spacing: Vec3,
    pub(super) counts: [i64; 3],
}

/// `disc = { center, normal, radius }` of an inserter.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DiscRegion {
    #[serde(deserialize_with = "exact")]
    pub(super) center: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) normal: Vec3,
    pub(super) radius: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClumpTypeSection {
    pub(super) name: String,
    pub(super) spheres: Vec<ClumpSphereSection>,
    #[serde(default)]
    pub(super) material: Option<String>,
    #[serde(default)]
    pub(super) density: Option<f64>,
    #[serde(default)]
    pub(super) mass: Option<f64>,
    #[serde(default)]
    pub(super) inertia: Option<Vec<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClumpSphereSection {
    #[serde(deserialize_with = "exact")]
    pub(super) position: Vec3,
    pub(super) radius: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClumpSection {
    #[serde(rename = "type")]
    pub(super) kind: String,
    #[serde(deserialize_with = "exact")]
    pub(super) position: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) rotation: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) velocity: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) angular_velocity: Vec3,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DomainSection {
    #[serde(deserialize_with = "exact")]
    pub(super) min: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) max: Vec3,
    #[serde(default)]
    pub(super) on_exit: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MaterialSection {
    pub(super) name: String,
    pub(super) young: f64,
    pub(super) poisson: f64,
    #[serde(default)]
    pub(super) shear_modulus: Option<f64>,
    pub(super) density: f64,
    pub(super) restitution: f64,
    pub(super) friction_static: f64,
    #[serde(default)]
    pub(super) friction_dynamic: Option<f64>,
    #[serde(default)]
    pub(super) rolling_friction: Option<f64>,
    #[serde(default)]
    pub(super) rolling_model: Option<String>,
    #[serde(default)]
    pub(super) rolling_damping: Option<f64>,
    #[serde(default)]
    pub(super) surface_energy: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InteractionSection {
    #[serde(deserialize_with = "exact")]
    pub(super) materials: [String; 2],
    #[serde(default)]
    pub(super) restitution: Option<f64>,
    #[serde(default)]
    pub(super) friction_static: Option<f64>,
    #[serde(default)]
    pub(super) friction_dynamic: Option<f64>,
    #[serde(default)]
    pub(super) rolling_friction: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DragSection {
    #[serde(default)]
    pub(super) coefficient: f64,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) fluid_velocity: Vec3,
    #[serde(default)]
    pub(super) magnus: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NearFieldSection {
    #[serde(default)]
    pub(super) kappa_attractive: f64,
    #[serde(default)]
    pub(super) lambda_attractive: f64,
    #[serde(default)]
    pub(super) kappa_repulsive: f64,
    #[serde(default)]
    pub(super) lambda_repulsive: f64,
    pub(super) cutoff: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CloudSection {
    #[serde(deserialize_with = "exact")]
    pub(super) min: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) max: Vec3,
    pub(super) count: i64,
    #[serde(default)]
    pub(super) radius: Option<f64>,
    #[serde(default)]
    pub(super) clump_type: Option<String>,
    #[serde(default)]
    pub(super) radius_jitter: f64,
    #[serde(default)]
    pub(super) radius_distribution: Option<RadiusDistributionSection>,
    #[serde(default)]
    pub(super) density: Option<f64>,
    #[serde(default)]
    pub(super) material: Option<String>,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) velocity: Vec3,
    #[serde(default)]
    pub(super) hold_rotation: bool,
    #[serde(default)]
    pub(super) seed: i64,
}

/// `radius_distribution = { lognormal = { median = R, sigma = S } }` or
/// `{ table = [[r, cumulative_fraction], ...], by = "mass" | "number" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RadiusDistributionSection {
    #[serde(default)]
    pub(super) lognormal: Option<LogNormalSection>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt_vec")]
    pub(super) table: Option<Vec<[f64; 2]>>,
    #[serde(default)]
    pub(super) by: Option<String>,
}

/// The lognormal law of [`RadiusDistributionSection`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LogNormalSection {
    pub(super) median: f64,
    pub(super) sigma: f64,
}

/// `[simulation] dt` as written: a time step in seconds, or a name (`"auto"`, the
/// step `varidem check` recommends; other names are refused when the section is read).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum TimeStepKey {
    /// A time step (s).
    Seconds(f64),
    /// A name.
    Name(String),
}

impl<'de> Deserialize<'de> for TimeStepKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = TimeStepKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a time step in seconds or \"auto\"")
            }
            fn visit_f64<E>(self, v: f64) -> Result<TimeStepKey, E> {
                Ok(TimeStepKey::Seconds(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<TimeStepKey, E> {
                Ok(TimeStepKey::Seconds(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<TimeStepKey, E> {
                Ok(TimeStepKey::Seconds(v as f64))
            }
            fn visit_str<E>(self, v: &str) -> Result<TimeStepKey, E> {
                Ok(TimeStepKey::Name(v.to_owned()))
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SimulationSection {
    pub(super) dt: TimeStepKey,
    #[serde(default)]
    pub(super) auto_dt_velocity: Option<f64>,
    #[serde(default)]
    pub(super) output_interval: Option<f64>,
    #[serde(default)]
    pub(super) checkpoint_every: Option<i64>,
    #[serde(default)]
    pub(super) checkpoint_interval: Option<f64>,
    #[serde(default)]
    pub(super) steps: Option<i64>,
    #[serde(default)]
    pub(super) t_end: Option<f64>,
    #[serde(default)]
    pub(super) integrator: Option<String>,
    #[serde(default)]
    pub(super) output_every: Option<i64>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) gravity: Option<Vec3>,
    #[serde(default)]
    pub(super) precision: Option<String>,
    #[serde(default)]
    pub(super) max_neighbors: Option<i64>,
    #[serde(default)]
    pub(super) bucket_capacity: Option<i64>,
    #[serde(default)]
    pub(super) phi: Option<f64>,
    #[serde(default)]
    pub(super) tolerance: Option<f64>,
    #[serde(default)]
    pub(super) sort_every: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BinderSection {
    #[serde(default)]
    pub(super) k_bend: Option<f64>,
    #[serde(default)]
    pub(super) k_axial: Option<f64>,
    #[serde(default)]
    pub(super) k_shear: Option<f64>,
    #[serde(default)]
    pub(super) shear: Option<String>,
    #[serde(default)]
    pub(super) break_tension: Option<f64>,
    #[serde(default)]
    pub(super) break_shear: Option<f64>,
    #[serde(default)]
    pub(super) break_bend: Option<f64>,
    #[serde(default)]
    pub(super) break_twist: Option<f64>,
    #[serde(default)]
    pub(super) break_scatter: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ContactSection {
    pub(super) law: String,
    #[serde(default)]
    pub(super) k_pp: Option<f64>,
    #[serde(default)]
    pub(super) skin: Option<f64>,
    #[serde(default)]
    pub(super) max_contacts: Option<i64>,
    #[serde(default)]
    pub(super) max_initial_overlap: Option<f64>,
    // The Hertz law only.
    #[serde(default)]
    pub(super) max_overlap: Option<f64>,
    #[serde(default)]
    pub(super) cohesion: Option<String>,
    // Hard contacts (`law = "hard"`) only.
    #[serde(default)]
    pub(super) friction_model: Option<String>,
    #[serde(default)]
    pub(super) solver: Option<String>,
    #[serde(default)]
    pub(super) max_sweeps: Option<i64>,
    #[serde(default)]
    pub(super) tolerance: Option<f64>,
    #[serde(default)]
    pub(super) relaxation: Option<f64>,
    #[serde(default)]
    pub(super) error_reduction: Option<f64>,
    #[serde(default)]
    pub(super) warm_start: Option<bool>,
    #[serde(default)]
    pub(super) margin: Option<f64>,
    #[serde(default)]
    pub(super) on_nonconvergence: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ParticleSection {
    #[serde(deserialize_with = "exact")]
    pub(super) position: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) velocity: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) rotation: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) angular_velocity: Vec3,
    #[serde(default)]
    pub(super) mass: Option<f64>,
    #[serde(default)]
    pub(super) inertia: Option<f64>,
    pub(super) radius: f64,
    #[serde(default)]
    pub(super) hold_position: bool,
    #[serde(default)]
    pub(super) hold_rotation: bool,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) pendulum_offset: Option<Vec3>,
    #[serde(default)]
    pub(super) material: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BondSection {
    pub(super) i: i64,
    pub(super) j: i64,
    #[serde(default)]
    pub(super) k_bend: Option<f64>,
    #[serde(default)]
    pub(super) k_axial: Option<f64>,
    #[serde(default)]
    pub(super) k_shear: Option<f64>,
    #[serde(default)]
    pub(super) break_tension: Option<f64>,
    #[serde(default)]
    pub(super) break_shear: Option<f64>,
    #[serde(default)]
    pub(super) break_bend: Option<f64>,
    #[serde(default)]
    pub(super) break_twist: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WallSection {
    #[serde(deserialize_with = "exact")]
    pub(super) point: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) normal: Vec3,
    #[serde(default)]
    pub(super) stiffness: Option<f64>,
    #[serde(default)]
    pub(super) material: Option<String>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) velocity: Option<Vec3>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) angular_velocity: Option<Vec3>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) axis_point: Option<Vec3>,
    #[serde(default)]
    pub(super) start: Option<f64>,
    #[serde(default)]
    pub(super) stop: Option<f64>,
    #[serde(default)]
    pub(super) period: Option<f64>,
}

/// `[[mesh]]`: a triangle-mesh wall from an STL file (`file`) or given inline
/// (`vertices` and `triangles`, as `scene_to_toml` writes it back), placed by `scale`,
/// then `rotate` (α), then `translate`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MeshSection {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) file: Option<String>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt_vec")]
    pub(super) vertices: Option<Vec<Vec3>>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt_vec")]
    pub(super) triangles: Option<Vec<[i64; 3]>>,
    #[serde(default)]
    pub(super) cylinder: Option<CylinderSection>,
    #[serde(default)]
    pub(super) scale: Option<f64>,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) translate: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) rotate: Vec3,
    #[serde(default)]
    pub(super) material: Option<String>,
    #[serde(default)]
    pub(super) stiffness: Option<f64>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) velocity: Option<Vec3>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) angular_velocity: Option<Vec3>,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) axis_point: Option<Vec3>,
    #[serde(default)]
    pub(super) start: Option<f64>,
    #[serde(default)]
    pub(super) stop: Option<f64>,
}

fn default_true() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RingSection {
    pub(super) count: i64,
    pub(super) diameter: f64,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) center: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact_opt")]
    pub(super) axis: Option<Vec3>,
    pub(super) mass: f64,
    #[serde(default)]
    pub(super) inertia: Option<f64>,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) velocity: Vec3,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) angular_velocity: Vec3,
    #[serde(default = "default_true")]
    pub(super) bond: bool,
    #[serde(default)]
    pub(super) random_velocity: f64,
    #[serde(default)]
    pub(super) random_angular_velocity: f64,
    #[serde(default)]
    pub(super) seed: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BlockSection {
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) origin: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) counts: [i64; 3],
    pub(super) spacing: f64,
    pub(super) radius: f64,
    #[serde(default)]
    pub(super) radius_jitter: f64,
    #[serde(default)]
    pub(super) density: Option<f64>,
    #[serde(default)]
    #[serde(deserialize_with = "exact")]
    pub(super) velocity: Vec3,
    #[serde(default)]
    pub(super) bond_cutoff: f64,
    #[serde(default)]
    pub(super) seed: i64,
    #[serde(default)]
    pub(super) material: Option<String>,
    #[serde(default)]
    pub(super) hold_rotation: bool,
    #[serde(default)]
    pub(super) break_scatter: Option<f64>,
    #[serde(default)]
    pub(super) cylinder: Option<CylinderCut>,
}

/// `[[block]] cylinder`: keep the lattice sites within `radius` of the axis through
/// `center` along `axis` (a disc for the Brazilian test).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CylinderCut {
    #[serde(deserialize_with = "exact")]
    pub(super) center: Vec3,
    #[serde(deserialize_with = "exact")]
    pub(super) axis: Vec3,
    pub(super) radius: f64,
}

//! WGSL sources, their composition into one module per kernel file, and naga
//! validation (usable without any adapter).
//!
//! Each kernel file in `shaders/` is compiled with a generated header (the precision
//! alias `real` and the constants below) followed by the shared files of
//! `shaders/common/`. Kernels are written once over `real` and built in `f32` and `f64`.

use crate::gpu::hard::HardSections;
use crate::gpu::plan::{SectionNeeds, Sections};
use crate::gpu::Precision;

/// Workgroup size of every per-item kernel (defined once, here; the header passes it to
/// WGSL as `WG`).
pub const WORKGROUP_SIZE: u32 = 128;
/// Capacity of a particle's private neighbour list in `neighbor_build` (`MAX_NEIGHBORS`):
/// the upper bound for the scene's `max_neighbors` ([`crate::model::MAX_NEIGHBORS`]).
pub const MAX_NEIGHBORS: u32 = crate::model::MAX_NEIGHBORS;

/// The shared files, in inclusion order.
pub const COMMON: [(&str, &str); 8] = [
    (
        "common/layout.wgsl",
        include_str!("../../shaders/common/layout.wgsl"),
    ),
    (
        "common/rodrigues.wgsl",
        include_str!("../../shaders/common/rodrigues.wgsl"),
    ),
    (
        "common/laws.wgsl",
        include_str!("../../shaders/common/laws.wgsl"),
    ),
    (
        "common/integrator.wgsl",
        include_str!("../../shaders/common/integrator.wgsl"),
    ),
    (
        "common/contact.wgsl",
        include_str!("../../shaders/common/contact.wgsl"),
    ),
    (
        "common/clump_data.wgsl",
        include_str!("../../shaders/common/clump_data.wgsl"),
    ),
    (
        "common/triangle.wgsl",
        include_str!("../../shaders/common/triangle.wgsl"),
    ),
    (
        "common/mesh.wgsl",
        include_str!("../../shaders/common/mesh.wgsl"),
    ),
];

/// The general single-contact solver of hard contacts (the twin of
/// `physics::hard::{solve_contact, solve_contact_coulomb}`), placed before `hard.wgsl`'s
/// kernels; it needs only the header.
pub const HARD_SOLVE: (&str, &str) = (
    "common/hard_solve.wgsl",
    include_str!("../../shaders/common/hard_solve.wgsl"),
);

/// The two declarations of the bond records' binding: full records
/// ([`crate::gpu::layout::BondRecord`]) or compact ones
/// ([`crate::gpu::layout::BondCompact`]). One of them follows [`COMMON`]'s layout file.
pub const BOND_RECORDS: [(&str, &str); 2] = [
    (
        "common/bonds_full.wgsl",
        include_str!("../../shaders/common/bonds_full.wgsl"),
    ),
    (
        "common/bonds_compact.wgsl",
        include_str!("../../shaders/common/bonds_compact.wgsl"),
    ),
];

/// What a kernel module is built for: the precision, the bond record form and the
/// sections of the packed buffers (constants of the generated header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaderConfig {
    /// Kernel precision.
    pub precision: Precision,
    /// Bonds are compact records ([`crate::gpu::layout::CompactBonds`]).
    pub compact_bonds: bool,
    /// Section offsets of the packed buffers.
    pub sections: Sections,
    /// Section offsets of the hard-contact buffers (all zero without hard contacts).
    pub hard: HardSections,
}

impl ShaderConfig {
    /// A configuration with every section present (for checks without a problem, such
    /// as naga validation and binding counts).
    pub fn example(precision: Precision, compact_bonds: bool) -> Self {
        let needs = SectionNeeds::everything(1024, 4, 2, 2);
        Self {
            precision,
            compact_bonds,
            sections: Sections::new(&needs).unwrap_or_default(),
            hard: HardSections::new(1024, HardSections::capacity(1024, 16)),
        }
    }
}

/// One WGSL file of kernels and the entry points it defines.
#[derive(Clone, Copy, Debug)]
pub struct KernelFile {
    /// File name under `shaders/`.
    pub name: &'static str,
    /// Its source.
    pub source: &'static str,
    /// Entry points.
    pub entry_points: &'static [&'static str],
}

/// Every kernel family.
pub const KERNEL_FILES: [KernelFile; 8] = [
    KernelFile {
        name: "integrate.wgsl",
        source: include_str!("../../shaders/integrate.wgsl"),
        entry_points: &["step_begin", "integrate_predict", "commit_pos"],
    },
    KernelFile {
        name: "bonds.wgsl",
        source: include_str!("../../shaders/bonds.wgsl"),
        entry_points: &[
            "bond_forces",
            "bond_forces_no_energy",
            "bond_gather",
            "bond_unload",
        ],
    },
    KernelFile {
        name: "particles.wgsl",
        source: include_str!("../../shaders/particles.wgsl"),
        entry_points: &["particle_forces", "particle_forces_predict"],
    },
    KernelFile {
        name: "granular.wgsl",
        source: include_str!("../../shaders/granular.wgsl"),
        entry_points: &["granular_forces", "granular_forces_no_energy", "mesh_place"],
    },
    KernelFile {
        name: "grid.wgsl",
        source: include_str!("../../shaders/grid.wgsl"),
        entry_points: &[
            "grid_gate",
            "grid_clear",
            "grid_insert",
            "neighbor_build",
            "grid_finish",
        ],
    },
    KernelFile {
        name: "reduce.wgsl",
        source: include_str!("../../shaders/reduce.wgsl"),
        entry_points: &["reduce_partials", "reduce_bond_partials", "reduce_final"],
    },
    KernelFile {
        name: "clumps.wgsl",
        source: include_str!("../../shaders/clumps.wgsl"),
        entry_points: &["clump_predict", "clump_pose", "clump_gather"],
    },
    KernelFile {
        name: "hard.wgsl",
        // The single-contact solver of clump contacts (HARD_SOLVE), then the kernels.
        source: concat!(
            include_str!("../../shaders/common/hard_solve.wgsl"),
            include_str!("../../shaders/hard.wgsl")
        ),
        entry_points: &[
            "hard_begin",
            "hard_free",
            "hard_skin",
            "hard_count",
            "hard_scan_local",
            "hard_scan_top",
            "hard_scan_add",
            "hard_build",
            "hard_incidence",
            "hard_color_round",
            "hard_color_gate",
            "hard_color_rest",
            "hard_color_count",
            "hard_color_finish",
            "hard_color_place",
            "hard_gather",
            "hard_update",
            "hard_color_sweep",
            "hard_check",
            "hard_solve_end",
            "hard_advance",
            "hard_advance_clumps",
            "hard_follow",
            "hard_save",
            "hard_row",
        ],
    },
];

/// Multipliers of the GPU grid's linear cell hash (`bucket_of` in `shaders/grid.wgsl`):
/// the 27 cells around any cell hash to 27 distinct buckets for every power-of-two
/// bucket count of at least [`MIN_BUCKETS`] (tested), so the neighbour search needs no
/// duplicate check.
pub const HASH_PRIMES: [u32; 3] = [73_856_093, 19_349_663, 83_492_791];

/// Fewest grid buckets: below 32 two cells of one neighbourhood could share a bucket.
pub const MIN_BUCKETS: u32 = 32;

/// The bucket of cell `c` under the linear hash (the twin of `bucket_of`).
pub fn bucket_of(c: [i32; 3], n_buckets: u32) -> u32 {
    let h = (c[0] as u32)
        .wrapping_mul(HASH_PRIMES[0])
        .wrapping_add((c[1] as u32).wrapping_mul(HASH_PRIMES[1]))
        .wrapping_add((c[2] as u32).wrapping_mul(HASH_PRIMES[2]));
    h & (n_buckets - 1)
}

/// The generated header: precision alias and constants.
pub fn header(precision: Precision) -> String {
    // f32 builds compensate the state updates (see `kahan` in layout.wgsl).
    // TINY_REAL: a modulus below it counts as zero when dividing by it (hard_solve.wgsl).
    let (ty, max, tiny, compensate) = match precision {
        Precision::F32 => ("f32", "3.4028234663852886e38", "1e-30", true),
        Precision::F64 => ("f64", "1.7976931348623157e308", "1e-300", false),
    };
    format!(
        "alias real = {ty};\nconst WG: u32 = {WORKGROUP_SIZE}u;\nconst MAX_NEIGHBORS: u32 = {MAX_NEIGHBORS}u;\nconst MAX_REAL: real = {max};\nconst TINY_REAL: real = {tiny};\nconst COMPENSATE: bool = {compensate};\nconst HASH_P1: u32 = {}u;\nconst HASH_P2: u32 = {}u;\nconst HASH_P3: u32 = {}u;\n",
        HASH_PRIMES[0], HASH_PRIMES[1], HASH_PRIMES[2]
    )
}

/// Header (with the section offsets of `config`) + common files + `file`: the source
/// of one shader module.
pub fn compose(file: &str, config: &ShaderConfig) -> String {
    let mut s = header(config.precision);
    s.push_str(&crate::gpu::contract::wgsl());
    s.push_str(&config.sections.wgsl_constants());
    s.push_str(&config.hard.wgsl_constants());
    let bonds = BOND_RECORDS[usize::from(config.compact_bonds)];
    for (i, (name, src)) in COMMON.into_iter().enumerate() {
        s.push_str(&format!("// ---- {name}\n"));
        s.push_str(src);
        // The bond binding right after the layout it refers to.
        if i == 0 {
            s.push_str(&format!("// ---- {}\n", bonds.0));
            s.push_str(bonds.1);
        }
    }
    s.push_str("// ---- kernel file\n");
    s.push_str(file);
    s
}

/// Parses and validates a composed source with naga; the capabilities include `FLOAT64`
/// for `f64` builds.
pub fn validate(
    source: &str,
    precision: Precision,
) -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let caps = match precision {
        Precision::F32 => naga::valid::Capabilities::empty(),
        Precision::F64 => naga::valid::Capabilities::FLOAT64,
    };
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .validate(&module)
        .map_err(|e| e.emit_to_string(source))?;
    Ok((module, info))
}

/// The `@binding` numbers (group 0) an entry point statically uses.
pub fn used_bindings(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: &str,
) -> Option<Vec<u32>> {
    let index = module
        .entry_points
        .iter()
        .position(|e| e.name == entry_point)?;
    let ep = info.get_entry_point(index);
    let mut out: Vec<u32> = module
        .global_variables
        .iter()
        .filter(|(h, _)| !ep[*h].is_empty())
        .filter_map(|(_, g)| g.binding.as_ref().map(|b| b.binding))
        .collect();
    out.sort_unstable();
    Some(out)
}

/// The storage buffers an entry point statically uses (the count wgpu's implicit layout
/// binds, and which [`crate::gpu::limits::PORTABLE`] bounds).
pub fn storage_buffers(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: &str,
) -> Option<u32> {
    let index = module
        .entry_points
        .iter()
        .position(|e| e.name == entry_point)?;
    let ep = info.get_entry_point(index);
    Some(
        module
            .global_variables
            .iter()
            .filter(|(h, g)| {
                !ep[*h].is_empty() && matches!(g.space, naga::AddressSpace::Storage { .. })
            })
            .count() as u32,
    )
}

/// Bytes of workgroup memory the module declares (what any of its entry points can use
/// at most).
pub fn workgroup_bytes(module: &naga::Module) -> u32 {
    let mut layouter = naga::proc::Layouter::default();
    if layouter.update(module.to_ctx()).is_err() {
        return u32::MAX;
    }
    module
        .global_variables
        .iter()
        .filter(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
        .map(|(_, g)| layouter[g.ty].size)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 27 cells around a cell hash to 27 distinct buckets, for every power-of-two
    /// bucket count from [`MIN_BUCKETS`] up and cells anywhere (negative coordinates
    /// and the wrap of u32 included): `neighbor_build` relies on it.
    #[test]
    fn neighbourhoods_hash_to_distinct_buckets() {
        let centres = [
            [0, 0, 0],
            [-1, 5, -7],
            [i32::MAX, i32::MIN, 12345],
            [-40, -40, -40],
        ];
        for k in MIN_BUCKETS.trailing_zeros()..32 {
            let nb = 1u32 << k;
            for c in centres {
                let mut seen: Vec<u32> = (-1..=1)
                    .flat_map(|dz| {
                        (-1..=1).flat_map(move |dy| (-1..=1).map(move |dx| [dx, dy, dz]))
                    })
                    .map(|d: [i32; 3]| {
                        bucket_of(
                            [
                                c[0].wrapping_add(d[0]),
                                c[1].wrapping_add(d[1]),
                                c[2].wrapping_add(d[2]),
                            ],
                            nb,
                        )
                    })
                    .collect();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), 27, "{nb} buckets around {c:?}");
            }
        }
    }
}

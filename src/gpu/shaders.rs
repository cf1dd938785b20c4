//! WGSL sources, their composition into one module per kernel file, and naga
//! validation (usable without any adapter).
//!
//! Each kernel file in `shaders/` is compiled with a generated header (the precision
//! alias `real` and the constants below) followed by the shared files of
//! `shaders/common/`. Kernels are written once over `real` and built in `f32` and `f64`.

use crate::gpu::Precision;

/// Workgroup size of every per-item kernel (defined once, here; the header passes it to
/// WGSL as `WG`).
pub const WORKGROUP_SIZE: u32 = 128;
/// Capacity of a particle's private neighbour list in `neighbor_build` (`MAX_NEIGHBORS`):
/// the upper bound for the scene's `max_neighbors`.
pub const MAX_NEIGHBORS: u32 = 64;

/// The shared files, in inclusion order.
pub const COMMON: [(&str, &str); 3] = [
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
];

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
pub const KERNEL_FILES: [KernelFile; 6] = [
    KernelFile {
        name: "integrate.wgsl",
        source: include_str!("../../shaders/integrate.wgsl"),
        entry_points: &["step_begin", "integrate_predict", "integrate_correct"],
    },
    KernelFile {
        name: "bonds.wgsl",
        source: include_str!("../../shaders/bonds.wgsl"),
        entry_points: &["bond_forces", "bond_gather"],
    },
    KernelFile {
        name: "particles.wgsl",
        source: include_str!("../../shaders/particles.wgsl"),
        entry_points: &["particle_forces"],
    },
    KernelFile {
        name: "granular.wgsl",
        source: include_str!("../../shaders/granular.wgsl"),
        entry_points: &["granular_forces"],
    },
    KernelFile {
        name: "grid.wgsl",
        source: include_str!("../../shaders/grid.wgsl"),
        entry_points: &["grid_clear", "grid_insert", "neighbor_build", "grid_finish"],
    },
    KernelFile {
        name: "reduce.wgsl",
        source: include_str!("../../shaders/reduce.wgsl"),
        entry_points: &["reduce_partials", "reduce_bond_partials", "reduce_final"],
    },
];

/// The generated header: precision alias and constants.
pub fn header(precision: Precision) -> String {
    // f32 builds compensate the state updates (see `comp` in layout.wgsl).
    let (ty, max, compensate) = match precision {
        Precision::F32 => ("f32", "3.4028234663852886e38", true),
        Precision::F64 => ("f64", "1.7976931348623157e308", false),
    };
    format!(
        "alias real = {ty};\nconst WG: u32 = {WORKGROUP_SIZE}u;\nconst MAX_NEIGHBORS: u32 = {MAX_NEIGHBORS}u;\nconst MAX_REAL: real = {max};\nconst COMPENSATE: bool = {compensate};\n"
    )
}

/// Header + common files + `file`: the source of one shader module.
pub fn compose(file: &str, precision: Precision) -> String {
    let mut s = header(precision);
    for (name, src) in COMMON {
        s.push_str(&format!("// ---- {name}\n"));
        s.push_str(src);
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

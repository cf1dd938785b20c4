//! Shader checks that need no adapter: every kernel file validates with naga in f32 and
//! f64, every kernel fits the portable limits (storage buffers counted through naga),
//! every binding number matches the Rust table, and every WGSL record has the size and
//! field offsets of its Rust twin.

use std::mem::{offset_of, size_of};

use varidem::gpu::layout::{BondCompact, BondRecord, HistRecord, PairRecord, Params, WallRecord};
use varidem::gpu::limits::PORTABLE;
use varidem::gpu::shaders::{
    compose, storage_buffers, used_bindings, validate, workgroup_bytes, ShaderConfig, KERNEL_FILES,
    WORKGROUP_SIZE,
};
use varidem::gpu::{bindings, Precision};

/// Every kernel module as the backend builds it: both precisions, both bond record
/// forms.
fn every_config() -> Vec<ShaderConfig> {
    [Precision::F32, Precision::F64]
        .into_iter()
        .flat_map(|p| [false, true].map(|compact| ShaderConfig::example(p, compact)))
        .collect()
}

/// Item 1 of the portability issue, checked without a GPU: no entry point of any kernel
/// file, in any configuration, binds more than 16 storage buffers (the implicit layout
/// wgpu derives counts exactly these), no module declares more than 16 KiB of workgroup
/// memory, and the workgroup size is within 256 invocations. A kernel that grows past
/// the limit fails here, not on a user's Mac.
#[test]
fn every_kernel_fits_the_portable_limits() {
    const { assert!(WORKGROUP_SIZE <= PORTABLE.invocations_per_workgroup) };
    let mut widest = (0, "");
    for config in every_config() {
        for file in KERNEL_FILES {
            let src = compose(file.source, &config);
            let (module, info) = validate(&src, config.precision).unwrap();
            let wg = workgroup_bytes(&module);
            assert!(
                wg <= PORTABLE.workgroup_bytes,
                "{} ({}): {wg} B of workgroup memory",
                file.name,
                config.precision
            );
            for ep in file.entry_points {
                let n = storage_buffers(&module, &info, ep).unwrap();
                assert!(
                    n <= PORTABLE.storage_buffers_per_stage,
                    "{ep} ({}, compact {}): {n} storage buffers",
                    config.precision,
                    config.compact_bonds
                );
                if n > widest.0 || (n == widest.0 && *ep == "particle_forces_predict") {
                    widest = (n, ep);
                }
            }
        }
    }
    // The fused kernel is (one of) the widest; a small count would mean the counter is
    // broken.
    assert_eq!(widest.1, "particle_forces_predict");
    assert!(widest.0 >= 8, "{widest:?}");
    println!(
        "widest kernel: {} with {} storage buffers",
        widest.1, widest.0
    );
}

/// The compute pipelines are created without wgpu's zero-fill of workgroup memory
/// (src/gpu/mod.rs: naga's fill for OpenGL took llvmpipe minutes to compile), which is
/// sound because only reduce.wgsl and hard.wgsl (its scan and reductions) declare
/// workgroup memory and every invocation there writes its row before the first
/// barrier. A kernel file that starts using workgroup memory fails here, so that its
/// reads are checked against the missing fill.
#[test]
fn only_the_reductions_use_workgroup_memory() {
    for config in every_config() {
        for file in KERNEL_FILES {
            let src = compose(file.source, &config);
            let (module, _) = validate(&src, config.precision).unwrap();
            let wg = workgroup_bytes(&module);
            assert_eq!(
                wg > 0,
                file.name == "reduce.wgsl" || file.name == "hard.wgsl",
                "{}: {wg} B of workgroup memory",
                file.name
            );
        }
    }
}

/// Every `@binding` of every global in the composed modules has the number the Rust
/// table gives its name (the host binds buffers by these numbers), and every table
/// entry is declared by the WGSL.
#[test]
fn binding_numbers_match_the_rust_table() {
    let mut seen = std::collections::BTreeSet::new();
    for config in every_config() {
        for file in KERNEL_FILES {
            let src = compose(file.source, &config);
            let (module, _) = validate(&src, config.precision).unwrap();
            for (_, g) in module.global_variables.iter() {
                let Some(b) = &g.binding else { continue };
                let name = g.name.as_deref().unwrap_or("");
                let entry = bindings::TABLE.iter().find(|(n, _)| *n == name);
                assert_eq!(
                    entry.map(|e| e.1),
                    Some(b.binding),
                    "{}: binding of `{name}`",
                    file.name
                );
                assert_eq!(b.group, 0, "{name}: group");
                seen.insert(name.to_string());
            }
        }
    }
    for (name, number) in bindings::TABLE {
        assert!(
            seen.contains(name),
            "{name} (binding {number}) is declared by no shader"
        );
    }
    let mut numbers: Vec<u32> = bindings::TABLE.iter().map(|e| e.1).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(
        numbers.len(),
        bindings::COUNT,
        "binding numbers are not distinct"
    );
}

#[test]
fn every_kernel_validates_in_both_precisions() {
    for config in every_config() {
        let precision = config.precision;
        for file in KERNEL_FILES {
            let src = compose(file.source, &config);
            let (module, info) = validate(&src, precision)
                .unwrap_or_else(|e| panic!("{} ({precision}):\n{e}", file.name));
            for ep in file.entry_points {
                let used = used_bindings(&module, &info, ep)
                    .unwrap_or_else(|| panic!("{}: no entry point {ep}", file.name));
                assert!(!used.is_empty(), "{ep} uses no binding");
            }
            assert_eq!(
                module.entry_points.len(),
                file.entry_points.len(),
                "{}: entry point list out of date",
                file.name
            );
        }
    }
}

/// (name, offset) of every member of the WGSL struct `name`, and its size.
fn wgsl_struct(name: &str, precision: Precision) -> (Vec<(String, u32)>, u32) {
    let src = compose(
        KERNEL_FILES[0].source,
        &ShaderConfig::example(precision, false),
    );
    let (module, _) = validate(&src, precision).unwrap();
    for (_, ty) in module.types.iter() {
        if ty.name.as_deref() == Some(name) {
            if let naga::TypeInner::Struct { members, span } = &ty.inner {
                return (
                    members
                        .iter()
                        .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
                        .collect(),
                    *span,
                );
            }
        }
    }
    panic!("no struct {name}");
}

macro_rules! check_layout {
    ($wgsl:expr, $ty:ty, $prec:expr, $rs:expr, [$(($field:literal, $rust:ident $(, $k:literal)?)),* $(,)?]) => {{
        let (members, span) = wgsl_struct($wgsl, $prec);
        assert_eq!(span as usize, size_of::<$ty>(), "{} ({}) size", $wgsl, $prec);
        let expect: Vec<(&str, usize)> = vec![$(($field, offset_of!($ty, $rust) $(+ $k * $rs)?)),*];
        assert_eq!(members.len(), expect.len(), "{} ({}) member count", $wgsl, $prec);
        for ((name, off), (ename, eoff)) in members.iter().zip(&expect) {
            assert_eq!(name, ename, "{} ({}) member order", $wgsl, $prec);
            assert_eq!(*off as usize, *eoff, "{} ({}) offset of {name}", $wgsl, $prec);
        }
    }};
}

fn check_all<R: varidem::gpu::layout::Real>(p: Precision) {
    check_layout!(
        "HardParams",
        varidem::gpu::layout::HardParams<R>,
        p,
        size_of::<R>(),
        [
            ("capacity", capacity),
            ("max_sweeps", max_sweeps),
            ("flags", flags),
            ("scan_groups", scan_groups),
            ("h", h),
            ("eps", eps),
            ("tol", tol),
            ("relaxation", relaxation),
            ("margin", margin),
            ("pad0", pad0),
            ("pad1", pad1),
            ("pad2", pad2),
        ]
    );
    check_layout!(
        "Params",
        Params<R>,
        p,
        size_of::<R>(),
        [
            ("n_particles", n_particles),
            ("n_bonds", n_bonds),
            ("n_walls", n_walls),
            ("n_buckets", n_buckets),
            ("bucket_capacity", bucket_capacity),
            ("max_neighbors", max_neighbors),
            ("flags", flags),
            ("integrator", integrator),
            ("n_partials", n_partials),
            ("n_materials", n_materials),
            ("max_contacts", max_contacts),
            ("n_ids", n_ids),
            ("dt", dt),
            ("k_pp", k_pp),
            ("skin", skin),
            ("inv_cell", inv_cell),
            ("gravity_x", gravity_x),
            ("gravity_y", gravity_y),
            ("gravity_z", gravity_z),
            ("one", one),
            ("drag_c", drag_c),
            ("fluid_x", fluid_x),
            ("fluid_y", fluid_y),
            ("fluid_z", fluid_z),
            ("magnus", magnus),
            ("domain_min_x", domain_min_x),
            ("domain_min_y", domain_min_y),
            ("domain_min_z", domain_min_z),
            ("domain_max_x", domain_max_x),
            ("domain_max_y", domain_max_y),
            ("domain_max_z", domain_max_z),
            ("nf_kappa_a", nf_kappa_a),
            ("nf_lambda_a", nf_lambda_a),
            ("nf_kappa_r", nf_kappa_r),
            ("nf_lambda_r", nf_lambda_r),
            ("nf_cutoff", nf_cutoff),
            ("max_overlap", max_overlap),
            ("jkr_reach", jkr_reach),
            ("pad_r1", pad_r1),
            ("pad_r2", pad_r2),
        ]
    );
    check_layout!(
        "PairRecord",
        PairRecord<R>,
        p,
        size_of::<R>(),
        [
            ("e_star", e_star),
            ("g_star", g_star),
            ("xi", xi),
            ("mu_s", mu_s),
            ("mu_d", mu_d),
            ("mu_r", mu_r),
            ("eta_r", eta_r),
            ("gamma", gamma),
        ]
    );
    check_layout!(
        "BondRecord",
        BondRecord<R>,
        p,
        size_of::<R>(),
        [
            ("i", i),
            ("j", j),
            ("k_bend", k_bend),
            ("k_axial", k_axial),
            ("k_shear", k_shear),
            ("rest_length", rest_length),
            ("rest_dir_i_x", rest_dir_i, 0),
            ("rest_dir_i_y", rest_dir_i, 1),
            ("rest_dir_i_z", rest_dir_i, 2),
            ("rest_dir_j_x", rest_dir_j, 0),
            ("rest_dir_j_y", rest_dir_j, 1),
            ("rest_dir_j_z", rest_dir_j, 2),
            ("rest_rotation_x", rest_rotation, 0),
            ("rest_rotation_y", rest_rotation, 1),
            ("rest_rotation_z", rest_rotation, 2),
        ]
    );
    check_layout!(
        "BondCompact",
        BondCompact<R>,
        p,
        size_of::<R>(),
        [
            ("rest_length", rest_length),
            ("rest_dir_x", rest_dir, 0),
            ("rest_dir_y", rest_dir, 1),
            ("rest_dir_z", rest_dir, 2),
            ("i", i),
            ("j", j),
            ("kind", kind),
        ]
    );
    check_layout!(
        "HistRecord",
        HistRecord<R>,
        p,
        size_of::<R>(),
        [("spring", spring), ("id", id)]
    );
    check_layout!(
        "WallRecord",
        WallRecord<R>,
        p,
        size_of::<R>(),
        [
            ("point_x", point, 0),
            ("point_y", point, 1),
            ("point_z", point, 2),
            ("normal_x", normal, 0),
            ("normal_y", normal, 1),
            ("normal_z", normal, 2),
            ("stiffness", stiffness),
            ("pad0", pad0),
        ]
    );
}

#[test]
fn records_match_wgsl_layout() {
    check_layout!(
        "Chunk",
        varidem::gpu::layout::Chunk,
        Precision::F32,
        4,
        [
            ("n_bonds", n_bonds),
            ("first", first),
            ("partial_base", partial_base),
            ("bond_base", bond_base),
        ]
    );
    check_layout!(
        "RowChunk",
        varidem::gpu::layout::RowChunk,
        Precision::F32,
        4,
        [
            ("first", first),
            ("count", count),
            ("hist_new", hist_new),
            ("hist_old", hist_old),
            ("wall_new", wall_new),
            ("wall_old", wall_old),
            ("granular_out", granular_out),
            ("mv_new", mv_new),
            ("mv_old", mv_old),
            ("mdx_new", mdx_new),
            ("mdx_old", mdx_old),
            ("mda_new", mda_new),
            ("mda_old", mda_old),
            ("wall_load", wall_load),
            ("mesh_new", mesh_new),
            ("mesh_old", mesh_old),
            ("roll_new", roll_new),
            ("roll_old", roll_old),
            ("mroll_new", mroll_new),
            ("mroll_old", mroll_old),
            ("wroll_new", wroll_new),
            ("wroll_old", wroll_old),
            ("pad0", pad0),
            ("pad1", pad1),
        ]
    );
    check_all::<f32>(Precision::F32);
    check_all::<f64>(Precision::F64);
    // The f64 bond record is the model's own record, uploaded as is.
    assert_eq!(
        size_of::<BondRecord<f64>>(),
        size_of::<varidem::model::Bond>()
    );
    assert_eq!(
        offset_of!(BondRecord<f64>, rest_rotation),
        offset_of!(varidem::model::Bond, rest_rotation)
    );
}

/// The storage permutation (`shaders/storage.wgsl`, standalone: no engine header)
/// validates, binds 3 storage buffers and a uniform at group 0, and declares no
/// workgroup memory.
#[test]
fn the_storage_permutation_validates() {
    use varidem::gpu::sort::{storage_source, STORAGE_FILE};
    let src = storage_source();
    let (module, info) = validate(&src, Precision::F32).unwrap();
    assert_eq!(workgroup_bytes(&module), 0);
    for ep in STORAGE_FILE.entry_points {
        assert_eq!(storage_buffers(&module, &info, ep), Some(3), "{ep}");
        assert_eq!(used_bindings(&module, &info, ep), Some(vec![0, 1, 2, 3]));
    }
}

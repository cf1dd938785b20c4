//! `varidem plot` and `varidem render` end to end on short runs made here: the PNGs
//! exist, decode, have the documented size and show what they should (the curve
//! colours; the background around the particles and each particle's colormap colour at
//! its projected centre), bad inputs fail naming the file and column, and a picture is
//! the same bytes every time.
//!
//! The render tests need a GPU adapter (lavapipe will do): without one they report and
//! skip, unless `VARIDEM_REQUIRE_GPU=1` (see `gpu_common`).

mod gpu_common;

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Output};

use varidem::cpu::CpuBackend;
use varidem::io::parse_scene;
use varidem::io::plot::{ENERGY_PNG, ENERGY_SIZE, MOMENTUM_PNG, MOMENTUM_SIZE, PALETTE};
use varidem::io::vtk_reader::load_frame;
use varidem::render::{
    colormap, field_values, lit_center_color, render_frame_on, ColorField, RenderOptions, View,
    BACKGROUND,
};
use varidem::run::{run_with, OutputOptions};

/// Two bonded particles against a wall (every energy column moves) and three loose
/// ones, all in the plane z = 0, far enough apart not to hide each other in any view
/// along z, with distinct speeds. 6 steps, a frame every 2.
const SCENE: &str = r#"
[simulation]
dt = 1e-3
steps = 6
output_every = 2
gravity = [-9.81, 0.0, 0.0]
[binder]
k_bend = 10.0
k_axial = 200.0
k_shear = 200.0
[contact]
law = "binder"
k_pp = 2100.0
[[particle]]
position = [0.095, 0.0, 0.0]
velocity = [-0.5, 0.1, 0.0]
angular_velocity = [0.0, 0.0, 3.0]
mass = 1.0
radius = 0.1
[[particle]]
position = [0.295, 0.01, 0.0]
velocity = [-0.5, 0.0, 0.0]
mass = 1.0
radius = 0.1
[[particle]]
position = [0.9, 0.6, 0.0]
velocity = [0.0, 2.0, 0.0]
mass = 1.0
radius = 0.15
[[particle]]
position = [0.5, -0.6, 0.0]
velocity = [1.0, 0.0, 0.0]
mass = 1.0
radius = 0.12
[[particle]]
position = [1.3, -0.2, 0.0]
mass = 1.0
radius = 0.08
[[bond]]
i = 0
j = 1
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [1.0, 0.0, 0.0]
"#;

fn varidem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_varidem"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("the varidem binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs [`SCENE`] on the CPU into `dir`, with or without the `.vtp` frames.
fn make_run(dir: &Path, vtk: bool) {
    let scene = parse_scene(SCENE).unwrap();
    let mut backend = CpuBackend::new(&scene).unwrap();
    let options = OutputOptions {
        vtk,
        ..OutputOptions::default()
    };
    run_with(&scene, &mut backend, dir, &options).unwrap();
}

/// Width, height and RGBA8 pixels of a PNG.
fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    // Plots are RGB, pictures RGBA: make both RGBA.
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect(),
        other => panic!("{}: unexpected colour type {other:?}", path.display()),
    };
    (info.width, info.height, rgba)
}

fn colours(rgba: &[u8]) -> HashSet<[u8; 3]> {
    rgba.chunks_exact(4).map(|c| [c[0], c[1], c[2]]).collect()
}

#[test]
fn plot_writes_the_energy_and_momentum_pngs() {
    let dir = tempfile::tempdir().unwrap();
    make_run(dir.path(), false);
    let o = varidem(&["plot", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "varidem plot failed: {}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("energy.png") && stdout.contains("momentum.png"),
        "{stdout}"
    );

    let plots = dir.path().join("plots");
    for (name, size, curves) in [
        (ENERGY_PNG, ENERGY_SIZE, 8usize),
        (MOMENTUM_PNG, MOMENTUM_SIZE, 3),
    ] {
        let (w, h, rgba) = decode_png(&plots.join(name));
        assert_eq!((w, h), size, "{name}");
        let seen = colours(&rgba);
        assert!(seen.len() > 20, "{name}: only {} colours", seen.len());
        // Each curve's colour (at least in its legend swatch), and black for the text.
        for &(r, g, b) in &PALETTE[..curves] {
            assert!(
                seen.contains(&[r, g, b]),
                "{name}: no pixel of ({r}, {g}, {b})"
            );
        }
        assert!(seen.contains(&[0, 0, 0]), "{name}: no black");
        // Mostly white background.
        let white = rgba.chunks_exact(4).filter(|c| c[..3] == [255; 3]).count();
        assert!(white > rgba.len() / 8, "{name}: {white} white pixels");
    }

    // --out-dir elsewhere.
    let other = dir.path().join("elsewhere");
    let o = varidem(&[
        "plot",
        dir.path().to_str().unwrap(),
        "--out-dir",
        other.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(other.join(ENERGY_PNG).is_file() && other.join(MOMENTUM_PNG).is_file());
}

#[test]
fn plot_names_the_file_and_column_when_energy_csv_is_bad() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let fail = |what: &str| {
        let o = varidem(&["plot", d]);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains("energy.csv"), "{what}: {err}");
        err
    };
    let err = fail("missing");
    assert!(err.contains("no such file"), "{err}");

    let csv = dir.path().join("energy.csv");
    std::fs::write(
        &csv,
        "step,t,e_kin,e_rot,px,py,pz,lx,ly,lz\n0,0,1,0,0,0,0,0,0,0\n",
    )
    .unwrap();
    let err = fail("no e_total");
    assert!(err.contains("no column \"e_total\""), "{err}");

    let header = "step,t,e_kin,e_rot,e_pot,e_total,px,py,pz,lx,ly,lz,e_bend";
    std::fs::write(
        &csv,
        format!("{header}\n0,0,1,0,0,1,0,0,0,0,0,0,0\n1,0.1,x,0,0,1,0,0,0,0,0,0,0\n"),
    )
    .unwrap();
    let err = fail("not a number");
    assert!(
        err.contains("line 3: e_kin = \"x\" is not a number"),
        "{err}"
    );

    std::fs::write(&csv, format!("{header}\n")).unwrap();
    let err = fail("no rows");
    assert!(err.contains("no data rows"), "{err}");

    // A new potential column is plotted without complaint.
    std::fs::write(
        &csv,
        format!(
            "{header},e_new\n0,0,1,0,0,1,0,0,0,0,0,0,0,0.5\n1,0.1,0.5,0,0,1,0,0,0,0,0,0,0,0.5\n"
        ),
    )
    .unwrap();
    let o = varidem(&["plot", d]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The `.vtp` frame of the last step and `final.csv` (with run.toml's radii) describe
/// the same particles.
#[test]
fn the_last_frame_reads_the_same_from_vtp_and_final_csv() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with-vtk");
    let without = dir.path().join("without-vtk");
    make_run(&with, true);
    make_run(&without, false);
    let a = load_frame(&with, None).unwrap();
    let b = load_frame(&without, None).unwrap();
    assert_eq!((a.step, b.step), (6, 6));
    assert!(
        a.source.ends_with("vtk/particles_00000006.vtp"),
        "{}",
        a.source.display()
    );
    assert!(b.source.ends_with("final.csv"), "{}", b.source.display());
    assert_eq!(a.position, b.position);
    assert_eq!(a.velocity, b.velocity);
    assert_eq!(a.angular_velocity, b.angular_velocity);
    assert_eq!(a.radius, b.radius);
    assert_eq!(a.radius, [0.1, 0.1, 0.15, 0.12, 0.08]);
    assert_eq!(a.id, b.id);
    assert_eq!(a.time, b.time);
    assert!(a.force.is_some() && b.force.is_none());
    // Fields only a .vtp has are refused for a final.csv frame, naming it.
    let err = field_values(&b, ColorField::Force).unwrap_err().to_string();
    assert!(err.contains("force") && err.contains("final.csv"), "{err}");
    // An intermediate step exists only as a .vtp.
    assert_eq!(load_frame(&with, Some(2)).unwrap().step, 2);
    let err = load_frame(&without, Some(2)).unwrap_err().to_string();
    assert!(err.contains("no frame of step 2"), "{err}");
    assert!(err.contains("final.csv holds step 6"), "{err}");
    let err = load_frame(&with, Some(3)).unwrap_err().to_string();
    assert!(
        err.contains("4 frame(s)") && err.contains("steps 0 to 6"),
        "{err}"
    );
}

/// A particle and two clumps (one turned and spinning) falling onto a floor: 40 steps,
/// a frame every 20.
const CLUMP_SCENE: &str = r#"
[simulation]
dt = 4e-6
steps = 40
output_every = 20
gravity = [0.0, 0.0, -9.81]
[contact]
law = "hertz"
[[material]]
name = "glass"
young = 1e7
poisson = 0.3
density = 2500.0
restitution = 0.3
friction_static = 0.4
[[clump_type]]
name = "dimer"
spheres = [ { position = [-0.5e-3, 0.0, 0.0], radius = 1.0e-3 },
            { position = [ 0.6e-3, 0.0, 0.0], radius = 0.8e-3 } ]
material = "glass"
[[clump_type]]
name = "trimer"
spheres = [ { position = [0.0, 0.0, 0.0], radius = 0.9e-3 },
            { position = [1.1e-3, 0.0, 0.0], radius = 0.7e-3 },
            { position = [0.0, 1.0e-3, 0.3e-3], radius = 0.6e-3 } ]
material = "glass"
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"
[[particle]]
position = [0.004, 0.0, 0.0011]
velocity = [0.0, 0.0, -1.0]
radius = 1.0e-3
material = "glass"
[[clump]]
type = "dimer"
position = [0.0, 0.0, 0.0012]
velocity = [0.0, 0.0, -1.0]
angular_velocity = [0.0, 0.0, 5.0]
[[clump]]
type = "trimer"
position = [0.0, 0.005, 0.0014]
rotation = [0.1, -0.2, 0.3]
velocity = [0.0, 0.0, -1.0]
angular_velocity = [3.0, -1.0, 2.0]
"#;

/// Issue 49, item 6: the last frame of a clump run reads the same from its `.vtp` and
/// from `final.csv` (one row per body, each clump expanded into its spheres posed by
/// the body): the same spheres, ids, bodies, radii and motion, to the bit.
#[test]
fn a_clump_runs_last_frame_reads_the_same_from_vtp_and_final_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (with, without) = (dir.path().join("with"), dir.path().join("without"));
    let scene = parse_scene(CLUMP_SCENE).unwrap();
    for (out, vtk) in [(&with, true), (&without, false)] {
        let mut backend = CpuBackend::new(&scene).unwrap();
        let options = OutputOptions {
            vtk,
            ..OutputOptions::default()
        };
        run_with(&scene, &mut backend, out, &options).unwrap();
    }
    let a = load_frame(&with, None).unwrap();
    let b = load_frame(&without, None).unwrap();
    assert_eq!((a.step, b.step), (40, 40));
    assert!(b.source.ends_with("final.csv"), "{}", b.source.display());
    assert_eq!(b.len(), 1 + 2 + 3);
    assert_eq!(a.id, b.id);
    assert_eq!(b.id, [0, 1, 2, 3, 4, 5]);
    assert_eq!(a.body_id, b.body_id);
    assert_eq!(b.body_id, [0, 1, 1, 2, 2, 2]);
    assert_eq!(a.radius, b.radius);
    assert_eq!(b.radius, [1.0e-3, 1.0e-3, 0.8e-3, 0.9e-3, 0.7e-3, 0.6e-3]);
    assert_eq!(a.position, b.position);
    assert_eq!(a.velocity, b.velocity);
    assert_eq!(a.angular_velocity, b.angular_velocity);
    assert_eq!(a.time, b.time);
    // A row that is not in the scene is named.
    let csv = without.join("final.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let last = text.lines().last().unwrap().replacen("2,", "3,", 1);
    std::fs::write(&csv, format!("{text}{last}\n")).unwrap();
    let err = load_frame(&without, None).unwrap_err().to_string();
    assert!(
        err.contains("row 3 is not in the scene") && err.contains("1 particles and 2 clumps"),
        "{err}"
    );
}

#[test]
fn render_draws_each_particle_in_its_colormap_colour() {
    let Some(ctx) = gpu_common::context("render_draws_each_particle_in_its_colormap_colour") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    make_run(dir.path(), true);
    let frame = load_frame(dir.path(), Some(4)).unwrap();
    for (color, view) in [
        (ColorField::Speed, View::Auto),
        (ColorField::Radius, View::Z),
        (ColorField::Id, View::Z),
    ] {
        let options = RenderOptions {
            width: 320,
            height: 200,
            color,
            view,
            adapter: None,
        };
        let r = render_frame_on(&ctx, &frame, &options).unwrap();
        let img = &r.image;
        assert_eq!((img.width, img.height), (320, 200));
        assert_eq!(r.camera.view, View::Z, "the particles lie in z = 0");
        // The border is background.
        let border: Vec<[u8; 3]> = (0..img.width)
            .flat_map(|x| [img.pixel(x, 0), img.pixel(x, img.height - 1)])
            .chain((0..img.height).flat_map(|y| [img.pixel(0, y), img.pixel(img.width - 1, y)]))
            .collect();
        let bg = border.iter().filter(|&&p| p == BACKGROUND).count();
        assert!(
            bg * 100 >= border.len() * 99,
            "{color:?}: {bg} of {} border pixels are background",
            border.len()
        );
        // Each particle's centre has its colormap colour, lit head-on.
        let values = field_values(&frame, color).unwrap();
        let (lo, hi) = r.range;
        assert!(hi > lo, "{color:?}: {lo} .. {hi}");
        let mut distinct = HashSet::new();
        for (i, p) in frame.position.iter().enumerate() {
            let (x, y) = r.camera.pixel(*p);
            let got = img.pixel(x as u32, y as u32);
            let want = lit_center_color(colormap((values[i] - lo) / (hi - lo)));
            let close = got.iter().zip(want).all(|(&g, w)| g.abs_diff(w) <= 4);
            assert!(
                close,
                "{color:?}: particle {i} at ({x:.1}, {y:.1}) is {got:?}, expected {want:?}"
            );
            distinct.insert(got);
        }
        assert!(distinct.len() >= 3, "{color:?}: {distinct:?}");
        // Shading: the picture holds many more colours than particles.
        assert!(colours(&img.rgba).len() > 50, "{color:?}");
    }
}

/// Mesh walls are drawn over the particles, translucent: a triangle covering half the
/// picture in front of the particles tints what it covers and leaves the rest alone,
/// and the framing grows to hold it.
#[test]
fn render_draws_mesh_walls_translucent_over_the_particles() {
    let Some(ctx) = gpu_common::context("render_draws_mesh_walls_translucent_over_the_particles")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    make_run(dir.path(), true);
    let frame = load_frame(dir.path(), Some(4)).unwrap();
    let options = RenderOptions {
        width: 320,
        height: 200,
        color: ColorField::Speed,
        view: View::Z,
        adapter: None,
    };
    let plain = render_frame_on(&ctx, &frame, &options).unwrap();
    // A big triangle in a plane parallel to the particles' (z = 0), its corners
    // beyond them: it covers the lower-left half of the framed region.
    let (lo, hi) = frame.position.iter().fold(
        (glam::DVec3::INFINITY, glam::DVec3::NEG_INFINITY),
        |(a, b), p| (a.min(*p), b.max(*p)),
    );
    let span = (hi - lo).max_element();
    let z = hi.z + span;
    let tri = [
        glam::DVec3::new(lo.x - span, lo.y - span, z),
        glam::DVec3::new(hi.x + span, lo.y - span, z),
        glam::DVec3::new(lo.x - span, hi.y + span, z),
    ];
    let with = varidem::render::render_scene_on(&ctx, &frame, &[tri], &options).unwrap();
    let (a, b) = (&plain.image, &with.image);
    let changed = (0..a.width * a.height)
        .filter(|&k| a.pixel(k % a.width, k / a.width) != b.pixel(k % b.width, k / b.width))
        .count();
    let total = (a.width * a.height) as usize;
    // The framing changed (it holds the triangle), and the triangle covers part of the
    // picture: some pixels differ, and the background far from it stays background.
    assert!(changed > total / 10, "{changed} of {total} pixels changed");
    assert_eq!(
        b.pixel(b.width - 1, 0),
        BACKGROUND,
        "the corner away from the triangle"
    );
}

#[test]
fn render_cli_writes_the_same_png_every_time() {
    if gpu_common::context("render_cli_writes_the_same_png_every_time").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    make_run(dir.path(), true);
    let d = dir.path().to_str().unwrap();
    let mut pictures = Vec::new();
    for name in ["a.png", "b.png"] {
        let out = dir.path().join(name);
        let o = varidem(&[
            "render",
            d,
            "--step",
            "4",
            "--out",
            out.to_str().unwrap(),
            "--color",
            "angular_speed",
            "--view",
            "iso",
            "--width",
            "200",
            "--height",
            "150",
        ]);
        assert!(o.status.success(), "varidem render failed: {}", stderr(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("step 4") && stdout.contains("5 particles"),
            "{stdout}"
        );
        let (w, h, rgba) = decode_png(&out);
        assert_eq!((w, h), (200, 150));
        let particle_pixels = rgba
            .chunks_exact(4)
            .filter(|c| c[..3] != BACKGROUND)
            .count();
        assert!(
            particle_pixels > 200,
            "{particle_pixels} non-background pixels"
        );
        pictures.push(std::fs::read(&out).unwrap());
    }
    assert!(
        pictures[0] == pictures[1],
        "two renders of the same frame differ"
    );

    // Default: the last frame, into DIR/plots/.
    let o = varidem(&["render", d, "--width", "64", "--height", "48"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (w, h, _) = decode_png(&dir.path().join("plots/frame_00000006.png"));
    assert_eq!((w, h), (64, 48));

    // A step without a frame: one line naming it.
    let o = varidem(&["render", d, "--step", "5"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no frame of step 5"), "{}", stderr(&o));
}

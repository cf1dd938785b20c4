//! A GPU device lost in the middle of a run (driver reset, GPU removed): the run stops
//! with a named GPU error instead of a panic, and what it wrote before stays valid.

mod gpu_common;

use varidem::backend::{Backend, Frame, StateSnapshot};
use varidem::diagnostics::Diagnostics;
use varidem::error::{Error, Result};
use varidem::gpu::{GpuBackend, GpuOptions};
use varidem::io::{parse_scene, read_energy_csv};
use varidem::model::Particles;

/// The GPU backend, whose device is destroyed when a step past `lose_at` is asked for.
struct LosesDevice {
    inner: GpuBackend,
    lose_at: u64,
}

impl Backend for LosesDevice {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn step_count(&self) -> u64 {
        self.inner.step_count()
    }
    fn time(&self) -> f64 {
        self.inner.time()
    }
    fn advance(&mut self, n: u64) -> Result<()> {
        if self.inner.step_count() + n > self.lose_at {
            self.inner.lose_device();
        }
        self.inner.advance(n)
    }
    fn diagnostics(&mut self) -> Result<Diagnostics> {
        self.inner.diagnostics()
    }
    fn particles(&mut self) -> Result<Particles> {
        self.inner.particles()
    }
    fn frame(&mut self) -> Result<Frame> {
        self.inner.frame()
    }
    fn checkpoint_state(&mut self) -> Result<StateSnapshot> {
        self.inner.checkpoint_state()
    }
}

/// The container pour (scenes/container.toml) shortened to 100 steps, a row every 10.
fn scene_text() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/container.toml");
    let mut doc: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let sim = doc["simulation"].as_table_mut().unwrap();
    sim.remove("t_end");
    sim.insert("steps".into(), 100.into());
    sim.insert("output_every".into(), 10.into());
    toml::to_string(&doc).unwrap()
}

#[test]
fn a_lost_device_stops_the_run_with_a_named_error_and_keeps_its_outputs() {
    let Some(ctx) = gpu_common::context("a_lost_device_stops_the_run") else {
        return;
    };
    let scene = parse_scene(&scene_text()).unwrap();
    let inner = GpuBackend::with_context(
        ctx,
        scene.model.clone(),
        scene.simulation.integrator,
        scene.simulation.dt,
        &GpuOptions::default(),
    )
    .unwrap();
    let mut backend = LosesDevice { inner, lose_at: 45 };
    let dir = tempfile::tempdir().unwrap();
    let err = varidem::run::run(&scene, &mut backend, dir.path()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("gpu: "), "{text}");
    assert!(
        matches!(&err, Error::Gpu { .. })
            || matches!(&err, Error::RunFailed { error, .. } if matches!(**error, Error::Gpu { .. })),
        "{err:?}"
    );
    // The rows written before the loss are complete and parse.
    let table = read_energy_csv(&dir.path().join(varidem::run::ENERGY_CSV)).unwrap();
    assert_eq!(table.column("step").unwrap(), [0.0, 10.0, 20.0, 30.0, 40.0]);
    // Where a last good state was kept, it is a readable checkpoint of step 40.
    if let Error::RunFailed {
        step, checkpoint, ..
    } = &err
    {
        assert_eq!(*step, 40);
        let c = varidem::checkpoint::Checkpoint::read(checkpoint).unwrap();
        assert_eq!(c.state.step, 40);
    }
}

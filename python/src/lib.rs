//! The Python binding of varidem (`import varidem`): scenes, stepping and state as NumPy
//! arrays. Built by maturin (`pip install ./python`); the Python package `varidem`
//! (`python/varidem/__init__.py`) re-exports this extension module, `varidem._varidem`.
//!
//! Everything the binding does goes through the library's own code paths: scenes are
//! loaded by [`varidem::io`], backends chosen by [`varidem::select`], outputs written by
//! [`varidem::run::Recorder`] and checkpoints by [`varidem::checkpoint`], so a scene
//! stepped from Python gives the bits `varidem run` gives. See `docs/python.md`.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use glam::DVec3;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use varidem::backend::{Backend, BackendKind};
use varidem::checkpoint::Checkpoint;
use varidem::diagnostics::Diagnostics;
use varidem::gpu::context::list_adapters;
use varidem::gpu::{PathSwitches, Precision};
use varidem::integrators::bodies::Bodies;
use varidem::integrators::rigid::{angular_velocity, spin_of};
use varidem::io::{load_scene, parse_scene};
use varidem::math::rodrigues::rotate;
use varidem::model::{Model, Scene};
use varidem::physics::rigid_body::member_velocity;
use varidem::run::{gpu_options, make_backend, OutputOptions, Recorder};
use varidem::Error;

create_exception!(
    _varidem,
    VaridemError,
    PyException,
    "An error of the varidem engine, with the message the command line prints."
);
create_exception!(
    _varidem,
    SceneError,
    VaridemError,
    "An invalid scene (file, value or bond)."
);
create_exception!(
    _varidem,
    GpuError,
    VaridemError,
    "The GPU failed or is not usable: no adapter, a device too small, a GPU error."
);
create_exception!(
    _varidem,
    FaultError,
    VaridemError,
    "A step failed on a numerical fault: a named physical fault, a blow-up, an implicit step that did not converge."
);
create_exception!(
    _varidem,
    CheckpointError,
    VaridemError,
    "A checkpoint cannot be written, read or trusted, or a state does not fit its model."
);

/// Steps advanced with the interpreter lock released, between two checks for signals
/// (Ctrl-C) in [`Simulation::step`]: small enough that an interrupt is seen within
/// a fraction of a second, large enough that the check costs nothing.
const SIGNAL_CHUNK: u64 = 64;

/// The Python exception for `e`: its class by kind, its message `format!("{e}")`, as
/// the command line prints it after `error: `.
fn to_py(e: Error) -> PyErr {
    // One line, as the command line prints it (src/bin/varidem.rs).
    let message = e.to_string().trim().replace('\n', " ");
    match kind_of(&e) {
        Kind::Scene => SceneError::new_err(message),
        Kind::Gpu => GpuError::new_err(message),
        Kind::Fault => FaultError::new_err(message),
        Kind::Checkpoint => CheckpointError::new_err(message),
        Kind::Other => VaridemError::new_err(message),
    }
}

/// The exception class of an error.
enum Kind {
    Scene,
    Gpu,
    Fault,
    Checkpoint,
    Other,
}

fn kind_of(e: &Error) -> Kind {
    match e {
        Error::Scene(_) | Error::Bond(_) => Kind::Scene,
        Error::Backend(_)
        | Error::NoAdapter(_)
        | Error::DeviceTooSmall(_)
        | Error::DeviceLimit { .. }
        | Error::Gpu { .. } => Kind::Gpu,
        Error::Fault { .. } | Error::NotConverged { .. } | Error::BlowUp { .. } => Kind::Fault,
        Error::Checkpoint { .. } | Error::Snapshot(_) => Kind::Checkpoint,
        Error::RunFailed { error, .. } => kind_of(error),
        _ => Kind::Other,
    }
}

/// Parses `backend="auto"|"cpu"|"gpu"`.
fn backend_kind(name: &str) -> PyResult<BackendKind> {
    match name {
        "auto" => Ok(BackendKind::Auto),
        "cpu" => Ok(BackendKind::Cpu),
        "gpu" => Ok(BackendKind::Gpu),
        other => Err(PyValueError::new_err(format!(
            "backend must be \"auto\", \"cpu\" or \"gpu\", not {other:?}"
        ))),
    }
}

/// Parses `precision=None|"f32"|"f64"`.
fn precision(name: Option<&str>) -> PyResult<Option<Precision>> {
    match name {
        None => Ok(None),
        Some("f32") => Ok(Some(Precision::F32)),
        Some("f64") => Ok(Some(Precision::F64)),
        Some(other) => Err(PyValueError::new_err(format!(
            "precision must be None, \"f32\" or \"f64\", not {other:?}"
        ))),
    }
}

/// The GPU kernel-path switches from the environment, as the command line reads them.
fn path_switches() -> PathSwitches {
    PathSwitches::from_lookup(|k| std::env::var(k).ok())
}

/// A simulation's state: the scene, the backend advancing it, and the outputs being
/// written (after `write_outputs`).
struct State {
    scene: Scene,
    backend: Box<dyn Backend>,
    recorder: Option<Recorder>,
    /// The adapter asked for, used again when the backend is rebuilt from a snapshot.
    adapter: Option<String>,
    /// The run's identity (issue 49): fresh for a new simulation, the checkpoint's for
    /// a resumed one (none for a checkpoint of format 8 and older, until
    /// `write_outputs` starts a record). It goes into `run.toml` and every checkpoint,
    /// so that a resume tells this run's directory from another run's of the same
    /// scene.
    run_id: Option<u64>,
    /// Whether the run writes VTK frames, as its checkpoints record it (`varidem
    /// resume` keeps the setting): a resumed checkpoint's, then `write_outputs`'.
    vtk: bool,
}

impl State {
    fn new(
        scene: Scene,
        kind: &str,
        precision_name: Option<&str>,
        adapter: Option<String>,
    ) -> PyResult<Self> {
        let kind = backend_kind(kind)?;
        let precision = precision(precision_name)?;
        let mut options = gpu_options(&scene, precision, adapter.as_deref());
        path_switches().apply(&mut options);
        let backend = make_backend(kind, &scene, &options).map_err(to_py)?;
        Ok(Self {
            scene,
            backend,
            recorder: None,
            adapter,
            run_id: Some(varidem::run::new_run_id()),
            vtk: true,
        })
    }

    /// Advances to step `target`, writing outputs on the way if they are on.
    fn advance_to(&mut self, target: u64) -> Result<(), Error> {
        match &mut self.recorder {
            Some(r) => r.advance_to(&self.scene, self.backend.as_mut(), target),
            None => {
                let now = self.backend.step_count();
                if target > now {
                    self.backend.advance(target - now)
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// A scene advancing on a backend (CPU or GPU), with its state as NumPy arrays.
///
/// Build one with `Simulation.from_toml(path)`, `Simulation.from_str(text)` or
/// `Simulation.resume(checkpoint)`. State arrays (`positions`, ...) are copies: on the
/// GPU each read is a read-back of the device's state (a device-to-host copy and a
/// wait for the queue), so read them every so many steps, not after every step.
#[pyclass(module = "varidem")]
struct Simulation {
    /// Locked only through `&mut self` (`get_mut`): the mutex makes the class `Sync`
    /// without ever blocking, and Python's borrow checking of `&mut self` refuses a
    /// second thread's call while a step runs.
    state: Mutex<State>,
}

impl Simulation {
    fn from_state(state: State) -> Self {
        Self {
            state: Mutex::new(state),
        }
    }

    fn state(&mut self) -> &mut State {
        self.state.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    fn locked(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `v` as an `(N, 3)` float64 array.
fn vec3_array<'py>(py: Python<'py>, v: &[DVec3]) -> Bound<'py, PyArray2<f64>> {
    let flat: Vec<f64> = v.iter().flat_map(|x| x.to_array()).collect();
    Array2::from_shape_vec((v.len(), 3), flat)
        .expect("3 numbers per row")
        .into_pyarray(py)
}

/// Reads an `(n, 3)` float64 array into vectors; any other shape or dtype is a
/// `ValueError` naming the expected shape.
fn read_vec3(array: &Bound<'_, PyAny>, n: usize, what: &str) -> PyResult<Vec<DVec3>> {
    let describe = || -> String {
        let shape = array
            .getattr("shape")
            .map(|s| s.to_string())
            .unwrap_or_else(|_| "no shape".into());
        let dtype = array
            .getattr("dtype")
            .map(|s| s.to_string())
            .unwrap_or_else(|_| {
                array
                    .get_type()
                    .name()
                    .map(|t| t.to_string())
                    .unwrap_or_else(|_| "object".into())
            });
        format!("{dtype} with shape {shape}")
    };
    let Ok(readonly) = array.extract::<PyReadonlyArray2<'_, f64>>() else {
        return Err(PyValueError::new_err(format!(
            "{what} must be a float64 NumPy array of shape ({n}, 3), not {}",
            describe()
        )));
    };
    let view = readonly.as_array();
    if view.shape() != [n, 3] {
        return Err(PyValueError::new_err(format!(
            "{what} must have shape ({n}, 3), not {:?}",
            view.shape()
        )));
    }
    let rows: Vec<DVec3> = view
        .rows()
        .into_iter()
        .map(|r| DVec3::new(r[0], r[1], r[2]))
        .collect();
    if let Some((i, v)) = rows.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{what} must be finite: row {i} is [{}, {}, {}]",
            v.x, v.y, v.z
        )));
    }
    Ok(rows)
}

/// The rows of the state arrays: one per body, as `final.csv` numbers them (the
/// particles, inserters' reserved ones included, then the clumps in scene order).
fn row_count(model: &Model) -> usize {
    model.particles.len() + model.clumps.len()
}

/// Which motion a setter changes.
#[derive(Clone, Copy)]
enum Motion {
    /// Velocity `v` (m/s): a clump's is its centre of mass's.
    Linear,
    /// Spatial angular velocity `Ω` (rad/s).
    Angular,
}

/// Sets the `motion` of every row of `state` (one per body, [`row_count`]) to `rows`.
/// A row whose value has the bits the state already reports is left as it is, so
/// that setting the array just read changes nothing. A changed particle gets no Kahan
/// term for the value (`f32` GPU states); a changed clump gets its body's velocity or
/// spin (`integrators::rigid::spin_of` of the new Ω), and its spheres the velocities
/// and Ω of the body's motion, as the backends set them after a step.
fn set_rows(
    model: &Model,
    state: &mut varidem::backend::StateSnapshot,
    rows: &[DVec3],
    motion: Motion,
) -> Result<(), Error> {
    let free = model.particles.len();
    let spheres = model.sphere_count();
    if rows.len() != row_count(model)
        || state.velocity.len() != spheres
        || state.angular_velocity.len() != spheres
        || state.bodies.len() != model.clumps.len()
    {
        return Err(Error::Snapshot(format!(
            "the state ({} spheres, {} clumps) does not fit the scene ({spheres} spheres, {} clumps)",
            state.velocity.len(),
            state.bodies.len(),
            model.clumps.len()
        )));
    }
    let same =
        |a: DVec3, b: DVec3| a.to_array().map(f64::to_bits) == b.to_array().map(f64::to_bits);
    // The Kahan terms: 9 per sphere (x, v, Ω) and 9 per body (x, v, spin).
    let offset = match motion {
        Motion::Linear => 3,
        Motion::Angular => 6,
    };
    let sphere_terms = state.compensation.len() == 9 * spheres;
    let body_terms = state.body_compensation.len() == 9 * state.bodies.len();
    for (i, &new) in rows.iter().enumerate().take(free) {
        let slot = match motion {
            Motion::Linear => &mut state.velocity[i],
            Motion::Angular => &mut state.angular_velocity[i],
        };
        if !same(*slot, new) {
            *slot = new;
            if sphere_terms {
                state.compensation[9 * i + offset..9 * i + offset + 3].fill(0.0);
            }
        }
    }
    let mut first = free;
    for (b, clump) in model.clumps.iter().enumerate() {
        let t = &model.clump_types[clump.kind as usize];
        let body = &mut state.bodies[b];
        let new = rows[free + b];
        let changed = match motion {
            Motion::Linear if !same(body.v, new) => {
                body.v = new;
                true
            }
            Motion::Angular if !same(angular_velocity(&t.inertia, body.alpha, body.spin), new) => {
                body.spin = spin_of(&t.inertia, body.alpha, new);
                true
            }
            _ => false,
        };
        if changed {
            if body_terms {
                state.body_compensation[9 * b + offset..9 * b + offset + 3].fill(0.0);
            }
            let w = angular_velocity(&t.inertia, body.alpha, body.spin);
            for (k, sphere) in t.spheres.iter().enumerate() {
                let i = first + k;
                state.velocity[i] = member_velocity(body.v, w, rotate(body.alpha, sphere.offset));
                state.angular_velocity[i] = w;
                if sphere_terms {
                    state.compensation[9 * i + 3..9 * i + 9].fill(0.0);
                }
            }
        }
        first += t.spheres.len();
    }
    Ok(())
}

/// The forces and moments of the state arrays' rows: a particle's total force and
/// spatial moment, a clump's total force and spatial moment about its centre of mass.
fn row_loads(state: &mut State) -> Result<(Vec<DVec3>, Vec<DVec3>), Error> {
    let frame = state.backend.frame()?;
    let model = &state.scene.model;
    let free = model.particles.len();
    let (mut force, mut moment) = (frame.force, frame.moment);
    force.truncate(free);
    moment.truncate(free);
    if !model.clumps.is_empty() {
        let snapshot = state.backend.checkpoint_state()?;
        for b in &snapshot.bodies {
            force.push(b.force);
            moment.push(b.moment);
        }
    }
    Ok((force, moment))
}

#[pymethods]
impl Simulation {
    /// Loads the scene file `path` (TOML) and builds its backend.
    ///
    /// `backend`: "auto" (the GPU if there is a hardware adapter or one is named, else
    /// the CPU), "cpu" (the f64 reference) or "gpu"; a GPU that is not available falls
    /// back to the CPU with a warning, as on the command line. `precision`: None (the
    /// scene's, else f32), "f32" or "f64" (GPU kernels). `adapter`: a substring of an
    /// adapter's name or a backend (vulkan, metal, dx12, gl); None: $VARIDEM_ADAPTER,
    /// else the most capable one.
    #[staticmethod]
    #[pyo3(signature = (path, backend = "auto", precision = None, adapter = None))]
    fn from_toml(
        py: Python<'_>,
        path: PathBuf,
        backend: &str,
        precision: Option<&str>,
        adapter: Option<String>,
    ) -> PyResult<Self> {
        let scene = load_scene(&path).map_err(to_py)?;
        let state = py_detach_build(py, scene, backend, precision, adapter)?;
        Ok(Self::from_state(state))
    }

    /// Parses `text` as a scene (the contents of a scene file) and builds its backend;
    /// the other arguments as for `from_toml`. Relative paths in the scene (meshes)
    /// are taken from the current directory.
    #[staticmethod]
    #[pyo3(signature = (text, backend = "auto", precision = None, adapter = None))]
    fn from_str(
        py: Python<'_>,
        text: &str,
        backend: &str,
        precision: Option<&str>,
        adapter: Option<String>,
    ) -> PyResult<Self> {
        let scene = parse_scene(text).map_err(to_py)?;
        let state = py_detach_build(py, scene, backend, precision, adapter)?;
        Ok(Self::from_state(state))
    }

    /// Continues the run saved in the checkpoint file `path` (written by
    /// `checkpoint()` or `varidem run --checkpoint-every`). `backend`: None (the one
    /// that wrote it), "auto", "cpu" or "gpu"; only the same backend, adapter and
    /// precision continue bit for bit.
    #[staticmethod]
    #[pyo3(signature = (path, backend = None, precision = None, adapter = None))]
    fn resume(
        py: Python<'_>,
        path: PathBuf,
        backend: Option<&str>,
        precision: Option<&str>,
        adapter: Option<String>,
    ) -> PyResult<Self> {
        let kind = backend.map(backend_kind).transpose()?;
        let precision = self::precision(precision)?;
        let built = py.detach(|| -> Result<State, Error> {
            let checkpoint = Checkpoint::read(&path)?;
            let backend = varidem::select::resume_backend(
                &checkpoint,
                kind,
                precision,
                adapter.as_deref(),
                &path_switches(),
            )?;
            Ok(State {
                scene: checkpoint.scene,
                backend,
                recorder: None,
                adapter,
                run_id: checkpoint.run_id,
                vtk: checkpoint.vtk,
            })
        });
        Ok(Self::from_state(built.map_err(to_py)?))
    }

    /// Advances `n` steps. The interpreter lock is released while the steps run, in
    /// chunks of a few dozen steps; between chunks, a pending signal (Ctrl-C) stops
    /// the stepping with `KeyboardInterrupt`, the state being that of the last
    /// completed step. With `write_outputs` on, the outputs of the steps crossed are
    /// written and `final.csv` holds the state at the end of the call.
    #[pyo3(signature = (n = 1))]
    fn step(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        let target = self.state().backend.step_count().saturating_add(n);
        self.advance_until(py, target)
    }

    /// Advances to the scene's last step (`steps` or `t_end / dt`), or, with `until`,
    /// to the step nearest the simulated time `until` (s). Interruptible as `step`.
    #[pyo3(signature = (until = None))]
    fn run(&mut self, py: Python<'_>, until: Option<f64>) -> PyResult<()> {
        let sim = &self.state().scene.simulation;
        let target = match until {
            None => sim.steps(),
            Some(t) if t.is_finite() && t >= 0.0 => (t / sim.dt).round() as u64,
            Some(t) => {
                return Err(PyValueError::new_err(format!(
                    "until must be a finite time ≥ 0 s, not {t}"
                )))
            }
        };
        self.advance_until(py, target)
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self) -> f64 {
        self.locked().backend.time()
    }

    /// Steps taken so far.
    #[getter]
    fn steps_done(&self) -> u64 {
        self.locked().backend.step_count()
    }

    /// The time step (s).
    #[getter]
    fn dt(&self) -> f64 {
        self.locked().scene.simulation.dt
    }

    /// The scene's last step (`steps`, or `t_end / dt`): where `run()` stops.
    #[getter]
    fn total_steps(&self) -> u64 {
        self.locked().scene.simulation.steps()
    }

    /// The backend running: "cpu", or "gpu (ADAPTER, PRECISION)".
    #[getter]
    fn backend(&self) -> String {
        self.locked().backend.name()
    }

    /// Number of rows N of the state arrays: one per body, as in `final.csv` (the
    /// particles, inserters' reserved ones included, then the clumps in scene order).
    /// Without clumps, the number of particles.
    #[getter]
    fn n(&self) -> usize {
        row_count(&self.locked().scene.model)
    }

    /// Number of clumps (the last `n_clumps` rows of the state arrays).
    #[getter]
    fn n_clumps(&self) -> usize {
        self.locked().scene.model.clumps.len()
    }

    /// Positions (m), an (N, 3) float64 copy (a read-back on the GPU); a clump's row is
    /// its centre of mass.
    #[getter]
    fn positions<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let p = self.state().backend.particles().map_err(to_py)?;
        Ok(vec3_array(py, &p.position))
    }

    /// Velocities (m/s), an (N, 3) float64 copy (a read-back on the GPU); a clump's row
    /// is its centre of mass's.
    #[getter]
    fn velocities<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let p = self.state().backend.particles().map_err(to_py)?;
        Ok(vec3_array(py, &p.velocity))
    }

    /// Rotation vectors (rescaled Rodrigues), an (N, 3) float64 copy; a clump's row is
    /// α of its body frame.
    #[getter]
    fn rotations<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let p = self.state().backend.particles().map_err(to_py)?;
        Ok(vec3_array(py, &p.rotation))
    }

    /// Spatial angular velocities (rad/s), an (N, 3) float64 copy; a clump's row is its
    /// body's spatial Ω.
    #[getter]
    fn angular_velocities<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let p = self.state().backend.particles().map_err(to_py)?;
        Ok(vec3_array(py, &p.angular_velocity))
    }

    /// Radii (m), an (N,) float64 array; a clump's row is the radius of its bounding
    /// ball: the smallest ball about its centre of mass that holds all its spheres.
    #[getter]
    fn radii<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let s = self.locked();
        let m = &s.scene.model;
        let mut r = m.particles.radius.clone();
        r.extend(
            m.clumps
                .iter()
                .map(|c| m.clump_types[c.kind as usize].reach()),
        );
        r.into_pyarray(py)
    }

    /// Masses (kg), an (N,) float64 array; a clump's row is its total mass.
    #[getter]
    fn masses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let s = self.locked();
        let m = &s.scene.model;
        let mut mass = m.particles.mass.clone();
        mass.extend(m.clumps.iter().map(|c| m.clump_types[c.kind as usize].mass));
        mass.into_pyarray(py)
    }

    /// Row ids, an (N,) int64 array: 0 .. N, the row index of every state array and
    /// the `id` column of `final.csv` (the particles' ids, then the clumps').
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let n = row_count(&self.locked().scene.model) as i64;
        let ids: Vec<i64> = (0..n).collect();
        ids.into_pyarray(py)
    }

    /// Whether each row takes part, an (N,) bool array: false for particles removed
    /// for leaving the domain and for particles and clumps an inserter holds in
    /// reserve (not yet inserted; `final.csv` leaves those out).
    #[getter]
    fn active<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let p = self.state().backend.particles().map_err(to_py)?;
        let flags: Vec<bool> = p
            .flags
            .iter()
            .map(|&f| f & varidem::model::FLAG_REMOVED == 0 && !varidem::model::is_dormant(f))
            .collect();
        Ok(flags.into_pyarray(py))
    }

    /// Total force on each row (N) as last evaluated (at the current state), an
    /// (N, 3) float64 copy; a clump's row is the total force on the body.
    #[getter]
    fn forces<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (force, _) = row_loads(self.state()).map_err(to_py)?;
        Ok(vec3_array(py, &force))
    }

    /// Total spatial moment on each row (N m) as last evaluated, an (N, 3) float64
    /// copy; a clump's row is the moment on the body about its centre of mass.
    #[getter]
    fn moments<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (_, moment) = row_loads(self.state()).map_err(to_py)?;
        Ok(vec3_array(py, &moment))
    }

    /// Every sphere the engine simulates, a dict of arrays with one row per sphere: the
    /// particles (the rows 0 .. N − n_clumps of the state arrays), then each clump's
    /// spheres, clump by clump in the order of its type's `spheres`. `positions`,
    /// `velocities`, `rotations`, `angular_velocities`, `forces`, `moments` (S, 3)
    /// float64 and `radii` (S,) float64 as for the state arrays, but per sphere (a
    /// clump's sphere moves with its body; its force and moment are the loads on that
    /// sphere, moment about its centre); `body` (S,) int64: the row of its body in the
    /// state arrays (a particle's own row); `active` (S,) bool. The sphere numbering is
    /// that of the VTK frames' `id` and of `contacts()`; `body` is their `body_id`. On
    /// the GPU this reads back a frame (state and forces).
    fn spheres<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = self.state().backend.frame().map_err(to_py)?;
        let p = &f.particles;
        let n = p.len();
        let body: Vec<i64> = if f.body_id.len() == n {
            f.body_id.iter().map(|&b| i64::from(b)).collect()
        } else {
            (0..n as i64).collect()
        };
        let active: Vec<bool> = p
            .flags
            .iter()
            .map(|&f| f & varidem::model::FLAG_REMOVED == 0 && !varidem::model::is_dormant(f))
            .collect();
        let out = PyDict::new(py);
        out.set_item("positions", vec3_array(py, &p.position))?;
        out.set_item("velocities", vec3_array(py, &p.velocity))?;
        out.set_item("rotations", vec3_array(py, &p.rotation))?;
        out.set_item("angular_velocities", vec3_array(py, &p.angular_velocity))?;
        out.set_item("radii", PyArray1::from_slice(py, &p.radius))?;
        out.set_item("forces", vec3_array(py, &f.force))?;
        out.set_item("moments", vec3_array(py, &f.moment))?;
        out.set_item("body", body.into_pyarray(py))?;
        out.set_item("active", active.into_pyarray(py))?;
        Ok(out)
    }

    /// Sets the velocities (m/s) from an (N, 3) float64 array of finite values, one
    /// row per row of the state arrays (any other shape, dtype or a non-finite value:
    /// ValueError); a clump's row sets its centre of mass's velocity (its spheres move
    /// with it). The backend is rebuilt from a snapshot of its state with the new
    /// velocities (on the GPU: a new device set-up). Setting the array just read
    /// changes nothing, to the bit.
    fn set_velocities(&mut self, py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = row_count(&self.state().scene.model);
        let v = read_vec3(array, n, "velocities")?;
        self.replace_state(py, |c| {
            set_rows(&c.scene.model, &mut c.state, &v, Motion::Linear)
        })
    }

    /// Sets the spatial angular velocities (rad/s) from an (N, 3) float64 array; as
    /// `set_velocities`. A clump's row sets its body's Ω (stored as its angular
    /// momentum, so a new value may read back a few bits off).
    fn set_angular_velocities(&mut self, py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = row_count(&self.state().scene.model);
        let w = read_vec3(array, n, "angular velocities")?;
        self.replace_state(py, |c| {
            set_rows(&c.scene.model, &mut c.state, &w, Motion::Angular)
        })
    }

    /// The energies and momenta of the current state: a dict with the columns of
    /// `energy.csv` (step as int, the others as float).
    fn energy<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = self.state().backend.diagnostics().map_err(to_py)?;
        let out = PyDict::new(py);
        let row = d.csv_row();
        for (name, value) in Diagnostics::CSV_HEADER.split(',').zip(row.split(',')) {
            if name == "step" {
                out.set_item(name, d.step)?;
            } else {
                let x: f64 = value.trim().parse().map_err(|_| {
                    VaridemError::new_err(format!(
                        "energy.csv column {name}: not a number: {value}"
                    ))
                })?;
                out.set_item(name, x)?;
            }
        }
        Ok(out)
    }

    /// The touching sphere pairs of the current state (granular scenes, Hertz law): a
    /// dict of arrays `i`, `j` (M,) int64 with i < j, `normal` (M, 3) unit normals from
    /// i to j, `overlap` (M,), and `normal_force`, `tangential_force` (M, 3): the
    /// forces on i (j gets the opposite) at the current state. `i` and `j` number the
    /// spheres as `spheres()` does: without clumps, the rows of the state arrays; with
    /// clumps, `spheres()["body"]` gives each one's row. Scenes without the Hertz law
    /// raise VaridemError. On the GPU this reads back the whole state.
    fn contacts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let state = self.state();
        let snapshot = state.backend.checkpoint_state().map_err(to_py)?;
        // The spheres as the backend numbers them (the clumps' after the particles),
        // with the flags of the current state (inserted and removed ones).
        let mut model = state.scene.model.clone();
        if !model.clumps.is_empty() {
            Bodies::expand(&mut model);
        }
        let frame = state.backend.frame().map_err(to_py)?;
        if frame.particles.flags.len() == model.particles.len() {
            model.particles.flags = frame.particles.flags;
        }
        let Some(c) = varidem::backend::contacts::contact_forces(&model, &snapshot) else {
            return Err(VaridemError::new_err(
                "contacts: the scene has no granular (Hertz) contacts".to_owned(),
            ));
        };
        let out = PyDict::new(py);
        let ids = |v: &[u32]| -> Vec<i64> { v.iter().map(|&x| i64::from(x)).collect() };
        out.set_item("i", ids(&c.i).into_pyarray(py))?;
        out.set_item("j", ids(&c.j).into_pyarray(py))?;
        out.set_item("normal", vec3_array(py, &c.normal))?;
        out.set_item("overlap", PyArray1::from_slice(py, &c.overlap))?;
        out.set_item("normal_force", vec3_array(py, &c.normal_force))?;
        out.set_item("tangential_force", vec3_array(py, &c.tangential_force))?;
        Ok(out)
    }

    /// From now on, writes the outputs `varidem run --out DIR` writes into `dir`
    /// (created if needed): `run.toml`, `energy.csv` (and `walls.csv`,
    /// `inserters.csv`, `solver.csv` where the scene has them) with a row at every
    /// output step, the VTK frames with `vtk` (default on), a checkpoint every
    /// `checkpoint_every` steps, and `final.csv` with the state at the end of every
    /// `step`/`run` call (and at once). Called at step 0, the files are those of
    /// `varidem run`; later, they continue from the current step.
    #[pyo3(signature = (dir, vtk = true, checkpoint_every = None))]
    fn write_outputs(
        &mut self,
        dir: PathBuf,
        vtk: bool,
        checkpoint_every: Option<u64>,
    ) -> PyResult<()> {
        let state = self.state();
        let options = OutputOptions {
            vtk,
            checkpoint_every,
            progress: false,
            run_id: state.run_id,
        };
        let recorder =
            Recorder::start(&state.scene, state.backend.as_mut(), &dir, &options).map_err(to_py)?;
        recorder
            .write_final(state.backend.as_mut())
            .map_err(to_py)?;
        // The record's identity (a fresh one where the run had none) and VTK setting
        // go into the run's checkpoints from now on.
        state.run_id = Some(recorder.run_id());
        state.vtk = vtk;
        state.recorder = Some(recorder);
        Ok(())
    }

    /// Stops writing outputs (started by `write_outputs`).
    fn stop_outputs(&mut self) {
        self.state().recorder = None;
    }

    /// Writes a checkpoint of the current state to `path`, from which
    /// `Simulation.resume(path)` or `varidem resume` continues the run.
    fn checkpoint(&mut self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let state = self.state();
        let mut checkpoint =
            Checkpoint::take(&state.scene, state.backend.as_mut(), None).map_err(to_py)?;
        checkpoint.run_id = state.run_id;
        checkpoint.vtk = state.vtk;
        py.detach(|| checkpoint.write(&path)).map_err(to_py)
    }

    fn __repr__(&self) -> String {
        let s = self.locked();
        let clumps = match s.scene.model.clumps.len() {
            0 => String::new(),
            c => format!(" and {c} clumps"),
        };
        format!(
            "<varidem.Simulation: {} particles{clumps}, step {} of {}, t = {} s, backend {}>",
            s.scene.model.particles.len(),
            s.backend.step_count(),
            s.scene.simulation.steps(),
            s.backend.time(),
            s.backend.name()
        )
    }
}

impl Simulation {
    /// Steps to `target` in chunks of [`SIGNAL_CHUNK`] with the interpreter lock
    /// released, checking for signals between chunks; then writes `final.csv` if
    /// outputs are on.
    fn advance_until(&mut self, py: Python<'_>, target: u64) -> PyResult<()> {
        let state = self.state();
        while state.backend.step_count() < target {
            let next = (state.backend.step_count() + SIGNAL_CHUNK).min(target);
            py.detach(|| state.advance_to(next)).map_err(to_py)?;
            if let Err(interrupt) = py.check_signals() {
                if let Some(r) = &state.recorder {
                    r.write_final(state.backend.as_mut()).map_err(to_py)?;
                }
                return Err(interrupt);
            }
        }
        if let Some(r) = &state.recorder {
            r.write_final(state.backend.as_mut()).map_err(to_py)?;
        }
        Ok(())
    }

    /// Rebuilds the backend from a snapshot of its state (in a checkpoint of the
    /// scene) changed by `change`, on the same backend kind, precision and adapter;
    /// an error of `change` leaves the backend as it was.
    fn replace_state(
        &mut self,
        py: Python<'_>,
        change: impl FnOnce(&mut Checkpoint) -> Result<(), Error>,
    ) -> PyResult<()> {
        let state = self.state();
        let mut checkpoint =
            Checkpoint::take(&state.scene, state.backend.as_mut(), None).map_err(to_py)?;
        change(&mut checkpoint).map_err(to_py)?;
        let adapter = state.adapter.clone();
        let backend = py
            .detach(|| {
                varidem::select::resume_backend(
                    &checkpoint,
                    None,
                    None,
                    adapter.as_deref(),
                    &path_switches(),
                )
            })
            .map_err(to_py)?;
        state.backend = backend;
        Ok(())
    }
}

/// Builds a state with the interpreter lock released (a GPU set-up takes a while).
fn py_detach_build(
    py: Python<'_>,
    scene: Scene,
    backend: &str,
    precision: Option<&str>,
    adapter: Option<String>,
) -> PyResult<State> {
    let backend = backend.to_owned();
    let precision = precision.map(str::to_owned);
    py.detach(|| State::new(scene, &backend, precision.as_deref(), adapter))
}

/// The GPU adapters, as `varidem info` lists them (in order of preference): one dict
/// per adapter with its name, backend, device type, driver, f64 support, limits and
/// the shortfalls against varidem's minimum (empty: it meets it).
#[pyfunction]
fn adapters(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = py.detach(list_adapters);
    let out = PyList::empty(py);
    for a in &list {
        let d = PyDict::new(py);
        d.set_item("name", &a.name)?;
        d.set_item("backend", &a.backend)?;
        d.set_item("device_type", format!("{:?}", a.device_type))?;
        d.set_item("driver", &a.driver)?;
        d.set_item("f64", a.f64)?;
        d.set_item("software", a.is_software())?;
        d.set_item("max_storage_binding", a.max_storage_binding)?;
        d.set_item("max_buffer", a.max_buffer)?;
        d.set_item(
            "max_storage_buffers_per_stage",
            a.max_storage_buffers_per_stage,
        )?;
        d.set_item(
            "max_invocations_per_workgroup",
            a.max_invocations_per_workgroup,
        )?;
        d.set_item("max_workgroup_storage", a.max_workgroup_storage)?;
        d.set_item("meets_minimum", a.shortfalls.is_empty())?;
        d.set_item("shortfalls", a.shortfalls.clone())?;
        out.append(d)?;
    }
    Ok(out)
}

/// The extension module `varidem._varidem`.
#[pymodule]
fn _varidem(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Log warnings (the CPU fallback, say) to stderr as the command line does;
    // RUST_LOG chooses more or less. A second init (another module) is not an error.
    let _ = varidem_logger();
    let py = m.py();
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(adapters, m)?)?;
    m.add("VaridemError", py.get_type::<VaridemError>())?;
    m.add("SceneError", py.get_type::<SceneError>())?;
    m.add("GpuError", py.get_type::<GpuError>())?;
    m.add("FaultError", py.get_type::<FaultError>())?;
    m.add("CheckpointError", py.get_type::<CheckpointError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// Installs a stderr logger at level `warn` (or `$RUST_LOG`); fails when a logger is
/// already installed.
fn varidem_logger() -> Result<(), log::SetLoggerError> {
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_hal::gles::egl=off"),
    )
    .try_init()
}

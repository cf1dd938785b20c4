//! CSV outputs: `energy.csv` (one [`Diagnostics`] row per output step) and `final.csv`
//! (the state of every particle at the end of a run).
//!
//! Every number is written as `{:.16e}` (17 significant digits), which parses back to
//! the same `f64` bits; `-0.0`, subnormals, infinities and NaN included.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use glam::DVec3;

use crate::backend::{BondBreak, Exit, SolverRow, WallLoad};
use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::model::Particles;
use crate::neighbor::InsertCount;

/// Header of `final.csv`: particle id, position `x`, velocity `v`, rotation vector `α`
/// (`a*`) and spatial angular velocity `Ω` (`w*`).
pub const FINAL_CSV_HEADER: &str = "id,x,y,z,vx,vy,vz,ax,ay,az,wx,wy,wz";

/// One row of `final.csv`: a particle's kinematic state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParticleState {
    /// Particle id (index in the scene's numbering).
    pub id: u32,
    /// Position `x` (m).
    pub position: DVec3,
    /// Velocity `v` (m/s).
    pub velocity: DVec3,
    /// Rescaled Rodrigues rotation vector `α`.
    pub rotation: DVec3,
    /// Spatial angular velocity `Ω` (rad/s).
    pub angular_velocity: DVec3,
}

fn invalid_data(path: &Path, msg: String) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::InvalidData, msg),
    )
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| Error::io(path, e))
}

/// Writes `final.csv` at `path`: [`FINAL_CSV_HEADER`], then one row per particle in id
/// order. Dormant particles (reserved by an inserter, not yet inserted) have no row.
pub fn write_final_csv(path: &Path, particles: &Particles) -> Result<()> {
    // Out of the system: dormant (not yet inserted) or removed (removed.csv).
    let (ids, rows) = particles.in_system();
    write_final_rows(path, &ids, &rows)
}

/// Writes `final.csv` at `path` with a row for each of `particles`, whose ids are
/// `ids` (ascending): the particles in the system ([`Particles::in_system`]).
pub fn write_final_rows(path: &Path, ids: &[u32], particles: &Particles) -> Result<()> {
    let mut w = create(path)?;
    let mut text = String::with_capacity(64 + particles.len() * 13 * 24);
    text.push_str(FINAL_CSV_HEADER);
    text.push('\n');
    for (i, id) in ids.iter().enumerate() {
        text.push_str(&id.to_string());
        for v in [
            particles.position[i],
            particles.velocity[i],
            particles.rotation[i],
            particles.angular_velocity[i],
        ] {
            for c in v.to_array() {
                text.push(',');
                text.push_str(&format!("{c:.16e}"));
            }
        }
        text.push('\n');
    }
    w.write_all(text.as_bytes())
        .and_then(|()| w.flush())
        .map_err(|e| Error::io(path, e))
}

/// Splits a CSV data line into numbers; `line` is 1-based for messages.
fn numbers(path: &Path, line: usize, text: &str, columns: &[&str]) -> Result<Vec<f64>> {
    let fields: Vec<&str> = text.split(',').collect();
    if fields.len() != columns.len() {
        return Err(invalid_data(
            path,
            format!(
                "line {line}: {} fields, expected {} ({})",
                fields.len(),
                columns.len(),
                columns.join(",")
            ),
        ));
    }
    fields
        .iter()
        .zip(columns)
        .map(|(f, name)| {
            f.trim().parse::<f64>().map_err(|_| {
                invalid_data(path, format!("line {line}: {name} = {f:?} is not a number"))
            })
        })
        .collect()
}

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

/// Reads a `final.csv` written by [`write_final_csv`], checking its header.
pub fn read_final_csv(path: &Path) -> Result<Vec<ParticleState>> {
    let text = read_text(path)?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("");
    if header != FINAL_CSV_HEADER {
        return Err(invalid_data(
            path,
            format!("header {header:?}, expected {FINAL_CSV_HEADER:?}"),
        ));
    }
    let columns: Vec<&str> = FINAL_CSV_HEADER.split(',').collect();
    let mut rows = Vec::new();
    for (k, line) in lines.enumerate() {
        let n = k + 2;
        if line.trim().is_empty() {
            continue;
        }
        let (id, rest) = line.split_once(',').unwrap_or((line, ""));
        let id: u32 = id.trim().parse().map_err(|_| {
            invalid_data(path, format!("line {n}: id = {id:?} is not a particle id"))
        })?;
        let v = numbers(path, n, rest, &columns[1..])?;
        let vec = |i: usize| DVec3::new(v[i], v[i + 1], v[i + 2]);
        rows.push(ParticleState {
            id,
            position: vec(0),
            velocity: vec(3),
            rotation: vec(6),
            angular_velocity: vec(9),
        });
    }
    Ok(rows)
}

/// A CSV file of one row per step being written (`energy.csv`, `solver.csv`): its
/// header, then rows whose first field is the step, each flushed at once so that the
/// rows written survive a later failure.
#[derive(Debug)]
struct StepCsv {
    path: PathBuf,
    writer: BufWriter<File>,
}

impl StepCsv {
    /// Creates (truncates) the file at `path` and writes the header.
    fn create(path: &Path, header: &'static str) -> Result<Self> {
        let mut log = Self {
            path: path.to_owned(),
            writer: create(path)?,
        };
        log.line(header)?;
        Ok(log)
    }

    /// Continues the file at `path` for a run resumed at step `step`: keeps the header
    /// and every complete row of a step before `step`, removes what follows (the rows
    /// of an earlier continuation past `step`, a half-written last line) and appends
    /// from there. A missing or empty file is created with the header.
    ///
    /// Returns the writer and the removed row of step `step` itself, if there was one
    /// (the resumed run writes it again and can compare).
    ///
    /// Fails, naming the file, when its first line is not the header.
    fn resume(path: &Path, step: u64, header: &'static str) -> Result<(Self, Option<String>)> {
        let bytes = match std::fs::read(path) {
            Ok(b) if !b.is_empty() => b,
            Ok(_) => return Ok((Self::create(path, header)?, None)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Self::create(path, header)?, None))
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        let first = format!("{header}\n");
        if !bytes.starts_with(first.as_bytes()) {
            return Err(invalid_data(
                path,
                format!("cannot continue it: its first line is not the header {header:?}"),
            ));
        }
        let header = first;
        // Keep complete rows of steps before `step`.
        let mut keep = header.len();
        let mut kept = 0usize;
        let mut replaced = None;
        while let Some(end) = bytes[keep..].iter().position(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(&bytes[keep..keep + end]);
            match line.split(',').next().and_then(|f| f.parse::<u64>().ok()) {
                Some(s) if s < step => {
                    keep += end + 1;
                    kept += 1;
                }
                Some(s) if s == step => {
                    replaced = Some(line.into_owned());
                    break;
                }
                _ => break,
            }
        }
        let dropped = bytes[keep..].iter().filter(|&&b| b == b'\n').count();
        if dropped > 0 || keep < bytes.len() {
            log::info!(
                "{}: continuing after the {kept} row(s) before step {step}; {dropped} later row(s) removed",
                path.display()
            );
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        file.set_len(keep as u64)
            .and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()))
            .map_err(|e| Error::io(path, e))?;
        Ok((
            Self {
                path: path.to_owned(),
                writer: BufWriter::new(file),
            },
            replaced,
        ))
    }

    fn line(&mut self, text: &str) -> Result<()> {
        writeln!(self.writer, "{text}")
            .and_then(|()| self.writer.flush())
            .map_err(|e| Error::io(&self.path, e))
    }
}

/// An `energy.csv` being written: [`Diagnostics::CSV_HEADER`], then one
/// [`Diagnostics::csv_row`] per call to [`EnergyCsv::write`], flushed at once so that
/// the rows written survive a later failure.
#[derive(Debug)]
pub struct EnergyCsv(StepCsv);

impl EnergyCsv {
    /// Creates (truncates) the file at `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self> {
        StepCsv::create(path, Diagnostics::CSV_HEADER).map(Self)
    }

    /// Continues the file at `path` for a run resumed at step `step`: keeps the header
    /// and every complete row of a step before `step`, removes what follows (the rows
    /// of an earlier continuation past `step`, a half-written last line) and appends
    /// from there. A missing or empty file is created with the header.
    ///
    /// Returns the writer and the removed row of step `step` itself, if there was one
    /// (the resumed run writes it again and can compare).
    ///
    /// Fails, naming the file, when its first line is not [`Diagnostics::CSV_HEADER`].
    pub fn resume(path: &Path, step: u64) -> Result<(Self, Option<String>)> {
        StepCsv::resume(path, step, Diagnostics::CSV_HEADER).map(|(w, r)| (Self(w), r))
    }

    /// Appends the row of `d` and flushes it.
    pub fn write(&mut self, d: &Diagnostics) -> Result<()> {
        self.0.line(&d.csv_row())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.0.path
    }
}

/// A `solver.csv` being written (hard contacts): [`SolverRow::CSV_HEADER`], then one
/// [`SolverRow::csv_row`] per step, each flushed at once.
#[derive(Debug)]
pub struct SolverCsv(StepCsv);

impl SolverCsv {
    /// Creates (truncates) the file at `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self> {
        StepCsv::create(path, SolverRow::CSV_HEADER).map(Self)
    }

    /// Continues the file at `path` for a run resumed after step `step`: keeps the
    /// header and the rows of steps up to `step` (each step writes its own row, and the
    /// resumed run starts with step `step + 1`), removes the rest.
    pub fn resume(path: &Path, step: u64) -> Result<Self> {
        StepCsv::resume(path, step + 1, SolverRow::CSV_HEADER).map(|(w, _)| Self(w))
    }

    /// Appends `rows`, flushing after each.
    pub fn write(&mut self, rows: &[SolverRow]) -> Result<()> {
        rows.iter().try_for_each(|r| self.0.line(&r.csv_row()))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.0.path
    }
}

/// A `walls.csv` being written: [`WallLoad::CSV_HEADER`], then one row per wall at
/// each output step, flushed at once.
#[derive(Debug)]
pub struct WallsCsv(StepCsv);

impl WallsCsv {
    /// Creates (truncates) the file at `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self> {
        StepCsv::create(path, WallLoad::CSV_HEADER).map(Self)
    }

    /// Continues the file at `path` for a run resumed at step `step`: keeps the header
    /// and the rows of earlier steps, removes the rest (the resumed run writes the rows
    /// of `step` again).
    pub fn resume(path: &Path, step: u64) -> Result<Self> {
        StepCsv::resume(path, step, WallLoad::CSV_HEADER).map(|(w, _)| Self(w))
    }

    /// Appends one row per load at `step` and time `t`.
    pub fn write(&mut self, step: u64, t: f64, loads: &[WallLoad]) -> Result<()> {
        loads
            .iter()
            .try_for_each(|l| self.0.line(&l.csv_row(step, t)))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.0.path
    }
}

/// An `inserters.csv` being written: [`InsertersCsv::HEADER`], then one row per
/// `[[inserter]]` at each output step with its running totals, flushed at once.
#[derive(Debug)]
pub struct InsertersCsv(StepCsv);

impl InsertersCsv {
    /// The header: the step, its time, the inserter (`inserter[k]`), the particles it
    /// has inserted so far and those it has skipped (no free spot, or no capacity left).
    pub const HEADER: &'static str = "step,t,inserter,inserted,skipped";

    /// Creates (truncates) the file at `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self> {
        StepCsv::create(path, Self::HEADER).map(Self)
    }

    /// Continues the file at `path` for a run resumed at step `step` (as
    /// [`WallsCsv::resume`]).
    pub fn resume(path: &Path, step: u64) -> Result<Self> {
        StepCsv::resume(path, step, Self::HEADER).map(|(w, _)| Self(w))
    }

    /// Appends one row per inserter at `step` and time `t`.
    pub fn write(&mut self, step: u64, t: f64, counts: &[InsertCount]) -> Result<()> {
        counts.iter().enumerate().try_for_each(|(k, c)| {
            self.0.line(&format!(
                "{step},{t:.16e},inserter[{k}],{},{}",
                c.inserted, c.skipped
            ))
        })
    }
}

/// `removed.csv`: one row per particle that left the domain and was removed, in the
/// order they left (by step, then id), with its state at exit.
#[derive(Debug)]
pub struct RemovedCsv(StepCsv);

impl RemovedCsv {
    /// The header ([`Exit::CSV_HEADER`]): the step and time the particle left, its id,
    /// where it was and how fast it moved.
    pub const HEADER: &'static str = Exit::CSV_HEADER;

    /// Creates (truncates) the file at `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self> {
        StepCsv::create(path, Self::HEADER).map(Self)
    }

    /// Continues the file at `path` for a run resumed at step `step`: the rows of
    /// later steps are dropped, those of `step` itself kept (its exits happened before
    /// the checkpoint: the resumed run does not list them again).
    pub fn resume(path: &Path, step: u64) -> Result<Self> {
        StepCsv::resume(path, step.saturating_add(1), Self::HEADER).map(|(w, _)| Self(w))
    }

    /// Appends one row per exit, `dt` the time step (`t = step · dt`).
    pub fn write(&mut self, exits: &[Exit], dt: f64) -> Result<()> {
        if exits.is_empty() {
            return Ok(());
        }
        // One flush for the lot.
        let rows: Vec<String> = exits
            .iter()
            .map(|e| {
                let (x, v) = (e.position, e.velocity);
                format!(
                    "{},{:.16e},{},{:.16e},{:.16e},{:.16e},{:.16e},{:.16e},{:.16e}",
                    e.step,
                    e.step as f64 * dt,
                    e.id,
                    x.x,
                    x.y,
                    x.z,
                    v.x,
                    v.y,
                    v.z
                )
            })
            .collect();
        self.0.line(&rows.join("\n"))
    }
}

/// `bonds_broken.csv` (issue 47): a row per bond that broke, the loads that broke it.
#[derive(Debug)]
pub struct BondsBrokenCsv(StepCsv);

impl BondsBrokenCsv {
    /// The header ([`BondBreak::CSV_HEADER`]).
    pub const HEADER: &'static str = BondBreak::CSV_HEADER;

    /// Creates (truncates) the file at `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self> {
        StepCsv::create(path, Self::HEADER).map(Self)
    }

    /// Continues the file at `path` for a run resumed at step `step`: the rows of
    /// later steps are dropped, those of `step` itself kept (its breaks are in the
    /// checkpoint's state: the resumed run does not list them again).
    pub fn resume(path: &Path, step: u64) -> Result<Self> {
        StepCsv::resume(path, step.saturating_add(1), Self::HEADER).map(|(w, _)| Self(w))
    }

    /// Appends one row per break, `dt` the time step.
    pub fn write(&mut self, breaks: &[BondBreak], dt: f64) -> Result<()> {
        if breaks.is_empty() {
            return Ok(());
        }
        let rows: Vec<String> = breaks.iter().map(|b| b.csv_row(dt)).collect();
        self.0.line(&rows.join("\n"))
    }
}

/// The contents of an `energy.csv` (or any all-numeric CSV with a header).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EnergyTable {
    /// Column names, from the header.
    pub columns: Vec<String>,
    /// Rows, each with one value per column (the step index as an `f64`).
    pub rows: Vec<Vec<f64>>,
}

impl EnergyTable {
    /// The values of column `name`, if there is such a column.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let c = self.columns.iter().position(|n| n == name)?;
        Some(self.rows.iter().map(|r| r[c]).collect())
    }
}

/// Reads an `energy.csv` written by [`EnergyCsv`].
pub fn read_energy_csv(path: &Path) -> Result<EnergyTable> {
    let text = read_text(path)?;
    let mut lines = text.lines();
    let header = lines
        .next()
        .ok_or_else(|| invalid_data(path, "empty file: no header".to_owned()))?;
    let names: Vec<&str> = header.split(',').collect();
    let mut rows = Vec::new();
    for (k, line) in lines.enumerate() {
        if !line.trim().is_empty() {
            rows.push(numbers(path, k + 2, line, &names)?);
        }
    }
    Ok(EnergyTable {
        columns: names.into_iter().map(str::to_owned).collect(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Particle;

    fn awkward_particles() -> Particles {
        let mut p = Particles::default();
        let values = [
            0.1,
            -0.0,
            5e-324,
            -1e-310,
            1e300,
            f64::MAX,
            1.0 / 3.0,
            -2.0 / 3.0,
            std::f64::consts::PI,
            f64::INFINITY,
            f64::NEG_INFINITY,
            123456789.125,
        ];
        for k in 0..5 {
            let v = |o: usize| {
                DVec3::new(
                    values[(k + o) % 12],
                    values[(k + o + 1) % 12],
                    values[(k + o + 2) % 12],
                )
            };
            let mut q = Particle::at_rest(v(0), 1.0, 0.1);
            q.velocity = v(3);
            q.rotation = v(6);
            q.angular_velocity = v(9);
            p.push(q);
        }
        p
    }

    #[test]
    fn final_csv_round_trips_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("final.csv");
        let p = awkward_particles();
        write_final_csv(&path, &p).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().next().unwrap(), FINAL_CSV_HEADER);
        assert_eq!(text.lines().count(), 1 + p.len());
        let rows = read_final_csv(&path).unwrap();
        assert_eq!(rows.len(), p.len());
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.id as usize, i);
            for (a, b) in [
                (r.position, p.position[i]),
                (r.velocity, p.velocity[i]),
                (r.rotation, p.rotation[i]),
                (r.angular_velocity, p.angular_velocity[i]),
            ] {
                for (x, y) in a.to_array().into_iter().zip(b.to_array()) {
                    assert_eq!(x.to_bits(), y.to_bits(), "particle {i}: {x:e} vs {y:e}");
                }
            }
        }
    }

    #[test]
    fn nan_survives_the_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("final.csv");
        let mut p = Particles::default();
        let mut q = Particle::at_rest(DVec3::new(f64::NAN, 0.0, 1.0), 1.0, 0.1);
        q.velocity = DVec3::NAN;
        p.push(q);
        write_final_csv(&path, &p).unwrap();
        let rows = read_final_csv(&path).unwrap();
        assert!(rows[0].position.x.is_nan() && rows[0].velocity.is_nan());
        assert_eq!(rows[0].position.z, 1.0);
    }

    #[test]
    fn bad_final_csv_is_reported_with_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("final.csv");
        std::fs::write(&path, "id,x\n0,1\n").unwrap();
        let msg = read_final_csv(&path).unwrap_err().to_string();
        assert!(msg.contains("header \"id,x\""), "{msg}");
        let row = "0,1,2,3,4,5,6,7,8,9,10,11,12";
        std::fs::write(
            &path,
            format!("{FINAL_CSV_HEADER}\n{row}\n1,1,2,3,4,oops,6,7,8,9,10,11,12\n"),
        )
        .unwrap();
        let msg = read_final_csv(&path).unwrap_err().to_string();
        assert!(
            msg.contains("line 3: vy = \"oops\" is not a number"),
            "{msg}"
        );
        std::fs::write(&path, format!("{FINAL_CSV_HEADER}\n0,1,2\n")).unwrap();
        let msg = read_final_csv(&path).unwrap_err().to_string();
        assert!(msg.contains("line 2: 2 fields, expected 12"), "{msg}");
    }

    #[test]
    fn energy_csv_has_the_diagnostics_header_and_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("energy.csv");
        let mut w = EnergyCsv::create(&path).unwrap();
        let mut d = Diagnostics {
            step: 0,
            time: 0.0,
            e_kin: 1.0 / 3.0,
            e_rot: 0.25,
            momentum: DVec3::new(1.0, -2.0, 0.1),
            ..Diagnostics::default()
        };
        w.write(&d).unwrap();
        d.step = 10;
        d.time = 0.01;
        d.potentials.field = -0.7;
        w.write(&d).unwrap();
        // Flushed row by row: readable before the writer is dropped.
        let table = read_energy_csv(&path).unwrap();
        assert_eq!(table.columns.join(","), Diagnostics::CSV_HEADER);
        assert!(Diagnostics::CSV_HEADER
            .starts_with("step,t,e_kin,e_rot,e_pot,e_total,px,py,pz,lx,ly,lz"));
        assert_eq!(table.column("step").unwrap(), [0.0, 10.0]);
        assert_eq!(
            table.column("e_kin").unwrap()[0].to_bits(),
            (1.0f64 / 3.0).to_bits()
        );
        assert_eq!(table.column("e_total").unwrap()[1], d.e_total());
        assert_eq!(table.column("py").unwrap(), [-2.0, -2.0]);
        assert!(table.column("nope").is_none());
        drop(w);
    }

    /// A resumed run keeps the rows before its step, drops the rest (a half-written
    /// line included) and hands back the row of its own step; a missing file is
    /// created; a file that is not an energy.csv is refused.
    #[test]
    fn energy_csv_resumes_after_the_rows_before_the_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("energy.csv");
        let row = |step: u64| Diagnostics {
            step,
            time: step as f64 * 1e-3,
            e_kin: step as f64,
            ..Diagnostics::default()
        };
        let mut w = EnergyCsv::create(&path).unwrap();
        for s in [0, 10, 20, 30] {
            w.write(&row(s)).unwrap();
        }
        drop(w);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("40,4.0e-2,");
        std::fs::write(&path, &text).unwrap();

        let (mut w, replaced) = EnergyCsv::resume(&path, 20).unwrap();
        assert_eq!(replaced, Some(row(20).csv_row()));
        w.write(&row(20)).unwrap();
        w.write(&row(25)).unwrap();
        drop(w);
        let table = read_energy_csv(&path).unwrap();
        assert_eq!(table.column("step").unwrap(), [0.0, 10.0, 20.0, 25.0]);

        let (_, replaced) = EnergyCsv::resume(&path, 15).unwrap();
        assert_eq!(replaced, None);
        assert_eq!(
            read_energy_csv(&path).unwrap().column("step").unwrap(),
            [0.0, 10.0]
        );

        let fresh = dir.path().join("new.csv");
        let (w, replaced) = EnergyCsv::resume(&fresh, 20).unwrap();
        drop(w);
        assert_eq!(replaced, None);
        assert_eq!(
            std::fs::read_to_string(&fresh).unwrap(),
            format!("{}\n", Diagnostics::CSV_HEADER)
        );

        let other = dir.path().join("other.csv");
        std::fs::write(&other, "a,b\n1,2\n").unwrap();
        let err = EnergyCsv::resume(&other, 20).unwrap_err().to_string();
        assert!(err.contains("other.csv") && err.contains("header"), "{err}");
    }
}

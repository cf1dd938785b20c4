//! PNG plots of a run's `energy.csv` (`varidem plot`): the energy budget and the
//! linear and angular momentum against time; with `walls.csv`, the load on each wall.
//!
//! The potential-energy columns are read from the header (every `e_*` column other
//! than `e_kin`, `e_rot`, `e_pot` and `e_total`), so new potential kinds appear in the
//! plot without a change here. Text is drawn with a font compiled into the binary
//! (a subset of DejaVu Sans, `assets/fonts/`), so plotting needs no system fonts.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::csv::{read_energy_csv, EnergyTable};
use crate::error::{Error, Result};

/// Directory (inside the run's directory) the plots go to by default.
pub const PLOTS_DIR: &str = "plots";
/// File name of the energy plot.
pub const ENERGY_PNG: &str = "energy.png";
/// File name of the momentum plot.
pub const MOMENTUM_PNG: &str = "momentum.png";
/// Size (pixels) of the energy plot.
pub const ENERGY_SIZE: (u32, u32) = (1200, 700);
/// Size (pixels) of the momentum plot (two panels).
pub const MOMENTUM_SIZE: (u32, u32) = (1200, 900);
/// File name of the wall-load plot (runs with `walls.csv`).
pub const WALLS_PNG: &str = "walls.png";

/// Colours of the curves, in order (Tableau 10): curve `k` of a panel has colour
/// `PALETTE[k % 10]`, except `e_total`, drawn in black.
pub const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// The font family name the embedded font is registered under.
const FONT: &str = "sans-serif";
/// Width (pixels) of the legend column right of each panel.
const LEGEND_WIDTH: u32 = 170;

/// The columns every energy.csv has and the plots need.
const REQUIRED: [&str; 10] = [
    "t", "e_kin", "e_rot", "e_total", "px", "py", "pz", "lx", "ly", "lz",
];

/// The plots written by [`plot_run`].
#[derive(Clone, Debug, PartialEq)]
pub struct Plots {
    /// The energy plot.
    pub energy: PathBuf,
    /// The momentum plot.
    pub momentum: PathBuf,
    /// The wall-load plot, for runs with walls.
    pub walls: Option<PathBuf>,
    /// Rows plotted.
    pub rows: usize,
}

/// Reads `DIR/energy.csv` of a run and writes [`ENERGY_PNG`] and [`MOMENTUM_PNG`] into
/// `out_dir` (default `DIR/plots`, created if needed).
///
/// Fails, naming the file and the column or line, when `energy.csv` is missing, has no
/// data row, lacks a required column or holds something that is not a number.
pub fn plot_run(dir: &Path, out_dir: Option<&Path>) -> Result<Plots> {
    let csv = dir.join(super::ENERGY_CSV);
    if !csv.is_file() {
        return Err(Error::io(
            &csv,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such file (is the directory the output of `varidem run`?)",
            ),
        ));
    }
    let table = read_energy_csv(&csv)?;
    check_table(&csv, &table)?;
    let out = out_dir.map_or_else(|| dir.join(PLOTS_DIR), Path::to_path_buf);
    std::fs::create_dir_all(&out).map_err(|e| Error::io(&out, e))?;
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let energy = out.join(ENERGY_PNG);
    plot_energy(&table, &name, &energy)?;
    let momentum = out.join(MOMENTUM_PNG);
    plot_momentum(&table, &name, &momentum)?;
    let walls_csv = dir.join(super::WALLS_CSV);
    let walls = if walls_csv.is_file() {
        let path = out.join(WALLS_PNG);
        plot_walls(&walls_csv, &name, &path)?;
        Some(path)
    } else {
        None
    };
    Ok(Plots {
        energy,
        momentum,
        walls,
        rows: table.rows.len(),
    })
}

/// Writes the load on each wall of `walls.csv` at `csv` (the magnitude of the force
/// the particles put on it, `|(fx, fy, fz)|`) against t to `path`: under plates that
/// move at constant speed, the load–displacement curve (the Brazilian test's).
///
/// Fails, naming the file and the line, on a row that does not parse.
pub fn plot_walls(csv: &Path, title: &str, path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(csv).map_err(|e| Error::io(csv, e))?;
    let mut curves: Vec<Curve> = Vec::new();
    for (k, line) in text.lines().enumerate().skip(1) {
        // step,t,wall,fx,fy,fz,mx,my,mz; a quoted label may hold commas: the numbers
        // are the last six fields and t the second.
        let fields: Vec<&str> = line.split(',').collect();
        let bad = || {
            invalid(
                csv,
                format!("line {}: not a walls.csv row: {line:?}", k + 1),
            )
        };
        if fields.len() < 9 {
            return Err(bad());
        }
        let num = |s: &str| s.trim().parse::<f64>().map_err(|_| bad());
        let t = num(fields[1])?;
        let n = fields.len();
        let f = [
            num(fields[n - 6])?,
            num(fields[n - 5])?,
            num(fields[n - 4])?,
        ];
        let label = fields[2..n - 6].join(",");
        let load = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
        if !(t.is_finite() && load.is_finite()) {
            continue;
        }
        match curves.iter_mut().find(|c| c.label == label) {
            Some(c) => c.points.push((t, load)),
            None => {
                let color = palette(curves.len());
                curves.push(Curve {
                    label,
                    points: vec![(t, load)],
                    color,
                    width: 2,
                });
            }
        }
    }
    register_font();
    let root = BitMapBackend::new(path, ENERGY_SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(path, e))?;
    let caption = if title.is_empty() {
        "wall loads".to_owned()
    } else {
        format!("wall loads — {title}")
    };
    panel(&root, &caption, "|F| (N)", &curves).map_err(|e| draw_error(path, e))?;
    root.present().map_err(|e| draw_error(path, e))
}

fn invalid(path: &Path, msg: String) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::InvalidData, msg),
    )
}

fn check_table(path: &Path, table: &EnergyTable) -> Result<()> {
    for name in REQUIRED {
        if !table.columns.iter().any(|c| c == name) {
            return Err(invalid(
                path,
                format!(
                    "no column {name:?} in the header ({})",
                    table.columns.join(",")
                ),
            ));
        }
    }
    if table.rows.is_empty() {
        return Err(invalid(path, "no data rows to plot".to_owned()));
    }
    Ok(())
}

/// The potential-energy columns of `table`: every `e_*` column but the kinetic ones
/// and the sums, in header order.
pub fn potential_columns(table: &EnergyTable) -> Vec<&str> {
    table
        .columns
        .iter()
        .map(String::as_str)
        .filter(|c| c.starts_with("e_") && !matches!(*c, "e_kin" | "e_rot" | "e_pot" | "e_total"))
        .collect()
}

/// Registers the embedded font once per process.
pub(super) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // A valid TTF compiled in: registering it cannot fail.
        let _ = plotters::style::register_font(
            FONT,
            FontStyle::Normal,
            include_bytes!("../../assets/fonts/DejaVuSans-subset.ttf"),
        );
    });
}

fn draw_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::io(
        path,
        std::io::Error::other(format!("drawing the plot: {e}")),
    )
}

/// One curve: legend label, points, colour and line width.
struct Curve {
    label: String,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    width: u32,
}

impl Curve {
    fn new(table: &EnergyTable, t: &[f64], column: &str, color: RGBColor, width: u32) -> Self {
        let y = table.column(column).unwrap_or_default();
        // Non-finite values (a run that blew up) would break the axis ranges.
        let points = t
            .iter()
            .zip(y)
            .filter(|(t, y)| t.is_finite() && y.is_finite())
            .map(|(&t, y)| (t, y))
            .collect();
        Self {
            label: column.to_owned(),
            points,
            color,
            width,
        }
    }
}

fn palette(k: usize) -> RGBColor {
    let (r, g, b) = PALETTE[k % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Writes the energy budget plot of `table` to `path`.
pub fn plot_energy(table: &EnergyTable, title: &str, path: &Path) -> Result<()> {
    let t = table.column("t").unwrap_or_default();
    let mut curves = Vec::new();
    for name in ["e_kin", "e_rot"]
        .into_iter()
        .chain(potential_columns(table))
    {
        let color = palette(curves.len());
        curves.push(Curve::new(table, &t, name, color, 2));
    }
    curves.push(Curve::new(table, &t, "e_total", BLACK, 3));
    register_font();
    let root = BitMapBackend::new(path, ENERGY_SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(path, e))?;
    let caption = if title.is_empty() {
        "energy budget".to_owned()
    } else {
        format!("energy budget — {title}")
    };
    panel(&root, &caption, "energy (J)", &curves).map_err(|e| draw_error(path, e))?;
    root.present().map_err(|e| draw_error(path, e))
}

/// Writes the momentum plot of `table` to `path`: linear momentum above, angular
/// momentum (about the origin) below.
pub fn plot_momentum(table: &EnergyTable, title: &str, path: &Path) -> Result<()> {
    let t = table.column("t").unwrap_or_default();
    let curves = |names: [&str; 3]| -> Vec<Curve> {
        names
            .iter()
            .enumerate()
            .map(|(k, n)| Curve::new(table, &t, n, palette(k), 2))
            .collect()
    };
    register_font();
    let root = BitMapBackend::new(path, MOMENTUM_SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(path, e))?;
    let (top, bottom) = root.split_vertically(MOMENTUM_SIZE.1 / 2);
    let suffix = if title.is_empty() {
        String::new()
    } else {
        format!(" — {title}")
    };
    panel(
        &top,
        &format!("linear momentum{suffix}"),
        "p (kg·m/s)",
        &curves(["px", "py", "pz"]),
    )
    .map_err(|e| draw_error(path, e))?;
    panel(
        &bottom,
        &format!("angular momentum{suffix}"),
        "L (kg·m²/s)",
        &curves(["lx", "ly", "lz"]),
    )
    .map_err(|e| draw_error(path, e))?;
    root.present().map_err(|e| draw_error(path, e))
}

/// `[lo, hi]` covering `values` with a 5% margin; a flat or empty range is widened so
/// the axis has a span.
fn padded_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let span = hi - lo;
    if span <= 1e-12 * lo.abs().max(hi.abs()) || span == 0.0 {
        let pad = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        return (lo - pad, hi + pad);
    }
    (lo - 0.05 * span, hi + 0.05 * span)
}

/// A tick label with as many digits as the axis span needs, in scientific notation
/// for very large or small magnitudes.
fn tick_label(v: f64, span: f64) -> String {
    let mag = span.abs().log10().floor();
    if v == 0.0 {
        return "0".to_owned();
    }
    if !(-3.0..=5.0).contains(&mag) {
        return format!("{v:.2e}");
    }
    let digits = (1.0 - mag).clamp(0.0, 6.0) as usize;
    let s = format!("{v:.digits$}");
    // "-0.00" → "0.00".
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_owned()
    } else {
        s
    }
}

type DrawResult<T> = std::result::Result<
    T,
    DrawingAreaErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>,
>;

/// Draws `curves` against t in `area`: a chart with `caption` and `y_label` on the
/// left, the legend in a column on the right (so it never hides a curve).
fn panel(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    caption: &str,
    y_label: &str,
    curves: &[Curve],
) -> DrawResult<()> {
    let (w, _) = area.dim_in_pixel();
    let (plot_area, legend_area) = area.split_horizontally(w.saturating_sub(LEGEND_WIDTH));
    let (x0, x1) = padded_range(curves.iter().flat_map(|c| c.points.iter().map(|p| p.0)));
    // Time starts where the data starts: no margin on the left of t.
    let first_t = curves
        .iter()
        .flat_map(|c| c.points.first().map(|p| p.0))
        .fold(f64::INFINITY, f64::min);
    let last_t = curves
        .iter()
        .flat_map(|c| c.points.last().map(|p| p.0))
        .fold(f64::NEG_INFINITY, f64::max);
    let (x0, x1) = if first_t < last_t {
        (first_t, last_t)
    } else {
        (x0, x1)
    };
    let (y0, y1) = padded_range(curves.iter().flat_map(|c| c.points.iter().map(|p| p.1)));
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(caption, (FONT, 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(95)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    let (xs, ys) = (x1 - x0, y1 - y0);
    chart
        .configure_mesh()
        .x_desc("t (s)")
        .y_desc(y_label)
        .x_label_formatter(&|v| tick_label(*v, xs))
        .y_label_formatter(&|v| tick_label(*v, ys))
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210))
        .draw()?;
    for c in curves {
        chart.draw_series(LineSeries::new(
            c.points.iter().copied(),
            c.color.stroke_width(c.width),
        ))?;
    }
    // The legend: a swatch and the column name per curve, top to bottom.
    for (k, c) in curves.iter().enumerate() {
        let y = 60 + 28 * k as i32;
        legend_area.draw(&Rectangle::new([(8, y - 3), (38, y + 3)], c.color.filled()))?;
        legend_area.draw(&Text::new(
            c.label.clone(),
            (46, y - 9),
            (FONT, 17).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_padded_and_never_flat() {
        assert_eq!(padded_range([0.0, 10.0].into_iter()), (-0.5, 10.5));
        assert_eq!(padded_range([0.0, 0.0].into_iter()), (-1.0, 1.0));
        assert_eq!(padded_range([2.0].into_iter()), (1.8, 2.2));
        assert_eq!(padded_range(std::iter::empty()), (0.0, 1.0));
    }

    #[test]
    fn tick_labels_follow_the_span() {
        assert_eq!(tick_label(12.4, 30.0), "12");
        assert_eq!(tick_label(0.26, 1.0), "0.3");
        assert_eq!(tick_label(-0.0001, 0.5), "0.00");
        assert_eq!(tick_label(0.0, 1e-7), "0");
        assert_eq!(tick_label(1e-6, 1e-5), "1.00e-6");
    }

    /// Two walls' loads, one of them with a quoted label holding a comma: a curve each;
    /// a row that does not parse is named by its line.
    #[test]
    fn wall_loads_are_plotted_per_wall() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("walls.csv");
        std::fs::write(
            &csv,
            "step,t,wall,fx,fy,fz,mx,my,mz\n\
             0,0e0,wall[0],0,1,0,0,0,0\n0,0e0,\"a,b\",3,4,0,0,0,0\n\
             1,1e0,wall[0],0,2,0,0,0,0\n1,1e0,\"a,b\",6,8,0,0,0,0\n",
        )
        .unwrap();
        let png = dir.path().join("walls.png");
        plot_walls(&csv, "t", &png).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
        std::fs::write(
            &csv,
            "step,t,wall,fx,fy,fz,mx,my,mz\n0,x,wall[0],0,1,0,0,0,0\n",
        )
        .unwrap();
        let e = plot_walls(&csv, "t", &png).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn potential_columns_come_from_the_header() {
        let table = EnergyTable {
            columns: "step,t,e_kin,e_rot,e_pot,e_total,px,e_bend,e_new"
                .split(',')
                .map(str::to_owned)
                .collect(),
            rows: Vec::new(),
        };
        assert_eq!(potential_columns(&table), ["e_bend", "e_new"]);
    }
}

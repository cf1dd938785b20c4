//! The documented Beverloo run (issue 26): a quasi-2-D silo 0.2 m wide holding 2500
//! beads of 4 mm discharges through slots of 5 to 12 bead diameters; prints each
//! rate and the fitted `C` and `k` of `W = C ρ_b √g (D − k d)^{3/2}`.
//!
//! ```sh
//! cargo run --release --example beverloo
//! ```
//!
//! The reduced case runs in `cargo test` (`tests/equipment.rs`).

#[path = "../tests/common/silo.rs"]
mod silo;

fn main() {
    let d = 2.0 * silo::RADIUS;
    let mut runs = Vec::new();
    println!("| D/d | W (kg/s) | beads in 0.3 s | ρ_b (kg/m²) |\n|---|---|---|---|");
    for k in [5.0, 6.0, 7.0, 8.0, 10.0, 12.0] {
        let r = silo::discharge(0.2, 2500, k * d);
        println!("| {k} | {:.4e} | {} | {:.3} |", r.rate, r.beads, r.bulk);
        runs.push(r);
    }
    let (c, k, r2) = silo::fit_beverloo(&runs);
    println!("\nC = {c:.3}, k = {k:.2} (r² of W^(2/3) against D: {r2:.4})");
}

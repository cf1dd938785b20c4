//! The short channel of tests/channel.rs and tests/storage_order.rs (issue 48):
//! `scenes/channel-small.toml` cut to a 2 cm channel (the fill 19 columns long), 200
//! steps: the obstacle, two inflow returns and the first exits at the open end.

use std::path::Path;

use varidem::io::parse_scene;
use varidem::model::Scene;

/// The cut channel, frames every 50 steps.
pub fn short_channel() -> Scene {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/channel-small.toml"),
    )
    .unwrap();
    let cut = text
        .replace("t_end = 0.2", "steps = 200")
        .replace("output_every = 1000", "output_every = 50")
        .replace(
            "max = [0.05, 0.022667, 0.013]",
            "max = [0.02, 0.022667, 0.013]",
        )
        .replace("counts = [49, 21, 12]", "counts = [19, 21, 12]");
    assert_eq!(cut.matches("0.02,").count(), 1, "the domain was cut");
    parse_scene(&cut).unwrap_or_else(|e| panic!("{e}"))
}

//! What a run's record `run.toml` says about the run itself: its `[run]` table (the
//! scene after it is read by [`crate::io::parse_scene`], which ignores the table).

/// What the `[run]` table of a `run.toml` says about its run (fields it lacks, as in
/// records of older versions, are `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordedRun {
    /// The run's identity (`run::OutputOptions::run_id`).
    pub run_id: Option<u64>,
    /// Whether the run writes VTK frames.
    pub vtk: Option<bool>,
}

/// The `[run]` table of `run.toml`'s text (empty when the text is not TOML or has none).
pub fn recorded_run(text: &str) -> RecordedRun {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return RecordedRun::default();
    };
    let run = doc.get("run").and_then(toml::Value::as_table);
    RecordedRun {
        run_id: run
            .and_then(|r| r.get("run_id"))
            .and_then(toml::Value::as_str)
            .and_then(|s| u64::from_str_radix(s, 16).ok()),
        vtk: run
            .and_then(|r| r.get("vtk"))
            .and_then(toml::Value::as_bool),
    }
}

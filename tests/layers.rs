//! The module tree is layered (README, Layout): each module imports only from the
//! layers below it, so there are no import cycles, the two backends never import each
//! other, and `model` and `io` import no backend. This test reads the sources: a
//! `crate::<module>` path in code (not in comments) of a module of a lower or equal
//! layer fails it, naming the file and line.

use std::path::{Path, PathBuf};

/// The layers, bottom up; modules of one layer may not import each other.
const LAYERS: &[&[&str]] = &[
    &["math"],
    &["model"],
    &["error"],
    &["physics"],
    &["integrators"],
    &["neighbor", "diagnostics", "memory_check"],
    &["backend"],
    &["cpu", "gpu"],
    &["io"],
    &["checkpoint", "render"],
    &["select"],
    &["run", "bench"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`src/gpu/plan.rs` → `gpu`,
/// `src/run.rs` → `run`); `None` for the crate root and the binary.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.trim_end_matches(".rs").to_string();
    (name != "lib" && name != "bin").then_some(name)
}

/// The modules named as `crate::<module>` in the code of `line` (comments removed).
fn imports(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    code.match_indices("crate::")
        .filter(|(i, _)| {
            // Not the tail of another path (`varidem::crate::`, `mycrate::`).
            !code[..*i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        })
        .map(|(i, m)| {
            code[i + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn modules_import_only_from_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    let mut unknown = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let Some(own) = layer(&module) else {
            unknown.push(module);
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for target in imports(line) {
                if target == module || target.is_empty() {
                    continue;
                }
                match layer(&target) {
                    Some(l) if l < own => {}
                    Some(_) => violations.push(format!(
                        "{}:{}: {module} imports {target}",
                        file.display(),
                        n + 1
                    )),
                    None => unknown.push(target),
                }
            }
        }
    }
    unknown.sort();
    unknown.dedup();
    assert!(
        unknown.is_empty(),
        "modules missing from LAYERS: {unknown:?}"
    );
    assert!(
        violations.is_empty(),
        "imports against the layer order:\n{}",
        violations.join("\n")
    );
}

/// The scanner sees imports in code and ignores them in comments.
#[test]
fn imports_are_read_from_code_only() {
    assert_eq!(imports("use crate::gpu::Precision;"), vec!["gpu"]);
    assert_eq!(
        imports("    let x = crate::cpu::NO_PARTNER; // crate::gpu"),
        vec!["cpu"]
    );
    assert!(imports("/// See [`crate::io::vtk`].").is_empty());
    assert_eq!(layer("cpu"), layer("gpu"));
    assert!(layer("model") < layer("physics"));
}

//! Every complete TOML scene shown in the documentation parses.
//!
//! The examples are the ```` ```toml ```` fenced blocks of `README.md` and
//! `docs/scene-format.md`. A block whose info string also says `fragment`
//! (```` ```toml fragment ````) shows only some tables of a scene and is skipped; every
//! other `toml` block must be a whole scene that `varidem::io::parse_scene` accepts. A
//! failure names the file and the line of the block's opening fence.

use std::path::Path;

/// A fenced example: the line of its opening fence (1-based), whether it is marked as a
/// fragment, and its text.
struct Example {
    line: usize,
    fragment: bool,
    text: String,
}

/// The ```` ```toml ```` blocks of `markdown`, in order.
fn toml_examples(markdown: &str) -> Vec<Example> {
    let mut examples = Vec::new();
    let mut current: Option<Example> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match current.as_mut() {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let words: Vec<&str> = info
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .filter(|w| !w.is_empty())
                        .collect();
                    if words.first() == Some(&"toml") {
                        current = Some(Example {
                            line: index + 1,
                            fragment: words.contains(&"fragment"),
                            text: String::new(),
                        });
                    } else if !info.trim().is_empty() || trimmed == "```" {
                        // Another language's block (or an untagged one): skip to its end.
                        current = Some(Example {
                            line: 0,
                            fragment: true,
                            text: String::new(),
                        });
                    }
                }
            }
            Some(example) => {
                if trimmed.starts_with("```") {
                    let done = current.take().expect("inside a block");
                    if done.line != 0 {
                        examples.push(done);
                    }
                } else {
                    example.text.push_str(line);
                    example.text.push('\n');
                }
            }
        }
    }
    assert!(current.is_none(), "a fenced block is not closed");
    examples
}

fn check_file(relative: &str) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let markdown = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut complete = 0;
    let mut failures = Vec::new();
    for example in toml_examples(&markdown) {
        if example.fragment {
            continue;
        }
        complete += 1;
        if let Err(e) = varidem::io::parse_scene(&example.text) {
            failures.push(format!("{relative}:{}: {e:#}", example.line));
        }
    }
    assert!(
        failures.is_empty(),
        "scene examples that do not parse:\n{}",
        failures.join("\n")
    );
    complete
}

#[test]
fn readme_scene_examples_parse() {
    assert!(
        check_file("README.md") >= 1,
        "README.md shows no complete scene"
    );
}

#[test]
fn scene_format_examples_parse() {
    assert!(
        check_file("docs/scene-format.md") >= 1,
        "docs/scene-format.md shows no complete scene"
    );
}

#[test]
fn examples_are_found_with_their_lines() {
    let md = "text\n```toml\n[simulation]\n```\n```sh\nls\n```\n```toml fragment\n[contact]\n```\n";
    let examples = toml_examples(md);
    assert_eq!(examples.len(), 2);
    assert_eq!((examples[0].line, examples[0].fragment), (2, false));
    assert_eq!(examples[0].text, "[simulation]\n");
    assert_eq!((examples[1].line, examples[1].fragment), (8, true));
}

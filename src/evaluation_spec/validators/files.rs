//! The file validators over `file:` captures: file_exists, file_content_match,
//! file_json_schema and directory_structure. Their configs are decoded leniently (unknown keys
//! ignored) and never checked at load, as in the reference.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::Value;

use super::config::{decode, RawConfig};
use super::json::{compile_schema, parse_document, validate_against, CompiledSchema};
use super::text::{compile_regex, go_quote, RegexCache};
use super::Comparison;
use crate::scoring::json::equal_as_f64;
use crate::scoring::normalize::collapse_whitespace;

/// A lenient config decode whose error reads `invalid <kind> config: …`.
fn lenient<T: serde::de::DeserializeOwned + Default>(
    kind: &str,
    config: RawConfig<'_>,
) -> Result<T, String> {
    decode(config).map_err(|err| format!("invalid {kind} config: {err}"))
}

// ---- file_exists ----------------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
pub(super) struct FileExistsConfig {
    must_exist: Option<bool>,
}

pub(super) fn prepare_file_exists(config: RawConfig<'_>) -> Result<FileExistsConfig, String> {
    lenient("file_exists", config)
}

/// The target resolved to a value: the file (or listing) exists.
pub(super) fn file_present(config: &FileExistsConfig) -> Comparison {
    Comparison::binary(
        config.must_exist.unwrap_or(true),
        "file exists but should not",
    )
}

/// The target is missing; a config error is ignored here (the default `must_exist` applies).
pub(super) fn file_missing(config: Option<&FileExistsConfig>) -> Comparison {
    let must_exist = config.and_then(|config| config.must_exist).unwrap_or(true);
    Comparison::decided(
        !must_exist,
        "file correctly does not exist",
        "file does not exist",
    )
}

// ---- file_content_match ---------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
pub(super) struct FileContentConfig {
    match_mode: Option<String>,
    ignore_whitespace: Option<bool>,
}

pub(super) fn prepare_file_content(config: RawConfig<'_>) -> Result<FileContentConfig, String> {
    lenient("file_content_match", config)
}

pub(super) fn file_content_match(
    config: &FileContentConfig,
    regex_cache: &RegexCache,
    actual: &str,
    expected: &str,
) -> Comparison {
    let mode = config.match_mode.as_deref().unwrap_or("contains");
    let (spaced_actual, spaced_expected) = if config.ignore_whitespace == Some(true) {
        (collapse_whitespace(actual), collapse_whitespace(expected))
    } else {
        (actual.to_string(), expected.to_string())
    };
    match mode {
        "exact" => Comparison::binary(
            spaced_actual == spaced_expected,
            "file content does not match exactly",
        ),
        "contains" => Comparison::binary(
            spaced_actual.contains(&spaced_expected),
            "file content does not contain expected string",
        ),
        "not_contains" => Comparison::binary(
            !spaced_actual.contains(&spaced_expected),
            "file content contains forbidden string",
        ),
        "regex" => match regex_cache.get(expected, compile_regex) {
            Ok(regex) => Comparison::binary(
                regex.is_match(actual),
                "file content does not match regex pattern",
            ),
            Err(err) => Comparison::error(format!("invalid regex pattern: {err}")),
        },
        "json_equal" => {
            let actual = match parse_document(actual) {
                Ok(value) => value,
                Err(err) => return Comparison::error(format!("parse actual as JSON: {err}")),
            };
            match parse_document(expected) {
                Ok(expected) => Comparison::binary(
                    equal_as_f64(&actual, &expected),
                    "file JSON content is not structurally equal",
                ),
                Err(err) => Comparison::error(format!("parse expected as JSON: {err}")),
            }
        }
        other => Comparison::error(format!("unsupported match_mode {}", go_quote(other))),
    }
}

// ---- file_json_schema -----------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
struct FileJsonSchemaConfig {
    schema: Option<Value>,
}

/// Decode the config and compile its schema once.
pub(super) fn prepare_file_json_schema(config: RawConfig<'_>) -> Result<CompiledSchema, String> {
    if config.is_absent() {
        return Err("file_json_schema config is required".to_string());
    }
    let config: FileJsonSchemaConfig = lenient("file_json_schema", config)?;
    match config.schema {
        None | Some(Value::Null) => Err("file_json_schema config.schema is required".to_string()),
        Some(schema) => compile_schema(&schema),
    }
}

pub(super) fn file_json_schema(schema: &CompiledSchema, actual: &str) -> Comparison {
    validate_against(schema, actual)
}

// ---- directory_structure --------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
pub(super) struct DirectoryConfig {
    required_files: Option<Vec<String>>,
    forbidden_files: Option<Vec<String>>,
    required_directories: Option<Vec<String>>,
}

pub(super) fn prepare_directory(config: RawConfig<'_>) -> Result<DirectoryConfig, String> {
    if config.is_absent() {
        return Err("directory_structure config is required".to_string());
    }
    lenient("directory_structure", config)
}

#[derive(Debug, Deserialize)]
struct Listing {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    entries: Option<Vec<ListingEntry>>,
}

#[derive(Debug, Deserialize)]
struct ListingEntry {
    path: String,
    #[serde(default)]
    is_dir: Option<bool>,
}

/// A slash path cleaned like Go's `path.Clean` (no empty, `.` or resolvable `..` segments, no
/// trailing slash).
fn clean_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|last| *last != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// The files of `files` whose presence among the listed `entries` is `present`.
fn whose_presence_is<'a>(
    files: &'a Option<Vec<String>>,
    entries: &HashSet<String>,
    present: bool,
) -> Vec<&'a str> {
    files
        .iter()
        .flatten()
        .filter(|file| entries.contains(file.as_str()) == present)
        .map(String::as_str)
        .collect()
}

/// `entry` relative to `root`, when it lies inside it.
fn relative_to(root: &str, entry: &str) -> Option<String> {
    let (root, entry) = (clean_path(root), clean_path(entry));
    if root == "." && !entry.starts_with('/') {
        return Some(entry);
    }
    let prefix = if root.ends_with('/') {
        root
    } else {
        format!("{root}/")
    };
    entry
        .strip_prefix(&prefix)
        .filter(|rest| !rest.is_empty())
        .map(String::from)
}

pub(super) fn directory_structure(config: &DirectoryConfig, listing: &str) -> Comparison {
    let listing: Listing = match serde_json::from_str(listing) {
        Ok(listing) => listing,
        Err(err) => return Comparison::error(format!("parse directory listing: {err}")),
    };
    let root = listing.path.unwrap_or_default();
    let mut entries: HashSet<String> = HashSet::new();
    let mut directories: HashSet<String> = HashSet::new();
    for entry in listing.entries.unwrap_or_default() {
        let mut forms = vec![entry.path.clone(), clean_path(&entry.path)];
        forms.extend(relative_to(&root, &entry.path));
        if entry.is_dir == Some(true) {
            directories.extend(forms.iter().cloned());
        }
        entries.extend(forms);
    }
    let missing_files = whose_presence_is(&config.required_files, &entries, false);
    let forbidden_present = whose_presence_is(&config.forbidden_files, &entries, true);
    let missing_directories: Vec<&str> = config
        .required_directories
        .iter()
        .flatten()
        .filter(|directory| {
            let trimmed = directory.strip_suffix('/').unwrap_or(directory);
            !(directories.contains(trimmed)
                || directories.contains(directory.as_str())
                || entries.contains(trimmed))
        })
        .map(String::as_str)
        .collect();
    let mut reasons = Vec::new();
    for (label, items) in [
        ("missing required files", &missing_files),
        ("forbidden files present", &forbidden_present),
        ("missing required directories", &missing_directories),
    ] {
        if !items.is_empty() {
            reasons.push(format!("{label}: {}", items.join(", ")));
        }
    }
    Comparison::binary(reasons.is_empty(), &reasons.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_clean_and_relativise_like_go() {
        assert_eq!(clean_path("/w/p/src/"), "/w/p/src");
        assert_eq!(clean_path("a//b/./c/../d"), "a/b/d");
        assert_eq!(relative_to("/w/p/", "/w/p/src/"), Some("src".into()));
        assert_eq!(relative_to("/w/p", "/w/other"), None);
    }

    #[test]
    fn missing_pieces_are_all_named() {
        let config = DirectoryConfig {
            required_files: Some(vec!["a.txt".into(), "b.txt".into()]),
            forbidden_files: Some(vec!["c.txt".into()]),
            required_directories: Some(vec!["src/".into()]),
        };
        let listing = r#"{"path":"/w","entries":[{"path":"/w/c.txt","size":1}]}"#;
        let outcome = directory_structure(&config, listing);
        assert_eq!(
            outcome.reason(),
            "missing required files: a.txt, b.txt; forbidden files present: c.txt; \
             missing required directories: src/"
        );
    }
}

//! The package's entry points (pkg-template/: one per runtime, and the declarations) each
//! write out the list of what the package exports. This reads every copy and fails when one
//! differs from the browser entry's: a name added to one entry and not to another would make
//! `import { x } from "resilient-fetch"` work in one runtime only.

use std::collections::BTreeSet;

fn read(path: &str) -> String {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// The names of `{ a, b }` (with `a as b`: `b`), spaces and new lines allowed.
fn braced(list: &str) -> impl Iterator<Item = String> + '_ {
    list.split(',')
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .map(|n| n.rsplit(" as ").next().unwrap_or(n).trim().to_string())
}

/// Every `{ ... }` list that follows `prefix` in `text`.
fn lists_after<'t>(text: &'t str, prefix: &'t str) -> impl Iterator<Item = &'t str> + 't {
    text.match_indices(prefix).filter_map(move |(at, _)| {
        let rest = &text[at + prefix.len()..];
        let rest = rest.trim_start().strip_prefix('{')?;
        rest.split_once('}').map(|(list, _)| list)
    })
}

/// The values an ES module entry (or its declarations) exports: `export { … }` lists (not
/// `export type { … }`), `export const { … }`, `export function|class|const NAME`, and `default`.
fn es_exports(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim_start();
        for keyword in [
            "export function ",
            "export class ",
            "export async function ",
            "export const ",
        ] {
            if let Some(rest) = line.strip_prefix(keyword) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                    .collect();
                // `export const { … }` is a list, read below.
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        }
        if line.starts_with("export default ") {
            names.insert("default".to_string());
        }
    }
    for prefix in ["export ", "export const "] {
        for list in lists_after(text, prefix) {
            names.extend(braced(list));
        }
    }
    names
}

/// What `module.exports = { … }` gives (CommonJS has no default export).
fn cjs_exports(text: &str) -> BTreeSet<String> {
    lists_after(text, "module.exports =")
        .flat_map(braced)
        .collect()
}

/// An entry as scripts/build.sh writes it for the lean build (`full`: false: its `//+full `
/// lines dropped) or the full one (those lines kept, the mark taken off).
fn build_of(text: &str, full: bool) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let body = line.trim_start();
        match body.strip_prefix("//+full ") {
            Some(rest) if full => {
                out.push_str(&format!("{}{rest}", &line[..line.len() - body.len()]))
            }
            Some(_) => continue,
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[test]
fn the_full_entries_export_what_the_full_browser_entry_exports() {
    let browser = es_exports(&build_of(&read("pkg-template/browser.js"), true));
    assert!(browser.contains("resilientEvents"), "{browser:?}");
    for entry in [
        "pkg-template/worker.js",
        "pkg-template/deno.mjs",
        "pkg-template/node.mjs",
    ] {
        assert_eq!(
            es_exports(&build_of(&read(entry), true)),
            browser,
            "{entry} (full) exports other names than pkg-template/browser.js (full)"
        );
    }
    assert_eq!(
        es_exports(&read("pkg-template/full/index.d.ts")),
        browser,
        "pkg-template/full/index.d.ts"
    );
    let node = build_of(&read("pkg-template/node.cjs"), true);
    assert!(node.contains("module.exports.resilientEvents = "), "{node}");
}

#[test]
fn every_entry_exports_what_the_browser_entry_exports() {
    let browser = es_exports(&build_of(&read("pkg-template/browser.js"), false));
    for name in [
        "resilientFetch",
        "ResilientClient",
        "TimeoutError",
        "default",
    ] {
        assert!(
            browser.contains(name),
            "browser.js exports {name}: {browser:?}"
        );
    }
    for entry in [
        "pkg-template/worker.js",
        "pkg-template/deno.mjs",
        "pkg-template/node.mjs",
        "pkg-template/index.d.ts",
    ] {
        assert_eq!(
            es_exports(&build_of(&read(entry), false)),
            browser,
            "{entry} exports other names than pkg-template/browser.js"
        );
    }
    let mut without_default = browser.clone();
    without_default.remove("default");
    assert_eq!(
        cjs_exports(&read("pkg-template/node.cjs")),
        without_default,
        "pkg-template/node.cjs exports other names than pkg-template/browser.js"
    );
}

#[test]
fn the_error_classes_are_the_same_list_everywhere() {
    // scripts/build.sh writes errors.js, the module every entry takes the classes from.
    let build = read("scripts/build.sh");
    let written: BTreeSet<String> = lists_after(&build, "echo \"export")
        .flat_map(braced)
        .collect();
    assert!(written.contains("TimeoutError"), "{written:?}");
    for entry in [
        "pkg-template/browser.js",
        "pkg-template/worker.js",
        "pkg-template/deno.mjs",
        "pkg-template/index.d.ts",
        "pkg-template/index.d.cts",
    ] {
        let text = read(entry);
        let from_errors: BTreeSet<String> = text
            .lines()
            .filter(|l| l.contains("errors.js\""))
            .flat_map(|l| {
                lists_after(l, "export ")
                    .flat_map(braced)
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(from_errors, written, "{entry}: its error classes");
    }
}

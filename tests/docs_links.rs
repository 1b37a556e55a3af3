//! The package page (README.md) sends its readers to CHANGELOG.md, bench/README.md and a
//! page per topic under docs/. Every relative link in those pages must lead to a file of the
//! repository and, when it names a heading (`docs/outbox.md#replay`), to a heading of that
//! file, as GitHub and npm make its anchor. A link that breaks when a heading is renamed or a
//! section moves fails here.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Markdown pages whose links are checked, relative to the repository's root.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = [
        "README.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "bench/README.md",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let docs = fs::read_dir(Path::new(ROOT).join("docs")).expect("docs/ exists");
    let mut topics: Vec<PathBuf> = docs
        .map(|entry| entry.expect("docs/ can be listed").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| PathBuf::from("docs").join(path.file_name().expect("a file name")))
        .collect();
    topics.sort();
    pages.extend(topics);
    pages
}

fn read(page: &Path) -> String {
    fs::read_to_string(Path::new(ROOT).join(page))
        .unwrap_or_else(|e| panic!("{}: {e}", page.display()))
}

/// The text outside fenced code blocks and inline code spans, where links are links.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if !fenced {
            // Drop inline code: `a](b` inside backticks is not a link.
            let mut in_code = false;
            for c in line.chars() {
                if c == '`' {
                    in_code = !in_code;
                } else if !in_code {
                    out.push(c);
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the inline links `[text](target)` of a page (link text may span lines).
fn link_targets(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    let mut targets = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                targets.push(after[..end].trim().to_string());
                rest = &after[end..];
            }
            None => break,
        }
    }
    targets
}

/// A heading's anchor as GitHub makes it (npm's page makes the same): lower case, spaces
/// become hyphens, and every character but letters, digits, `-` and `_` is dropped.
fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Every anchor a page's headings make, a repeated one numbered as GitHub numbers it.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if fenced || hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let text = line[hashes..].trim().trim_end_matches('#').trim();
        let plain: String = text.chars().filter(|&c| c != '`').collect();
        let base = slug(&plain);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// `dir/../a/./b` -> `a/b`; `None` when it climbs out of the repository.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// What is wrong with one link of `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    if target.starts_with('/') {
        return Some("an absolute path breaks on the package page: make it relative".into());
    }
    let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if file.is_empty() {
        page.to_path_buf()
    } else {
        let Some(file) = normalise(&page.parent().unwrap_or(Path::new("")).join(file)) else {
            return Some("leads out of the repository".into());
        };
        file
    };
    let on_disk = Path::new(ROOT).join(&file);
    if !on_disk.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    if anchor.is_empty() {
        return None;
    }
    if file.extension().is_none_or(|ext| ext != "md") {
        return Some(format!(
            "#{anchor} in {}, which is not Markdown",
            file.display()
        ));
    }
    let headings = anchors(&read(&file));
    if headings.contains(anchor) {
        None
    } else {
        Some(format!("{} has no heading #{anchor}", file.display()))
    }
}

#[test]
fn every_relative_link_leads_to_a_file_and_a_heading() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in pages() {
        for target in link_targets(&read(&page)) {
            checked += 1;
            if let Some(why) = broken(&page, &target) {
                problems.push(format!("{}: ({target}): {why}", page.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
    assert!(
        checked >= 40,
        "only {checked} links found: is the link parser still right?"
    );
}

#[test]
fn the_package_page_links_every_topic_page() {
    let readme = link_targets(&read(Path::new("README.md")));
    for page in pages().iter().filter(|p| p.starts_with("docs")) {
        let name = page.display().to_string();
        assert!(
            readme
                .iter()
                .any(|t| t == &name || t.starts_with(&format!("{name}#"))),
            "README.md does not link {name}"
        );
    }
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    let page = "# A\n## The outbox: writes that wait for the server\n## `Retry-After` holds it\n\
                ## The last run's results\n```\n# not a heading\n```\n## Replay\n## Replay\n";
    let expected = [
        "a",
        "the-outbox-writes-that-wait-for-the-server",
        "retry-after-holds-it",
        "the-last-runs-results",
        "replay",
        "replay-1",
    ];
    assert_eq!(
        anchors(page),
        expected
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>()
    );
    assert_eq!(
        link_targets("see [the `x`](docs/a.md#b) and `[no](link)`, [two\nlines](#c)"),
        ["docs/a.md#b", "#c"]
    );
}

/// The package page is read in a couple of minutes: at most this many bytes (ky's page is
/// about a third of the 66 KB this one once had). Exact rules go to docs/, history to
/// CHANGELOG.md, benchmark tables to bench/README.md.
const PAGE_MAX_BYTES: usize = 35_000;

#[test]
fn the_package_page_stays_short() {
    let size = read(Path::new("README.md")).len();
    assert!(
        size <= PAGE_MAX_BYTES,
        "README.md is {size} bytes, over {PAGE_MAX_BYTES}: move detail to a docs/ page"
    );
}

//! The core's rules that a JS file of the package carries in JS, held to the core's: the Workers
//! entry (pkg-template/full/edge.js) backs its exchanges off and schedules its alarm's replays
//! with src/backoff.rs's window and equal jitter (src/outbox/rules.rs `next_flush_ms`), written in JS
//! between its `backoff` marker lines. This runs them in Node on the inputs below and fails when
//! one answer differs, to the bit, from the core's. (Its constants are generated:
//! scripts/codes.mjs, tests/js_joined.rs.)
//!
//! And no hand-written JS file of the package (js/, src/, pkg-template/, www-demo/) is over 450
//! code lines, as no .rs file is: a longer one is split by concern, and scripts/join-js.mjs
//! joins the parts where one module must ship (js/joined/, pkg-template/otel.js).

use resilient_fetch::backoff::{Jitter, delay, window};
use std::io::Write;
use std::process::{Command, Stdio};

const EDGE: &str = include_str!("../pkg-template/full/edge.js");

/// The lines of `text` from the one starting with `begin` to the one starting with `end`.
fn block<'t>(text: &'t str, begin: &str, end: &str) -> &'t str {
    let at = text
        .find(begin)
        .unwrap_or_else(|| panic!("edge.js has no line `{begin}...`"));
    let len = text[at..]
        .find(end)
        .unwrap_or_else(|| panic!("edge.js has no line `{end}` after `{begin}...`"));
    &text[at..at + len]
}

/// Runs edge.js's codes and backoff blocks in Node: each line of `input` is
/// `retry base max random` (f64 bits in hex), each line out `window equalJitter nextFlushMs(retry, random)`;
/// then one line `OUTBOX_FIRST_WAIT_MS OUTBOX_MAX_WAIT_MS`.
fn run_js(input: &str) -> String {
    let codes = block(EDGE, "// ---- codes:", "// ---- end of codes");
    let rules = block(EDGE, "// ---- backoff:", "// ---- end of backoff");
    let script = format!(
        r#"{codes}
{rules}
const bits = (x) => {{ const f = new Float64Array([x]); return new BigUint64Array(f.buffer)[0].toString(16); }};
const num = (h) => {{ const b = new BigUint64Array([BigInt("0x" + h)]); return new Float64Array(b.buffer)[0]; }};
const out = [];
for (const line of require("fs").readFileSync(0, "utf8").split("\n")) {{
  if (line === "") continue;
  const [retry, base, max, random] = line.split(" ").map(num);
  out.push([backoffWindow(retry, base, max), equalJitter(retry, base, max, random), nextFlushMs(retry, random)].map(bits).join(" "));
}}
out.push([OUTBOX_FIRST_WAIT_MS, OUTBOX_MAX_WAIT_MS].map(bits).join(" "));
console.log(out.join("\n"));
"#
    );
    let mut child = Command::new("node")
        .args(["-e", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs");
    child
        .stdin
        .take()
        .expect("node's stdin")
        .write_all(input.as_bytes())
        .expect("the inputs reach node");
    let out = child.wait_with_output().expect("node ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("node prints text")
}

fn num(hex: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(hex, 16).expect("a double's bits in hex"))
}

#[test]
fn edge_js_backoff_and_replay_schedule_are_the_cores() {
    let mut retries: Vec<u32> = (0..=40).collect();
    retries.extend([63, 64, 1022, 1023, 1024, 5000, u32::MAX]);
    let bases: [f64; 8] = [0.0, 0.5, 1.0, 3.0, 100.0, 250.0, 1_000.0, 12_345.678];
    let maxes: [f64; 6] = [0.0, 5.0, 1_000.0, 30_000.0, 300_000.0, f64::MAX];
    // The largest double below 1, and others where the sum may round onto the window.
    let almost_one = 1.0 - f64::EPSILON / 2.0;
    let randoms: [f64; 10] = [
        0.0,
        0.25,
        0.5,
        0.7,
        0.999_999,
        1.0 - f64::EPSILON,
        almost_one,
        1.0,
        -0.5,
        2.0,
    ];
    let mut cases = Vec::new();
    for &retry in &retries {
        for &base in &bases {
            for &max in &maxes {
                for &random in &randoms {
                    cases.push((retry, base, max, random));
                }
            }
        }
    }
    let input: String = cases
        .iter()
        .map(|&(retry, base, max, random)| {
            format!(
                "{:x} {:x} {:x} {:x}\n",
                f64::from(retry).to_bits(),
                base.to_bits(),
                max.to_bits(),
                random.to_bits()
            )
        })
        .collect();
    let out = run_js(&input);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), cases.len() + 1, "{out}");
    let consts: Vec<f64> = lines[cases.len()].split(' ').map(num).collect();
    let (first, most) = (consts[0], consts[1]);
    let mut differ = Vec::new();
    for (&(retry, base, max, random), line) in cases.iter().zip(&lines) {
        let js: Vec<f64> = line.split(' ').map(num).collect();
        let core = [
            window(retry, base, max),
            delay(Jitter::Equal, retry, base, max, 0.0, random),
            // src/outbox/rules.rs next_flush_ms, with the constants edge.js has (generated from it).
            delay(Jitter::Equal, retry, first, most, 0.0, random),
        ];
        for (i, name) in ["backoffWindow", "equalJitter", "nextFlushMs"]
            .iter()
            .enumerate()
        {
            if js[i].to_bits() != core[i].to_bits() {
                differ.push(format!(
                    "{name}(retry {retry}, base {base}, max {max}, random {random}): JS {}, core {}",
                    js[i], core[i]
                ));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "edge.js's backoff is not the core's ({} of {} answers differ):\n{}",
        differ.len(),
        cases.len() * 3,
        differ[..differ.len().min(20)].join("\n")
    );
}

/// The code lines of a JS file: neither blank nor only a comment (`//`, or inside `/* */`).
fn code_lines(text: &str) -> usize {
    let mut in_block = false;
    let mut count = 0;
    for line in text.lines().map(str::trim) {
        if in_block {
            in_block = !line.contains("*/");
            continue;
        }
        if line.is_empty() || line.starts_with("//") || line.starts_with('*') {
            continue;
        }
        if line.starts_with("/*") {
            in_block = !line.contains("*/");
            continue;
        }
        count += 1;
    }
    count
}

/// The JS files under `dir` (recursively), but js/joined/.
fn js_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.ends_with("js/joined") && !path.ends_with("node_modules") {
                js_files(&path, out);
            }
        } else if path
            .extension()
            .is_some_and(|e| e == "js" || e == "mjs" || e == "cjs")
        {
            out.push(path);
        }
    }
}

#[test]
fn no_hand_written_js_file_of_the_package_is_over_450_code_lines() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["js", "src", "pkg-template", "www-demo"] {
        js_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 10, "found only {files:?}");
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a JS file reads");
        // A join of concern files (scripts/join-js.mjs) is generated: its parts are measured.
        if text
            .lines()
            .any(|l| l.starts_with("// Joined by scripts/join-js.mjs from "))
        {
            continue;
        }
        let n = code_lines(&text);
        if n > 450 {
            long.push(format!(
                "{} ({n} code lines)",
                file.strip_prefix(root).unwrap_or(&file).display()
            ));
        }
    }
    assert!(
        long.is_empty(),
        "split by concern (scripts/join-js.mjs joins a module's concern files): {long:?}"
    );
}

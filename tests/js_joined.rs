//! The snippet modules the shell binds (js/joined/*.js) are the join of js/'s concern files
//! (scripts/join-js.mjs): wasm-bindgen reads the joined files, so an edit of a concern file
//! that was not joined again would not ship.

use std::process::Command;

#[test]
fn joined_snippets_are_up_to_date() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("node")
        .args(["scripts/join-js.mjs", "--check"])
        .current_dir(root)
        .output()
        .expect("node runs scripts/join-js.mjs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

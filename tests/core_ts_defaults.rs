//! The TypeScript declarations (src/wasm/types.rs, src/<feature>/shell.rs) state every default with
//! `@default`; this test reads them and compares each with the one place the
//! defaults are defined (`policy::defaults`), so the two cannot drift apart.
//! The declarations state every capability's options: the full build has all their defaults.

#![cfg(feature = "full")]

use resilient_fetch::policy::{BreakerMode, IdempotencyKey, Policy, WindowType, defaults as d};
use std::collections::BTreeMap;

/// The declarations of the policy: src/wasm/types.rs, and each capability folder's shell
/// part (`src/<feature>/shell.rs`) for that capability's options.
const DECLARATIONS: &str = concat!(
    include_str!("../src/wasm/types.rs"),
    include_str!("../src/pacing/shell.rs"),
    include_str!("../src/throttle/shell.rs"),
    include_str!("../src/hedge/shell.rs"),
    include_str!("../src/outbox/types.rs"),
    include_str!("../src/coalesce/shell.rs"),
    include_str!("../src/share/shell.rs"),
    include_str!("../src/stale/types.rs"),
    include_str!("../src/failover/shell.rs"),
    include_str!("../src/resume/shell.rs"),
    include_str!("../src/sse/types.rs"),
);

/// "Interface.field" -> the text after `@default`, up to a parenthesis or the comment's end.
fn declared_defaults() -> BTreeMap<String, String> {
    let source = DECLARATIONS;
    let mut out = BTreeMap::new();
    let (mut interface, mut pending) = (String::new(), None::<String>);
    for line in source.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("export interface ") {
            interface = rest.trim_end_matches(" {").to_string();
        } else if let Some((_, after)) = line.split_once("@default ") {
            let value = after
                .trim_end_matches("*/")
                .split(" (")
                .next()
                .unwrap_or("")
                .trim();
            pending = Some(value.to_string());
        } else if let Some((field, _)) = line.split_once("?:")
            && let Some(value) = pending.take()
        {
            out.insert(format!("{interface}.{field}"), value);
        }
    }
    out
}

fn mode(m: BreakerMode) -> &'static str {
    match m {
        BreakerMode::Consecutive => "\"consecutive\"",
        BreakerMode::FailureRate => "\"failure-rate\"",
    }
}

fn window(w: WindowType) -> &'static str {
    match w {
        WindowType::Count => "\"count\"",
        WindowType::Time => "\"time\"",
    }
}

#[test]
fn typescript_defaults_match_the_core() {
    let retry_on = format!(
        "[{}]",
        d::RETRY_ON
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let expected: Vec<(&str, String)> = vec![
        ("Policy.timeoutMs", d::TIMEOUT_MS.to_string()),
        ("Policy.totalTimeoutMs", d::TOTAL_TIMEOUT_MS.to_string()),
        (
            "Policy.retry",
            if d::RETRY_ENABLED { "{}" } else { "false" }.into(),
        ),
        (
            "Policy.breaker",
            if d::BREAKER_ENABLED { "{}" } else { "false" }.into(),
        ),
        (
            "Policy.retryBudget",
            if d::RETRY_BUDGET_ENABLED {
                "{}"
            } else {
                "false"
            }
            .into(),
        ),
        (
            "Policy.bulkhead",
            if d::BULKHEAD_ENABLED { "{}" } else { "false" }.into(),
        ),
        (
            "Policy.idempotencyKey",
            match d::IDEMPOTENCY_KEY {
                IdempotencyKey::Auto => "automatic",
                _ => "not the automatic key",
            }
            .into(),
        ),
        ("Policy.bodyTimeoutMs", d::BODY_TIMEOUT_MS.to_string()),
        // Not a core value: the shell's, stated here once more.
        (
            "Policy.fetch",
            "globalThis.fetch, looked up at each attempt".into(),
        ),
        (
            "Policy.idempotencyHeader",
            format!("\"{}\"", d::IDEMPOTENCY_HEADER),
        ),
        ("Policy.maxOrigins", d::MAX_ORIGINS.to_string()),
        ("RetryPolicy.maxAttempts", d::MAX_ATTEMPTS.to_string()),
        ("RetryPolicy.baseDelayMs", d::BASE_DELAY_MS.to_string()),
        ("RetryPolicy.maxDelayMs", d::MAX_DELAY_MS.to_string()),
        ("RetryPolicy.jitter", format!("\"{}\"", d::JITTER.as_str())),
        ("RetryPolicy.retryOn", retry_on),
        (
            "RetryPolicy.maxRetryAfterMs",
            d::MAX_RETRY_AFTER_MS.to_string(),
        ),
        ("BreakerPolicy.mode", mode(d::BREAKER_MODE).into()),
        (
            "BreakerPolicy.failureThreshold",
            d::FAILURE_THRESHOLD.to_string(),
        ),
        ("BreakerPolicy.cooldownMs", d::COOLDOWN_MS.to_string()),
        // Not a number: the policy's own cooldownMs (BreakerPolicy::default() has them equal).
        ("BreakerPolicy.maxCooldownMs", "cooldownMs".into()),
        (
            "BreakerPolicy.slowCallRateThreshold",
            d::SLOW_CALL_RATE_THRESHOLD.to_string(),
        ),
        (
            "BreakerPolicy.halfOpenMaxCalls",
            d::HALF_OPEN_MAX_CALLS.to_string(),
        ),
        (
            "BreakerPolicy.failureRateThreshold",
            d::FAILURE_RATE_THRESHOLD.to_string(),
        ),
        ("BreakerPolicy.minimumCalls", d::MINIMUM_CALLS.to_string()),
        ("BreakerPolicy.windowType", window(d::WINDOW_TYPE).into()),
        ("BreakerPolicy.windowSize", d::WINDOW_SIZE.to_string()),
        ("BreakerPolicy.windowMs", d::WINDOW_MS.to_string()),
        ("RetryBudgetPolicy.capacity", d::BUDGET_CAPACITY.to_string()),
        ("RetryBudgetPolicy.retryCost", d::RETRY_COST.to_string()),
        (
            "RetryBudgetPolicy.timeoutRetryCost",
            d::TIMEOUT_RETRY_COST.to_string(),
        ),
        (
            "RetryBudgetPolicy.noRetryIncrement",
            d::NO_RETRY_INCREMENT.to_string(),
        ),
        (
            "BulkheadPolicy.maxConcurrent",
            d::MAX_CONCURRENT.to_string(),
        ),
        ("BulkheadPolicy.maxQueue", d::MAX_QUEUE.to_string()),
        (
            "Policy.rateLimit",
            if d::RATE_LIMIT_ENABLED { "{}" } else { "false" }.into(),
        ),
        (
            "Policy.throttle",
            if d::THROTTLE_ENABLED { "{}" } else { "false" }.into(),
        ),
        (
            "RateLimitPolicy.maxWaitMs",
            d::RATE_LIMIT_MAX_WAIT_MS.to_string(),
        ),
        ("ThrottlePolicy.k", d::THROTTLE_K.to_string()),
        ("ThrottlePolicy.windowMs", d::THROTTLE_WINDOW_MS.to_string()),
        ("Policy.coalesce", d::COALESCE.to_string()),
        (
            "Policy.hedge",
            if d::HEDGE_ENABLED { "{}" } else { "false" }.into(),
        ),
        ("HedgePolicy.delayMs", "\"auto\"".into()),
        ("HedgePolicy.maxHedges", d::MAX_HEDGES.to_string()),
        ("HedgePolicy.minDelayMs", d::HEDGE_MIN_DELAY_MS.to_string()),
        ("HedgePolicy.maxDelayMs", d::HEDGE_MAX_DELAY_MS.to_string()),
        (
            "Policy.outbox",
            if d::OUTBOX_ENABLED { "{}" } else { "false" }.into(),
        ),
        ("OutboxPolicy.name", format!("{:?}", d::OUTBOX_NAME)),
        ("OutboxPolicy.maxEntries", d::OUTBOX_MAX_ENTRIES.to_string()),
        ("OutboxPolicy.maxAgeMs", d::OUTBOX_MAX_AGE_MS.to_string()),
        (
            "OutboxPolicy.maxBodyBytes",
            d::OUTBOX_MAX_BODY_BYTES.to_string(),
        ),
        (
            "Policy.stale",
            if d::STALE_ENABLED { "{}" } else { "false" }.into(),
        ),
        ("StalePolicy.maxStaleMs", d::STALE_MAX_STALE_MS.to_string()),
        ("StalePolicy.capMs", d::STALE_CAP_MS.to_string()),
        (
            "StalePolicy.maxBodyBytes",
            d::STALE_MAX_BODY_BYTES.to_string(),
        ),
        ("StalePolicy.maxEntries", d::STALE_MAX_ENTRIES.to_string()),
        ("StalePolicy.maxBytes", d::STALE_MAX_BYTES.to_string()),
        ("StalePolicy.private", d::STALE_PRIVATE.to_string()),
        (
            "Policy.failover",
            match Policy::default().failover {
                None => "false".into(),
                Some(_) => "an object".into(),
            },
        ),
        (
            "Policy.resume",
            if d::RESUME_ENABLED { "{}" } else { "false" }.into(),
        ),
        ("ResumePolicy.maxResumes", d::MAX_RESUMES.to_string()),
        (
            "Policy.events",
            if d::EVENTS_ENABLED { "{}" } else { "false" }.into(),
        ),
        ("EventsPolicy.idleMs", d::IDLE_MS.to_string()),
        ("EventsPolicy.maxReconnects", d::MAX_RECONNECTS.to_string()),
        (
            "Policy.share",
            match Policy::default().share {
                None => "false".into(),
                Some(name) => format!("{name:?}"),
            },
        ),
    ];
    let declared = declared_defaults();
    for (field, value) in &expected {
        assert_eq!(
            declared.get(*field),
            Some(value),
            "{field}: the TypeScript default differs from the core's"
        );
    }
    assert_eq!(
        declared.len(),
        expected.len(),
        "a declared default is not checked: {declared:?}"
    );
}

/// The README's options table: "`path`" -> `cell(default, accepted)` of its row.
fn readme_options(cell: impl Fn(&str, &str) -> String) -> BTreeMap<String, String> {
    let mut rows = BTreeMap::new();
    for line in include_str!("../README.md").lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let [_, field, default, accepted, _] = cells[..]
            && let Some(field) = field.strip_prefix('`').and_then(|f| f.strip_suffix('`'))
        {
            rows.insert(field.to_string(), cell(default, accepted));
        }
    }
    rows
}

/// The README's options table shows every default the TypeScript declarations state,
/// with the same value.
#[test]
fn the_readme_table_shows_every_declared_default() {
    let rows = readme_options(|default, _| default.trim_matches('`').to_string());
    for (declared, value) in declared_defaults() {
        let (interface, field) = declared.split_once('.').expect("Interface.field");
        let path = match interface {
            "Policy" => field.to_string(),
            "RetryPolicy" => format!("retry.{field}"),
            "BreakerPolicy" => format!("breaker.{field}"),
            "RetryBudgetPolicy" => format!("retryBudget.{field}"),
            "BulkheadPolicy" => format!("bulkhead.{field}"),
            "RateLimitPolicy" => format!("rateLimit.{field}"),
            "ThrottlePolicy" => format!("throttle.{field}"),
            "HedgePolicy" => format!("hedge.{field}"),
            "OutboxPolicy" => format!("outbox.{field}"),
            "StalePolicy" => format!("stale.{field}"),
            "ResumePolicy" => format!("resume.{field}"),
            "EventsPolicy" => format!("events.{field}"),
            other => panic!("unknown interface {other}"),
        };
        let shown = rows
            .get(&path)
            .unwrap_or_else(|| panic!("{path} is not in the README's options table"));
        let value = value.trim_matches('`');
        let same = match path.as_str() {
            // The declarations say more than the table's cell can.
            "fetch" => shown == "globalThis.fetch",
            _ => shown == value,
        };
        assert!(
            same,
            "{path}: README says {shown}, the declarations {value}"
        );
    }
}

/// "path" (as the schema names it) -> the whole doc comment of that field in the declarations.
fn declared_docs() -> BTreeMap<String, String> {
    let source = DECLARATIONS;
    let mut out = BTreeMap::new();
    let (mut prefix, mut doc) = (None::<&str>, String::new());
    for line in source.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("export interface ") {
            // The policy's interfaces only (events and stats have fields of the same names).
            prefix = match rest.trim_end_matches(" {") {
                "Policy" => Some(""),
                "RetryPolicy" => Some("retry."),
                "BreakerPolicy" => Some("breaker."),
                "RetryBudgetPolicy" => Some("retryBudget."),
                "BulkheadPolicy" => Some("bulkhead."),
                "RateLimitPolicy" => Some("rateLimit."),
                "ThrottlePolicy" => Some("throttle."),
                "HedgePolicy" => Some("hedge."),
                "OutboxPolicy" => Some("outbox."),
                "SharePolicy" => Some("share."),
                "StalePolicy" => Some("stale."),
                "ResumePolicy" => Some("resume."),
                "EventsPolicy" => Some("events."),
                _ => None,
            };
            doc.clear();
        } else if line.starts_with("/**") || line.starts_with('*') {
            doc.push_str(line);
            doc.push(' ');
        } else if let (Some(prefix), Some((field, _))) = (prefix, line.split_once("?:")) {
            out.insert(format!("{prefix}{field}"), std::mem::take(&mut doc));
        } else {
            doc.clear();
        }
    }
    out
}

/// Every field of the schema is declared for TypeScript, and every integer field's range
/// there is the schema's (a range bounded by another field is stated as the schema says).
#[test]
fn typescript_ranges_match_the_schema() {
    use resilient_fetch::policy::schema::{FIELDS, Kind};
    let docs = declared_docs();
    for field in FIELDS {
        let doc = docs
            .get(field.path)
            .unwrap_or_else(|| panic!("{} is not declared in the TypeScript types", field.path));
        let range = match (field.kind, field.range_text) {
            (_, Some(text)) => text.to_string(),
            (
                Kind::Int { min, max, .. }
                | Kind::IntOrOff { min, max, .. }
                | Kind::OptInt { min, max },
                None,
            ) => format!("{min}..={max}"),
            (Kind::Statuses, None) => "400..=599".to_string(),
            _ => continue,
        };
        assert!(
            doc.contains(&format!("({range}")),
            "{}: the declarations do not state ({range}): {doc}",
            field.path
        );
    }
}

/// JS takes out of a policy exactly the fields the schema says hold functions, and those it
/// holds as they are (`outbox.store`).
#[test]
fn js_takes_out_the_schemas_function_and_held_fields() {
    use resilient_fetch::policy::schema::{FIELDS, Kind};
    let js = include_str!("../js/policy-arg.js");
    for (list, kind) in [("FUNCTIONS", Kind::Function), ("HELD", Kind::Held)] {
        let line = js
            .lines()
            .find(|l| l.starts_with(&format!("const {list} = ")))
            .unwrap_or_else(|| panic!("js/policy-arg.js has no {list} list"));
        let named: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
        let schema: Vec<&str> = FIELDS
            .iter()
            .filter(|f| f.kind == kind)
            .map(|f| f.path)
            .collect();
        assert_eq!(named, schema, "{list}");
    }
}

/// The README's options table states every integer field's range as the schema checks it
/// (a range bounded by another field names that field).
#[test]
fn readme_ranges_match_the_schema() {
    use resilient_fetch::policy::schema::{FIELDS, Kind};
    let rows = readme_options(|_, accepted| accepted.replace('`', ""));
    let mut checked = 0;
    for field in FIELDS {
        let (min, max) = match field.kind {
            Kind::Int { min, max, .. }
            | Kind::IntOrOff { min, max, .. }
            | Kind::OptInt { min, max } => (min, max),
            _ => continue,
        };
        let shown = rows
            .get(field.path)
            .unwrap_or_else(|| panic!("{} is not in the README's options table", field.path));
        let upper = format!("..={max}");
        let whole = format!("{min}{upper}");
        let same = match field.range_text {
            // Bounded below by another field: the README names it, then the same upper bound.
            Some(text) if text.starts_with(">=") => shown.contains(&upper),
            // Bounded above by another field (`0..=capacity`, `1..=windowSize`).
            Some(text) => shown.contains(text.split(' ').next().unwrap_or(text)),
            None => shown.contains(&whole),
        };
        assert!(
            same,
            "{}: README says `{shown}`, the schema checks {min}..={max} {:?}",
            field.path, field.range_text
        );
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} ranges checked");
}

/// The OpenTelemetry entry names at most a client's `maxOrigins` origins in its metrics; for a
/// client whose policy sets none it needs the core's default, written there as one constant.
#[test]
fn otel_entry_default_origin_bound_matches_the_core() {
    let source = include_str!("../pkg-template/otel.js");
    let declared: Vec<&str> = source
        .lines()
        .filter_map(|line| line.strip_prefix("const MAX_ORIGINS = "))
        .collect();
    assert_eq!(
        declared,
        vec![format!("{};", d::MAX_ORIGINS).as_str()],
        "pkg-template/otel.js must hold one `const MAX_ORIGINS = {};` line",
        d::MAX_ORIGINS
    );
}

//! The parser's tests: every field rule of the WHATWG standard, any chunking the same as the
//! whole (against a reference that decodes the whole stream first), and its throughput
//! (ignored: run it in release). The reconnect rules and the section test themselves in
//! `reconnect.rs` and `section.rs`.

use super::*;
use proptest::prelude::*;

fn items(chunks: &[&[u8]]) -> (Vec<Item>, Parser) {
    let mut p = Parser::new();
    let mut out = Vec::new();
    for c in chunks {
        p.feed(c, &mut |i| out.push(i));
    }
    (out, p)
}

fn events(stream: &str) -> Vec<Event> {
    items(&[stream.as_bytes()])
        .0
        .into_iter()
        .filter_map(|i| match i {
            Item::Event(e) => Some(e),
            Item::Retry(_) => None,
        })
        .collect()
}

fn ev(data: &str, event: &str, id: &str) -> Event {
    Event {
        data: data.into(),
        event: event.into(),
        id: id.into(),
        retry: None,
    }
}

#[test]
fn data_lines_are_joined_with_lf_and_the_last_lf_dropped() {
    assert_eq!(events("data: hello\n\n"), [ev("hello", "message", "")]);
    assert_eq!(events("data: a\ndata: b\n\n"), [ev("a\nb", "message", "")]);
    assert_eq!(events("data: a\ndata:\n\n"), [ev("a\n", "message", "")]);
    // A `data` field with no value dispatches an event with empty data.
    assert_eq!(events("data\n\n"), [ev("", "message", "")]);
    assert_eq!(events("data:\n\n"), [ev("", "message", "")]);
    // One space after the colon is dropped, no more.
    assert_eq!(events("data:  two\n\n"), [ev(" two", "message", "")]);
    assert_eq!(events("data:none\n\n"), [ev("none", "message", "")]);
    assert_eq!(events("data: a: b\n\n"), [ev("a: b", "message", "")]);
}

#[test]
fn an_empty_data_buffer_dispatches_nothing_and_resets_the_type() {
    assert_eq!(events("event: add\n\n"), []);
    assert_eq!(
        events("event: add\n\ndata: 1\n\n"),
        [ev("1", "message", "")]
    );
    assert_eq!(
        events("event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\ndata: 3\n\n"),
        [
            ev("73857293", "add", ""),
            ev("2153", "remove", ""),
            ev("3", "message", "")
        ]
    );
    // An event the stream does not finish is never dispatched.
    assert_eq!(events("data: a\n"), []);
    assert_eq!(events("data: a"), []);
}

#[test]
fn comments_unknown_fields_and_case_are_ignored() {
    assert_eq!(
        events(": hello\n:\ndata: x\n: between\n\n"),
        [ev("x", "message", "")]
    );
    assert_eq!(events("Data: x\nfoo: y\ndata : z\n\n"), []);
    assert_eq!(events("foo\ndata: x\n\n"), [ev("x", "message", "")]);
}

#[test]
fn lines_end_at_crlf_lf_or_cr_even_across_chunks() {
    let want = [ev("a\nb", "message", ""), ev("c", "message", "")];
    for stream in [
        "data: a\ndata: b\n\ndata: c\n\n",
        "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n",
        "data: a\rdata: b\r\rdata: c\r\r",
        "data: a\r\ndata: b\n\rdata: c\r\n\n",
    ] {
        assert_eq!(events(stream), want, "{stream:?}");
    }
    // A CR that ends a chunk and the LF that begins the next are one line end.
    let (got, _) = items(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(got, [Item::Event(ev("a\nb", "message", ""))]);
    // A CR alone at a chunk's end is a line end too.
    let (got, _) = items(&[b"data: a\r", b"\r"]);
    assert_eq!(got, [Item::Event(ev("a", "message", ""))]);
}

#[test]
fn one_leading_bom_is_dropped_even_split() {
    assert_eq!(events("\u{feff}data: a\n\n"), [ev("a", "message", "")]);
    // A second BOM is part of the first field's name.
    assert_eq!(events("\u{feff}\u{feff}data: a\n\n"), []);
    // A BOM later in the stream is content.
    assert_eq!(
        events("data: \u{feff}a\n\n"),
        [ev("\u{feff}a", "message", "")]
    );
    let (got, _) = items(&[b"\xef", b"\xbb", b"\xbfdata: a\n\n"]);
    assert_eq!(got, [Item::Event(ev("a", "message", ""))]);
    // Two bytes of a BOM and then something else: those bytes are content.
    let (got, _) = items(&[b"\xef\xbb", b"data: a\n\ndata: b\n\n"]);
    assert_eq!(got, [Item::Event(ev("b", "message", ""))]);
    let (got, _) = items(&[b"\xef\xbb\n", b"data: b\n\n"]);
    assert_eq!(got, [Item::Event(ev("b", "message", ""))]);
}

#[test]
fn invalid_utf8_becomes_replacement_characters_and_split_characters_join() {
    assert_eq!(
        events("data: caf\u{e9} \u{1f600}\n\n"),
        [ev("caf\u{e9} \u{1f600}", "message", "")]
    );
    let (got, _) = items(&[b"data: \xc3", b"\xa9\xf0\x9f", b"\x98", b"\x80\n\n"]);
    assert_eq!(got, [Item::Event(ev("\u{e9}\u{1f600}", "message", ""))]);
    let (got, _) = items(&[b"data: \xff\xfeok\n\n"]);
    assert_eq!(got, [Item::Event(ev("\u{fffd}\u{fffd}ok", "message", ""))]);
    // A sequence cut by the line end is one replacement character (its maximal subpart).
    let (got, _) = items(&[b"data: \xe2\x82", b"\n\n"]);
    assert_eq!(got, [Item::Event(ev("\u{fffd}", "message", ""))]);
}

#[test]
fn the_last_event_id_persists_and_ids_with_nul_are_ignored() {
    assert_eq!(
        events("id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n"),
        [
            ev("a", "message", "1"),
            ev("b", "message", "1"),
            ev("c", "message", "")
        ]
    );
    assert_eq!(
        events("id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n"),
        [ev("a", "message", "1"), ev("b", "message", "1")]
    );
    // An id without data is kept: the event is not dispatched, the ID is.
    let (got, p) = items(&[b"id: 5\n\n"]);
    assert_eq!((got, p.last_event_id()), (vec![], "5"));
    // An id not yet dispatched is not the last event ID.
    let (_, p) = items(&[b"id: 6\n"]);
    assert_eq!(p.last_event_id(), "");
}

#[test]
fn the_last_event_id_and_retry_outlive_a_stream_and_its_unfinished_event_does_not() {
    let mut p = Parser::new();
    let mut out = Vec::new();
    p.feed(
        b"id: 7\nretry: 300\ndata: a\n\nid: 8\ndata: cut",
        &mut |i| out.push(i),
    );
    p.end_stream();
    assert_eq!((p.last_event_id(), p.reconnection_ms()), ("7", Some(300)));
    p.feed(b"\xef\xbb\xbf\ndata: b\n\n", &mut |i| out.push(i));
    assert_eq!(
        out,
        [
            Item::Retry(300),
            Item::Event(Event {
                retry: Some(300),
                ..ev("a", "message", "7")
            }),
            Item::Event(ev("b", "message", "7")),
        ]
    );
}

#[test]
fn retry_takes_only_ascii_digits() {
    let (got, p) = items(&[b"retry: 1500\n"]);
    assert_eq!(
        (got, p.reconnection_ms()),
        (vec![Item::Retry(1500)], Some(1500))
    );
    for bad in [
        "retry: 15a\n",
        "retry: -1\n",
        "retry: 1.5\n",
        "retry:\n",
        "retry\n",
        "retry:  100\n",
        "retry: \u{661}\n",
    ] {
        let (got, p) = items(&[bad.as_bytes()]);
        assert_eq!((got, p.reconnection_ms()), (vec![], None), "{bad:?}");
    }
    let (got, _) = items(&[b"retry: 99999999999999999999999\n"]);
    assert_eq!(got, [Item::Retry(u64::MAX)]);
    let (got, _) = items(&[b"retry: 10\ndata: x\n\n"]);
    assert_eq!(
        got,
        [
            Item::Retry(10),
            Item::Event(Event {
                retry: Some(10),
                ..ev("x", "message", "")
            })
        ]
    );
}

/// The reference: the whole stream decoded first (BOM dropped, invalid UTF-8 replaced), then
/// split into lines and read as the standard says, line by line.
fn reference(stream: &[u8]) -> Vec<Item> {
    let stream = stream.strip_prefix(b"\xef\xbb\xbf").unwrap_or(stream);
    let text = String::from_utf8_lossy(stream);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut line));
            }
            '\n' => lines.push(std::mem::take(&mut line)),
            c => line.push(c),
        }
    }
    let (mut data, mut event, mut id_buffer, mut last_id) =
        (String::new(), String::new(), String::new(), String::new());
    let mut retry = None;
    let mut out = Vec::new();
    for line in lines {
        if line.is_empty() {
            last_id.clone_from(&id_buffer);
            if data.is_empty() {
                event.clear();
                retry = None;
                continue;
            }
            data.pop();
            let kind = if event.is_empty() {
                "message".into()
            } else {
                std::mem::take(&mut event)
            };
            out.push(Item::Event(Event {
                data: std::mem::take(&mut data),
                event: kind,
                id: last_id.clone(),
                retry: retry.take(),
            }));
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "event" => event = value.into(),
            "id" if !value.contains('\0') => id_buffer = value.into(),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                let n = value.parse::<u64>().unwrap_or(u64::MAX);
                retry = Some(n);
                out.push(Item::Retry(n));
            }
            _ => {}
        }
    }
    out
}

/// Streams made of the pieces the rules are about.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let pieces: Vec<&'static [u8]> = vec![
        b"data",
        b"data:",
        b"data: ",
        b"event:",
        b"event: add",
        b"id:",
        b"id: 7",
        b"retry:",
        b"retry: 250",
        b"12",
        b":",
        b": ping",
        b" ",
        b"\r",
        b"\n",
        b"\r\n",
        b"\n\n",
        b"x",
        "\u{e9}".as_bytes(),
        "\u{1f600}".as_bytes(),
        b"\xc3",
        b"\xa9",
        b"\xf0\x9f",
        b"\xff",
        b"\xef\xbb\xbf",
        b"\xef\xbb",
        b"\0",
        b"Data:",
    ];
    prop::collection::vec(prop::sample::select(pieces), 0..60).prop_map(|p| p.concat())
}

proptest! {
    /// Fed whole, in chunks cut anywhere, or byte by byte: the same items, and those the
    /// reference gives.
    #[test]
    fn any_chunking_gives_the_events_of_the_whole(
        s in stream(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let (whole, _) = items(&[&s]);
        prop_assert_eq!(&whole, &reference(&s));
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(s.len() + 1)).collect();
        at.sort_unstable();
        at.push(s.len());
        let mut chunks = Vec::new();
        let mut from = 0;
        for to in at {
            chunks.push(&s[from..to]);
            from = to;
        }
        let (chunked, _) = items(&chunks);
        prop_assert_eq!(&chunked, &whole);
        let bytes: Vec<&[u8]> = s.chunks(1).collect();
        let (one_by_one, _) = items(&bytes);
        prop_assert_eq!(&one_by_one, &whole);
    }

    /// Arbitrary bytes never panic, and chunking still makes no difference.
    #[test]
    fn arbitrary_bytes_parse_the_same_in_halves(s in prop::collection::vec(any::<u8>(), 0..300), cut in any::<prop::sample::Index>()) {
        let at = cut.index(s.len() + 1);
        let (whole, _) = items(&[&s]);
        let (halves, _) = items(&[&s[..at], &s[at..]]);
        prop_assert_eq!(&halves, &whole);
        prop_assert_eq!(&whole, &reference(&s));
    }
}

/// A synthetic stream of about `size` bytes: events of one and two data lines, ids, types,
/// heartbeat comments, CRLF and LF line ends, some non-ASCII text.
fn synthetic(size: usize) -> (Vec<u8>, usize) {
    let mut s = Vec::with_capacity(size + 256);
    let mut n = 0usize;
    while s.len() < size {
        let id = n.to_string();
        match n % 4 {
            0 => s.extend_from_slice(b": heartbeat\n"),
            1 => {
                s.extend_from_slice(b"event: token\r\nid: ");
                s.extend_from_slice(id.as_bytes());
                s.extend_from_slice(b"\r\n");
            }
            _ => {}
        }
        s.extend_from_slice(b"data: {\"choices\":[{\"delta\":{\"content\":\"caf\xc3\xa9 au lait, s'il vous pla\xc3\xaet\"},\"index\":");
        s.extend_from_slice(id.as_bytes());
        s.extend_from_slice(b"}]}\n");
        if n.is_multiple_of(3) {
            s.extend_from_slice(b"data: a second line of the same event\n");
        }
        s.extend_from_slice(b"\n");
        n += 1;
    }
    (s, n)
}

/// Throughput: `cargo test --release --features sse --lib sse::tests::throughput -- --ignored
/// --nocapture`. Prints MB/s and events/s for a few chunk sizes; asserts only the count.
#[test]
#[ignore = "a measurement: run it in release with --ignored --nocapture"]
fn throughput() {
    let (s, n) = synthetic(10 * 1024 * 1024);
    for chunk in [256, 4 * 1024, 64 * 1024] {
        let mut p = Parser::new();
        let mut count = 0usize;
        let start = std::time::Instant::now();
        for c in s.chunks(chunk) {
            p.feed(c, &mut |i| {
                count += usize::from(matches!(i, Item::Event(_)))
            });
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(count, n);
        println!(
            "sse parser: {:.1} MB in {:.1} ms, chunks of {chunk} B: {:.0} MB/s, {:.2} M events/s ({n} events)",
            s.len() as f64 / 1e6,
            secs * 1e3,
            s.len() as f64 / 1e6 / secs,
            n as f64 / 1e6 / secs,
        );
    }
}

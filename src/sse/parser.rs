//! The event stream parser of the WHATWG HTML standard ("Server-sent events": parsing and
//! interpreting an event stream), fed byte chunks split anywhere.
//!
//! Lines end at CRLF, LF or CR, a CR at a chunk's end and the LF that begins the next one
//! counting once. Line ends are ASCII and no byte of a multi-byte UTF-8 sequence is ASCII,
//! so a line is decoded once whole: the UTF-8 decoder would end any broken sequence at the
//! line end too, and a line's bytes decoded alone give what the stream's decoder gives
//! (`String::from_utf8_lossy` replaces each maximal invalid subpart with one U+FFFD, as the
//! Encoding standard's decoder does). One leading BOM of each stream is dropped.

/// One event dispatched: `{ data, event, id, retry }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The `data` lines joined with LF.
    pub data: String,
    /// The event type: the last `event` field, `"message"` when none was given.
    pub event: String,
    /// The last event ID: set by the last valid `id` field, of this event or an earlier one.
    pub id: String,
    /// The reconnection time a `retry` field of this event set, in ms.
    pub retry: Option<u64>,
}

/// What a chunk yields, in stream order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// An event to dispatch.
    Event(Event),
    /// A `retry` field set the reconnection time (ms), whether or not an event follows.
    Retry(u64),
}

/// The BOM's bytes (U+FEFF in UTF-8).
const BOM: [u8; 3] = [0xef, 0xbb, 0xbf];
/// `bom` once the stream's start is past: BOM dropped, or none.
const PAST_BOM: u8 = 3;

/// An incremental event stream parser: feed it chunks, it yields [`Item`]s. The last event ID
/// and the reconnection time outlive a stream; [`Parser::end_stream`] drops what one left
/// unfinished.
#[derive(Clone, Debug, Default)]
pub struct Parser {
    /// The bytes of a line not ended yet.
    line: Vec<u8>,
    /// The last byte fed was a CR: an LF first in the next chunk ends no line.
    after_cr: bool,
    /// How many bytes of a BOM the stream began with so far (`PAST_BOM`: decided).
    bom: u8,
    /// The data buffer.
    data: String,
    /// The event type buffer.
    event: String,
    /// The last event ID buffer.
    id_buffer: String,
    /// The last event ID string: the buffer, as of the last dispatch.
    last_id: String,
    /// The `retry` of the event being read.
    retry: Option<u64>,
    /// The reconnection time the stream asked for.
    reconnection_ms: Option<u64>,
}

impl Parser {
    /// A parser at the start of a stream, no event ID, no reconnection time.
    pub fn new() -> Parser {
        Parser::default()
    }

    /// The last event ID: what `Last-Event-ID` carries on a reconnect (empty: none).
    pub fn last_event_id(&self) -> &str {
        &self.last_id
    }

    /// The reconnection time the stream set with `retry`, in ms, if any.
    pub fn reconnection_ms(&self) -> Option<u64> {
        self.reconnection_ms
    }

    /// Feeds the next bytes of the stream; `emit` hears each item they complete, in order.
    pub fn feed(&mut self, chunk: &[u8], emit: &mut impl FnMut(Item)) {
        let mut rest = chunk;
        if self.bom < PAST_BOM {
            rest = self.skip_bom(rest);
        }
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            if self.line.is_empty() {
                self.line_ended(&rest[..i], emit);
            } else {
                self.line.extend_from_slice(&rest[..i]);
                let mut line = std::mem::take(&mut self.line);
                self.line_ended(&line, emit);
                line.clear();
                self.line = line;
            }
            let mut next = i + 1;
            if rest[i] == b'\r' {
                match rest.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            rest = &rest[next..];
        }
        self.line.extend_from_slice(rest);
    }

    /// The stream ended (or broke): what it left unfinished is dropped, as at the end of a
    /// file: the line, the event's data and type. The last event ID and the reconnection time
    /// stay, and the next stream's last event ID buffer starts from the ID (as browsers do,
    /// so that an event of the next stream without `id` keeps it).
    pub fn end_stream(&mut self) {
        self.line.clear();
        self.after_cr = false;
        self.bom = 0;
        self.data.clear();
        self.event.clear();
        self.retry = None;
        self.id_buffer.clone_from(&self.last_id);
    }

    /// Drops a BOM the stream begins with (split across chunks or not); a partial match that
    /// fails is content.
    fn skip_bom<'a>(&mut self, chunk: &'a [u8]) -> &'a [u8] {
        let mut i = 0;
        while self.bom < PAST_BOM {
            let Some(&b) = chunk.get(i) else {
                return &[];
            };
            if b != BOM[usize::from(self.bom)] {
                self.line.extend_from_slice(&BOM[..usize::from(self.bom)]);
                break;
            }
            self.bom += 1;
            i += 1;
        }
        self.bom = PAST_BOM;
        &chunk[i..]
    }

    /// A line ended (without its line end).
    fn line_ended(&mut self, line: &[u8], emit: &mut impl FnMut(Item)) {
        let (field, value) = match line.iter().position(|&b| b == b':') {
            None if line.is_empty() => return self.dispatch(emit),
            Some(0) => return, // a comment
            Some(c) => {
                let value = &line[c + 1..];
                (&line[..c], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        // Field names are ASCII: compared as bytes, a name with invalid UTF-8 matches none.
        match field {
            b"data" => {
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&String::from_utf8_lossy(value));
            }
            b"id" if !value.contains(&0) => {
                self.id_buffer.clear();
                self.id_buffer.push_str(&String::from_utf8_lossy(value));
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value.iter().fold(0u64, |n, &d| {
                    n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                });
                self.reconnection_ms = Some(ms);
                self.retry = Some(ms);
                emit(Item::Retry(ms));
            }
            _ => {}
        }
    }

    /// An empty line: the event read so far is dispatched, if it has data.
    fn dispatch(&mut self, emit: &mut impl FnMut(Item)) {
        if self.last_id != self.id_buffer {
            self.last_id.clone_from(&self.id_buffer);
        }
        let retry = self.retry.take();
        if self.data.is_empty() {
            self.event.clear();
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the LF after the last line: the data buffer ends with one
        let event = if self.event.is_empty() {
            "message".to_owned()
        } else {
            std::mem::take(&mut self.event)
        };
        emit(Item::Event(Event {
            data,
            event,
            id: self.last_id.clone(),
            retry,
        }));
    }
}

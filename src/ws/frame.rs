//! RFC 6455 framing, server side: frames cut out of the bytes read so far,
//! fragments put back together, and the frames we write. Pure functions
//! over buffers, no I/O, so every byte a client can send is fuzzed.
//!
//! Clients must mask their frames; we never mask ours. No extension is
//! negotiated, so the reserved bits must be clear.

/// A whole message, or a control frame, from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// A text message, checked to be UTF-8.
    Text(String),
    Binary(Vec<u8>),
    /// Answered with a pong carrying the same bytes.
    Ping(Vec<u8>),
    Pong,
    /// The client is leaving; its close code, if it gave one.
    Close(Option<u16>),
}

/// Why the connection must be closed, with the close code to send.
#[derive(Debug, PartialEq, Eq)]
pub enum Violation {
    /// 1002: a frame no client may send.
    Protocol(&'static str),
    /// 1007: a text message that is not UTF-8.
    NotUtf8,
    /// 1009: a message over the cap.
    TooBig,
}

impl Violation {
    pub fn close_code(&self) -> u16 {
        match self {
            Violation::Protocol(_) => 1002,
            Violation::NotUtf8 => 1007,
            Violation::TooBig => 1009,
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Violation::Protocol(what) => write!(f, "protocol error: {what}"),
            Violation::NotUtf8 => f.write_str("a text message is not UTF-8"),
            Violation::TooBig => f.write_str("a message over the size cap"),
        }
    }
}

pub const OP_CONTINUATION: u8 = 0x0;
pub const OP_TEXT: u8 = 0x1;
pub const OP_BINARY: u8 = 0x2;
pub const OP_CLOSE: u8 = 0x8;
pub const OP_PING: u8 = 0x9;
pub const OP_PONG: u8 = 0xA;

/// Control frames carry at most this much (RFC 6455 5.5).
const MAX_CONTROL_PAYLOAD: usize = 125;

/// Cuts frames out of the bytes read and joins fragments into messages.
pub struct Decoder {
    /// Largest message, fragments together, a client may send.
    max_message: usize,
    /// The fragments of the message being received: its opcode and bytes.
    partial: Option<(u8, Vec<u8>)>,
}

impl Decoder {
    pub fn new(max_message: usize) -> Decoder {
        Decoder {
            max_message,
            partial: None,
        }
    }

    /// The next event whose bytes have all arrived, consuming them from the
    /// front of `buf`; `Ok(None)` when more bytes are needed.
    pub fn next(&mut self, buf: &mut [u8], start: &mut usize) -> Result<Option<Event>, Violation> {
        loop {
            let Some(frame) = self.cut(&buf[*start..])? else {
                return Ok(None);
            };
            let payload_at = *start + frame.header_len;
            let end = payload_at + frame.len;
            let payload = &mut buf[payload_at..end];
            unmask(payload, frame.mask);
            *start = end;
            if let Some(event) = self.take(frame.fin, frame.opcode, payload)? {
                return Ok(Some(event));
            }
        }
    }

    /// Bytes of a message whose fragments are still arriving.
    pub fn partial_len(&self) -> usize {
        self.partial.as_ref().map_or(0, |(_, bytes)| bytes.len())
    }

    /// The header of the first frame of `bytes`, if all of it has arrived.
    fn cut(&self, bytes: &[u8]) -> Result<Option<Header>, Violation> {
        if bytes.len() < 2 {
            return Ok(None);
        }
        let (first, second) = (bytes[0], bytes[1]);
        if first & 0x70 != 0 {
            return Err(Violation::Protocol("reserved bits set"));
        }
        if second & 0x80 == 0 {
            return Err(Violation::Protocol("an unmasked client frame"));
        }
        let fin = first & 0x80 != 0;
        let opcode = first & 0x0F;
        let (len, mut header_len) = match second & 0x7F {
            126 => match bytes.get(2..4) {
                Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
                None => return Ok(None),
            },
            127 => match bytes.get(2..10) {
                Some(b) => (u64::from_be_bytes(b.try_into().expect("8 bytes")), 10),
                None => return Ok(None),
            },
            short => (u64::from(short), 2),
        };
        let is_control = opcode & 0x8 != 0;
        if is_control && (!fin || len > MAX_CONTROL_PAYLOAD as u64) {
            return Err(Violation::Protocol("a fragmented or long control frame"));
        }
        // Refused from the header, before the payload is read.
        let so_far = if is_control {
            0
        } else {
            self.partial_len() as u64
        };
        if so_far + len > self.max_message as u64 {
            return Err(Violation::TooBig);
        }
        let len = len as usize;
        let Some(mask) = bytes.get(header_len..header_len + 4) else {
            return Ok(None);
        };
        let mask = [mask[0], mask[1], mask[2], mask[3]];
        header_len += 4;
        if bytes.len() < header_len + len {
            return Ok(None);
        }
        Ok(Some(Header {
            fin,
            opcode,
            mask,
            header_len,
            len,
        }))
    }

    /// One unmasked frame: an event once a message or control frame is whole.
    fn take(&mut self, fin: bool, opcode: u8, payload: &[u8]) -> Result<Option<Event>, Violation> {
        match opcode {
            OP_PING => Ok(Some(Event::Ping(payload.to_vec()))),
            OP_PONG => Ok(Some(Event::Pong)),
            OP_CLOSE => Ok(Some(Event::Close(
                payload
                    .get(..2)
                    .map(|code| u16::from_be_bytes([code[0], code[1]])),
            ))),
            OP_TEXT | OP_BINARY => {
                if self.partial.is_some() {
                    return Err(Violation::Protocol("a new message inside a fragmented one"));
                }
                if fin {
                    return message(opcode, payload.to_vec()).map(Some);
                }
                self.partial = Some((opcode, payload.to_vec()));
                Ok(None)
            }
            OP_CONTINUATION => {
                let Some((_, bytes)) = self.partial.as_mut() else {
                    return Err(Violation::Protocol("a continuation without a message"));
                };
                bytes.extend_from_slice(payload);
                if !fin {
                    return Ok(None);
                }
                let (opcode, bytes) = self.partial.take().expect("checked above");
                message(opcode, bytes).map(Some)
            }
            _ => Err(Violation::Protocol("an unknown opcode")),
        }
    }
}

struct Header {
    fin: bool,
    opcode: u8,
    mask: [u8; 4],
    header_len: usize,
    len: usize,
}

fn message(opcode: u8, bytes: Vec<u8>) -> Result<Event, Violation> {
    if opcode == OP_BINARY {
        return Ok(Event::Binary(bytes));
    }
    String::from_utf8(bytes)
        .map(Event::Text)
        .map_err(|_| Violation::NotUtf8)
}

fn unmask(payload: &mut [u8], mask: [u8; 4]) {
    let word = u32::from_ne_bytes(mask);
    let mut chunks = payload.chunks_exact_mut(4);
    for chunk in &mut chunks {
        let value = u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) ^ word;
        chunk.copy_from_slice(&value.to_ne_bytes());
    }
    for (byte, key) in chunks.into_remainder().iter_mut().zip(mask) {
        *byte ^= key;
    }
}

/// Appends one unmasked, unfragmented frame to `out`.
pub fn encode(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
    out.push(0x80 | opcode);
    match payload.len() {
        len @ 0..=125 => out.push(len as u8),
        len @ 126..=0xFFFF => {
            out.push(126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        len => {
            out.push(127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}

/// Appends a close frame with `code`.
pub fn encode_close(out: &mut Vec<u8>, code: u16) {
    encode(out, OP_CLOSE, &code.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked client frame.
    fn client_frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mask = [0x37, 0xfa, 0x21, 0x3d];
        let mut out = vec![if fin { 0x80 } else { 0 } | opcode];
        match payload.len() {
            len @ 0..=125 => out.push(0x80 | len as u8),
            len @ 126..=0xFFFF => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(len as u16).to_be_bytes());
            }
            len => {
                out.push(0x80 | 127);
                out.extend_from_slice(&(len as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        out
    }

    fn events(decoder: &mut Decoder, mut bytes: Vec<u8>) -> Result<Vec<Event>, Violation> {
        let mut start = 0;
        let mut all = vec![];
        while let Some(event) = decoder.next(&mut bytes, &mut start)? {
            all.push(event);
        }
        assert_eq!(start, bytes.len(), "every whole frame consumed");
        Ok(all)
    }

    #[test]
    fn messages_of_every_length_class_come_through_whole_in_any_cut() {
        for len in [0, 5, 125, 126, 65_535, 65_536, 200_000] {
            let text: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            let frame = client_frame(true, OP_TEXT, text.as_bytes());
            let mut decoder = Decoder::new(1 << 20);
            let mut buf = Vec::new();
            let mut start = 0;
            let mut got = None;
            // Arrives in pieces of 7 bytes: nothing until the last one.
            for piece in frame.chunks(7) {
                assert!(got.is_none());
                buf.extend_from_slice(piece);
                got = decoder.next(&mut buf, &mut start).unwrap();
            }
            assert_eq!(got, Some(Event::Text(text)), "length {len}");
        }
    }

    #[test]
    fn fragments_join_and_control_frames_may_come_between_them() {
        let mut bytes = client_frame(false, OP_TEXT, b"{\"a\":");
        bytes.extend(client_frame(true, OP_PING, b"hi"));
        bytes.extend(client_frame(false, OP_CONTINUATION, b" 1"));
        bytes.extend(client_frame(true, OP_CONTINUATION, b"}"));
        bytes.extend(client_frame(true, OP_BINARY, &[0xff]));
        bytes.extend(client_frame(true, OP_CLOSE, &1000u16.to_be_bytes()));
        let got = events(&mut Decoder::new(1024), bytes).unwrap();
        assert_eq!(
            got,
            vec![
                Event::Ping(b"hi".to_vec()),
                Event::Text("{\"a\": 1}".into()),
                Event::Binary(vec![0xff]),
                Event::Close(Some(1000)),
            ]
        );
    }

    #[test]
    fn frames_no_client_may_send_are_violations() {
        let cases: Vec<(Vec<u8>, Violation)> = vec![
            (
                vec![0x81, 0x00],
                Violation::Protocol("an unmasked client frame"),
            ),
            (
                client_frame(true, OP_TEXT | 0x40, b"x"),
                Violation::Protocol("reserved bits set"),
            ),
            (
                client_frame(true, OP_CONTINUATION, b"x"),
                Violation::Protocol("a continuation without a message"),
            ),
            (
                client_frame(true, 0x3, b"x"),
                Violation::Protocol("an unknown opcode"),
            ),
            (
                client_frame(false, OP_PING, b"x"),
                Violation::Protocol("a fragmented or long control frame"),
            ),
            (
                client_frame(true, OP_PING, &[0; 126]),
                Violation::Protocol("a fragmented or long control frame"),
            ),
            (
                client_frame(true, OP_TEXT, &[b'{', 0xff]),
                Violation::NotUtf8,
            ),
            (client_frame(true, OP_BINARY, &[0; 101]), Violation::TooBig),
        ];
        for (bytes, violation) in cases {
            assert_eq!(events(&mut Decoder::new(100), bytes), Err(violation));
        }
        let mut two = client_frame(false, OP_TEXT, b"a");
        two.extend(client_frame(true, OP_TEXT, b"b"));
        assert_eq!(
            events(&mut Decoder::new(100), two),
            Err(Violation::Protocol("a new message inside a fragmented one"))
        );
    }

    #[test]
    fn a_message_over_the_cap_is_refused_from_its_header_alone() {
        let mut decoder = Decoder::new(1000);
        let mut header = vec![0x82, 0x80 | 127];
        header.extend_from_slice(&(1001u64).to_be_bytes());
        assert_eq!(decoder.next(&mut header, &mut 0), Err(Violation::TooBig));
        // Fragments count together.
        let mut fragments = client_frame(false, OP_TEXT, &[b'a'; 600]);
        fragments.extend(client_frame(true, OP_CONTINUATION, &[b'a'; 401]));
        assert_eq!(
            events(&mut Decoder::new(1000), fragments),
            Err(Violation::TooBig)
        );
    }

    #[test]
    fn our_frames_carry_their_length_in_the_shortest_form() {
        for (len, header) in [(5, 2), (126, 4), (70_000, 10)] {
            let mut out = vec![];
            encode(&mut out, OP_TEXT, &vec![b'x'; len]);
            assert_eq!(out.len(), header + len);
            assert_eq!(out[0], 0x81);
        }
        let mut close = vec![];
        encode_close(&mut close, 1009);
        assert_eq!(close, vec![0x88, 2, 0x03, 0xF1]);
    }
}

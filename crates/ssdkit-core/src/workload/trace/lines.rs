//! Line splitting over a byte stream with one reused buffer.
//!
//! `BufRead::read_until` would copy every line into a `Vec`; here a line is a range of the
//! buffer, found with `memchr`, so the hot path neither copies nor allocates. The buffer grows
//! only up to [`MAX_LINE`] + 1 bytes: a longer line is reported as [`Line::TooLong`] and skipped
//! without being held, so memory never depends on the file.

use std::io::{self, Read};

/// Longest accepted line, in bytes, without its newline.
pub(crate) const MAX_LINE: usize = 1 << 20;
/// First buffer size: small, so a short file (or a fuzz input) costs little.
const FIRST_BUF: usize = 16 << 10;
/// Size the buffer grows to before it starts moving the unread tail to the front instead:
/// large enough that refills are rare.
const STEADY_BUF: usize = 256 << 10;
/// How many bytes of a too-long line are kept to show in its error message.
const LONG_HEAD: usize = 800;

pub(crate) enum Line {
    /// The line is `buf[start..end]` (newline and a trailing `\r` removed).
    Text { start: usize, end: usize },
    /// The line was longer than [`MAX_LINE`]; its first bytes are in [`LineReader::long_head`].
    TooLong,
}

pub(crate) struct LineReader {
    src: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// Start of the unconsumed bytes.
    pos: usize,
    /// End of the valid bytes.
    end: usize,
    /// `buf[pos..scanned]` is known to hold no newline, so a long line is not rescanned.
    scanned: usize,
    eof: bool,
    long_head: Vec<u8>,
}

impl LineReader {
    pub(crate) fn new(src: Box<dyn Read + Send>) -> Self {
        Self {
            src,
            buf: vec![0; FIRST_BUF],
            pos: 0,
            end: 0,
            scanned: 0,
            eof: false,
            long_head: Vec::with_capacity(LONG_HEAD),
        }
    }

    /// Reads until at least `n` bytes are buffered or the stream ends; the binary check and
    /// format detection look at this prefix before any line is consumed.
    pub(crate) fn fill_prefix(&mut self, n: usize) -> io::Result<()> {
        let n = n.min(MAX_LINE);
        while self.end - self.pos < n && !self.eof {
            self.read_more()?;
        }
        Ok(())
    }

    /// The buffered, unconsumed bytes.
    pub(crate) fn prefix(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    /// True when the stream has ended (detection then trusts the last buffered line).
    pub(crate) fn at_eof(&self) -> bool {
        self.eof
    }

    pub(crate) fn buf(&self) -> &[u8] {
        &self.buf
    }

    pub(crate) fn long_head(&self) -> &[u8] {
        &self.long_head
    }

    fn read_more(&mut self) -> io::Result<()> {
        if self.end == self.buf.len() {
            if self.pos > 0 && self.buf.len() >= STEADY_BUF {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.scanned -= self.pos;
                self.pos = 0;
            } else {
                // Still small, or one line fills the buffer: grow, at most to MAX_LINE + 1
                // (next_line stops before asking for more once a line is that long).
                let new_len = (self.buf.len() * 2).min(MAX_LINE + 1);
                self.buf.resize(new_len, 0);
            }
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(k) => {
                    self.end += k;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The next line, or `None` at the end of the stream.
    #[inline]
    pub(crate) fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let nl = self.scanned + i;
                let start = self.pos;
                self.pos = nl + 1;
                self.scanned = self.pos;
                if nl - start > MAX_LINE {
                    return Ok(Some(self.too_long_from(start, nl)));
                }
                return Ok(Some(Self::text(&self.buf, start, nl)));
            }
            self.scanned = self.end;
            if self.eof {
                if self.pos == self.end {
                    return Ok(None);
                }
                let start = self.pos;
                let end = self.end;
                self.pos = end;
                if end - start > MAX_LINE {
                    return Ok(Some(self.too_long_from(start, end)));
                }
                return Ok(Some(Self::text(&self.buf, start, end)));
            }
            if self.pos == 0 && self.end > MAX_LINE {
                return self.skip_long_line().map(Some);
            }
            self.read_more()?;
        }
    }

    #[inline]
    fn text(buf: &[u8], start: usize, mut end: usize) -> Line {
        if end > start && buf[end - 1] == b'\r' {
            end -= 1;
        }
        Line::Text { start, end }
    }

    #[cold]
    fn too_long_from(&mut self, start: usize, end: usize) -> Line {
        self.long_head.clear();
        let k = (end - start).min(LONG_HEAD);
        self.long_head
            .extend_from_slice(&self.buf[start..start + k]);
        Line::TooLong
    }

    /// Keeps the head of the over-long line for the message, then drops bytes until its
    /// newline without storing them.
    #[cold]
    fn skip_long_line(&mut self) -> io::Result<Line> {
        self.too_long_from(self.pos, self.end);
        loop {
            self.pos = 0;
            self.end = 0;
            self.scanned = 0;
            if self.eof {
                return Ok(Line::TooLong);
            }
            self.read_more()?;
            if let Some(i) = memchr::memchr(b'\n', &self.buf[..self.end]) {
                self.pos = i + 1;
                self.scanned = self.pos;
                return Ok(Line::TooLong);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `chunk` bytes per call, to cross buffer boundaries.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        chunk: usize,
    }
    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let k = self.chunk.min(out.len()).min(self.data.len() - self.at);
            out[..k].copy_from_slice(&self.data[self.at..self.at + k]);
            self.at += k;
            Ok(k)
        }
    }

    fn collect(data: &[u8], chunk: usize) -> Vec<Option<Vec<u8>>> {
        let mut r = LineReader::new(Box::new(Trickle {
            data: data.to_vec(),
            at: 0,
            chunk,
        }));
        let mut out = vec![];
        while let Some(l) = r.next_line().unwrap() {
            match l {
                Line::Text { start, end } => out.push(Some(r.buf()[start..end].to_vec())),
                Line::TooLong => out.push(None),
            }
        }
        out
    }

    #[test]
    fn splits_lines_crlf_and_last_line_without_newline() {
        for chunk in [1, 3, 7, 1 << 20] {
            let got = collect(b"a b\r\n\ncd\nlast", chunk);
            let want: Vec<Option<Vec<u8>>> = vec![
                Some(b"a b".to_vec()),
                Some(vec![]),
                Some(b"cd".to_vec()),
                Some(b"last".to_vec()),
            ];
            assert_eq!(got, want);
        }
        assert!(collect(b"", 5).is_empty());
        assert_eq!(collect(b"\n", 5), vec![Some(vec![])]);
    }

    #[test]
    fn long_lines_are_skipped_without_buffering_them() {
        let mut data = b"first\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE));
        data.extend_from_slice(b"\nafter\n");
        data.extend(std::iter::repeat_n(b'y', MAX_LINE));
        data.extend_from_slice(b"\nexact\n");
        data.extend(std::iter::repeat_n(b'z', MAX_LINE + 1));
        for chunk in [4096, 1 << 20, usize::MAX] {
            let got = collect(&data, chunk);
            assert_eq!(got.len(), 6, "chunk {chunk}");
            assert_eq!(got[0].as_deref(), Some(&b"first"[..]));
            assert_eq!(got[1], None);
            assert_eq!(got[2].as_deref(), Some(&b"after"[..]));
            assert_eq!(
                got[3].as_ref().map(|l| l.len()),
                Some(MAX_LINE),
                "exactly MAX_LINE is fine"
            );
            assert_eq!(got[4].as_deref(), Some(&b"exact"[..]));
            assert_eq!(got[5], None, "over-long last line without newline");
        }
        data.extend_from_slice(b"\nend");
        let got = collect(&data, 4096);
        assert_eq!(got.len(), 7);
        assert_eq!(got[5], None);
        assert_eq!(got[6].as_deref(), Some(&b"end"[..]));
    }
}

//! The protocol parser on arbitrary bytes, for the `nbd` fuzz target (fuzz/fuzz_targets/nbd.rs)
//! and the seed replay in the tests: a client that sends `data` through the handshake and then
//! as transmission requests. Nothing may panic; every outcome is a reply or a close, and a
//! request the checks accept lies inside the export and on its block size.

use crate::handshake::{negotiate, Outcome};
use crate::proto::{check, Cmd, Export, Request, MAX_PAYLOAD};
use std::io::{self, Read, Write};

struct Script<'a> {
    input: &'a [u8],
    output: Vec<u8>,
}

impl Read for Script<'_> {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        self.input.read(b)
    }
}

impl Write for Script<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        // A client that never reads: the server's replies stay bounded all the same.
        assert!(
            self.output.len() + b.len() < 1 << 24,
            "replies grew past 16 MiB"
        );
        self.output.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Runs `data` through a negotiation and, if transmission starts, through the request checks.
pub fn exercise(data: &[u8]) {
    let export = Export {
        name: "ssdkit".into(),
        description: "fuzz".into(),
        size: 1 << 30,
        min_block: 512,
        read_only: data.first().is_some_and(|b| b & 1 == 1),
    };
    let mut s = Script {
        input: data,
        output: Vec::new(),
    };
    let mut claims = 0;
    let mut claim = || {
        claims += 1;
        if claims > 2 {
            Err("all queue pairs in use".to_string())
        } else {
            Ok(0)
        }
    };
    let outcome = negotiate(&mut s, &export, &mut claim).expect("a script stream does not fail");
    if !matches!(outcome, Outcome::Go { .. }) {
        return;
    }
    let mut rest = s.input;
    while rest.len() >= Request::BYTES {
        let head: &[u8; Request::BYTES] = rest[..Request::BYTES].try_into().unwrap();
        let r = Request::decode(head);
        assert_eq!(r.encode(), *head);
        rest = &rest[Request::BYTES..];
        if let Ok(cmd) = check(&r, &export) {
            let (offset, length) = match cmd {
                Cmd::Read { offset, length } | Cmd::Write { offset, length, .. } => {
                    assert!(length <= MAX_PAYLOAD);
                    (offset, length)
                }
                Cmd::Trim { offset, length, .. } | Cmd::WriteZeroes { offset, length, .. } => {
                    (offset, length)
                }
                Cmd::Flush | Cmd::Disc => (0, 0),
            };
            assert!(offset + length as u64 <= export.size);
            assert!(offset % 512 == 0 && length % 512 == 0);
            if export.read_only {
                assert!(matches!(cmd, Cmd::Read { .. } | Cmd::Flush | Cmd::Disc));
            }
        }
        let skip = (r.payload() as usize).min(rest.len());
        rest = &rest[skip..];
    }
}

#[cfg(test)]
mod tests {
    /// Random byte strings, and random bytes after a valid greeting and GO, through the
    /// fuzz harness: a cheap deterministic fuzz on every test run.
    #[test]
    fn random_sessions_neither_panic_nor_accept_bad_requests() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut go = vec![0, 0, 0, 3];
        go.extend_from_slice(&crate::proto::IHAVEOPT.to_be_bytes());
        go.extend_from_slice(&crate::proto::OPT_GO.to_be_bytes());
        go.extend_from_slice(&6u32.to_be_bytes());
        go.extend_from_slice(&[0; 6]);
        for i in 0..3000 {
            let n = (next() % 300) as usize;
            let noise: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            let mut data = if i % 2 == 0 { go.clone() } else { Vec::new() };
            if i % 4 == 0 {
                // Requests with the right magic and random fields.
                for _ in 0..8 {
                    data.extend_from_slice(&crate::proto::REQUEST_MAGIC.to_be_bytes());
                    data.extend((0..24).map(|_| next() as u8));
                }
            }
            data.extend_from_slice(&noise);
            super::exercise(&data);
        }
    }

    /// The committed seeds of the fuzz target.
    #[test]
    fn fuzz_seeds_replay() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/nbd");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).expect("fuzz/corpus/nbd exists") {
            let p = e.unwrap().path();
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("seed-")
            {
                super::exercise(&std::fs::read(&p).unwrap());
                n += 1;
            }
        }
        assert!(n >= 3, "{n} seeds in {}", dir.display());
    }
}

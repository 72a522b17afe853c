//! Fixed-newstyle negotiation (the NBD spec's "Newstyle negotiation"): greeting, option
//! haggling (EXPORT_NAME, ABORT, LIST, INFO, GO; STARTTLS refused; anything else answered
//! "unsupported" so the client can fall back), up to the start of transmission. Runs over any
//! `Read + Write` stream, so the fuzz target drives it with bytes.

use crate::proto::*;
use std::io::{self, Read, Write};

/// How a negotiation ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Transmission starts on queue pair `queue`.
    Go { queue: u32 },
    /// The client left (ABORT, end of stream) or broke a rule after which the spec says to
    /// drop the connection; the reason is for the server's log.
    Closed(&'static str),
}

/// Negotiates with the client on `s`. `claim` takes a free queue pair for the connection when
/// it asks to start (an error message if none is free).
pub fn negotiate<S: Read + Write>(
    s: &mut S,
    e: &Export,
    claim: &mut dyn FnMut() -> Result<u32, String>,
) -> io::Result<Outcome> {
    let mut greeting = Vec::with_capacity(18);
    greeting.extend_from_slice(&NBDMAGIC.to_be_bytes());
    greeting.extend_from_slice(&IHAVEOPT.to_be_bytes());
    greeting.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&greeting)?;
    s.flush()?;
    let Some(client) = read_u32(s)? else {
        return Ok(Outcome::Closed("closed before its flags"));
    };
    if client & !(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES) != 0 {
        return Ok(Outcome::Closed("unknown client flags"));
    }
    let no_zeroes = client & CLIENT_NO_ZEROES != 0;
    loop {
        let mut head = [0u8; 16];
        if !read_full(s, &mut head)? {
            return Ok(Outcome::Closed("closed during option haggling"));
        }
        if u64::from_be_bytes(head[0..8].try_into().unwrap()) != IHAVEOPT {
            return Ok(Outcome::Closed("bad option magic"));
        }
        let opt = u32::from_be_bytes(head[8..12].try_into().unwrap());
        let len = u32::from_be_bytes(head[12..16].try_into().unwrap());
        if len > MAX_OPTION_BYTES {
            return Ok(Outcome::Closed("option longer than 64 KiB"));
        }
        let mut data = vec![0u8; len as usize];
        if !read_full(s, &mut data)? {
            return Ok(Outcome::Closed("closed inside an option"));
        }
        match opt {
            OPT_EXPORT_NAME => {
                // No way to answer an error here: the spec says to close.
                if !e.answers_to(&data) {
                    return Ok(Outcome::Closed("EXPORT_NAME of an unknown export"));
                }
                let Ok(queue) = claim() else {
                    return Ok(Outcome::Closed("no free queue pair for EXPORT_NAME"));
                };
                let mut b = Vec::with_capacity(134);
                b.extend_from_slice(&e.size.to_be_bytes());
                b.extend_from_slice(&e.transmission_flags().to_be_bytes());
                if !no_zeroes {
                    b.extend_from_slice(&[0u8; 124]);
                }
                s.write_all(&b)?;
                s.flush()?;
                return Ok(Outcome::Go { queue });
            }
            OPT_ABORT => {
                send(s, opt, REP_ACK, &[])?;
                return Ok(Outcome::Closed("ABORT"));
            }
            OPT_LIST => {
                if !data.is_empty() {
                    send_error(s, opt, REP_ERR_INVALID, "NBD_OPT_LIST takes no data")?;
                    continue;
                }
                let mut b = Vec::new();
                b.extend_from_slice(&(e.name.len() as u32).to_be_bytes());
                b.extend_from_slice(e.name.as_bytes());
                send(s, opt, REP_SERVER, &b)?;
                send(s, opt, REP_ACK, &[])?;
            }
            OPT_STARTTLS => {
                send_error(s, opt, REP_ERR_POLICY, "ssdkit serve has no TLS")?;
            }
            OPT_INFO | OPT_GO => {
                let Some((name, infos)) = parse_info(&data) else {
                    send_error(s, opt, REP_ERR_INVALID, "malformed NBD_OPT_INFO/GO data")?;
                    continue;
                };
                if !e.answers_to(name) {
                    let msg = format!(
                        "no export named {:?}; this server has {:?}",
                        String::from_utf8_lossy(name),
                        e.name
                    );
                    send_error(s, opt, REP_ERR_UNKNOWN, &msg)?;
                    continue;
                }
                let queue = if opt == OPT_GO {
                    match claim() {
                        Ok(q) => Some(q),
                        Err(msg) => {
                            send_error(s, opt, REP_ERR_POLICY, &msg)?;
                            continue;
                        }
                    }
                } else {
                    None
                };
                send_info(s, opt, e, &infos)?;
                send(s, opt, REP_ACK, &[])?;
                if let Some(queue) = queue {
                    return Ok(Outcome::Go { queue });
                }
            }
            _ => {
                // STRUCTURED_REPLY, meta contexts, EXTENDED_HEADERS (qemu asks first) and
                // unknown options: the client falls back.
                send_error(
                    s,
                    opt,
                    REP_ERR_UNSUP,
                    "option not supported by ssdkit serve",
                )?;
            }
        }
    }
}

/// The name and the requested information items of INFO/GO data, if well formed.
fn parse_info(d: &[u8]) -> Option<(&[u8], Vec<u16>)> {
    let name_len = u32::from_be_bytes(d.get(0..4)?.try_into().ok()?) as usize;
    let name = d.get(4..4usize.checked_add(name_len)?)?;
    let at = 4 + name_len;
    let n = u16::from_be_bytes(d.get(at..at + 2)?.try_into().ok()?) as usize;
    if d.len() != at + 2 + 2 * n {
        return None;
    }
    let infos = (0..n)
        .map(|i| u16::from_be_bytes([d[at + 2 + 2 * i], d[at + 3 + 2 * i]]))
        .collect();
    Some((name, infos))
}

fn send_info<S: Write>(s: &mut S, opt: u32, e: &Export, asked: &[u16]) -> io::Result<()> {
    let mut b = Vec::with_capacity(12);
    b.extend_from_slice(&INFO_EXPORT.to_be_bytes());
    b.extend_from_slice(&e.size.to_be_bytes());
    b.extend_from_slice(&e.transmission_flags().to_be_bytes());
    send(s, opt, REP_INFO, &b)?;
    // Sent whether asked or not: the spec says a server SHOULD advertise constraints that
    // differ from the defaults, and clients that did not ask may ignore it.
    let mut b = Vec::with_capacity(14);
    b.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
    b.extend_from_slice(&e.min_block.to_be_bytes());
    b.extend_from_slice(&PREFERRED_BLOCK.max(e.min_block).to_be_bytes());
    b.extend_from_slice(&MAX_PAYLOAD.to_be_bytes());
    send(s, opt, REP_INFO, &b)?;
    if asked.contains(&INFO_NAME) {
        let mut b = INFO_NAME.to_be_bytes().to_vec();
        b.extend_from_slice(e.name.as_bytes());
        send(s, opt, REP_INFO, &b)?;
    }
    if asked.contains(&INFO_DESCRIPTION) {
        let mut b = INFO_DESCRIPTION.to_be_bytes().to_vec();
        b.extend_from_slice(e.description.as_bytes());
        send(s, opt, REP_INFO, &b)?;
    }
    Ok(())
}

fn send<S: Write>(s: &mut S, opt: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    s.write_all(&option_reply(opt, kind, data))?;
    s.flush()
}

fn send_error<S: Write>(s: &mut S, opt: u32, kind: u32, msg: &str) -> io::Result<()> {
    send(s, opt, kind, msg.as_bytes())
}

fn read_u32<S: Read>(s: &mut S) -> io::Result<Option<u32>> {
    let mut b = [0u8; 4];
    Ok(read_full(s, &mut b)?.then(|| u32::from_be_bytes(b)))
}

/// Fills `buf`; false if the stream ended first (a client that leaves is not an error).
pub fn read_full<S: Read>(s: &mut S, buf: &mut [u8]) -> io::Result<bool> {
    match s.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that reads from a script and records what the server writes.
    struct Script {
        input: io::Cursor<Vec<u8>>,
        output: Vec<u8>,
    }
    impl Read for Script {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.input.read(b)
        }
    }
    impl Write for Script {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn export() -> Export {
        Export {
            name: "ssdkit".into(),
            description: "a simulated SSD".into(),
            size: 1 << 30,
            min_block: 512,
            read_only: false,
        }
    }

    fn option(opt: u32, data: &[u8]) -> Vec<u8> {
        let mut b = IHAVEOPT.to_be_bytes().to_vec();
        b.extend_from_slice(&opt.to_be_bytes());
        b.extend_from_slice(&(data.len() as u32).to_be_bytes());
        b.extend_from_slice(data);
        b
    }

    fn info_data(name: &str, infos: &[u16]) -> Vec<u8> {
        let mut b = (name.len() as u32).to_be_bytes().to_vec();
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&(infos.len() as u16).to_be_bytes());
        for i in infos {
            b.extend_from_slice(&i.to_be_bytes());
        }
        b
    }

    fn run(client_flags: u32, opts: &[Vec<u8>], free: bool) -> (Outcome, Vec<u8>) {
        let mut input = client_flags.to_be_bytes().to_vec();
        for o in opts {
            input.extend_from_slice(o);
        }
        let mut s = Script {
            input: io::Cursor::new(input),
            output: Vec::new(),
        };
        let mut claim = || {
            if free {
                Ok(3)
            } else {
                Err("all 1 queue pairs in use".to_string())
            }
        };
        let out = negotiate(&mut s, &export(), &mut claim).unwrap();
        (out, s.output)
    }

    /// Option replies after the 18-byte greeting: (option, type, data).
    fn replies(mut b: &[u8]) -> Vec<(u32, u32, Vec<u8>)> {
        let mut out = Vec::new();
        while b.len() >= 20 && b[..8] == OPT_REPLY_MAGIC.to_be_bytes() {
            let opt = u32::from_be_bytes(b[8..12].try_into().unwrap());
            let kind = u32::from_be_bytes(b[12..16].try_into().unwrap());
            let len = u32::from_be_bytes(b[16..20].try_into().unwrap()) as usize;
            out.push((opt, kind, b[20..20 + len].to_vec()));
            b = &b[20 + len..];
        }
        out
    }

    #[test]
    fn greeting_then_go_with_export_and_block_sizes() {
        let (out, w) = run(
            3,
            &[option(
                OPT_GO,
                &info_data("", &[INFO_NAME, INFO_DESCRIPTION]),
            )],
            true,
        );
        assert_eq!(out, Outcome::Go { queue: 3 });
        assert_eq!(&w[..8], b"NBDMAGIC");
        assert_eq!(&w[8..16], b"IHAVEOPT");
        assert_eq!(&w[16..18], &[0, 3]);
        let r = replies(&w[18..]);
        let kinds: Vec<u32> = r.iter().map(|x| x.1).collect();
        assert_eq!(kinds, vec![REP_INFO, REP_INFO, REP_INFO, REP_INFO, REP_ACK]);
        let export = &r[0].2;
        assert_eq!(u16::from_be_bytes([export[0], export[1]]), INFO_EXPORT);
        assert_eq!(
            u64::from_be_bytes(export[2..10].try_into().unwrap()),
            1 << 30
        );
        assert_eq!(u16::from_be_bytes([export[10], export[11]]), 0x016d);
        let bs = &r[1].2;
        let at = |i: usize| u32::from_be_bytes(bs[i..i + 4].try_into().unwrap());
        assert_eq!((at(2), at(6), at(10)), (512, 4096, MAX_PAYLOAD));
        assert_eq!(&r[2].2[2..], b"ssdkit");
        assert_eq!(&r[3].2[2..], b"a simulated SSD");
    }

    #[test]
    fn unsupported_options_and_errors_let_the_client_go_on() {
        let opts = [
            option(99, b"xyz"),
            option(8, &[]),
            option(OPT_STARTTLS, &[]),
            option(OPT_LIST, b"junk"),
            option(OPT_GO, &info_data("nope", &[])),
            option(OPT_INFO, &[0, 0, 0, 9, 1]),
            option(OPT_LIST, &[]),
            option(OPT_INFO, &info_data("ssdkit", &[])),
            option(OPT_ABORT, &[]),
        ];
        let (out, w) = run(1, &opts, true);
        assert_eq!(out, Outcome::Closed("ABORT"));
        let r: Vec<(u32, u32)> = replies(&w[18..]).iter().map(|x| (x.0, x.1)).collect();
        assert_eq!(
            r,
            vec![
                (99, REP_ERR_UNSUP),
                (8, REP_ERR_UNSUP),
                (OPT_STARTTLS, REP_ERR_POLICY),
                (OPT_LIST, REP_ERR_INVALID),
                (OPT_GO, REP_ERR_UNKNOWN),
                (OPT_INFO, REP_ERR_INVALID),
                (OPT_LIST, REP_SERVER),
                (OPT_LIST, REP_ACK),
                (OPT_INFO, REP_INFO),
                (OPT_INFO, REP_INFO),
                (OPT_INFO, REP_ACK),
                (OPT_ABORT, REP_ACK),
            ]
        );
    }

    #[test]
    fn go_without_a_free_queue_is_refused_by_policy() {
        let (out, w) = run(1, &[option(OPT_GO, &info_data("", &[]))], false);
        assert_eq!(out, Outcome::Closed("closed during option haggling"));
        let r = replies(&w[18..]);
        assert_eq!(
            (r[0].1, r[0].2.as_slice()),
            (REP_ERR_POLICY, &b"all 1 queue pairs in use"[..])
        );
    }

    #[test]
    fn export_name_with_and_without_zero_padding() {
        let (out, w) = run(1, &[option(OPT_EXPORT_NAME, b"ssdkit")], true);
        assert_eq!(out, Outcome::Go { queue: 3 });
        assert_eq!(w.len(), 18 + 8 + 2 + 124);
        assert_eq!(u64::from_be_bytes(w[18..26].try_into().unwrap()), 1 << 30);
        let (_, w) = run(3, &[option(OPT_EXPORT_NAME, b"")], true);
        assert_eq!(w.len(), 18 + 10);
        let (out, _) = run(3, &[option(OPT_EXPORT_NAME, b"other")], true);
        assert!(matches!(out, Outcome::Closed(_)));
    }

    #[test]
    fn rule_breakers_are_dropped() {
        assert!(matches!(
            run(4, &[], true).0,
            Outcome::Closed("unknown client flags")
        ));
        let mut bad = option(OPT_LIST, &[]);
        bad[0] ^= 1;
        assert!(matches!(
            run(1, &[bad], true).0,
            Outcome::Closed("bad option magic")
        ));
        let mut big = IHAVEOPT.to_be_bytes().to_vec();
        big.extend_from_slice(&OPT_GO.to_be_bytes());
        big.extend_from_slice(&(1u32 << 30).to_be_bytes());
        assert!(matches!(
            run(1, &[big], true).0,
            Outcome::Closed("option longer than 64 KiB")
        ));
        // A truncated option is an end of stream, not an error.
        let mut cut = option(OPT_GO, &info_data("", &[]));
        cut.truncate(20);
        assert!(matches!(
            run(1, &[cut], true).0,
            Outcome::Closed("closed inside an option")
        ));
    }
}

//! The NBD protocol's wire format (NetworkBlockDevice/nbd, `doc/proto.md`): constants, the
//! transmission request's decoding and checks, and reply encoding. Pure: no I/O, so unit
//! tests and the fuzz target exercise it directly.

pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

// Handshake flags (server) and client flags.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1;
pub const FLAG_NO_ZEROES: u16 = 2;
pub const CLIENT_FIXED_NEWSTYLE: u32 = 1;
pub const CLIENT_NO_ZEROES: u32 = 2;

// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;

// Option replies.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
pub const REP_ERR_POLICY: u32 = (1 << 31) + 2;
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;
pub const REP_ERR_SHUTDOWN: u32 = (1 << 31) + 7;

// Information items of NBD_REP_INFO.
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

// Transmission flags.
pub const TF_HAS_FLAGS: u16 = 1;
pub const TF_READ_ONLY: u16 = 1 << 1;
pub const TF_SEND_FLUSH: u16 = 1 << 2;
pub const TF_SEND_FUA: u16 = 1 << 3;
pub const TF_SEND_TRIM: u16 = 1 << 5;
pub const TF_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const TF_CAN_MULTI_CONN: u16 = 1 << 8;

// Commands and command flags.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMDF_FUA: u16 = 1;
pub const CMDF_NO_HOLE: u16 = 1 << 1;

// Error values of replies (the spec's, which are Linux's errno numbers).
pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const EOVERFLOW: u32 = 75;
pub const ESHUTDOWN: u32 = 108;

/// Largest option the server reads: a 4096-byte name and a long list of info requests fit;
/// more is a client trying to exhaust memory, and the spec lets the server disconnect.
pub const MAX_OPTION_BYTES: u32 = 64 * 1024;
/// Largest READ or WRITE payload, advertised as the block-size maximum (nbdkit's and qemu's).
pub const MAX_PAYLOAD: u32 = 32 * 1024 * 1024;
/// Preferred block size advertised: a flash page of most presets, and the Linux page size.
pub const PREFERRED_BLOCK: u32 = 4096;

/// The export as the handshake describes it.
#[derive(Debug, Clone)]
pub struct Export {
    pub name: String,
    pub description: String,
    pub size: u64,
    /// Minimum block size: the device's sector. Requests must be multiples of it.
    pub min_block: u32,
    pub read_only: bool,
}

impl Export {
    pub fn transmission_flags(&self) -> u16 {
        let mut f = TF_HAS_FLAGS
            | TF_SEND_FLUSH
            | TF_SEND_FUA
            | TF_SEND_TRIM
            | TF_SEND_WRITE_ZEROES
            // One shared store: a FLUSH on any connection covers the writes of all.
            | TF_CAN_MULTI_CONN;
        if self.read_only {
            f |= TF_READ_ONLY;
        }
        f
    }

    /// The empty name reaches the default export, as the spec says.
    pub fn answers_to(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
}

/// A transmission request as it arrives (28 bytes, big-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub magic: u32,
    pub flags: u16,
    pub kind: u16,
    pub cookie: u64,
    pub offset: u64,
    pub length: u32,
}

impl Request {
    pub const BYTES: usize = 28;

    pub fn decode(b: &[u8; Self::BYTES]) -> Self {
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().unwrap());
        Request {
            magic: u32_at(0),
            flags: u16_at(4),
            kind: u16_at(6),
            cookie: u64_at(8),
            offset: u64_at(16),
            length: u32_at(24),
        }
    }

    pub fn encode(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[0..4].copy_from_slice(&self.magic.to_be_bytes());
        b[4..6].copy_from_slice(&self.flags.to_be_bytes());
        b[6..8].copy_from_slice(&self.kind.to_be_bytes());
        b[8..16].copy_from_slice(&self.cookie.to_be_bytes());
        b[16..24].copy_from_slice(&self.offset.to_be_bytes());
        b[24..28].copy_from_slice(&self.length.to_be_bytes());
        b
    }

    /// Bytes of payload that follow this request on the wire: a WRITE's data. Read (and, if
    /// the request is refused, discarded) whatever the checks say, so the stream stays in step.
    pub fn payload(&self) -> u32 {
        if self.kind == CMD_WRITE {
            self.length
        } else {
            0
        }
    }
}

/// What a checked request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Read {
        offset: u64,
        length: u32,
    },
    Write {
        offset: u64,
        length: u32,
        fua: bool,
    },
    Flush,
    Trim {
        offset: u64,
        length: u32,
        fua: bool,
    },
    /// `punch`: the range may be deallocated (no NO_HOLE flag).
    WriteZeroes {
        offset: u64,
        length: u32,
        fua: bool,
        punch: bool,
    },
    Disc,
}

/// The checks of "Request types" and "Error values": a refused request gets the error, and the
/// connection goes on. A bad magic is not here: nothing after it can be trusted, so the caller
/// closes the connection.
pub fn check(r: &Request, e: &Export) -> Result<Cmd, u32> {
    let allowed = match r.kind {
        CMD_READ | CMD_FLUSH | CMD_DISC => CMDF_FUA,
        CMD_WRITE | CMD_TRIM => CMDF_FUA,
        CMD_WRITE_ZEROES => CMDF_FUA | CMDF_NO_HOLE,
        // CACHE, BLOCK_STATUS, RESIZE and unknown commands are not advertised.
        _ => return Err(EINVAL),
    };
    if r.flags & !allowed != 0 {
        return Err(EINVAL);
    }
    let fua = r.flags & CMDF_FUA != 0;
    match r.kind {
        CMD_DISC => return Ok(Cmd::Disc),
        CMD_FLUSH => {
            return if r.offset == 0 && r.length == 0 {
                Ok(Cmd::Flush)
            } else {
                Err(EINVAL)
            };
        }
        _ => {}
    }
    let writes = r.kind != CMD_READ;
    if writes && e.read_only {
        return Err(EPERM);
    }
    let min = e.min_block as u64;
    if !r.offset.is_multiple_of(min) || !(r.length as u64).is_multiple_of(min) {
        return Err(EINVAL);
    }
    if matches!(r.kind, CMD_READ | CMD_WRITE) && r.length > MAX_PAYLOAD {
        return Err(EINVAL);
    }
    match r.offset.checked_add(r.length as u64) {
        Some(end) if end <= e.size => {}
        // The spec asks ENOSPC for a write past the end, EINVAL for the others.
        Some(_) if r.kind == CMD_WRITE || r.kind == CMD_WRITE_ZEROES => return Err(ENOSPC),
        _ => return Err(EINVAL),
    }
    let (offset, length) = (r.offset, r.length);
    Ok(match r.kind {
        CMD_READ => Cmd::Read { offset, length },
        CMD_WRITE => Cmd::Write {
            offset,
            length,
            fua,
        },
        CMD_TRIM => Cmd::Trim {
            offset,
            length,
            fua,
        },
        _ => Cmd::WriteZeroes {
            offset,
            length,
            fua,
            punch: r.flags & CMDF_NO_HOLE == 0,
        },
    })
}

/// A simple reply's 16-byte header.
pub fn simple_reply(error: u32, cookie: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b
}

/// An option reply: header and data.
pub fn option_reply(option: u32, kind: u32, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(20 + data.len());
    b.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    b.extend_from_slice(&option.to_be_bytes());
    b.extend_from_slice(&kind.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(read_only: bool) -> Export {
        Export {
            name: "ssdkit".into(),
            description: String::new(),
            size: 1 << 30,
            min_block: 512,
            read_only,
        }
    }

    fn req(kind: u16, flags: u16, offset: u64, length: u32) -> Request {
        Request {
            magic: REQUEST_MAGIC,
            flags,
            kind,
            cookie: 7,
            offset,
            length,
        }
    }

    #[test]
    fn request_round_trips_through_its_bytes() {
        let r = Request {
            magic: REQUEST_MAGIC,
            flags: 3,
            kind: CMD_WRITE_ZEROES,
            cookie: 0x0102_0304_0506_0708,
            offset: 1 << 40,
            length: 0xdead_beef,
        };
        let b = r.encode();
        assert_eq!(&b[0..4], &[0x25, 0x60, 0x95, 0x13]);
        assert_eq!(Request::decode(&b), r);
    }

    /// Each row of the spec's error rules: (request, expected outcome).
    #[test]
    fn checks_follow_the_specs_error_values() {
        let e = export(false);
        let size = e.size;
        let cases: Vec<(Request, Result<Cmd, u32>)> = vec![
            (
                req(CMD_READ, 0, 4096, 4096),
                Ok(Cmd::Read {
                    offset: 4096,
                    length: 4096,
                }),
            ),
            (
                req(CMD_WRITE, CMDF_FUA, 0, 512),
                Ok(Cmd::Write {
                    offset: 0,
                    length: 512,
                    fua: true,
                }),
            ),
            (req(CMD_FLUSH, 0, 0, 0), Ok(Cmd::Flush)),
            (req(CMD_FLUSH, 0, 512, 0), Err(EINVAL)),
            (req(CMD_DISC, 0, 0, 0), Ok(Cmd::Disc)),
            (
                req(CMD_WRITE_ZEROES, CMDF_NO_HOLE, 0, 1024),
                Ok(Cmd::WriteZeroes {
                    offset: 0,
                    length: 1024,
                    fua: false,
                    punch: false,
                }),
            ),
            (req(CMD_TRIM, CMDF_NO_HOLE, 0, 512), Err(EINVAL)),
            (req(CMD_READ, 1 << 2, 0, 512), Err(EINVAL)),
            (req(5, 0, 0, 512), Err(EINVAL)),
            (req(42, 0, 0, 512), Err(EINVAL)),
            (req(CMD_READ, 0, 100, 512), Err(EINVAL)),
            (req(CMD_READ, 0, 0, 100), Err(EINVAL)),
            (req(CMD_READ, 0, size - 512, 1024), Err(EINVAL)),
            (req(CMD_WRITE, 0, size - 512, 1024), Err(ENOSPC)),
            (req(CMD_TRIM, 0, size, 512), Err(EINVAL)),
            (req(CMD_READ, 0, u64::MAX - 511, 1024), Err(EINVAL)),
            (req(CMD_READ, 0, 0, MAX_PAYLOAD + 512), Err(EINVAL)),
            // TRIM may exceed the payload maximum: it carries no data.
            (
                req(CMD_TRIM, 0, 0, MAX_PAYLOAD + 512),
                Ok(Cmd::Trim {
                    offset: 0,
                    length: MAX_PAYLOAD + 512,
                    fua: false,
                }),
            ),
        ];
        for (r, want) in cases {
            assert_eq!(check(&r, &e), want, "{r:?}");
        }
        let ro = export(true);
        assert_eq!(check(&req(CMD_WRITE, 0, 0, 512), &ro), Err(EPERM));
        assert_eq!(check(&req(CMD_TRIM, 0, 0, 512), &ro), Err(EPERM));
        assert!(check(&req(CMD_READ, 0, 0, 512), &ro).is_ok());
        assert_eq!(check(&req(CMD_FLUSH, 0, 0, 0), &ro), Ok(Cmd::Flush));
        assert_eq!(ro.transmission_flags() & TF_READ_ONLY, TF_READ_ONLY);
        assert_eq!(e.transmission_flags(), 0x016d);
    }

    #[test]
    fn replies_have_the_specs_layout() {
        let r = simple_reply(EINVAL, 0xabcd);
        assert_eq!(&r[..4], &[0x67, 0x44, 0x66, 0x98]);
        assert_eq!(u32::from_be_bytes(r[4..8].try_into().unwrap()), 22);
        assert_eq!(u64::from_be_bytes(r[8..].try_into().unwrap()), 0xabcd);
        let o = option_reply(OPT_GO, REP_ACK, &[]);
        assert_eq!(o.len(), 20);
        assert_eq!(&o[..8], &OPT_REPLY_MAGIC.to_be_bytes());
    }
}

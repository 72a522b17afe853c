//! Format detection from the first lines of a (decompressed) trace.
//!
//! The first non-blank, non-`#` line decides, by these rules in order:
//!
//! | rule | format |
//! |---|---|
//! | starts with `fio version 2 iolog` / `fio version 3 iolog` | fio_v2 / fio_v3 |
//! | is `version,time,op,size,lbn` | cloudphysics |
//! | first field `maj,min`, at least 7 fields | blkparse |
//! | 7 comma fields, 4th Read/Write | msr |
//! | 5+ comma fields, numeric ASU/LBA/size, 4th r/R/w/W | spc |
//! | 8 fields, 2nd D or C | wiscsee |
//! | 8 fields, 3rd = 2nd x 512 | biotracer |
//! | 5 numeric fields | mqsim or disksim, see below |
//!
//! MQSim and DiskSim lines both have 5 numbers; up to 32 such lines are looked at: a decimal
//! time, or a last field other than 0/1, means disksim, otherwise mqsim. DiskSim-like traces
//! with sizes in 4 KiB pages (FlashSim's fin1, web1, desktop, jpeg_copy) cannot be told from
//! DiskSim by their text and detect as disksim: the user must say `disksim_pages`. `delimited`
//! is never detected.

use super::formats::{is_blk_device, split_byte, split_ws, trim};
use super::num::{parse_time_ns, parse_u64};
use crate::config::TraceFormat;

/// How many candidate lines the MQSim/DiskSim rule looks at.
const LOOK_LINES: usize = 32;

/// Non-blank, non-comment lines of the prefix. The last piece is used only when the stream
/// ended there (otherwise it may be cut).
fn candidate_lines(prefix: &[u8], complete: bool) -> impl Iterator<Item = &[u8]> {
    // Lazily, so a prefix of many short lines allocates nothing.
    let whole = if complete {
        prefix
    } else {
        match memchr::memrchr(b'\n', prefix) {
            Some(i) => &prefix[..i + 1],
            None => &prefix[..0],
        }
    };
    let whole = whole.strip_suffix(b"\n").unwrap_or(whole);
    whole
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| {
            let t = trim(l);
            !t.is_empty() && t[0] != b'#'
        })
}

/// The first candidate line, for the "cannot detect" message.
pub(crate) fn first_line(prefix: &[u8], complete: bool) -> Option<&[u8]> {
    candidate_lines(prefix, complete).next().or_else(|| {
        // One line longer than the prefix: show its start.
        let t = trim(prefix);
        (!t.is_empty() && !t.contains(&b'\n')).then_some(t)
    })
}

#[cfg(test)]
pub(crate) fn detect(prefix: &[u8], complete: bool) -> Option<TraceFormat> {
    detect_explained(prefix, complete).map(|(f, _)| f)
}

/// The format and, in words, the rule that chose it (reported on stderr and in the result,
/// since a trace of five numbers per line reads two ways).
pub(crate) fn detect_explained(prefix: &[u8], complete: bool) -> Option<(TraceFormat, String)> {
    let mut lines = candidate_lines(prefix, complete).take(LOOK_LINES);
    let first = lines.next()?;
    let t = trim(first);
    let by = |f: TraceFormat, why: &str| Some((f, why.to_string()));
    if t.starts_with(b"fio version 2 iolog") {
        return by(
            TraceFormat::FioV2,
            "the first line is `fio version 2 iolog`",
        );
    }
    if t.starts_with(b"fio version 3 iolog") {
        return by(
            TraceFormat::FioV3,
            "the first line is `fio version 3 iolog`",
        );
    }
    if t.eq_ignore_ascii_case(b"version,time,op,size,lbn") {
        return by(
            TraceFormat::Cloudphysics,
            "the first line is the CloudPhysics header `version,time,op,size,lbn`",
        );
    }
    let mut w: [&[u8]; 9] = [&[]; 9];
    let nw = split_ws(t, &mut w);
    if nw >= 7 && is_blk_device(w[0]) {
        return by(
            TraceFormat::Blkparse,
            "the first field is a `major,minor` device and a line has at least 7 fields (blkparse)",
        );
    }
    let mut c: [&[u8]; 7] = [&[]; 7];
    let nc = split_byte(t, b',', &mut c);
    if nc == 7
        && (c[3].eq_ignore_ascii_case(b"read") || c[3].eq_ignore_ascii_case(b"write"))
        && parse_u64(c[0]).is_some()
    {
        return by(
            TraceFormat::Msr,
            "7 comma-separated fields with Read/Write in the 4th (MSR Cambridge)",
        );
    }
    if nc >= 5
        && matches!(c[3], b"r" | b"R" | b"w" | b"W")
        && c[..3].iter().all(|f| parse_u64(f).is_some())
    {
        return by(
            TraceFormat::Spc,
            "comma-separated numeric ASU, LBA and size with r/w in the 4th field (SPC)",
        );
    }
    if nw == 8 && (w[1] == b"D" || w[1] == b"C") {
        return by(
            TraceFormat::Wiscsee,
            "8 fields with D or C in the 2nd (WiscSee)",
        );
    }
    if nw == 8 {
        if let (Some(sectors), Some(bytes)) = (parse_u64(w[1]), parse_u64(w[2])) {
            if sectors.checked_mul(512) == Some(bytes) && sectors > 0 {
                return by(
                    TraceFormat::Biotracer,
                    "8 fields with the 3rd 512 times the 2nd (BIOtracer)",
                );
            }
        }
    }
    if nw == 5 {
        let numeric = |f: &[&[u8]]| {
            parse_time_ns(f[0], 0).is_some() && f[1..5].iter().all(|x| parse_u64(x).is_some())
        };
        if !numeric(&w[..5]) {
            return None;
        }
        let mut looked = 0;
        let mut disksim: Option<String> = None;
        for (i, l) in std::iter::once(first).chain(lines).enumerate() {
            looked += 1;
            let mut f: [&[u8]; 5] = [&[]; 5];
            if disksim.is_none() && split_ws(l, &mut f) == 5 && numeric(&f) {
                let n = i + 1;
                if parse_u64(f[0]).is_none() {
                    disksim = Some(format!(
                        "candidate line {n} has a decimal time, as DiskSim's milliseconds"
                    ));
                } else if !matches!(f[4], b"0" | b"1") {
                    disksim = Some(format!(
                        "candidate line {n} has flags {} (MQSim's last field is 0 or 1)",
                        String::from_utf8_lossy(f[4])
                    ));
                }
            }
        }
        return Some(match disksim {
            Some(why) => (
                TraceFormat::Disksim,
                format!(
                    "5 numbers per line, read as DiskSim (times in ms, sizes in 512 B sectors): {why}; if sizes are 4 KiB pages (FlashSim traces) set trace_format = \"disksim_pages\", if it is an MQSim trace set trace_format = \"mqsim\""
                ),
            ),
            None => (
                TraceFormat::Mqsim,
                format!(
                    "5 numbers per line, read as MQSim (times in ns, sizes in 512 B sectors): the first {looked} lines have integer times and a last field of 0 or 1; if it is a DiskSim trace set trace_format = \"disksim\""
                ),
            ),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use TraceFormat::*;

    fn d(s: &str) -> Option<TraceFormat> {
        detect(s.as_bytes(), true)
    }

    #[test]
    fn each_format_by_its_first_lines() {
        assert_eq!(
            d("938513000 4 264719034 16 0\n938828000 3 197570570 16 0\n"),
            Some(Mqsim)
        );
        assert_eq!(
            d("0 0 280605840 2 1\r\n979 0 287641400 128 1\r\n"),
            Some(Mqsim)
        );
        assert_eq!(
            d("5265.313 0 6357144 8 0\n5265.703 0 6307768 8 0\n"),
            Some(Disksim)
        );
        assert_eq!(d("0.000000\t0\t94554803\t1\t1\n"), Some(Disksim));
        assert_eq!(
            d("1 0 5 8 0\n2 0 5 8 3\n"),
            Some(Disksim),
            "flags beyond 0/1"
        );
        assert_eq!(
            d("1 0 5 8 0\n2.5 0 5 8 1\n"),
            Some(Disksim),
            "a later decimal time"
        );
        assert_eq!(
            d("128166372003061629,wdev,0,Read,3154128896,4096,1331\n"),
            Some(Msr)
        );
        assert_eq!(d("0,303567,3584,w,0.000000\n"), Some(Spc));
        assert_eq!(d("0,657728,8192,R,0.011413,extra\n"), Some(Spc));
        assert_eq!(d("  8,16   5        1     0.000000000 18615  A   R 1444645666 + 256 <- (8,17) 1444645632\n"), Some(Blkparse));
        assert_eq!(
            d("259,2    0        1     0.000000000  4020  Q   R 282624 + 8 [java]\n"),
            Some(Blkparse)
        );
        assert_eq!(d("fio version 2 iolog\n/dev/sda add\n"), Some(FioV2));
        assert_eq!(d("fio version 3 iolog\n0 /dev/sda add\n"), Some(FioV3));
        assert_eq!(
            d("39949 D read 299008 4096 0.000000000 0 False\n"),
            Some(Wiscsee)
        );
        assert_eq!(
            d("0\t\t8\t\t4096\t\t4\t\t1.740780627\t\t1.740812815\t\t1.740851877\t\t1.741075471\n"),
            Some(Biotracer)
        );
        assert_eq!(
            d("version,time,op,size,lbn\n1,5633898,2a,512,42932745\n"),
            Some(Cloudphysics)
        );
        assert_eq!(
            d("\n\n# comment\n  \n938513000 4 264719034 16 0\n"),
            Some(Mqsim),
            "blank and # lines skipped"
        );
    }

    #[test]
    fn unsure_is_none() {
        assert_eq!(d(""), None);
        assert_eq!(d("\n \n"), None);
        assert_eq!(d("hello world\n"), None);
        assert_eq!(d("a b c d e\n"), None);
        assert_eq!(d("1,2,3\n"), None);
        assert_eq!(d("1 2 3 4 5 6 7 8\n"), None);
    }

    #[test]
    fn cut_last_line_is_ignored_unless_complete() {
        assert_eq!(
            detect(b"938513000 4 264719034 16 0\n5265.3", false),
            Some(Mqsim)
        );
        assert_eq!(
            detect(b"938513000 4 264719034 16 0\n5265.3 0 1 1 1", true),
            Some(Disksim)
        );
        assert_eq!(detect(b"938513000 4 2647", false), None);
        assert_eq!(
            first_line(b"938513000 4 2647", false),
            Some(&b"938513000 4 2647"[..])
        );
    }
}

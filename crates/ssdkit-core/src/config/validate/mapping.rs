//! `ftl.mapping`: what block and hybrid mapping support, and the spare blocks they need.

use crate::config::{Associativity, CmtMode, Config, Mapping, Medium, Placement, PreconditionMode};
use crate::config::{Sizes, UnmappedReads};

/// Block and hybrid mapping: the features they do not model are refused by name, and each
/// plane must have the spare blocks their merges and log blocks take.
pub(super) fn validate_mapping(c: &Config, s: &Sizes) -> Result<(), String> {
    let m = c.ftl.mapping;
    if m == (Mapping::Page {}) {
        return Ok(());
    }
    let name = m.name();
    let with = format!("`ftl.mapping` = \"{name}\"");
    let refuse = |key: &str, shown: &str, why: &str, allowed: &str| {
        Err(format!(
            "key `{key}` = {shown} is not allowed with {with}: {why}; allowed {allowed}"
        ))
    };
    if c.ftl.cmt.mode != CmtMode::Ideal {
        return refuse(
            "ftl.cmt.mode",
            &format!("{:?}", c.ftl.cmt.mode).to_lowercase(),
            "a block-level map is small enough to live in DRAM (one entry per block), so it is never cached",
            "\"ideal\"",
        );
    }
    if c.flash.medium != Medium::Nand {
        return refuse(
            "flash.medium",
            "\"in_place\"",
            "block and hybrid mapping merge blocks, which needs an erasable medium",
            "\"nand\"",
        );
    }
    if c.ftl.placement != Placement::Static {
        return refuse(
            "ftl.placement",
            "\"dynamic\"",
            "a logical block's plane is fixed",
            "\"static\"",
        );
    }
    if let Some(k) = c.flows.iter().position(|f| f.is_pinned()) {
        return Err(format!(
            "flow {k} is pinned (`channels`, `chips`, `dies` or `planes`), which {with} cannot honour: a logical block's plane is fixed by its address; remove the pinning"
        ));
    }
    if c.ftl.unmapped_reads != UnmappedReads::Complete {
        return refuse(
            "ftl.unmapped_reads",
            "\"read_flash\"",
            "a never-written page has no block to be read from",
            "\"complete\"",
        );
    }
    if c.ftl.gc_copyback {
        return refuse(
            "ftl.gc_copyback",
            "true",
            "merges copy pages through the controller",
            "false",
        );
    }
    if c.ftl.wl_static {
        return refuse(
            "ftl.wl_static",
            "true",
            "static wear levelling migrates page-mapped blocks only (dynamic wear levelling, `ftl.wl_dynamic`, applies)",
            "false",
        );
    }
    if c.ftl.gc_background {
        return refuse(
            "ftl.gc_background",
            "true",
            "merges run when a write needs them, never at idle time",
            "false",
        );
    }
    if !matches!(
        c.precondition.mode,
        PreconditionMode::Sequential | PreconditionMode::Empty
    ) {
        return refuse(
            "precondition.mode",
            &format!(
                "\"{}\"",
                format!("{:?}", c.precondition.mode).to_lowercase()
            ),
            "the \"fast\" and \"write\" steady states model the page map's garbage collection",
            "\"sequential\" or \"empty\"",
        );
    }
    // Logical blocks are striped over the planes: the fullest plane holds this many.
    let f = &c.flash;
    let planes = f.channels as u64
        * f.chips_per_channel as u64
        * f.dies_per_chip as u64
        * f.planes_per_die as u64;
    let lblocks = s.logical_pages.div_ceil(f.pages_per_block as u64);
    let per_plane = lblocks.div_ceil(planes);
    let bpp = f.blocks_per_plane as u64;
    let spare = bpp.saturating_sub(per_plane);
    let (need, what) = match m {
        Mapping::Block {} => (1, "one free block for a merge".to_string()),
        Mapping::Hybrid {
            associativity: Associativity::Set,
            ..
        } => (2, "one free block for a merge and at least one log block".to_string()),
        Mapping::Hybrid {
            log_blocks,
            associativity: Associativity::Full,
        } => (
            log_blocks as u64 + 3,
            format!("the {log_blocks} blocks of the log pool (`ftl.mapping.log_blocks`), the sequential log block, its successor and one free block for a merge"),
        ),
        Mapping::Page {} => unreachable!(),
    };
    if spare < need {
        return Err(format!(
            "key `ftl.spare_factor` = {} leaves too few spare blocks for {with}: each plane holds {per_plane} logical blocks of its {bpp} and needs {need} more ({what}); raise the spare factor{}",
            c.ftl.spare_factor,
            if matches!(m, Mapping::Hybrid { associativity: Associativity::Full, .. }) {
                " or lower `ftl.mapping.log_blocks`"
            } else {
                ""
            }
        ));
    }
    Ok(())
}

//! Index types that are easy to confuse: a logical page number, a physical page number, a
//! block, a plane, a die, a request and a transaction are all small integers, and passing
//! one where another is expected compiles silently with bare `u32`s. Each is its own type;
//! the flat tables of the FTL still store raw `u32`s (compact state), converted at their edge.

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// No such item (an unmapped page, no victim, ...).
            pub const NONE: Self = Self(u32::MAX);
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
            #[inline]
            pub fn is_none(self) -> bool {
                self.0 == u32::MAX
            }
            #[inline]
            pub fn is_some(self) -> bool {
                self.0 != u32::MAX
            }
        }

        // Plain bits, for packing into an event key.
        impl From<$name> for u32 {
            #[inline]
            fn from(x: $name) -> u32 {
                x.0
            }
        }
        impl From<u32> for $name {
            #[inline]
            fn from(x: u32) -> Self {
                Self(x)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                if self.is_none() {
                    f.write_str("none")
                } else {
                    self.0.fmt(f)
                }
            }
        }
    };
}

index_type!(
    /// Logical page number: the host's address divided by the page size.
    Lpn
);
index_type!(
    /// Physical page number: plane * pages_per_plane + block-in-plane * pages_per_block + page.
    Ppn
);
index_type!(
    /// Global block number: plane * blocks_per_plane + block-in-plane.
    BlockId
);
index_type!(
    /// Global plane number; a die's planes are consecutive.
    PlaneId
);
index_type!(
    /// Global die number.
    DieId
);
index_type!(
    /// A host request inside the simulator (a slot of the request slab).
    ReqId
);
index_type!(
    /// A flash transaction (a slot of the transaction slab).
    TxId
);
index_type!(
    /// A workload flow (its position in the configuration).
    FlowId
);

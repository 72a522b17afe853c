use thiserror::Error;

/// Errors that reach the user. Each maps to one Python exception class under `SsdkitError`.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// Invalid configuration or override: the message names the key and the allowed values.
    #[error("{0}")]
    Config(String),
    /// Unknown preset name: the message lists the available ones.
    #[error("{0}")]
    Preset(String),
    /// File could not be read or written.
    #[error("{0}")]
    Io(String),
    /// A trace file could not be read or has a bad line: the message names the file, the line
    /// number and the line's text.
    #[error("{0}")]
    Trace(String),
    /// A host program's request the device cannot take (a time in the past, a range outside
    /// the device, a misaligned offset, an unknown queue): the message says which and why.
    #[error("{0}")]
    Request(String),
    /// The model reached a state it cannot leave (a bug, reported instead of hanging).
    #[error("{0}")]
    Simulation(String),
    /// The caller stopped the run from its progress hook (Ctrl-C in Python) or its request-log
    /// sink failed; the message says which.
    #[error("{0}")]
    Interrupted(String),
}

impl Error {
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Config(_) => "config",
            Error::Preset(_) => "preset",
            Error::Io(_) => "io",
            Error::Trace(_) => "trace",
            Error::Simulation(_) => "simulation",
            Error::Request(_) => "request",
            Error::Interrupted(_) => "interrupted",
        }
    }
}

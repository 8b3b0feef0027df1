//! NDN consumers' state machines (issue 22): the pieces of the PTP consumer (spec 004 §4)
//! and of RAAQM that do not depend on names, which the simulator's NDN elements wrap.
//!
//! * [`PathOrder`]: each path's Interests in the order they left, the SEQ → path map and the
//!   ordering rule that finds losses (PTP's §5.C–§5.E), with the in-flight count of §5.D.4.
//! * [`raaqm_drop_probability`]: RAAQM's window-decrease probability from a route's RTTs.
//! * [`PathSet`]: the PTP consumer's paths: at most N in use, the slowest swapped every T, a
//!   NACK's path replaced, at most one change per T (§4.C).
//! * [`PtpConsumer`]: the PTP consumer joining them with MPCCP, probing and timers.
//! * [`AimdConsumer`]: the single-window consumers ICP, RAAQM and RIC.
//! * [`MmtpNdnConsumer`]: mmTP's subscriber over NDN, a subflow per labelled route.

mod aimd;
mod mmtp;
mod order;
mod paths;
mod ptp;
mod raaqm;

pub use aimd::{AimdConfig, AimdConsumer, AimdLaw, AimdStats};
pub use mmtp::{MmtpInterest, MmtpNdnConfig, MmtpNdnConsumer, MmtpNdnStats, DEFAULT_MAX_ROUTES};
pub use order::{LossDetection, PathOrder, Received};
pub use paths::{PathChange, PathInfo, PathSet, PathSetConfig, Selection};
pub use ptp::{PtpConfig, PtpConsumer, PtpRequest, PtpStats};
pub use raaqm::{
    raaqm_drop_probability, RaaqmParams, RaaqmVariant, RouteRtts, RAAQM_P_MAX, RAAQM_P_MIN,
    RAAQM_SAMPLES,
};

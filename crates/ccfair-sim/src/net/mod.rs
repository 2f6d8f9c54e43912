//! The network: constant-delay FIFO pipes (one per flow and direction) and the bottleneck (a queue discipline
//! in front of a link with exact serialization).

pub mod link;
pub mod pipe;

pub use link::Bottleneck;
pub use pipe::Pipe;

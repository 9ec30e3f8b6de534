//! `nabla gradbench` and `nabla adbench`: the twelve GradBench problems as
//! nabla programs (the `gradbench/*.fut` files at the repository root),
//! answered through GradBench's tool protocol.
//!
//! * [`programs`] finds, embeds and compiles the eval programs;
//! * [`json`] converts between JSON and program values, and implements
//!   GradBench's output comparison rule ([`json::compare`]);
//! * [`executables`] compiles them to cached executables (the default
//!   backend of `nabla gradbench`);
//! * [`evals`] maps each eval's JSON input to an entry point's arguments and
//!   its results back to the reference output layout;
//! * [`protocol`] is the line-based session ([`protocol::Session`],
//!   [`protocol::serve`]);
//! * [`adbench`] reads ADBench's text input files into the same JSON inputs.
//!
//! The protocol and the layouts follow GradBench (`gradbench/gradbench`,
//! see `shared/data/README.md` §3).

pub mod adbench;
pub mod evals;
pub mod executables;
pub mod json;
pub mod programs;
pub mod protocol;

pub use evals::{prepare, Call, EVALS};
pub use programs::Programs;
pub use protocol::{serve, Backend, Evaluation, Session};

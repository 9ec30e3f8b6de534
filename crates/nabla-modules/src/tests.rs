//! Unit tests of the module pass.

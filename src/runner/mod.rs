//! runner

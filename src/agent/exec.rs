//! exec agent (agent helper).

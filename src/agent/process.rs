//! process agent (agent helper).

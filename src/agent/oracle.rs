//! oracle agent (agent helper).

//! The properties of reference 000 as proptest properties, one binary, one module per area.

#[path = "properties/transaction.rs"]
mod transaction;

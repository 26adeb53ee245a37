//! The rules of the first guard: recursive forced deletion and destructive SQL. The semantic,
//! parser-based guard replaces this file's matching with one file per category.

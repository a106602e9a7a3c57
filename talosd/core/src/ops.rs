//! Typed workspace operations (mkdir, move, copy, rename, delete, batch): parsing, the paths they touch, and their risk.

//! Roleful targets: each target the request names, with its role (must mutate, verify only, forbidden, ...) and where it came from.

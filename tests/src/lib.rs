//! Integration and UI tests live in `tests/`.

//! Scripted driver (placeholder).

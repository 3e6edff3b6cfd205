//! Round trips of every type and encoding through the writer and the reader,
//! and corrupt payloads (flipped bytes, truncations) that must fail cleanly.

//! Running one scenario on both servers.

//! Arena's end-to-end tests live in `tests/e2e`: each one starts its own
//! `redis-server`, `arena coordinator` and `arena worker` processes, talks to
//! them over loopback (the `arena tournament` commands and gRPC), and tears
//! everything down again, also when it fails. This library is empty; it only
//! gives the package a target.

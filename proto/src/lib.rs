//! Arena's wire protocol. `arena.proto` documents every call and field; this
//! crate only holds the code generated from it. Conversion into domain types
//! happens in the coordinator and the worker.

#![allow(clippy::all)]

pub mod v1 {
    tonic::include_proto!("arena.v1");
}

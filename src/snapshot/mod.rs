//! Snapshots of a project's files as git trees, to tell afterwards what
//! changed, whoever changed it, and to put back what was there. Taken in a
//! private git directory per project, never touching the person's
//! repository; outside git the same store is a plain snapshot.
//!
//! * [`store`] – where a project's snapshots live, and the baseline kept.
//! * [`tree`]  – taking a tree, listing what differs, reading a file back,
//!   settling files into a new baseline.

pub mod store;
pub mod tree;

pub use store::{Kept, Store, now};
pub use tree::{Blob, Difference, Tree};

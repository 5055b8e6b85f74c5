//! sim::controller::driver (in progress)
use super::Timings;
use crate::sim::store::Store;

pub async fn run(_store: Store, _timings: Timings) {
    std::future::pending::<()>().await
}

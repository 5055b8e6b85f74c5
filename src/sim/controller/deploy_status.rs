//! sim::controller::deploy_status (in progress)

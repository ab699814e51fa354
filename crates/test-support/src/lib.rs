//! tooltrail-test-support

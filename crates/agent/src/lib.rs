//! tooltrail-agent

//! When to try again, and how long to wait first.

use std::time::{Duration, SystemTime};

/// Statuses worth another try: the server is busy, rate-limiting, or failed for now.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

/// The wait a `Retry-After` header asks for: delay-seconds or an HTTP date.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = value.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Some(Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Exponential back-off with "equal jitter": try `n` (1-based) waits between half and all of
/// `base * 2^(n-1)`, so that clients that failed together do not retry together.
pub(crate) fn backoff(attempt: u32, base: Duration) -> Duration {
    let doubled = base.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let half = doubled / 2;
    let jitter = rand::random_range(0.0..=1.0);
    half + half.mul_f64(jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_in_seconds_and_as_a_date() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after(" 0.5 ", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn backoff_doubles_within_its_jitter() {
        let base = Duration::from_millis(100);
        for attempt in 1..=4 {
            let full = base * (1 << (attempt - 1));
            let wait = backoff(attempt, base);
            assert!(wait >= full / 2 && wait <= full, "try {attempt}: {wait:?}");
        }
    }

    #[test]
    fn retryable_statuses() {
        let retried: Vec<u16> = [400, 401, 403, 404, 408, 422, 429, 500, 502, 503]
            .into_iter()
            .filter(|status| is_retryable_status(*status))
            .collect();
        assert_eq!(retried, vec![408, 429, 500, 502, 503]);
    }
}

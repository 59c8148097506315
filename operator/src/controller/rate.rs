//! The overall rate of a controller's retries: a token bucket beside each parent's own backoff, as
//! controller-runtime's default rate limiter combines the two (10 retries a second, bursts of 100).

use std::time::Duration;

use tokio::time::Instant;

/// How fast a controller may retry failed passes, all parents together: a token bucket of `burst` tokens
/// refilled at `per_second`. A retry waits for the later of its parent's [`Backoff`](super::Backoff) and the
/// bucket's next token, so a failure that hits every parent at once (the API server down, a webhook
/// refusing every write) retries them at `per_second`, not all together.
///
/// Only retries take tokens: a change, a requeue a pass asks for and a resync never wait for the bucket.
///
/// ```
/// use kubewright::controller::RetryRate;
/// // controller-runtime's defaults.
/// assert_eq!(RetryRate::default(), RetryRate { per_second: 10.0, burst: 100 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryRate {
    /// Tokens added a second (retries a second once a burst is spent); 0 or less: no limit.
    pub per_second: f64,
    /// Tokens the bucket holds: retries that need not wait.
    pub burst: u32,
}

impl Default for RetryRate {
    fn default() -> Self {
        Self {
            per_second: 10.0,
            burst: 100,
        }
    }
}

/// A [`RetryRate`]'s bucket: its tokens may go below zero, each retry taking one and waiting until it is
/// back (Go's `rate.Limiter.Reserve`).
#[derive(Debug)]
pub(crate) struct Bucket {
    rate: RetryRate,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// A full bucket.
    pub(crate) fn new(rate: RetryRate) -> Self {
        Self {
            rate,
            tokens: f64::from(rate.burst),
            at: Instant::now(),
        }
    }

    /// Takes a token for one retry: how long the retry must wait for it.
    pub(crate) fn reserve(&mut self) -> Duration {
        if self.rate.per_second <= 0.0 || !self.rate.per_second.is_finite() {
            return Duration::ZERO;
        }
        let now = Instant::now();
        let refilled = now.duration_since(self.at).as_secs_f64() * self.rate.per_second;
        self.tokens = (self.tokens + refilled).min(f64::from(self.rate.burst));
        self.at = now;
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.rate.per_second)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_passes_then_retries_wait_their_turn_and_the_bucket_refills() {
        let mut b = Bucket::new(RetryRate {
            per_second: 10.0,
            burst: 3,
        });
        let waits: Vec<Duration> = (0..5).map(|_| b.reserve()).collect();
        assert_eq!(waits[..3], [Duration::ZERO; 3]);
        assert_eq!(waits[3], Duration::from_millis(100));
        assert_eq!(waits[4], Duration::from_millis(200));
        // Two tokens owed; after a second the bucket is full again (3, not 8).
        tokio::time::advance(Duration::from_secs(1)).await;
        let waits: Vec<Duration> = (0..4).map(|_| b.reserve()).collect();
        assert_eq!(waits[..3], [Duration::ZERO; 3]);
        assert_eq!(waits[3], Duration::from_millis(100));
    }

    #[tokio::test(start_paused = true)]
    async fn a_rate_of_zero_never_waits() {
        let mut b = Bucket::new(RetryRate {
            per_second: 0.0,
            burst: 0,
        });
        assert!((0..1000).all(|_| b.reserve().is_zero()));
    }
}

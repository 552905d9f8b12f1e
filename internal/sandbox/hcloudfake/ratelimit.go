package hcloudfake

import "time"

// tokenBucket is Hetzner's rate limit: a bucket of capacity tokens (3600 per
// project by default), refilled one token per refill interval; every request
// takes one token and an empty bucket answers 429 rate_limit_exceeded.
type tokenBucket struct {
	capacity int
	refill   time.Duration
	tokens   int
	last     time.Time // time up to which refills have been credited
}

func newTokenBucket(capacity int, refill time.Duration, now time.Time) tokenBucket {
	return tokenBucket{capacity: capacity, refill: refill, tokens: capacity, last: now}
}

// credit adds the tokens refilled since the last call.
func (b *tokenBucket) credit(now time.Time) {
	if b.tokens >= b.capacity {
		b.last = now
		return
	}
	if elapsed := now.Sub(b.last); elapsed >= b.refill {
		n := int(elapsed / b.refill)
		b.tokens = min(b.capacity, b.tokens+n)
		b.last = b.last.Add(time.Duration(n) * b.refill)
	}
}

// take removes one token and reports whether one was available.
func (b *tokenBucket) take(now time.Time) bool {
	b.credit(now)
	if b.tokens <= 0 {
		return false
	}
	b.tokens--
	return true
}

// reset is the time at which the bucket will be full again, as sent in the
// RateLimit-Reset header (UNIX seconds).
func (b *tokenBucket) reset(now time.Time) time.Time {
	missing := b.capacity - b.tokens
	if missing <= 0 {
		return now
	}
	return b.last.Add(time.Duration(missing) * b.refill)
}

package sim

import (
	"context"
	"math"
	"time"
)

// batchExponent shapes continuous batching: n streams decoding together on
// one GPU get n^batchExponent times the single-stream throughput in all.
const batchExponent = 0.7

// StreamRate is the decode rate of each of n streams that share one server's
// GPUs by continuous batching, when one stream alone decodes at single
// tokens per second:
//
//	aggregate(n) = single · n^0.7
//	per-stream(n) = aggregate(n) / n = single · n^-0.3
//
// So 4 streams decode 2.64× the tokens of one, each at 66% of the solo speed:
// batching helps the GPU's throughput sub-linearly and slows each stream.
// The scheduler's discrete-event simulation uses the same formula so that
// its makespans match what the simulated servers do.
func StreamRate(single float64, n int) float64 {
	if n <= 1 {
		return single
	}
	return single * math.Pow(float64(n), batchExponent) / float64(n)
}

// aggregateShare is the share of the GPU's batched throughput that n of
// slots streams use: 0 idle, 1 with every slot decoding.
func aggregateShare(n, slots int) float64 {
	if n <= 0 {
		return 0
	}
	if n >= slots {
		return 1
	}
	return math.Pow(float64(n)/float64(slots), batchExponent)
}

// seconds turns a float number of seconds into a duration.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}

// clock turns simulated time into wall time: TimeScale multiplies every
// delay, and Instant makes every delay zero.
type clock struct {
	scale   float64
	instant bool
}

// wall is how long a simulated duration takes on the wall clock.
func (c clock) wall(d time.Duration) time.Duration {
	if c.instant || d <= 0 {
		return 0
	}
	return time.Duration(float64(d) * c.scale)
}

// sleep waits the wall time of a simulated duration, or until ctx ends.
func (c clock) sleep(ctx context.Context, d time.Duration) error {
	w := c.wall(d)
	if w <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(w)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

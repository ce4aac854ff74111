package runner

import (
	"sync"
	"time"
)

// publisher turns "something changed" pokes into snapshots on a channel of
// capacity one. A snapshot that the reader has not taken yet is replaced by
// a newer one, so a slow reader never slows the run and never sees stale
// state, and the last snapshot is always there to be read.
type publisher struct {
	out       chan *BatteryRun
	pokes     chan struct{}
	finals    chan chan struct{}
	quit      chan struct{}
	settled   chan struct{}
	build     func() *BatteryRun
	interval  time.Duration
	heartbeat time.Duration
	wg        sync.WaitGroup
	started   bool
	mu        sync.Mutex
}

func newPublisher(interval, heartbeat time.Duration, build func() *BatteryRun) *publisher {
	return &publisher{
		out: make(chan *BatteryRun, 1), pokes: make(chan struct{}, 1), finals: make(chan chan struct{}),
		quit: make(chan struct{}), settled: make(chan struct{}, 1),
		build: build, interval: interval, heartbeat: heartbeat,
	}
}

func (p *publisher) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return
	}
	p.started = true
	p.wg.Add(1)
	go p.loop()
}

// poke asks for a snapshot soon; it never blocks.
func (p *publisher) poke() {
	select {
	case p.pokes <- struct{}{}:
	default:
	}
	select {
	case p.settled <- struct{}{}:
	default:
	}
}

// finalize publishes at once, without waiting for the interval, and
// returns when the snapshot is on the channel.
func (p *publisher) finalize() {
	ack := make(chan struct{})
	select {
	case p.finals <- ack:
		<-ack
	case <-p.quit:
	}
}

// close publishes a last snapshot and closes the channel.
func (p *publisher) close() {
	p.mu.Lock()
	started := p.started
	p.started = true
	p.mu.Unlock()
	if !started {
		p.send(p.build())
		close(p.out)
		return
	}
	close(p.quit)
	p.wg.Wait()
}

func (p *publisher) loop() {
	defer p.wg.Done()
	beat := time.NewTicker(p.heartbeat)
	defer beat.Stop()
	var last time.Time
	var pending *time.Timer
	var pendingC <-chan time.Time
	publish := func() {
		last = time.Now()
		s := p.build()
		p.send(s)
		if pending != nil {
			pending.Stop()
			pending, pendingC = nil, nil
		}
	}
	for {
		select {
		case <-p.quit:
			p.send(p.build())
			close(p.out)
			return
		case ack := <-p.finals:
			publish()
			close(ack)
		case <-p.pokes:
			if wait := p.interval - time.Since(last); wait > 0 {
				if pending == nil {
					pending = time.NewTimer(wait)
					pendingC = pending.C
				}
				continue
			}
			publish()
		case <-pendingC:
			pending, pendingC = nil, nil
			publish()
		case <-beat.C:
			// After the end, beats stop unless judging goes on (re-judge):
			// the final snapshot is already on the channel.
			if s := p.build(); !s.Final || s.JudgeInFlight > 0 {
				last = time.Now()
				p.send(s)
			}
		}
	}
}

// send puts s on the channel, replacing a snapshot the reader has not taken.
// Only the loop (or close before start) sends, so this terminates.
func (p *publisher) send(s *BatteryRun) {
	for {
		select {
		case p.out <- s:
			return
		default:
		}
		select {
		case <-p.out:
		default:
		}
	}
}

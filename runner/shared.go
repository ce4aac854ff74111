package runner

import (
	"pitwall/gpu/chat"
	"pitwall/runner/ledger"
)

// Judge calls paid for once: a request whose cache key matches one in
// flight waits for that one's answer (sharingPart's shared, followers).

// follow makes a a follower of the request in flight with its key, when
// there is one it may share (a re-judge shares only with another fresh
// request), and reports whether it did.
func (s *sharingPart) follow(a *judgeAttempt) bool {
	lead := s.shared[a.key]
	if lead == nil || lead == a || a.judge.refresh && !lead.judge.refresh {
		return false
	}
	s.followers[lead] = append(s.followers[lead], a)
	return true
}

// lead records a as the request in flight for its key.
func (s *sharingPart) lead(a *judgeAttempt) { s.shared[a.key] = a }

// release ends a's lead, if it had one, and returns the requests that
// waited on it.
func (s *sharingPart) release(a *judgeAttempt) []*judgeAttempt {
	if s.shared[a.key] == a {
		delete(s.shared, a.key)
	}
	fs := s.followers[a]
	delete(s.followers, a)
	return fs
}

// adopt makes next, a retry, the lead of fs.
func (s *sharingPart) adopt(next *judgeAttempt, fs []*judgeAttempt) {
	if len(fs) > 0 {
		s.followers[next] = append(s.followers[next], fs...)
	}
}

// rows are the ledger rows of the requests in flight that others may share.
func (s *sharingPart) rows() map[int64]bool {
	ids := map[int64]bool{}
	for _, a := range s.shared {
		if a.row != nil {
			ids[a.row.ID] = true
		}
	}
	return ids
}

// settleFollowers gives the requests that waited on a's answer the same
// answer, recorded as taken from it (source cache, server "(shared)"). When
// a was cancelled and a follower's own work was not, the first such
// follower is sent in its place and leads the rest.
func (s *sharingPart) settleFollowers(a *judgeAttempt, res chat.Result, err error) {
	fs := s.release(a)
	if len(fs) == 0 {
		return
	}
	if chat.ClassOf(err) == chat.ClassCanceled {
		// A follower's row is written only when it shares an answer: one
		// that ends without has none to finish.
		for _, f := range fs {
			f.row = nil
		}
		var live []*judgeAttempt
		for _, f := range fs {
			if f.ctx.Err() == nil {
				live = append(live, f)
			} else {
				s.e.judges.judgeSettledAs(f, chat.Result{}, err, "live")
			}
		}
		if len(live) > 0 {
			lead := live[0]
			if rj := s.e.judges.judgeRequest(lead, nil); rj != nil {
				s.adopt(lead, live[1:])
				s.e.judges.sendJudging(lead.ctx, s.e.judges.written([]*readyJudge{rj}))
			} else {
				for _, f := range live[1:] {
					s.e.judges.judgeSettledAs(f, res, err, "live")
				}
			}
		}
		return
	}
	for _, f := range fs {
		if err == nil && f.row != nil {
			now := s.e.r.now()
			f.row.Server, f.row.Status, f.row.Output, f.row.Reasoning = ledger.ServerShared, ledger.StatusCompleted, res.Content, res.Reasoning
			f.row.StartedAt, f.row.EndedAt = now, now
			s.e.r.led.QueueInsert(*f.row, s.e.ack)
		}
		f.row = nil
		source := "cache"
		if err != nil {
			source = "live"
		}
		s.e.judges.judgeSettledAs(f, res, err, source)
	}
}

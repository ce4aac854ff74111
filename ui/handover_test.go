package ui

import "testing"

// TestHandoverEveryPair walks every (state, event) pair of the hand-over
// against a table written out here by hand, so that a changed move in
// handTable shows as a failing pair.
func TestHandoverEveryPair(t *testing.T) {
	type want struct {
		to   handover
		stop bool
	}
	wants := map[handover]map[handEvent]want{
		handNone: {
			evAsk: {handAsked, false}, evTaken: {handNone, false}, evTakenShown: {handNone, false},
			evCancel: {handNone, true}, evShown: {handNone, false},
		},
		handAsked: {
			evAsk: {handAsked, false}, evTaken: {handTaken, false}, evTakenShown: {handNone, false},
			evCancel: {handAskedStop, false}, evShown: {handAsked, false},
		},
		handAskedStop: {
			evAsk: {handAsked, false}, evTaken: {handTaken, true}, evTakenShown: {handNone, true},
			evCancel: {handAskedStop, false}, evShown: {handAskedStop, false},
		},
		handTaken: {
			evAsk: {handAsked, false}, evTaken: {handTaken, false}, evTakenShown: {handNone, false},
			evCancel: {handTaken, true}, evShown: {handNone, false},
		},
	}
	pairs := 0
	for from := handover(0); from < handStates; from++ {
		for e := handEvent(0); e < handEvents; e++ {
			w, ok := wants[from][e]
			if !ok {
				t.Fatalf("the test has no want for %s on %s", from, e)
			}
			h := from
			stop := h.on(e)
			if h != w.to || stop != w.stop {
				t.Errorf("%s on %s: to %s stop %v, want %s stop %v", from, e, h, stop, w.to, w.stop)
			}
			pairs++
		}
	}
	if pairs != 20 { // 4 states × 5 events
		t.Errorf("walked %d pairs", pairs)
	}
}

// TestHandoverStopNeverOvertakesTheWork holds the rule the machine exists
// for: a stop asked before the controller took the work goes out exactly
// once, when it is taken, and never before.
func TestHandoverStopNeverOvertakesTheWork(t *testing.T) {
	for _, taken := range []handEvent{evTaken, evTakenShown} {
		var h handover
		h.on(evAsk)
		for i := 0; i < 3; i++ {
			if h.on(evCancel) {
				t.Fatalf("%s: the stop went before the work was taken", taken)
			}
			if h.on(evShown) {
				t.Fatalf("%s: a snapshot sent the stop", taken)
			}
		}
		if !h.on(taken) {
			t.Fatalf("%s: the waiting stop did not go", taken)
		}
		if h.on(taken) || h.on(evShown) {
			t.Fatalf("%s: the stop went twice", taken)
		}
		if h.pending() {
			t.Fatalf("%s: still pending (%s) after the work was shown", taken, h)
		}
	}
}

func TestHandoverPanicsOnAnUnknownEvent(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("an event outside the table did not panic")
		}
	}()
	h := handAsked
	h.on(handEvents)
}

package ui

import "fmt"

// handover is where judge work asked for after the run's end (a re-judge,
// a judge switch) stands between the screen and the controller, until a
// snapshot shows it. A stop must not overtake the work it cancels, so while
// the controller has not taken the work a stop waits for it.
//
//	none ──ask──► asked ──taken──► taken ──shown──► none
//	               │  ╲                ▲
//	            cancel ╲──takenShown───┼──────────► none
//	               ▼                   │
//	          askedStop ──taken──► taken, and the stop goes
type handover int

const (
	handNone      handover = iota // nothing handed over, or a snapshot shows it
	handAsked                     // asked; the controller has not taken it
	handAskedStop                 // asked, and a stop waits until it is taken
	handTaken                     // taken; the snapshot that shows it has not come
	handStates
)

var handoverNames = [...]string{"none", "asked", "asked+stop", "taken"}

func (h handover) String() string { return handoverNames[h] }

// handEvent is what moves a hand-over.
type handEvent int

const (
	evAsk        handEvent = iota // judge work asked for after the run's end
	evTaken                       // the controller took it; a later snapshot shows it
	evTakenShown                  // the controller took it; the snapshots already show it
	evCancel                      // s: cancel the judge work
	evShown                       // a snapshot reached the one the work was taken at
	handEvents
)

var handEventNames = [...]string{"ask", "taken", "taken-shown", "cancel", "shown"}

func (e handEvent) String() string { return handEventNames[e] }

// handStep is one cell of the table: where the hand-over goes and whether
// the stop is sent now.
type handStep struct {
	to   handover
	stop bool
}

// handTable is every move a hand-over makes; each (state, event) pair has
// its entry, so the test can walk them all.
var handTable = [handStates][handEvents]handStep{
	handNone: {
		evAsk:        {handAsked, false},
		evTaken:      {handNone, false}, // a word for work no longer pending
		evTakenShown: {handNone, false},
		evCancel:     {handNone, true},
		evShown:      {handNone, false},
	},
	handAsked: {
		evAsk:        {handAsked, false},
		evTaken:      {handTaken, false},
		evTakenShown: {handNone, false},
		evCancel:     {handAskedStop, false}, // sent once the work is taken
		evShown:      {handAsked, false},     // not taken yet: no snapshot can show it
	},
	handAskedStop: {
		evAsk:        {handAsked, false}, // new work: the stop was for the old
		evTaken:      {handTaken, true},
		evTakenShown: {handNone, true},
		evCancel:     {handAskedStop, false},
		evShown:      {handAskedStop, false},
	},
	handTaken: {
		evAsk:        {handAsked, false},
		evTaken:      {handTaken, false},
		evTakenShown: {handNone, false},
		evCancel:     {handTaken, true},
		evShown:      {handNone, false},
	},
}

// on moves the hand-over by e and reports whether the stop goes now.
func (h *handover) on(e handEvent) (stop bool) {
	if *h < 0 || *h >= handStates || e < 0 || e >= handEvents {
		panic(fmt.Sprintf("ui: hand-over %d has no event %d", *h, e))
	}
	s := handTable[*h][e]
	*h = s.to
	return s.stop
}

// pending reports whether judge work is handed over that no snapshot shows.
func (h handover) pending() bool { return h != handNone }

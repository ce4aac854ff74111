package gpu

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/oaitest"
)

// TestARefusedBeforeSendKeepsEveryRequestOfTheJobFromTheServer: the gate
// is asked before the warm-up that loads the job's model and before the
// job's own request; refused, neither reaches the server, and the job ends
// cancelled saying it was not sent, with the gate's error.
func TestARefusedBeforeSendKeepsEveryRequestOfTheJobFromTheServer(t *testing.T) {
	errGone := errors.New("the run was taken over")
	for _, tc := range []struct {
		name   string
		refuse bool
		asked  int32 // the gate's questions: the warm-up, then the request
	}{
		{"allowed", false, 2},
		{"refused", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fk := &oaiJITServer{}
			srv := oaitest.Server(t, fk.handler)
			f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "lmstudio"}, Slots: 1, Models: []string{"a"}}}, Options{})
			defer f.Close()
			var asked atomic.Int32
			tj := trackJob("a", "q")
			tj.job.BeforeSend = func(ctx context.Context) error {
				asked.Add(1)
				if tc.refuse {
					return errGone
				}
				return nil
			}
			f.Submit(context.Background(), tj.job)
			o := tj.wait(t)
			warmups, jobs := fk.counts()
			if got := asked.Load(); got != tc.asked {
				t.Errorf("the gate was asked %d times, want %d (the warm-up and the request)", got, tc.asked)
			}
			if !tc.refuse {
				wantOK(t, o)
				if len(warmups) != 1 || len(jobs) != 1 {
					t.Errorf("the server got %d warm-ups and %d requests, want 1 and 1", len(warmups), len(jobs))
				}
				return
			}
			wantClass(t, o, chat.ClassCanceled)
			if !errors.Is(o.err, errGone) || !strings.Contains(o.err.Error(), "not sent") {
				t.Errorf("Done error %v; want one saying it was not sent, wrapping the gate's", o.err)
			}
			if len(warmups) != 0 || len(jobs) != 0 {
				t.Errorf("the server got %d warm-ups and %d requests after the gate refused, want none", len(warmups), len(jobs))
			}
			// The refusal says nothing of the server: it takes the next job.
			next := trackJob("a", "next")
			f.Submit(context.Background(), next.job)
			wantOK(t, next.wait(t))
		})
	}
}

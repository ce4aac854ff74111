package client

import (
	"strings"
	"testing"

	"pitwall/gpu/chat"
)

func TestAChatBodyCarriesTheTemperatureAndDoesNotStream(t *testing.T) {
	zero, seed := 0.0, 3
	body, err := ChatBody(chat.Request{Model: "m", Messages: []chat.Message{{Role: "user", Content: "x"}}, Temperature: &zero, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if !strings.Contains(s, `"temperature":0`) || strings.Contains(s, `"stream":true`) || strings.Contains(s, "stream_options") {
		t.Errorf("body %s: want temperature 0 written out and no streaming", s)
	}
}

package probe

import (
	"testing"
)

func TestEndpointJoinsPathsBeforeTheBaseQuery(t *testing.T) {
	for _, tt := range []struct{ base, path, want string }{
		{"http://h/v1", "/chat/completions", "http://h/v1/chat/completions"},
		{"http://h/v1/", "/models", "http://h/v1/models"},
		{"http://h/v1?api-version=2024-10-21", "/chat/completions", "http://h/v1/chat/completions?api-version=2024-10-21"},
		{"http://h/v1/?code=K&x=1", "/models", "http://h/v1/models?code=K&x=1"},
		{"http://h/v1?api-version=1", "/batches?limit=1", "http://h/v1/batches?api-version=1&limit=1"},
		{"http://h/v1#frag", "/models", "http://h/v1/models"},
		{" http://h/v1 ", "models", "http://h/v1/models"},
	} {
		if got := EndpointURL(tt.base, tt.path); got != tt.want {
			t.Errorf("EndpointURL(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
	for _, tt := range []struct{ base, path, want string }{
		{"http://h/v1", "/api/ps", "http://h/api/ps"},
		{"http://h:8080/v1/?api-version=1", "/slots", "http://h:8080/slots?api-version=1"},
		{"http://h/proxy/v1?code=K", "/metrics", "http://h/proxy/metrics?code=K"},
		{"http://h", "/props", "http://h/props"},
	} {
		if got := BackendURL(tt.base, tt.path); got != tt.want {
			t.Errorf("BackendURL(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}

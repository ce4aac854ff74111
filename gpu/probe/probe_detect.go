package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"pitwall/gpu/chat"
)

// DetectKind tells which backend serves baseURL (a URL ending in /v1, or its
// root) by asking each backend's own endpoints, in order:
//
//   - sim: GET {root}/sim/gpus answers a JSON array (the simulator imitates
//     the backends below, so it is asked first);
//   - lmstudio: GET {root}/api/v0/models (or 0.4's /api/v1/models);
//   - ollama: GET {root}/api/ps, or GET {root}/api/version;
//   - llamacpp: GET {root}/slots, or GET {root}/health and GET {root}/props;
//   - vllm: GET {root}/metrics has "vllm:" series;
//   - otherwise "openai".
//
// Each answer must have its backend's shape, not just a 200, because some
// servers answer every path. A nil hc means http.DefaultClient.
func DetectKind(ctx context.Context, hc *http.Client, baseURL string) chat.Kind {
	return detectKind(ctx, NewGetter(hc, ""), ParseEndpoint(baseURL).Root())
}

// detectKind is DetectKind with the probe's client, which carries the
// server's API key.
func detectKind(ctx context.Context, c Getter, root Endpoint) chat.Kind {
	var gpus []json.RawMessage // any array: the simulator is the only server with this path
	if err := c.GetJSON(ctx, root.URL("/sim/gpus"), &gpus); err == nil && gpus != nil {
		return chat.KindSim
	}
	return detectBackend(ctx, c, root)
}

// detectBackend is DetectKind without the simulator.
func detectBackend(ctx context.Context, c Getter, root Endpoint) chat.Kind {
	var v0 lmstudioV0Models
	if err := c.GetJSON(ctx, root.URL("/api/v0/models"), &v0); err == nil && v0.Data != nil {
		return "lmstudio"
	}
	var v1 lmstudioV1Models
	if err := c.GetJSON(ctx, root.URL("/api/v1/models"), &v1); err == nil && v1.Models != nil {
		return "lmstudio"
	}
	var ps ollamaPS
	if err := c.GetJSON(ctx, root.URL("/api/ps"), &ps); err == nil && ps.Models != nil {
		return "ollama"
	}
	var ver ollamaVersion
	if err := c.GetJSON(ctx, root.URL("/api/version"), &ver); err == nil && ver.Version != "" {
		return "ollama"
	}
	var slots []llamacppSlot
	if err := c.GetJSON(ctx, root.URL("/slots"), &slots); err == nil && len(slots) > 0 && slots[0].ID != nil {
		return "llamacpp"
	}
	if _, err := c.Get(ctx, root.URL("/health")); err == nil {
		var props llamacppProps
		if err := c.GetJSON(ctx, root.URL("/props"), &props); err == nil &&
			(props.TotalSlots != nil || len(props.Defaults) > 0 || props.BuildInfo != "") {
			return "llamacpp"
		}
	}
	if body, err := c.Get(ctx, root.URL("/metrics")); err == nil && bytes.Contains(body, []byte("vllm:")) {
		return "vllm"
	}
	return "openai"
}

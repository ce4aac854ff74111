package batchapi

import (
	"net/http"

	"pitwall/gpu"
	"pitwall/gpu/client"
)

// newClient is the Batch API client of a client.Client for cfg.
func newClient(cfg gpu.ServerConfig, hc *http.Client) *Client { return New(client.New(cfg.Config, hc)) }

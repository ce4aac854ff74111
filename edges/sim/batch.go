package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The Batch API of the openai backend: /v1/files (upload, list, retrieve,
// content, delete) and /v1/batches (create, list, retrieve, cancel). A
// batch runs its requests through the server's own chat handler, so its
// answers, timings and per-request faults are those of live requests; its
// states are OpenAI's (validating, in_progress, finalizing, completed;
// failed, expired; cancelling, cancelled), and its completion window passes
// under the time scale. batch_run.go runs a batch; simspec.Faults' Batch*
// fields make one fail, expire or wait on demand.

// Limits OpenAI sets, which the simulator keeps.
const (
	maxBatchFileBytes = 200 << 20
	maxBatchRequests  = 50_000
	maxMetadataKeys   = 16
	batchWindow       = "24h"
)

// batchStore is a server's files and batches. They outlive a crash, as a
// provider's storage does: only the requests running then are lost.
type batchStore struct {
	mu      sync.Mutex
	files   map[string]*simFile
	order   []*simBatch // in creation order
	batches map[string]*simBatch
	n       uint64 // ids handed out
}

type simFile struct {
	ID       string
	Name     string
	Purpose  string
	Data     []byte
	Created  int64
	Released bool // deleted
}

// batchStores holds each server's store. The store is the server's, but
// lives here so that the Batch API stays in these files; it is dropped
// when the server closes.
var batchStores = struct {
	sync.Mutex
	m map[*Server]*batchStore
}{m: map[*Server]*batchStore{}}

// batchStore returns the server's store, made on first use; nil once the
// server is closed.
func (s *Server) batchStore() *batchStore {
	batchStores.Lock()
	defer batchStores.Unlock()
	if st := batchStores.m[s]; st != nil {
		return st
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	st := &batchStore{files: map[string]*simFile{}, batches: map[string]*simBatch{}}
	batchStores.m[s] = st
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		<-s.closeCh
		batchStores.Lock()
		delete(batchStores.m, s)
		batchStores.Unlock()
	}()
	return st
}

// newBatchID names a file or batch: prefix and 24 hex digits. st.mu is
// held.
func (s *Server) newBatchID(st *batchStore, prefix string) string {
	st.n++
	return fmt.Sprintf("%s%024x", prefix, splitmix64(st.n^s.idBase))
}

// batchRoutes adds the Batch API to mux (the openai backend's).
func (s *Server) batchRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/files", s.handleUpload)
	mux.HandleFunc("GET /v1/files", s.handleFiles)
	mux.HandleFunc("GET /v1/files/{id}", s.handleFile)
	mux.HandleFunc("DELETE /v1/files/{id}", s.handleDeleteFile)
	mux.HandleFunc("GET /v1/files/{id}/content", s.handleFileContent)
	mux.HandleFunc("POST /v1/batches", s.handleCreateBatch)
	mux.HandleFunc("GET /v1/batches", s.handleListBatches)
	mux.HandleFunc("GET /v1/batches/{id}", s.handleBatch)
	mux.HandleFunc("POST /v1/batches/{id}/cancel", s.handleCancelBatch)
}

// fileObject is a file as the API shows it.
type fileObject struct {
	ID            string `json:"id"`
	Object        string `json:"object"`
	Bytes         int    `json:"bytes"`
	CreatedAt     int64  `json:"created_at"`
	Filename      string `json:"filename"`
	Purpose       string `json:"purpose"`
	Status        string `json:"status"`
	StatusDetails any    `json:"status_details"`
}

func (f *simFile) wire() fileObject {
	return fileObject{ID: f.ID, Object: "file", Bytes: len(f.Data), CreatedAt: f.Created, Filename: f.Name,
		Purpose: f.Purpose, Status: "processed", StatusDetails: jsonNull}
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	st := s.batchStore()
	if st == nil {
		s.writeError(w, apiError{kind: errUnavailable, message: "server is shutting down"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBatchFileBytes+1<<20)
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		s.writeError(w, apiError{kind: errBadRequest, message: "a file upload is multipart/form-data with purpose and file: " + err.Error()})
		return
	}
	defer func() { _ = r.MultipartForm.RemoveAll() }()
	purpose := r.FormValue("purpose")
	if purpose == "" {
		s.writeError(w, apiError{kind: errBadRequest, message: "Missing required parameter: 'purpose'.", param: "purpose"})
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.writeError(w, apiError{kind: errBadRequest, message: "Missing required parameter: 'file'.", param: "file"})
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBatchFileBytes+1))
	switch {
	case err != nil:
		s.writeError(w, apiError{kind: errBadRequest, message: "reading the file: " + err.Error(), param: "file"})
		return
	case len(data) > maxBatchFileBytes:
		s.writeError(w, apiError{kind: errBadRequest, message: "File is too large: the limit is 200 MB.", param: "file"})
		return
	}
	st.mu.Lock()
	sf := &simFile{ID: s.newBatchID(st, "file-"), Name: hdr.Filename, Purpose: purpose, Data: data, Created: time.Now().Unix()}
	st.files[sf.ID] = sf
	st.mu.Unlock()
	writeJSON(w, http.StatusOK, sf.wire())
}

func (s *Server) handleFiles(w http.ResponseWriter, r *http.Request) {
	list := struct {
		Object string       `json:"object"`
		Data   []fileObject `json:"data"`
	}{Object: "list", Data: []fileObject{}}
	if st := s.batchStore(); st != nil {
		st.mu.Lock()
		for _, f := range st.files {
			list.Data = append(list.Data, f.wire())
		}
		st.mu.Unlock()
	}
	slices.SortFunc(list.Data, func(a, b fileObject) int { return int(a.CreatedAt - b.CreatedAt) })
	writeJSON(w, http.StatusOK, list)
}

// file finds the file the path names, or answers 404 and returns nil.
func (s *Server) file(w http.ResponseWriter, r *http.Request) (*batchStore, *simFile) {
	id := r.PathValue("id")
	if st := s.batchStore(); st != nil {
		st.mu.Lock()
		f := st.files[id]
		st.mu.Unlock()
		if f != nil {
			return st, f
		}
	}
	writeNoSuch(w, "File", id)
	return nil, nil
}

func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	if st, f := s.file(w, r); f != nil {
		st.mu.Lock()
		o := f.wire()
		st.mu.Unlock()
		writeJSON(w, http.StatusOK, o)
	}
}

func (s *Server) handleFileContent(w http.ResponseWriter, r *http.Request) {
	if _, f := s.file(w, r); f != nil {
		// Data is never changed once stored.
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(f.Data)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(f.Data)
	}
}

func (s *Server) handleDeleteFile(w http.ResponseWriter, r *http.Request) {
	if st, f := s.file(w, r); f != nil {
		st.mu.Lock()
		delete(st.files, f.ID)
		st.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"id": f.ID, "object": "file", "deleted": true})
	}
}

// writeNoSuch answers 404 for an unknown file or batch, as OpenAI does.
func writeNoSuch(w http.ResponseWriter, what, id string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("No such %s object: %s", what, id), "type": "invalid_request_error",
		"param": "id", "code": nil,
	}})
}

type createBatchBody struct {
	InputFileID      string         `json:"input_file_id"`
	Endpoint         string         `json:"endpoint"`
	CompletionWindow string         `json:"completion_window"`
	Metadata         map[string]any `json:"metadata"`
}

func (s *Server) handleCreateBatch(w http.ResponseWriter, r *http.Request) {
	st := s.batchStore()
	if st == nil {
		s.writeError(w, apiError{kind: errUnavailable, message: "server is shutting down"})
		return
	}
	var body createBatchBody
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&body); err != nil {
		s.writeError(w, apiError{kind: errBadRequest, message: "invalid JSON body: " + err.Error()})
		return
	}
	meta, bad := batchMetadata(body.Metadata)
	switch {
	case bad != "":
		s.writeError(w, apiError{kind: errBadRequest, message: bad, param: "metadata"})
		return
	case body.Endpoint != "/v1/chat/completions":
		s.writeError(w, apiError{kind: errBadRequest, param: "endpoint",
			message: fmt.Sprintf("Invalid value for 'endpoint': %q. The simulator batches '/v1/chat/completions' only.", body.Endpoint)})
		return
	case body.CompletionWindow != batchWindow:
		s.writeError(w, apiError{kind: errBadRequest, param: "completion_window",
			message: fmt.Sprintf("Invalid value for 'completion_window': %q. Supported values are: '24h'.", body.CompletionWindow)})
		return
	}
	st.mu.Lock()
	f := st.files[body.InputFileID]
	if f == nil || f.Purpose != "batch" {
		st.mu.Unlock()
		msg := fmt.Sprintf("No such File object: %s", body.InputFileID)
		if f != nil {
			msg = fmt.Sprintf("File %s has purpose %q; a batch's input file needs purpose 'batch'.", f.ID, f.Purpose)
		}
		s.writeError(w, apiError{kind: errBadRequest, message: msg, param: "input_file_id"})
		return
	}
	b := &simBatch{ID: s.newBatchID(st, "batch_"), InputFileID: f.ID, Endpoint: body.Endpoint,
		Window: body.CompletionWindow, Status: statusValidating, Metadata: meta, Created: time.Now(),
		number: len(st.order) + 1, input: f.Data, cancel: make(chan struct{})}
	st.order = append(st.order, b)
	st.batches[b.ID] = b
	o := b.wire()
	st.mu.Unlock()
	if !s.startBatch(st, b) {
		s.writeError(w, apiError{kind: errUnavailable, message: "server is shutting down"})
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// batchMetadata checks a batch's metadata as OpenAI does: at most 16 pairs
// of strings, keys up to 64 characters, values up to 512.
func batchMetadata(in map[string]any) (map[string]string, string) {
	if len(in) == 0 {
		return nil, ""
	}
	if len(in) > maxMetadataKeys {
		return nil, fmt.Sprintf("Invalid 'metadata': at most %d keys, got %d.", maxMetadataKeys, len(in))
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		sv, ok := v.(string)
		switch {
		case !ok:
			return nil, fmt.Sprintf("Invalid 'metadata.%s': expected a string.", k)
		case len(k) > 64:
			return nil, fmt.Sprintf("Invalid 'metadata': key %q is longer than 64 characters.", k)
		case len(sv) > 512:
			return nil, fmt.Sprintf("Invalid 'metadata.%s': longer than 512 characters.", k)
		}
		out[k] = sv
	}
	return out, ""
}

// handleListBatches lists batches newest first: limit (1 to 100, default
// 20) after the batch named by after.
func (s *Server) handleListBatches(w http.ResponseWriter, r *http.Request) {
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			s.writeError(w, apiError{kind: errBadRequest, message: fmt.Sprintf("Invalid 'limit': %q (1 to 100).", v), param: "limit"})
			return
		}
		limit = n
	}
	after := r.URL.Query().Get("after")
	list := struct {
		Object  string        `json:"object"`
		Data    []batchObject `json:"data"`
		FirstID *string       `json:"first_id"`
		LastID  *string       `json:"last_id"`
		HasMore bool          `json:"has_more"`
	}{Object: "list", Data: []batchObject{}}
	if st := s.batchStore(); st != nil {
		st.mu.Lock()
		i := len(st.order) - 1
		if after != "" {
			i = slices.IndexFunc(st.order, func(b *simBatch) bool { return b.ID == after }) - 1
		}
		for ; i >= 0 && len(list.Data) < limit; i-- {
			list.Data = append(list.Data, st.order[i].wire())
		}
		list.HasMore = i >= 0
		st.mu.Unlock()
	}
	if n := len(list.Data); n > 0 {
		list.FirstID, list.LastID = &list.Data[0].ID, &list.Data[n-1].ID
	}
	writeJSON(w, http.StatusOK, list)
}

// batch finds the batch the path names, or answers 404 and returns nil.
func (s *Server) batch(w http.ResponseWriter, r *http.Request) (*batchStore, *simBatch) {
	id := r.PathValue("id")
	if st := s.batchStore(); st != nil {
		st.mu.Lock()
		b := st.batches[id]
		st.mu.Unlock()
		if b != nil {
			return st, b
		}
	}
	writeNoSuch(w, "Batch", id)
	return nil, nil
}

func (s *Server) handleBatch(w http.ResponseWriter, r *http.Request) {
	if st, b := s.batch(w, r); b != nil {
		st.mu.Lock()
		o := b.wire()
		st.mu.Unlock()
		writeJSON(w, http.StatusOK, o)
	}
}

// handleCancelBatch moves a running batch to cancelling; it becomes
// cancelled once the requests it is running have ended.
func (s *Server) handleCancelBatch(w http.ResponseWriter, r *http.Request) {
	st, b := s.batch(w, r)
	if b == nil {
		return
	}
	st.mu.Lock()
	switch b.Status {
	case statusValidating, statusInProgress, statusFinalizing:
		b.Status, b.Cancelling = statusCancelling, time.Now()
		close(b.cancel)
	case statusCancelling, statusCancelled:
	default:
		status := b.Status
		st.mu.Unlock()
		s.writeError(w, apiError{kind: errBadRequest, message: fmt.Sprintf("Cannot cancel a batch with status '%s'.", status)})
		return
	}
	o := b.wire()
	st.mu.Unlock()
	writeJSON(w, http.StatusOK, o)
}

// BatchInfo is a batch as the simulator's tests see it.
type BatchInfo struct {
	ID        string
	Status    string
	Total     int
	Completed int
	Failed    int
	Metadata  map[string]string
}

// Batches lists the server's batches in creation order.
func (s *Server) Batches() []BatchInfo {
	st := s.batchStore()
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]BatchInfo, 0, len(st.order))
	for _, b := range st.order {
		out = append(out, BatchInfo{ID: b.ID, Status: b.Status, Total: b.Total, Completed: b.Completed,
			Failed: b.Failed, Metadata: b.Metadata})
	}
	return out
}

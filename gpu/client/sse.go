package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"pitwall/gpu/chat"
	"pitwall/internal/textutil"
)

// sseLines reads the data lines of a streamed chat completion from the
// body go-openai opened. It means what go-openai's stream reader means (a
// "data:" line's payload, [DONE] as the end, any other line kept as a
// possible error body, `data: {"error":...}` as an error, the same errors
// for classify), without its three regular expressions and two copies per
// line: a payload is a slice of the reader's buffer, valid until the next
// call. TestSSELinesReadAsGoOpenAIReads holds the two to the same output.
// One difference: an error line that is not an OpenAI error object is a
// malformed reply here, where go-openai handed back nothing and no error.
type sseLines struct {
	r     *bufio.Reader
	long  []byte // a line longer than the reader's buffer, put together
	other []byte // the lines that are not data, as go-openai accumulates them
	limit uint   // most non-data lines in a row
}

func newSSELines(body io.Reader, limit uint) *sseLines {
	r := sseReaders.Get().(*bufio.Reader)
	r.Reset(body)
	return &sseLines{r: r, limit: limit}
}

// sseReaders keeps the 16 KiB readers of streams that ended, for the next:
// one per request was a quarter of a large run's allocations.
var sseReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// release gives the reader back to sseReaders; s reads nothing after, and
// no payload it returned may be used.
func (s *sseLines) release() {
	if s.r != nil {
		s.r.Reset(nil)
		sseReaders.Put(s.r)
		s.r = nil
	}
}

// next returns the next data line's payload, or io.EOF after [DONE].
func (s *sseLines) next() ([]byte, error) {
	var empty uint
	for {
		line, err := s.line()
		if err != nil {
			return nil, s.errorBody(err)
		}
		line = bytes.TrimSpace(line)
		payload, data := cutData(line)
		if !data {
			s.other = append(s.other, line...)
			if empty++; empty > s.limit {
				return nil, openai.ErrTooManyEmptyStreamMessages
			}
			continue
		}
		if bytes.HasPrefix(payload, []byte(`{"error":`)) {
			s.other = append(s.other, payload...)
			return nil, s.errorBody(&chat.Error{Class: chat.ClassMalformed,
				Message: "the server sent an error pitwall cannot read (its log says more): " + textutil.Clip(string(payload), 200)})
		}
		if string(payload) == "[DONE]" {
			return nil, io.EOF
		}
		return payload, nil
	}
}

// line reads one line, its newline included; a last line without one is
// an error, as it is for go-openai (bufio's ReadBytes).
func (s *sseLines) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	s.long = append(s.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = s.r.ReadSlice('\n')
		s.long = append(s.long, line...)
	}
	return s.long, err
}

// errorBody is the error a stream that ended with err says it is: the
// error in what it sent outside data lines, as go-openai reads it, or err.
func (s *sseLines) errorBody(err error) error {
	if len(s.other) > 0 {
		var resp *openai.ErrorResponse
		if json.Unmarshal(s.other, &resp) == nil && resp != nil && resp.Error != nil {
			return fmt.Errorf("error, %w", resp.Error)
		}
	}
	return err
}

// cutData returns the payload of a "data:" line (the spaces after the
// colon dropped, as go-openai's `^data:\s*` does) and whether it is one.
func cutData(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return nil, false
	}
	for len(rest) > 0 && isSpace(rest[0]) {
		rest = rest[1:]
	}
	return rest, true
}

// isSpace is RE2's \s: tab, newline, form feed, carriage return, space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

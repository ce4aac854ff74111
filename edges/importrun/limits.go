package importrun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// What one import may hold. A file past a limit is refused before anything
// is allocated for what it claims (a consistency export's runs_total, the
// product of its models and tests), so no input makes the readers allocate
// more than a small multiple of the file's own size.
const (
	// MaxFileBytes bounds the file. Decoded, JSON takes a few times its
	// size in memory; real exports hold a few MB (90 cells of 2 KB replies
	// are 200 KB).
	MaxFileBytes = 64 << 20
	MaxModels    = 1000
	MaxTests     = 100_000
	MaxRepeat    = 1000
	// MaxCells bounds models × tests × repeats, the cells the run will have.
	MaxCells = 1_000_000
)

// limitError is a file past one of the limits.
type limitError struct {
	what  string
	n     int
	limit int
}

func (e *limitError) Error() string {
	return fmt.Sprintf("the file holds %d %s, more than pitwall imports (%d): split it", e.n, e.what, e.limit)
}

// checkShape refuses a run past the limits on models, tests, repeats or
// cells.
func checkShape(models, tests, repeat int) error {
	switch {
	case models > MaxModels:
		return &limitError{"models", models, MaxModels}
	case tests > MaxTests:
		return &limitError{"tests", tests, MaxTests}
	case repeat > MaxRepeat:
		return &limitError{"runs per cell", repeat, MaxRepeat}
	case models*tests > MaxCells || models*tests*repeat > MaxCells:
		// Each factor is bounded above, so the products cannot overflow.
		return &limitError{"cells (models × tests × runs)", models * tests * repeat, MaxCells}
	}
	return nil
}

var errTooLarge = fmt.Errorf("the file is larger than %d MiB, more than pitwall imports: split it", MaxFileBytes>>20)

// ReadFile reads path whole, refusing a file larger than MaxFileBytes
// without reading past the limit. A UTF-8 byte-order mark at the start is
// dropped, as config.ReadInput drops it.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file: give the path of an exported results file")
	}
	if st.Size() > MaxFileBytes {
		return nil, errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes { // it grew while it was read
		return nil, errTooLarge
	}
	return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), nil
}

package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// maxInputBytes caps a config or battery file. A battery of 10,000 tests
// with long prompts is a few MB; past this a file is not a battery, and the
// decoders would hold several times its size.
const maxInputBytes = 64 << 20

// MaxInputBytes is maxInputBytes for the edges, whose readers (import of a
// finished run, a promptfoo file:// reference) go through ReadInput too.
const MaxInputBytes = maxInputBytes

// inputError says why a file was not read: it is not a regular file, or it
// is too large. The callers add the file, the field and a hint.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// checkInput looks at path without opening it: it must be a regular file
// (a symlink to one is fine) of at most maxInputBytes. Opening a FIFO
// blocks until a writer comes, and reading /dev/zero never ends, so both
// are refused on what Stat says alone.
func checkInput(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return fi, checkMode(fi)
}

func checkMode(fi fs.FileInfo) error {
	switch m := fi.Mode(); {
	case m.IsRegular():
		if fi.Size() > maxInputBytes {
			return &inputError{fmt.Sprintf("is %d bytes, more than the %d MiB (%d bytes) pitwall reads",
				fi.Size(), maxInputBytes>>20, maxInputBytes)}
		}
		return nil
	case m.IsDir():
		return &inputError{"is a directory, not a file"}
	case m&fs.ModeNamedPipe != 0:
		return &inputError{"is a named pipe (FIFO), not a file: pitwall reads only regular files"}
	case m&fs.ModeCharDevice != 0:
		return &inputError{"is a character device, not a file: pitwall reads only regular files"}
	case m&fs.ModeDevice != 0:
		return &inputError{"is a block device, not a file: pitwall reads only regular files"}
	case m&fs.ModeSocket != 0:
		return &inputError{"is a socket, not a file: pitwall reads only regular files"}
	}
	return &inputError{"is not a regular file: pitwall reads only regular files"}
}

// utf8BOM is the byte-order mark some editors put before UTF-8 text.
var utf8BOM = []byte("\xef\xbb\xbf")

// ReadInput is the one reader of a file a user names: a config, a battery
// of any format, a judge battery, a finished run to import, a file a
// battery refers to. Every command reads through it (or ReadDocument), so
// no path bypasses its rules: a regular file only, of at most
// maxInputBytes, refused on what Stat says before a byte is read. The file
// is opened without blocking and checked again through the open handle, so
// a file swapped for a FIFO or a device between the two looks is refused
// too; the read stops one byte past the cap whatever Stat said.
//
// Its own refusals say what the path is, not the path: the callers add the
// file and what it was meant to be (IsInputError tells them apart).
//
// A UTF-8 byte-order mark at the start is dropped: editors on Windows write
// one, no format pitwall reads gives it a meaning, and JSON's and TOML's
// parsers would otherwise stop at its first byte.
func ReadInput(path string) ([]byte, error) {
	return readInput(hostFS{}, path)
}

// inputFS is where readInput looks: the host's whole file system, or an
// *os.Root that no name may leave (ReadRef).
type inputFS interface {
	Stat(name string) (fs.FileInfo, error)
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
}

type hostFS struct{}

func (hostFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
func (hostFS) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

func readInput(fsys inputFS, path string) ([]byte, error) {
	before, err := fsys.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkMode(before); err != nil {
		return nil, err
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkMode(fi); err != nil {
		return nil, err
	}
	if !os.SameFile(before, fi) {
		return nil, &inputError{"changed while it was being opened"}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxInputBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInputBytes {
		return nil, &inputError{fmt.Sprintf("grew past the %d MiB pitwall reads", maxInputBytes>>20)}
	}
	return bytes.TrimPrefix(data, utf8BOM), nil
}

// ReadDocument is ReadInput for a file a decoder will parse as syntax
// ("toml", "json", "jsonl", "yaml", or "brackets" while the syntax is not
// known yet): the nesting cap is checked on the bytes before any decoder
// sees them, since the decoders recurse and allocate once per level. A file
// nested too deep is an *Error naming the file and the line.
func ReadDocument(path, syntax string) ([]byte, error) {
	data, err := ReadInput(path)
	if err != nil {
		return nil, err
	}
	if err := CheckNesting(path, data, syntax); err != nil {
		return nil, err
	}
	return data, nil
}

// CheckNesting is the nesting cap for bytes read with ReadInput before a
// decoder of syntax (see ReadDocument) parses them: an *Error naming file
// and line when they nest past MaxNesting, else nil.
func CheckNesting(file string, data []byte, syntax string) error {
	if e := nestingError(file, data, syntax); e != nil {
		return e
	}
	return nil
}

// readDocument is ReadDocument for config's loaders: any failure is an
// *Error naming the file, saying it was meant as what ("battery"), with
// hint when the path is the problem.
func readDocument(path, syntax, what, hint string) ([]byte, *Error) {
	data, err := ReadDocument(path, syntax)
	if err != nil {
		return nil, readFailure(path, what, hint, err)
	}
	return data, nil
}

// readFailure words ReadDocument's err as an *Error naming path.
func readFailure(path, what, hint string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := fmt.Sprintf("cannot read %s: %v", what, err)
	if isInputError(err) {
		msg = "cannot read " + what + ": the path " + err.Error()
	}
	return &Error{File: path, Msg: msg, Hint: hint}
}

// isRefusal reports whether err is ReadDocument refusing a file for what
// it is (not a regular file, too large, nested too deep), rather than the
// system failing to find or open it.
func isRefusal(err error) bool {
	var e *Error
	return isInputError(err) || errors.As(err, &e)
}

// isInputError reports whether err is one of readInput's own refusals
// rather than the system's.
func isInputError(err error) bool {
	var ie *inputError
	return errors.As(err, &ie)
}

// IsInputError reports whether err is ReadInput's own refusal (not a
// regular file, too large) rather than the system's (no such file, no
// permission), for a caller that words the two apart.
func IsInputError(err error) bool { return isInputError(err) }

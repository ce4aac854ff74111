package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// OutsideSetting is the config key that lets a battery name files outside
// its own folder, for messages.
const OutsideSetting = "allow_outside_files = true"

// OutsideError is ReadRef refusing a file a battery names because it is not
// in the battery's folder. Its message names the reference, why it is
// outside, the folder, and the setting that allows it; the caller adds the
// battery file and the field.
type OutsideError struct {
	Ref    string // as the battery wrote it, after file://
	Why    string // "an absolute path", "it climbs out through ..", …
	Folder string // the battery's folder
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("file://%s is outside the battery's folder %s (%s): a battery reads only files in its own folder, unless the pitwall config sets %s",
		e.Ref, e.Folder, e.Why, OutsideSetting)
}

// IsOutside reports whether err is ReadRef refusing a file outside the
// battery's folder.
func IsOutside(err error) bool {
	var oe *OutsideError
	return errors.As(err, &oe)
}

// ReadRef is the one reader of a file a battery names (a promptfoo file://
// prompt, var, script or transform): ref is the path as written, relative
// to the battery's folder. It is ReadInput on that file, and unless the
// config allows it (f.Outside, allow_outside_files) the file must be in the
// battery's folder or below: an absolute path, a ~ (which promptfoo does
// not expand either, but a reader means a home folder), a .. that climbs
// out, any of these percent-encoded (file://%2e%2e/), and a symlink that
// leads out are each an *OutsideError, refused before a byte is read. The
// file is then opened through an os.Root of the folder, so a symlink
// swapped in after the look cannot lead out either. path is the file's
// path, for messages and for its extension.
//
// A battery's references are refused by default because the file's text
// goes to the model's server, the ledger and every export: a battery from
// elsewhere must not be able to send /etc/passwd or ~/.ssh/id_ed25519.
func (f File) ReadRef(ref string) (data []byte, path string, err error) {
	dir := filepath.Dir(f.Path)
	path = ref
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, ref)
	}
	if f.Outside {
		data, err = ReadInput(path)
		return data, path, err
	}
	if why := outsideWhy(ref); why != "" {
		return nil, path, &OutsideError{Ref: ref, Why: why, Folder: dir}
	}
	if why := symlinkOut(dir, path); why != "" {
		return nil, path, &OutsideError{Ref: ref, Why: why, Folder: dir}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, path, err
	}
	defer root.Close()
	data, err = readInput(root, filepath.Clean(ref))
	return data, path, err
}

// outsideWhy says how ref, as written, leaves the folder it is relative
// to, or "" when it stays inside. A ref that percent-decodes to something
// else is judged in each decoded form too: pitwall reads it literally, but
// another reader of the same battery may not.
func outsideWhy(ref string) string {
	for range 4 {
		if why := lexicallyOutside(ref); why != "" {
			return why
		}
		dec, err := url.PathUnescape(ref)
		if err != nil || dec == ref {
			return ""
		}
		if why := lexicallyOutside(dec); why != "" {
			return fmt.Sprintf("it decodes (percent-encoding) to %q: %s", dec, why)
		}
		ref = dec
	}
	return "it is percent-encoded more than 4 times over"
}

func lexicallyOutside(ref string) string {
	switch {
	case strings.HasPrefix(ref, "~"):
		return "a path from ~, a home folder"
	case filepath.IsAbs(ref) || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, `\`) || filepath.VolumeName(ref) != "":
		return "an absolute path"
	case ref != "" && !filepath.IsLocal(ref), climbs(ref):
		return "it climbs out through .."
	}
	return ""
}

// climbs reports whether ref climbs above its folder when a backslash
// separates names too, as it does where the battery may also be read.
func climbs(ref string) bool {
	depth := 0
	for _, name := range strings.FieldsFunc(ref, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch name {
		case ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// symlinkOut says where path leads when a symlink on the way takes it out
// of dir, or "" when it stays in (or does not exist: the read says so).
func symlinkOut(dir, path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	if rel, err := filepath.Rel(realDir, real); err != nil || !filepath.IsLocal(rel) {
		return fmt.Sprintf("a symlink to %s", real)
	}
	return ""
}

//go:build unix

package outfile

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives the replacement the replaced file's owner and group, so
// that root rewriting a user's report does not take it from them. Where
// that is not permitted the file is the writer's, as any new file is.
func keepOwner(f *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		f.Chown(int(st.Uid), int(st.Gid))
	}
}

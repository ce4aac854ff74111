// Package outfile writes the files a user names for output (export -o,
// compare -o, run --out, init -o), so that writing output never destroys
// what is at the path:
//
//  1. "-" is standard output.
//  2. A symlink is followed to its target, which then follows these rules;
//     the link stays a link. A link through /dev/fd or /proc/PID/fd (as
//     /dev/stdout and /dev/stderr are on Linux) names an open descriptor and
//     is written to directly.
//  3. A path that does not exist, or an existing regular file, is written
//     atomically: a temporary file beside it, synced, then renamed over it.
//     An existing file keeps its mode (and, where allowed, its owner); a
//     write that fails leaves it as it was and removes the temporary file.
//  4. A character device, a FIFO or a Unix socket is written to directly,
//     never replaced: /dev/null stays /dev/null.
//  5. A directory, a block device, or a path whose folder does not exist is
//     an error naming the path.
//
// It imports nothing of pitwall's.
package outfile

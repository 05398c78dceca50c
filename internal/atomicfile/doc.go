// Package atomicfile writes the files capsim creates: whole (a temporary
// file in the same directory renamed over the target, so a reader or a
// crash sees the old file or the new one, never half of one) and with mode
// 0644 whatever the umask. RemoveStale deletes the temporaries a killed
// writer left behind.
package atomicfile

// Package inputfile reads the files a user names (results, sidecars,
// profiles, datasets) whole, within MaxSize, and only regular files: a FIFO
// would block forever and /dev/zero would grow without bound.
package inputfile

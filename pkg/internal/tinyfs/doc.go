// Package tinyfs gives tests a real, tiny file system to fill: a tmpfs of a
// few MiB mounted under t.TempDir(), so that writes meet a true ENOSPC from
// the kernel rather than an injected error. Mounting needs root (with
// CAP_SYS_ADMIN); where it is not allowed the test is skipped with the
// reason. It is imported only by tests.
package tinyfs

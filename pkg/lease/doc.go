// Package lease identifies a live process without trusting a pid alone.
//
// A pid is reused by the kernel; a pid together with the process's start
// time (in clock ticks since boot, from /proc/<pid>/stat) and the boot id
// names exactly one process for as long as the machine runs. Run leases and
// staging owners record an Owner so that recovery can tell a crashed owner
// from a live one and never closes work that is still going on.
package lease

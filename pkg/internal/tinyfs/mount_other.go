//go:build !linux

package tinyfs

import "errors"

func mount(string, int64) error { return errors.New("tmpfs mounts are Linux-only") }

func unmount(string) {}

func hasSysAdmin() bool { return false }

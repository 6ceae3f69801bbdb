package conntrack

import (
	"errors"
	"fmt"
	"os"

	"syscall"
)

// ErrOffloadedBusy is returned when the kernel refuses to delete the entry
// of an offloaded connection. Linux before 6.4 (and its stable backports)
// answers EBUSY here; the flowtable entry then lives until it times out.
var ErrOffloadedBusy = errors.New("conntrack entry is offloaded and this kernel (before Linux 6.4) refuses to delete it (EBUSY); it leaves the flowtable when it times out")

// mapDeleteError turns the kernel's answer to a delete into errors callers
// test with errors.Is.
func mapDeleteError(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EBUSY):
		return fmt.Errorf("delete %s: %w", what, ErrOffloadedBusy)
	case errors.Is(err, syscall.ENOENT):
		return fmt.Errorf("delete %s: %w", what, os.ErrNotExist)
	}
	return fmt.Errorf("delete %s: %w", what, err)
}

package ubus

import "fmt"

// Status codes, as in libubus's enum ubus_msg_status.
const (
	StatusOK               = 0
	StatusInvalidCommand   = 1
	StatusInvalidArgument  = 2
	StatusMethodNotFound   = 3
	StatusNotFound         = 4
	StatusNoData           = 5
	StatusPermissionDenied = 6
	StatusTimeout          = 7
	StatusNotSupported     = 8
	StatusUnknownError     = 9
	StatusConnectionFailed = 10
	StatusNoMemory         = 11
	StatusParseError       = 12
	StatusSystemError      = 13
)

// statusText is what `ubus` prints for each code (ubus_strerror).
var statusText = [...]string{
	"Success", "Invalid command", "Invalid argument", "Method not found", "Not found",
	"No response", "Permission denied", "Request timed out", "Operation not supported",
	"Unknown error", "Connection failed", "Out of memory", "Parsing message data failed",
	"System error",
}

// StatusText gives the text `ubus` prints for a status code.
func StatusText(code int) string {
	if code >= 0 && code < len(statusText) {
		return statusText[code]
	}
	return fmt.Sprintf("status %d", code)
}

// StatusError is a non-zero ubus status. Message carries the "error" field
// of the answer's data when the callee sent one.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("ubus: %s: %s", StatusText(e.Code), e.Message)
	}
	return "ubus: " + StatusText(e.Code)
}

// Is matches another *StatusError with the same code, so callers can write
// errors.Is(err, &ubus.StatusError{Code: ubus.StatusNotFound}).
func (e *StatusError) Is(target error) bool {
	t, ok := target.(*StatusError)
	return ok && t.Code == e.Code
}

//go:build linux && !mips

package xdp

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bpf(2) commands, map and program types and flags (include/uapi/linux/bpf.h).
const (
	cmdMapCreate      = 0
	cmdMapLookupElem  = 1
	cmdMapUpdateElem  = 2
	cmdMapDeleteElem  = 3
	cmdMapGetNextKey  = 4
	cmdProgLoad       = 5
	cmdProgGetFDByID  = 13
	cmdMapGetFDByID   = 14
	cmdObjGetInfoByFD = 15

	mapTypeHash    = 1
	progTypeXDP    = 6
	flagNoPrealloc = 1 // BPF_F_NO_PREALLOC: entries allocated as cuts come, not all at start

	updateNoExist = 1 // BPF_NOEXIST

	progStrictAlignment = 1 // BPF_F_STRICT_ALIGNMENT: verify as a CPU without unaligned access would
)

// Attributes of the commands used, laid out as union bpf_attr's members.
type mapCreateAttr struct {
	mapType, keySize, valueSize, maxEntries, mapFlags, innerMapFD, numaNode uint32
	name                                                                    [16]byte
}

type mapElemAttr struct {
	mapFD uint32
	_     uint32
	key   ptr
	value ptr // next_key for BPF_MAP_GET_NEXT_KEY
	flags uint64
}

type progLoadAttr struct {
	progType, insnCnt     uint32
	insns, license        ptr
	logLevel, logSize     uint32
	logBuf                ptr
	kernVersion, flags    uint32
	name                  [16]byte
	ifindex, expectedType uint32
	// Linux 5.x and later; zero is "none" for each.
	progBTFFD, funcInfoRecSize uint32
	funcInfo                   uint64
	funcInfoCnt, lineInfoRec   uint32
	lineInfo                   uint64
	lineInfoCnt, attachBTFID   uint32
	attachProgFD, coreReloCnt  uint32
	fdArray                    ptr // fds a kfunc call's off indexes (Linux 5.13)
}

type objInfoAttr struct {
	fd, infoLen uint32
	info        ptr
}

type getFDByIDAttr struct {
	id, nextID, openFlags uint32
}

// progInfo is the head of struct bpf_prog_info, as far as name and ifindex.
type progInfo struct {
	typ, id                 uint32
	tag                     [8]byte
	jitedLen, xlatedLen     uint32
	jitedInsns, xlatedInsns uint64
	loadTime                uint64
	createdByUID, nrMapIDs  uint32
	mapIDs                  ptr
	name                    [16]byte
	ifindex                 uint32
	_                       uint32
}

// mapInfo is the head of struct bpf_map_info.
type mapInfo struct {
	typ, id, keySize, valueSize, maxEntries, flags uint32
	name                                           [16]byte
}

func bpf(cmd uintptr, attr unsafe.Pointer, size uintptr) (int, error) {
	for tries := 0; ; tries++ {
		r, _, errno := unix.Syscall(unix.SYS_BPF, cmd, uintptr(attr), size)
		if errno == unix.EINTR || (errno == unix.EAGAIN && cmd == cmdProgLoad && tries < 5) {
			continue // the verifier gives up on a pending signal
		}
		if errno != 0 {
			return -1, errno
		}
		return int(r), nil
	}
}

func objName(s string) (n [16]byte) {
	copy(n[:15], s)
	return
}

// createMap makes a hash map. Kernels before 5.11 charge maps against
// RLIMIT_MEMLOCK, often 64 KiB: on EPERM the limit is lifted and the call
// repeated, as every BPF loader does.
func createMap(name string, keySize, valueSize, maxEntries uint32) (int, error) {
	return createMapOf(mapTypeHash, name, keySize, valueSize, maxEntries, flagNoPrealloc)
}

func createMapOf(typ uint32, name string, keySize, valueSize, maxEntries, flags uint32) (int, error) {
	attr := mapCreateAttr{mapType: typ, keySize: keySize, valueSize: valueSize,
		maxEntries: maxEntries, mapFlags: flags, name: objName(name)}
	fd, err := bpf(cmdMapCreate, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	if errors.Is(err, unix.EPERM) {
		if unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}) == nil {
			fd, err = bpf(cmdMapCreate, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
		}
	}
	if errors.Is(err, unix.ENOSYS) {
		return -1, fmt.Errorf("this kernel has no bpf(2) system call (CONFIG_BPF_SYSCALL): %w", err)
	}
	if err != nil {
		return -1, fmt.Errorf("create BPF map %s (%d entries): %w", name, maxEntries, err)
	}
	return fd, nil
}

func mapUpdate(fd int, key, value []byte, flags uint64) error {
	attr := mapElemAttr{mapFD: uint32(fd), key: newPtr(unsafe.Pointer(&key[0])), value: newPtr(unsafe.Pointer(&value[0])), flags: flags}
	_, err := bpf(cmdMapUpdateElem, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return err
}

func mapDelete(fd int, key []byte) error {
	attr := mapElemAttr{mapFD: uint32(fd), key: newPtr(unsafe.Pointer(&key[0]))}
	_, err := bpf(cmdMapDeleteElem, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return err
}

func mapLookup(fd int, key, value []byte) error {
	attr := mapElemAttr{mapFD: uint32(fd), key: newPtr(unsafe.Pointer(&key[0])), value: newPtr(unsafe.Pointer(&value[0]))}
	_, err := bpf(cmdMapLookupElem, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return err
}

// mapNextKey writes the key after key (the first one for a nil key) into
// next; io.EOF-like ENOENT at the end.
func mapNextKey(fd int, key, next []byte) error {
	attr := mapElemAttr{mapFD: uint32(fd), value: newPtr(unsafe.Pointer(&next[0]))}
	if key != nil {
		attr.key = newPtr(unsafe.Pointer(&key[0]))
	}
	_, err := bpf(cmdMapGetNextKey, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return err
}

// verifierLogSize bounds the log kept of a refused program; the tail says
// why, and the whole fits every kernel's limit.
const verifierLogSize = 256 << 10

// loadProgram loads an XDP program. On refusal it loads it again with the
// verifier's log and returns the log's last lines in the error.
// fdArray, when not empty, holds the BTF objects kfunc calls name.
func loadProgram(name string, code []byte, fdArray []int32) (int, error) {
	license := []byte("GPL\x00")
	attr := progLoadAttr{progType: progTypeXDP, insnCnt: uint32(len(code) / 8),
		insns: newPtr(unsafe.Pointer(&code[0])), license: newPtr(unsafe.Pointer(&license[0])),
		flags: progStrictAlignment, name: objName(name)}
	size := unsafe.Offsetof(attr.progBTFFD) // what kernels before 5.x take
	if len(fdArray) > 0 {
		attr.fdArray = newPtr(unsafe.Pointer(&fdArray[0]))
		size = unsafe.Sizeof(attr)
	}
	defer runtime.KeepAlive(fdArray)
	fd, err := bpf(cmdProgLoad, unsafe.Pointer(&attr), size)
	if err == nil {
		return fd, nil
	}
	log := make([]byte, verifierLogSize)
	attr.logLevel, attr.logSize, attr.logBuf = 1, uint32(len(log)), newPtr(unsafe.Pointer(&log[0]))
	fd, err2 := bpf(cmdProgLoad, unsafe.Pointer(&attr), size)
	runtime.KeepAlive(log)
	if err2 == nil {
		return fd, nil // refused only without the log (a transient failure)
	}
	return -1, &VerifierError{Err: err, Log: logTail(log, 40)}
}

// VerifierError is the kernel's refusal of the program, with the end of
// the verifier's log.
type VerifierError struct {
	Err error
	Log string
}

func (e *VerifierError) Error() string {
	if e.Log == "" {
		return fmt.Sprintf("the kernel refused the XDP program: %v", e.Err)
	}
	return fmt.Sprintf("the kernel refused the XDP program: %v; verifier log:\n%s", e.Err, e.Log)
}

func (e *VerifierError) Unwrap() error { return e.Err }

// maxLogTail bounds the verifier's log kept in an error, which reaches
// status answers.
const maxLogTail = 4 << 10

// logTail returns the last n lines of a NUL-terminated log, at most
// maxLogTail bytes of them.
func logTail(log []byte, n int) string {
	if i := bytes.IndexByte(log, 0); i >= 0 {
		log = log[:i]
	}
	log = bytes.TrimRight(log, "\n")
	lines := bytes.Split(log, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	tail := bytes.Join(lines, []byte("\n"))
	if len(tail) > maxLogTail {
		tail = tail[len(tail)-maxLogTail:]
	}
	return string(tail)
}

func progFDByID(id uint32) (int, error) {
	attr := getFDByIDAttr{id: id}
	return bpf(cmdProgGetFDByID, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
}

func mapFDByID(id uint32) (int, error) {
	attr := getFDByIDAttr{id: id}
	return bpf(cmdMapGetFDByID, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
}

// programInfo reads a program's id, name and up to len(mapIDs) map ids.
func programInfo(fd int, mapIDs []uint32) (progInfo, error) {
	var info progInfo
	if len(mapIDs) > 0 {
		info.nrMapIDs, info.mapIDs = uint32(len(mapIDs)), newPtr(unsafe.Pointer(&mapIDs[0]))
	}
	attr := objInfoAttr{fd: uint32(fd), infoLen: uint32(unsafe.Sizeof(info)), info: newPtr(unsafe.Pointer(&info))}
	_, err := bpf(cmdObjGetInfoByFD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return info, err
}

func mapInformation(fd int) (mapInfo, error) {
	var info mapInfo
	attr := objInfoAttr{fd: uint32(fd), infoLen: uint32(unsafe.Sizeof(info)), info: newPtr(unsafe.Pointer(&info))}
	_, err := bpf(cmdObjGetInfoByFD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return info, err
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

package nft

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Apply makes the kernel hold what s asks for. It reads the kernel first and
// sends only the difference, in one atomic batch: the same spec twice sends
// nothing the second time; devices are added to and removed from the live
// flowtable without recreating it, so flows on the other devices stay
// offloaded. Only a change of flags (offload, counter) recreates the
// flowtable, and Result.Recreated says so. On error nothing was changed.
//
// Errors: ErrNoFlowtable, ErrNoFlowOffloadExpr, ErrHardwareUnsupported (with
// Result.HardwareRefused; the caller re-applies with Hardware false, or uses
// ApplyWithFallback), ErrNoDevice (a *DeviceError naming the device).
func (b *Backend) Apply(s netstate.FlowtableSpec) (Result, error) {
	if err := validate(s); err != nil {
		return Result{}, err
	}
	o, err := b.read()
	if err != nil {
		return Result{}, err
	}
	ops := reconcile(o, s)
	if len(ops) == 0 {
		return Result{}, nil
	}
	bt, err := buildBatch(ops)
	if err != nil {
		return Result{}, err
	}
	conn, err := b.dialNetlink()
	if err != nil {
		return Result{}, err
	}
	defer conn.Close()
	errs, err := bt.send(conn)
	if err != nil {
		return Result{}, err
	}
	if i, kerr := firstError(errs); i >= 0 {
		err := b.explain(bt.msgs[i], bt.actions[i], kerr, s)
		return Result{HardwareRefused: errors.Is(err, ErrHardwareUnsupported)}, err
	}
	res := Result{Changed: true}
	for _, op := range ops {
		res.Actions = append(res.Actions, op.action)
		if op.kind == opDeleteTable && s.Enabled {
			res.Recreated = true
			res.Rechecked = res.Rechecked || op.recheck
		}
	}
	return res, nil
}

// ApplyWithFallback is Apply that, when the kernel refuses "flags offload",
// applies the same spec in software instead. The result then has
// HardwareRefused set and says so in its first action; the caller should
// make the configuration truthful (flow_offloading_hw 0) so fw4 never fails
// to load on the same flag.
func (b *Backend) ApplyWithFallback(s netstate.FlowtableSpec) (Result, error) {
	res, err := b.Apply(s)
	if !errors.Is(err, ErrHardwareUnsupported) {
		return res, err
	}
	s.Hardware = false
	res, err = b.Apply(s)
	res.HardwareRefused = true
	res.Actions = append([]string{"kernel refused flags offload on " + deviceWords(normalDevices(s.Devices)) + ": applied software offload"}, res.Actions...)
	return res, err
}

// Cleanup deletes table inet fastpath if it exists; absent is no error.
func (b *Backend) Cleanup() error {
	o, err := b.read()
	if err != nil {
		return err
	}
	if !o.TablePresent {
		return nil
	}
	bt := &batch{}
	if err := bt.add(func(c *nftables.Conn) error { c.DelTable(ourTable()); return nil }); err != nil {
		return err
	}
	conn, err := b.dialNetlink()
	if err != nil {
		return err
	}
	defer conn.Close()
	errs, err := bt.send(conn)
	if err != nil {
		return err
	}
	if _, kerr := firstError(errs); kerr != nil && !errors.Is(kerr, unix.ENOENT) {
		return fmt.Errorf("deleting table inet %s: %w", TableName, kerr)
	}
	return nil
}

// buildBatch turns ops into netlink messages, remembering which op each
// message belongs to so an error names the change that failed.
func buildBatch(ops []op) (*batch, error) {
	b := &batch{}
	for _, o := range ops {
		o := o
		var err error
		switch o.kind {
		case opDeleteTable:
			err = b.add(func(c *nftables.Conn) error { c.DelTable(ourTable()); return nil })
		case opCreateTable:
			err = b.add(func(c *nftables.Conn) error {
				c.AddTable(ourTable())
				c.AddFlowtable(ourFlowtable(o.devices, o.hardware, o.counter))
				c.AddChain(ourChain())
				return addOurRule(c, o.after, o.digest)
			})
		case opAddFlowtable, opAddDevices:
			// Re-sending NEWFLOWTABLE for a live flowtable adds the devices named.
			err = b.add(func(c *nftables.Conn) error {
				c.AddFlowtable(ourFlowtable(o.devices, o.hardware, o.counter))
				return nil
			})
		case opDelDevices:
			err = b.delDevices(o.devices)
		case opAddChain:
			err = b.add(func(c *nftables.Conn) error { c.AddChain(ourChain()); return addOurRule(c, o.after, o.digest) })
		case opReplaceChain:
			err = b.add(func(c *nftables.Conn) error {
				c.FlushChain(ourChain())
				c.DelChain(ourChain())
				c.AddChain(ourChain())
				return addOurRule(c, o.after, o.digest)
			})
		case opReplaceRules:
			err = b.add(func(c *nftables.Conn) error { c.FlushChain(ourChain()); return addOurRule(c, o.after, o.digest) })
		default:
			err = fmt.Errorf("nft: unknown op %d", o.kind)
		}
		if err != nil {
			return nil, err
		}
		for len(b.actions) < len(b.msgs) {
			b.actions = append(b.actions, o.action)
		}
	}
	return b, nil
}

// explain turns the kernel's error for message m into one that names the
// missing piece and the fix.
func (b *Backend) explain(m netlink.Message, action string, kerr error, s netstate.FlowtableSpec) error {
	switch msgType(m) {
	case nftables.NFT_MSG_NEWFLOWTABLE:
		if s.Hardware && errors.Is(kerr, unix.EOPNOTSUPP) {
			return &featureError{sentinel: ErrHardwareUnsupported, detail: "devices: " + strings.Join(normalDevices(s.Devices), ", "), kernel: kerr}
		}
		if errors.Is(kerr, unix.ENOENT) || errors.Is(kerr, unix.ENODEV) {
			if dev := b.firstMissingDevice(s.Devices); dev != "" {
				return &DeviceError{Device: dev, Err: kerr}
			}
		}
		if errors.Is(kerr, unix.ENOENT) || errors.Is(kerr, unix.EOPNOTSUPP) || errors.Is(kerr, unix.EAFNOSUPPORT) {
			return &featureError{sentinel: ErrNoFlowtable, detail: moduleDetail(b.root, "nf_flow_table", "nf_flow_table_inet"), kernel: kerr}
		}
	case unix.NFT_MSG_NEWRULE:
		if errors.Is(kerr, unix.ENOENT) || errors.Is(kerr, unix.EOPNOTSUPP) {
			return &featureError{sentinel: ErrNoFlowOffloadExpr, detail: moduleDetail(b.root, "nft_flow_offload"), kernel: kerr}
		}
	case nftables.NFT_MSG_DELFLOWTABLE:
		if errors.Is(kerr, unix.EBUSY) {
			return fmt.Errorf("%s: the kernel cannot remove devices from a live flowtable (needs Linux 5.8 or newer); restart fastpath to recreate it: %w", action, kerr)
		}
	}
	return fmt.Errorf("nftables refused the change %q: %w", action, kerr)
}

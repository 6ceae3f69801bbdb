package why

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Text is `fastpath why` for people: per connection where it is, the
// devices toward its ends, and the reasons in the kernel's order.
func Text(answers []Answer) string {
	if len(answers) == 0 {
		return "no connection matches: conntrack holds no entry for it (it ended, has not started, or a notrack rule keeps it out of conntrack, which also keeps it from ever being offloaded); fastpath flows --address IP lists what conntrack holds\n"
	}
	var b strings.Builder
	for i, a := range answers {
		if i > 0 {
			b.WriteString("\n")
		}
		writeAnswer(&b, a)
	}
	return b.String()
}

func writeAnswer(b *strings.Builder, a Answer) {
	fl := a.Flow
	fmt.Fprintf(b, "%s %s > %s", orNone(fl.Proto), endpoint(fl.Original.Src, fl.Original.SrcPort), endpoint(fl.Original.Dst, fl.Original.DstPort))
	if fl.State != "" {
		fmt.Fprintf(b, " %s", fl.State)
	}
	fmt.Fprintf(b, "  (reply %s > %s, %s)\n", endpoint(fl.Reply.Src, fl.Reply.SrcPort), endpoint(fl.Reply.Dst, fl.Reply.DstPort), packetsText(fl.Packets))
	fmt.Fprintf(b, "  where    %s\n", a.Where)
	fmt.Fprintf(b, "  summary  %s\n", a.Summary)
	for i, s := range a.Sides {
		label := "source"
		if i == 1 {
			label = "dest"
		}
		fmt.Fprintf(b, "  %-8s %s\n", label, sideText(s))
	}
	n := 0
	for _, r := range a.Reasons {
		n++
		mark := "maybe"
		if r.Blocks {
			mark = "blocks"
		}
		fmt.Fprintf(b, "  %d. [%s] %s\n", n, mark, r.Text)
		fmt.Fprintf(b, "     evidence: %s\n", r.Evidence)
		if r.Fix != "" {
			fmt.Fprintf(b, "     fix: %s\n", r.Fix)
		}
	}
}

func sideText(s Side) string {
	if s.Error != "" {
		return s.Address + ": " + s.Error
	}
	if s.Device == "" {
		return s.Address + ": device unknown"
	}
	t := s.Address + " via " + s.Device
	if s.Kind != "" {
		t += " (" + s.Kind + ")"
	}
	if len(s.Enter) > 0 {
		names := make([]string, len(s.Enter))
		for i, p := range s.Enter {
			names[i] = p.Name
		}
		t += ", frames enter on " + strings.Join(names, ", ")
	}
	if s.From != "" {
		t += "; " + s.From
	}
	return t
}

func endpoint(addr string, port uint16) string {
	if strings.Contains(addr, ":") {
		return fmt.Sprintf("[%s]:%d", addr, port)
	}
	if port == 0 {
		return addr
	}
	return fmt.Sprintf("%s:%d", addr, port)
}

// Ends are the addresses to look the devices up for: the original
// direction's source and the reply's source (the far end after NAT),
// which is where the kernel's nft_flow_route routes each direction to.
func Ends(fl netstate.Flow) [2]string {
	return [2]string{fl.Original.Src, fl.Reply.Src}
}

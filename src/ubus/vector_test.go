package ubus

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/ubus/internal/vectors"
)

func loadVectorsErr() ([]vectors.Scenario, error) { return vectors.Load() }

func loadVectors(t testing.TB) []vectors.Scenario {
	t.Helper()
	s, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every recorded message decodes and encodes back to the same bytes, and so
// do the blobmsg tables inside DATA and SIGNATURE.
func TestVectorsRoundTrip(t *testing.T) {
	n := 0
	for _, s := range loadVectors(t) {
		for i, vm := range s.Messages {
			m, err := DecodeMessage(vm.Bytes)
			if err != nil {
				t.Fatalf("%s message %d (%s): %v", s.Name, i, vm.Type, err)
			}
			if m.Type.String() != vm.Type || int(m.Type) != vm.TypeID {
				t.Errorf("%s message %d: type %s, recorded %s", s.Name, i, m.Type, vm.Type)
			}
			out, err := m.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, vm.Bytes) {
				t.Errorf("%s message %d: re-encoded\n%x\nrecorded\n%x", s.Name, i, out, vm.Bytes)
			}
			for _, id := range []AttrID{AttrData, AttrSignature} {
				raw, ok := m.Get(id)
				if !ok {
					continue
				}
				tab, err := m.Table(id)
				if err != nil {
					t.Fatalf("%s message %d: %v", s.Name, i, err)
				}
				again, err := EncodeTable(tab)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again, raw) {
					t.Errorf("%s message %d attr %d: blobmsg re-encoded\n%x\nrecorded\n%x", s.Name, i, id, again, raw)
				}
			}
			n++
		}
	}
	if n < 100 {
		t.Errorf("only %d recorded messages checked; the vector set has more than 100", n)
	}
}

// The DATA a caller received prints as the JSON `ubus call` printed.
func TestVectorsDataMatchesCLIOutput(t *testing.T) {
	checked := 0
	for _, s := range loadVectors(t) {
		cli, ok := s.CLI["caller"]
		if !ok || len(cli.JSON) == 0 {
			continue
		}
		for _, vm := range s.Messages {
			if vm.Client != "caller" || vm.Type != "DATA" || !vm.FromBroker() {
				continue
			}
			m, _ := DecodeMessage(vm.Bytes)
			if _, isObj := m.U32(AttrObjType); isObj {
				continue // a lookup answer, not a call's
			}
			tab, err := m.Table(AttrData)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(tab)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, cli.JSON); err != nil {
				t.Fatal(err)
			}
			// The recorded JSON was re-serialised with its keys in ubus's
			// order, so the texts compare exactly.
			if string(got) != want.String() {
				t.Errorf("%s: data prints as\n%s\nubus printed\n%s", s.Name, got, want.String())
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no caller DATA checked against CLI output")
	}
}

// FormatJSON prints what the ubus CLI printed: `ubus call` indented,
// `ubus listen` and `ubus subscribe` on one line.
func TestFormatJSONMatchesCLI(t *testing.T) {
	checked := 0
	for _, s := range loadVectors(t) {
		for label, cli := range s.CLI {
			if cli.Stdout == "" {
				continue
			}
			for _, vm := range s.Messages {
				if vm.Client != label || !vm.FromBroker() || (vm.Type != "DATA" && vm.Type != "INVOKE") {
					continue
				}
				m, _ := DecodeMessage(vm.Bytes)
				if _, lookup := m.U32(AttrObjType); lookup {
					continue
				}
				if _, hasData := m.Get(AttrData); !hasData {
					continue // an ADD_OBJECT answer
				}
				tab, err := m.Table(AttrData)
				if err != nil {
					t.Fatal(err)
				}
				var got string
				if vm.Type == "DATA" { // ubus call
					got = FormatJSON(tab, true) + "\n"
				} else { // ubus listen / subscribe: { "<type>": <data> }
					method, _ := m.String(AttrMethod)
					got = `{ "` + method + `": ` + FormatJSON(tab, false) + " }\n"
				}
				if got != cli.Stdout {
					t.Errorf("%s %s:\nformatted %q\nubus printed %q", s.Name, label, got, cli.Stdout)
				}
				checked++
			}
		}
	}
	if checked < 4 {
		t.Fatalf("only %d CLI outputs compared", checked)
	}
	if got := FormatJSON(Table{{"t", Table{}}}, true); got != "{\n\t\"t\": {\n\t\t\n\t}\n}" {
		t.Errorf("empty nested table: %q", got)
	}
}

func TestFormatJSONEscapesAsLibubox(t *testing.T) {
	got := FormatJSON(Table{{"p", "a/b\"c\\\x01\n"}, {"", int32(1)}}, false)
	if want := `{"p":"a\/b\"c\\\u0001\n",1}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

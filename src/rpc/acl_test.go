package rpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

func TestReadAndWriteMethodsCoverTheObject(t *testing.T) {
	seen := map[string]int{}
	for _, m := range append(append([]string(nil), ReadMethods...), WriteMethods...) {
		seen[m]++
	}
	o := New(newFake(), nil)
	for _, m := range o.UbusObject().Methods {
		if seen[m.Name] != 1 {
			t.Errorf("method %s is in %d of ReadMethods/WriteMethods, want exactly 1", m.Name, seen[m.Name])
		}
		delete(seen, m.Name)
	}
	for m := range seen {
		t.Errorf("%s is listed but the object has no such method", m)
	}
}

// The LuCI app's rpcd ACL grants exactly these lists.
func TestLuciACLMatchesMethodLists(t *testing.T) {
	path := filepath.Join("..", "..", "luci-app", "root", "usr", "share", "rpcd", "acl.d", "luci-app-fastpath.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the LuCI ACL %s: %v", path, err)
	}
	var acl map[string]struct {
		Read  struct{ Ubus map[string][]string } `json:"read"`
		Write struct{ Ubus map[string][]string } `json:"write"`
	}
	if err := json.Unmarshal(b, &acl); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	g := acl["luci-app-fastpath"]
	for _, c := range []struct {
		name      string
		got, want []string
	}{{"read", g.Read.Ubus[ObjectName], ReadMethods}, {"write", g.Write.Ubus[ObjectName], WriteMethods}} {
		got, want := sorted(c.got), sorted(c.want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s grants %v, rpc.%sMethods is %v", path, c.name, got, c.name, want)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

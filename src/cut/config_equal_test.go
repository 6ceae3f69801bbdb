package cut

import (
	"reflect"
	"testing"
	"time"
)

// Every field, changed alone, makes Equal false: a field added to Config
// or BlocklistConfig without a line in Equal fails here.
func TestConfigEqualSeesEveryField(t *testing.T) {
	base := Config{Enabled: true, Expiry: time.Second, Backend: BackendAuto,
		Blocklists: []BlocklistConfig{{Name: "a", Addresses: []string{"192.0.2.1"}}}}
	if !base.Equal(base) {
		t.Fatal("a config differs from itself")
	}
	change := func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Int, reflect.Int64:
			v.SetInt(v.Int() + 1)
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.String {
				v.Set(reflect.Append(v, reflect.ValueOf("x")))
			} else {
				v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
			}
		default:
			t.Fatalf("field of kind %s: teach this test and Equal about it", v.Kind())
		}
	}
	ct := reflect.TypeOf(base)
	for i := 0; i < ct.NumField(); i++ {
		c := base
		c.Blocklists = append([]BlocklistConfig(nil), base.Blocklists...)
		change(reflect.ValueOf(&c).Elem().Field(i))
		if base.Equal(c) {
			t.Errorf("Config.%s changed, Equal still true", ct.Field(i).Name)
		}
	}
	bt := reflect.TypeOf(BlocklistConfig{})
	for i := 0; i < bt.NumField(); i++ {
		c := base
		c.Blocklists = []BlocklistConfig{base.Blocklists[0]}
		c.Blocklists[0].Addresses = append([]string(nil), base.Blocklists[0].Addresses...)
		change(reflect.ValueOf(&c.Blocklists[0]).Elem().Field(i))
		if base.Equal(c) {
			t.Errorf("BlocklistConfig.%s changed, Equal still true", bt.Field(i).Name)
		}
	}
}

func TestNormalizedCutBackend(t *testing.T) {
	c, err := Config{}.Normalized()
	if err != nil || c.Backend != BackendAuto {
		t.Fatalf("empty backend: %q, %v; want auto", c.Backend, err)
	}
	if _, err := (Config{Backend: "generic"}).Normalized(); err == nil || err.Error() != `fastpath.main.cut_backend="generic": use auto, xdp or netdev` {
		t.Fatalf("bad backend: %v", err)
	}
}

// TestPresetKindsCheck: types banip and crowdsec need no options, and
// refuse a table or set (that is type nftset's).
func TestPresetKindsCheck(t *testing.T) {
	for _, kind := range []string{KindBanIP, KindCrowdSec} {
		if err := (BlocklistConfig{Name: "x", Kind: kind}).Check(); err != nil {
			t.Errorf("type %s: %v", kind, err)
		}
		if err := (BlocklistConfig{Name: "x", Kind: kind, Table: "banIP", Set: "blocklist.v4"}).Check(); err == nil {
			t.Errorf("type %s with a set accepted", kind)
		}
	}
}

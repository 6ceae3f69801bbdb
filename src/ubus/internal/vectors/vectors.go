// Package vectors loads the recorded ubus wire traffic in
// src/ubus/testdata/vectors for tests.
package vectors

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
)

// Message is one recorded message.
type Message struct {
	Dir    string `json:"dir"` // "client->ubusd" or "ubusd->client"
	Client string `json:"client"`
	Type   string `json:"type"`
	TypeID int    `json:"type_id"`
	Hex    string `json:"hex"`
	Bytes  []byte `json:"-"`
}

// FromBroker reports whether ubusd sent the message.
func (m Message) FromBroker() bool { return m.Dir == "ubusd->client" }

// CLI is what one ubus CLI client printed.
type CLI struct {
	Argv     []string        `json:"argv"`
	ExitCode int             `json:"exit_code"`
	Stdout   string          `json:"stdout"`
	Stderr   string          `json:"stderr"`
	JSON     json.RawMessage `json:"json"`
}

// Scenario is one vector file.
type Scenario struct {
	Name     string            `json:"-"`
	Text     string            `json:"scenario"`
	Clients  map[string]string `json:"clients"`
	Messages []Message         `json:"messages"`
	CLI      map[string]CLI    `json:"cli"`
}

// Dir is the directory holding the vector files: found from the test's
// working directory (its package directory, src/ubus or below), else from
// this source file's path.
func Dir() string {
	for _, d := range []string{"testdata/vectors", "../testdata/vectors", "../../testdata/vectors"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "vectors")
}

// Load reads every vector file, sorted by name.
func Load() ([]Scenario, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no vector files in %s: copy them from the recorded ubus-vectors set", Dir())
	}
	sort.Strings(files)
	var out []Scenario
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s Scenario
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		s.Name = filepath.Base(f[:len(f)-len(".json")])
		for i := range s.Messages {
			if s.Messages[i].Bytes, err = hex.DecodeString(s.Messages[i].Hex); err != nil {
				return nil, fmt.Errorf("%s message %d: %w", f, i, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

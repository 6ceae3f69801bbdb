package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fastpath-wrt/fastpath/src/uci"
)

// WriteMode records a mode in UCI, atomically per file, keeping every
// other option, comment and staged LuCI change. It returns notes for the
// log (staged changes left pending).
func WriteMode(root, mode string) ([]string, error) {
	writes, err := modeWrites(mode)
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, w := range writes {
		if w.pkg == "fastpath" {
			if err := ensureMainSection(root); err != nil {
				return notes, err
			}
		}
		conflict, err := uci.SetCommitted(root, w.pkg, w.section, w.option, w.value)
		if err != nil {
			return notes, fmt.Errorf("uci set %s.%s.%s=%s: %w", w.pkg, w.section, w.option, w.value, err)
		}
		if conflict != nil {
			notes = append(notes, fmt.Sprintf("a change staged in LuCI also touches %s.%s.%s: left pending", w.pkg, w.section, w.option))
		}
	}
	return notes, nil
}

// ensureMainSection creates /etc/config/fastpath with its main section when
// the file is missing (a missing file means defaults until we write one).
func ensureMainSection(root string) error {
	path := filepath.Join(root, "etc/config/fastpath")
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := uci.Parse(path, []byte("\nconfig fastpath 'main'\n\toption enabled '1'\n"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f.Name = "fastpath"
	return uci.Save(root, f)
}

package activities

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Ledger records side effects by an idempotency key, so that an activity
// retried after a crash applies its effect once. Bookings go through it.
type Ledger interface {
	// Apply records key; it reports false when key was applied before.
	Apply(key string) (bool, error)
	// Count is how many distinct effects whose key starts with prefix were applied.
	Count(prefix string) (int, error)
}

// NewLedger keeps the ledger in dir (one file per effect, created with
// O_EXCL, so separate processes share it), or in memory when dir is empty.
func NewLedger(dir string) (Ledger, error) {
	if dir == "" {
		return &memLedger{seen: map[string]bool{}}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ledger dir: %w", err)
	}
	return dirLedger(dir), nil
}

type memLedger struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (l *memLedger) Apply(key string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] {
		return false, nil
	}
	l.seen[key] = true
	return true, nil
}

func (l *memLedger) Count(prefix string) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k := range l.seen {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n, nil
}

type dirLedger string

func (d dirLedger) Apply(key string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(string(d), key), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ledger: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return false, fmt.Errorf("ledger: %w", err)
	}
	return true, f.Close()
}

func (d dirLedger) Count(prefix string) (int, error) {
	entries, err := os.ReadDir(string(d))
	if err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			n++
		}
	}
	return n, nil
}

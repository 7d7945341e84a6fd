package server

import (
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// taskFacts are what never changes about a task: who owns it and its
// context (its workflow's memo, set at start; task IDs are never reused).
type taskFacts struct {
	owner, tenant, contextID string
}

// factCache remembers the facts of running tasks this frontend has seen, so
// that a reply to a waiting task goes straight to its workflow instead of
// describing it first. It is only a shortcut: whatever it lacks is described
// again, and a task that ended meanwhile is found out by the update itself.
type factCache struct {
	mu  sync.Mutex
	m   map[a2a.TaskID]taskFacts
	max int
}

func newFactCache(max int) *factCache {
	return &factCache{m: make(map[a2a.TaskID]taskFacts), max: max}
}

func (c *factCache) get(id a2a.TaskID) (taskFacts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[id]
	return f, ok
}

func (c *factCache) put(id a2a.TaskID, f taskFacts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; !ok && len(c.m) >= c.max {
		for k := range c.m { // full: forget any one
			delete(c.m, k)
			break
		}
	}
	c.m[id] = f
}
